#!/usr/bin/env bash
# cuprobe capture --job across two "hosts", with real parts only: two network
# namespaces joined to the root one by veth pairs (198.18.0.0/15, the
# benchmarking range), each with its own cuprobe daemon scoped by --cgroup to
# that host's cgroup, listening on its address with TLS and basic auth
# (openssl, mkpasswd); a 4-rank torchrun-like job, 2 ranks a host; Debian's
# Prometheus scraping both daemons over TLS. The client finds the daemons
# through Prometheus, through --daemon's list and through a DNS name with an
# address per daemon; every rank's trace covers the same steps S..S+N-1 with
# launches exact against its own ground truth (written when the ranks are
# told to stop, at the end), ranks
# 0..3 of world size 4, and HTA loads the job's folder as 4 ranks. A daemon
# SIGKILLed while the capture waits is said by name, with its ranks, within
# --timeout, exit status 1, the other host's traces written.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

source "$(dirname "$0")/hosts_lib.sh"
hosts_init fleet
DPIDS=() PROMPID=
cleanup() {
	for p in "${DPIDS[@]}"; do kill -KILL "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	[ -n "$PROMPID" ] && kill "$PROMPID" 2>/dev/null && wait "$PROMPID" 2>/dev/null
	hosts_down
	rm -rf "$TMP"
}
trap cleanup EXIT
if [ -z "$CG2" ]; then
	not_ok "fleet: cgroups of the test's own" "no writable cgroup2 mount in /proc/mounts"
	done_testing
	exit 0
fi

# ---- the hosts ----
expect "two hosts: network namespaces on veths in 198.18.0.0/15, a cgroup each" hosts_up

# ---- certificates and a password ----
K=$TMP/pki
mkdir -p "$K"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=ca \
	-keyout "$K/ca.key" -out "$K/ca.crt" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=server \
	-keyout "$K/server.key" -out "$K/server.csr" 2>/dev/null
printf 'subjectAltName=IP:%s,IP:%s,DNS:gpu-nodes.cuprobe.test\nextendedKeyUsage=serverAuth\n' "${IPS[@]}" \
	>"$K/server.ext"
openssl x509 -req -in "$K/server.csr" -CA "$K/ca.crt" -CAkey "$K/ca.key" -CAcreateserial \
	-days 2 -extfile "$K/server.ext" -out "$K/server.crt" 2>/dev/null
expect "openssl: a CA and a server certificate for both hosts' addresses" \
	openssl verify -CAfile "$K/ca.crt" "$K/server.crt"
HASH=$(mkpasswd -m bcrypt -R 5 'fleet pass')
echo 'fleet pass' >"$TMP/pw"
chmod 600 "$TMP/pw" # a secret, as ssh's keys: readable by its owner only
cat >"$TMP/web.yml" <<WEB
tls_server_config: { cert_file: $K/server.crt, key_file: $K/server.key }
basic_auth_users:
  ops: '$HASH'
WEB
AUTH=(--cacert "$K/ca.crt" --user ops --password-file "$TMP/pw")

# ---- the job: 2 ranks a host ----
JOB="fleet job/$$"
for r in 0 1 2 3; do
	h=$((r / 2))
	# Into the cgroup first: ip netns exec mounts a /sys of its own, without the cgroups.
	sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "${CGS[$h]}" ip netns exec "${NS[$h]}" \
		env TORCHELASTIC_RUN_ID="$JOB" RANK=$r LOCAL_RANK=$((r % 2)) WORLD_SIZE=4 \
		CUPROBE_GT="$TMP/gt$r.json" "$W/basic" --steps --sleep-ms 50 --iters 100000 \
		--stop-file "$TMP/stop" 2>/dev/null &
	RPIDS[$r]=$!
done
PORT=9464
for h in 0 1; do
	printf 'probability = 0\ninterval = 60\nwarmup = 1\ncgroup = /cuprobe-fleet-%s-%s\nstep = basic=cuprobe_step\n' \
		"$h" "$$" >"$TMP/d$h.conf"
	ip netns exec "${NS[$h]}" "$CUPROBE" daemon -c "$TMP/d$h.conf" -l "${IPS[$h]}:$PORT" \
		--web-config "$TMP/web.yml" -o "$TMP/out$h" -v >"$TMP/d$h.log" 2>&1 &
	DPIDS[$h]=$!
done
up() { grep -q "listening on https://${IPS[$1]}:$PORT" "$TMP/d$1.log" &&
	[ "$(grep -c "sampling pid" "$TMP/d$1.log")" -ge 2 ]; }
if ! until_true 60 up 0 || ! until_true 60 up 1; then
	not_ok "each host's daemon listens on its address and samples its 2 ranks" \
		"$(grep -v libbpf "$TMP/d0.log" "$TMP/d1.log" | tail -6)"
	done_testing
	exit 0
fi
ok "each host's daemon listens on its address with TLS and basic auth, sampling its 2 ranks"

# ---- Prometheus scrapes both ----
PPORT=$(free_port)
cat >"$TMP/prom.yml" <<PROM
global: { scrape_interval: 1s, evaluation_interval: 1s }
scrape_configs:
  - job_name: cuprobe
    scheme: https
    tls_config: { ca_file: $K/ca.crt }
    basic_auth: { username: ops, password_file: $TMP/pw }
    static_configs: [ { targets: [ '${IPS[0]}:$PORT', '${IPS[1]}:$PORT' ] } ]
PROM
prometheus --config.file="$TMP/prom.yml" --storage.tsdb.path="$TMP/prom" \
	--web.listen-address="127.0.0.1:$PPORT" >"$TMP/prom.log" 2>&1 &
PROMPID=$!
P=http://127.0.0.1:$PPORT
jobq=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1]))' \
	"count by (instance) (cuprobe_target_info{exported_job=\"$JOB\"})")
both_scraped() { [ "$(curl -s "$P/api/v1/query?query=$jobq" | python3 -c \
	'import json, sys; print(len(json.load(sys.stdin)["data"]["result"]))')" = 2 ]; }
expect "prometheus scrapes both daemons over TLS with basic auth (the job is exported_job)" \
	until_true 90 both_scraped

# fleet_ok RUN [exact]: 4 traces of the same steps S..S+2, ranks 0..3 of world size 4; with
# exact (once the ranks have ended and written their ground truth, $TMP/gt<rank>.json),
# each rank's launches exactly 3 steps of its own ground truth (the ranks were found by the
# /proc scan, so their step numbers count from then: the workload's steps are alike,
# compared per step).
fleet_ok() {
	python3 - "$1" "$TMP" "$ROOT/tests/e2e" "${2:-}" <<'PY'
import glob, json, os, sys
sys.path.insert(0, sys.argv[3])
from check_daemon import call_key, gt_step
run, tmp, exact = sys.argv[1], sys.argv[2], sys.argv[4] == "exact"
c = json.load(open(run + ".capture.json"))
s, files = c["start_step"], sorted(glob.glob(os.path.join(run, "*.pt.trace.json")))
if len(files) != 4:
    sys.exit("%d traces in %s" % (len(files), run))
ranks = []
for f in files:
    t = json.load(open(f))
    d, cp = t["distributedInfo"], t["cuprobe"]
    if cp["steps"] != [s, s + 2] or d["world_size"] != 4 or cp["partial"] or cp["drops"]:
        sys.exit("%s: steps %s (want %d..%d), distributedInfo %s" % (f, cp["steps"], s, s + 2, d))
    ranks.append(d["rank"])
    if not exact:
        continue
    want = {k: v * 3 for k, v in gt_step(os.path.join(tmp, "gt%d.json" % d["rank"])).items()}
    got = {}
    for e in t["traceEvents"]:
        if e.get("ph") != "X" or e.get("cat") not in ("cuda_runtime", "cuda_driver"):
            continue
        a = e.get("args", {})
        k = call_key(e["name"], a.get("kernel"), a.get("grid"), a.get("block"),
                     a.get("shared memory"), a.get("bytes"))
        got[k] = got.get(k, 0) + 1
    if got != want:
        sys.exit("%s (rank %d): got %s, want %s" % (f, d["rank"], got, want))
if sorted(ranks) != [0, 1, 2, 3]:
    sys.exit("ranks %s" % ranks)
PY
}

# ---- found through Prometheus ----
"$CUPROBE" capture --job "$JOB" --steps 3 -o "$TMP/fl" --prometheus "$P" "${AUTH[@]}" \
	--timeout 60 >"$TMP/c1.log" 2>&1
rc=$?
SAFE="fleet_job_$$"
expect "--prometheus: exit 0, the job's folder made safe ($SAFE/run_0)" \
	test "$rc" = 0 -a -d "$TMP/fl/$SAFE/run_0"
expect "--prometheus: 4 traces of steps S..S+2, ranks 0..3 of 4" \
	fleet_ok "$TMP/fl/$SAFE/run_0"
expect "--prometheus: the output says the ranks were found by the /proc scan" \
	grep -q "found by the daemon's /proc scan" "$TMP/c1.log"
expect "capture.json names the job, S, both daemons and every rank" python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))
assert c["job"] == sys.argv[2] and c["steps"] == 3 and len(c["daemons"]) == 2, c
assert sorted(r["rank"] for r in c["ranks"]) == [0, 1, 2, 3], c
assert all(r["result"] == "ok" and r["found"] == "scan" for r in c["ranks"]), c
' "$TMP/fl/$SAFE/run_0.capture.json" "$JOB"
REAL=${CUPROBE_REAL:-/var/cache/cuprobe/real}
[ -r "$REAL/env.sh" ] && source "$REAL/env.sh"
if [ -n "${REAL_HTA_PY:-}" ] && [ -x "$REAL_HTA_PY" ]; then
	expect "HTA loads the job's folder as 4 ranks" \
		"$REAL_HTA_PY" "$ROOT/tests/real/check_hta.py" "$TMP/fl/$SAFE/run_0" --ranks 4
else
	not_ok "HTA loads the job's folder as 4 ranks" \
		"no REAL_HTA_PY in $REAL/env.sh: run scripts/install-real.sh (make test runs make real-deps)"
fi

# ---- --daemon listing both ----
"$CUPROBE" capture --job "$JOB" --steps 3 -o "$TMP/fl" \
	--daemon "https://${IPS[0]}:$PORT,https://${IPS[1]}:$PORT" "${AUTH[@]}" --timeout 60 \
	>"$TMP/c2.log" 2>&1
rc=$?
expect "--daemon A,B: exit 0, the next run folder" test "$rc" = 0 -a -d "$TMP/fl/$SAFE/run_1"
expect "--daemon A,B: 4 traces of the same steps, ranks 0..3 of 4" \
	fleet_ok "$TMP/fl/$SAFE/run_1"
# ---- a DNS name with an address per daemon (a headless service's): both, by name ----
# The name is in a hosts file of the client's own mount namespace, not the machine's.
printf '%s gpu-nodes.cuprobe.test\n%s gpu-nodes.cuprobe.test\n' "${IPS[@]}" >"$TMP/hosts"
unshare -m sh -c 'mount --bind "$0" /etc/hosts && exec "$@"' "$TMP/hosts" \
	"$CUPROBE" capture --job "$JOB" --steps 3 -o "$TMP/fl" --daemon "https://gpu-nodes.cuprobe.test:$PORT" \
	"${AUTH[@]}" --timeout 60 >"$TMP/c4.log" 2>&1
rc=$?
expect "--daemon NAME: both addresses of the name asked, the certificate checked against the name" \
	test "$rc" = 0 -a -d "$TMP/fl/$SAFE/run_2"
expect "--daemon NAME: 4 traces of the same steps, ranks 0..3 of 4" \
	fleet_ok "$TMP/fl/$SAFE/run_2"
expect_fail "without the password both daemons refuse (401), each named" \
	"daemon ${IPS[0]}:$PORT: .*give a user and password" \
	"$CUPROBE" capture --job "$JOB" --steps 3 -o "$TMP/fl" --cacert "$K/ca.crt" --timeout 20 \
	--daemon "https://${IPS[0]}:$PORT,https://${IPS[1]}:$PORT"

# ---- a daemon killed while the capture waits ----
# A first step 6 s off (--margin): the capture waits for it when host 1's daemon dies.
"$CUPROBE" capture --job "$JOB" --steps 3 -o "$TMP/fl2" \
	--daemon "https://${IPS[0]}:$PORT,https://${IPS[1]}:$PORT" "${AUTH[@]}" --timeout 30 \
	--margin 6 >"$TMP/c3.log" 2>&1 &
CPID=$!
started=$(date +%s)
sleep 2
kill -KILL "${DPIDS[1]}" && wait "${DPIDS[1]}" 2>/dev/null
wait "$CPID"
rc=$?
took=$(( $(date +%s) - started ))
expect "killed daemon: the client exits 1 within --timeout" test "$rc" = 1 -a "$took" -le 32
expect "killed daemon: its ranks 2 and 3 are named with the host's daemon" \
	grep -qE "rank 2: NOT written: .*daemon ${IPS[1]}:$PORT" "$TMP/c3.log"
expect "... rank 3 too" grep -qE "rank 3: NOT written: .*daemon ${IPS[1]}:$PORT" "$TMP/c3.log"
expect "killed daemon: the other host's 2 traces are written, with capture.json" \
	test "$(trace_in "$TMP/fl2/$SAFE/run_0" | wc -w)" = 2 -a -s "$TMP/fl2/$SAFE/run_0.capture.json"
expect "capture.json marks ranks 2 and 3 not written, naming the daemon" python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))
bad = sorted(r["rank"] for r in c["ranks"] if r["result"] != "ok")
assert bad == [2, 3], bad
assert all(sys.argv[2] in r["why"] for r in c["ranks"] if r["result"] != "ok"), c["ranks"]
' "$TMP/fl2/$SAFE/run_0.capture.json" "${IPS[1]}:$PORT"
# The ranks end (at a step boundary) and write their ground truth: every trace of the three
# captures, each rank's launches exact against its own.
touch "$TMP/stop"
wait "${RPIDS[@]}"
for run in 0 1 2; do
	expect "run_$run: every rank's launches exactly 3 steps of its own ground truth" \
		fleet_ok "$TMP/fl/$SAFE/run_$run" exact
done
# The daemon left stops on SIGTERM; the one killed was waited for.
kill -TERM "${DPIDS[0]}" && wait "${DPIDS[0]}" 2>/dev/null
DPIDS=()
done_testing
