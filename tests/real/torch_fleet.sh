#!/usr/bin/env bash
# The torch tier: cuprobe capture --job on a real 4-rank PyTorch job across two
# "hosts" (tests/e2e/test_fleet.sh's network namespaces and cgroups), with no
# step rule anywhere. Each host runs a cuprobe daemon scoped by --cgroup to it
# (TLS and basic auth, as a daemon off loopback must be) and one node of the job:
# torchrun --nnodes 2 --nproc-per-node 2, DDP on gloo (tests/real/torch_train.py),
# the nodes rendezvousing over a veth between the two namespaces. The daemons
# start first, so they find the ranks through their exec, in the middle of
# `import torch`, and step each by the default torch step from its start. The
# capture's 4 traces, one per rank, hold the same ProfilerStep#S..S+N-1, the
# same iterations (each step's 4 spans overlap, as DDP's all-reduce makes them),
# with an optimizer step in each, distributedInfo with their rank of 4, and HTA
# loads the folder as 4 ranks.
source "$(dirname "$0")/lib.sh"
need_torch

source "$ROOT/tests/e2e/hosts_lib.sh"
hosts_init tfleet
# The link between the hosts, which the job's nodes talk over (its rendezvous and gloo).
JIPS=(198.18.2.1 198.18.2.2)
DPIDS=() NPIDS=()
cleanup() {
	local p
	for p in "${DPIDS[@]}"; do kill -KILL "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	hosts_down
	rm -rf "$TMP"
}
trap cleanup EXIT
if [ -z "$CG2" ]; then
	not_ok "fleet: cgroups of the test's own" "no writable cgroup2 mount in /proc/mounts"
	done_testing
	exit 0
fi

# ---- the hosts: each a namespace on a veth to this one, and a veth between them ----
hosts_link() {
	hosts_up &&
	ip -n "${NS[0]}" link add job0 type veth peer name job1 netns "${NS[1]}" &&
	ip -n "${NS[0]}" addr add "${JIPS[0]}/24" dev job0 && ip -n "${NS[0]}" link set job0 up &&
	ip -n "${NS[1]}" addr add "${JIPS[1]}/24" dev job1 && ip -n "${NS[1]}" link set job1 up
}
expect "two hosts: network namespaces on veths, a link between them, a cgroup each" hosts_link

# ---- a certificate for both daemons' addresses, and a password ----
K=$TMP/pki
mkdir -p "$K"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=ca \
	-keyout "$K/ca.key" -out "$K/ca.crt" 2>/dev/null
openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=server \
	-keyout "$K/server.key" -out "$K/server.csr" 2>/dev/null
printf 'subjectAltName=IP:%s,IP:%s\nextendedKeyUsage=serverAuth\n' "${IPS[@]}" >"$K/server.ext"
openssl x509 -req -in "$K/server.csr" -CA "$K/ca.crt" -CAkey "$K/ca.key" -CAcreateserial \
	-days 2 -extfile "$K/server.ext" -out "$K/server.crt" 2>/dev/null
echo 'fleet pass' >"$TMP/pw"
chmod 600 "$TMP/pw"
cat >"$TMP/web.yml" <<WEB
tls_server_config: { cert_file: $K/server.crt, key_file: $K/server.key }
basic_auth_users:
  ops: '$(mkpasswd -m bcrypt -R 5 'fleet pass')'
WEB
AUTH=(--cacert "$K/ca.crt" --user ops --password-file "$TMP/pw")

# ---- the daemons first, no step rule: the ranks are found through their exec ----
PORT=9464
for h in 0 1; do
	printf 'probability = 0\ninterval = 60\nwarmup = 1\ncgroup = /cuprobe-tfleet-%s-%s\n' \
		"$h" "$$" >"$TMP/d$h.conf"
	ip netns exec "${NS[$h]}" "$CUPROBE" daemon -c "$TMP/d$h.conf" -l "${IPS[$h]}:$PORT" \
		--web-config "$TMP/web.yml" -o "$TMP/out$h" >"$TMP/d$h.log" 2>&1 &
	DPIDS[$h]=$!
done
listening() { grep -q "listening on https://${IPS[$1]}:$PORT" "$TMP/d$1.log"; }
if ! until_true 60 listening 0 || ! until_true 60 listening 1; then
	not_ok "each host's daemon listens on its address" "$(grep -v libbpf "$TMP"/d?.log | tail -6)"
	done_testing
	exit 0
fi

# ---- the job: a torchrun node a host, 2 ranks each, DDP on gloo ----
JOB=torch-fleet-$$
for h in 0 1; do
	# Into the cgroup first: ip netns exec mounts a /sys of its own, without the cgroups.
	sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "${CGS[$h]}" ip netns exec "${NS[$h]}" \
		env GLOO_SOCKET_IFNAME="job$h" "$REAL_PY" -m torch.distributed.run --nnodes 2 \
		--nproc-per-node 2 --node-rank "$h" --master-addr "${JIPS[0]}" --master-port 29500 \
		--rdzv-id "$JOB" "$ROOT/tests/real/torch_train.py" --ddp --iters 100000000 \
		>"$TMP/node$h.log" 2>&1 &
	NPIDS[$h]=$!
done

# targets: the job's ranks both daemons list, "rank:step:found:step_probe" each.
targets() {
	local h
	for h in 0 1; do
		curl -s --cacert "$K/ca.crt" --user 'ops:fleet pass' \
			"https://${IPS[$h]}:$PORT/targets?job=$JOB"
		echo
	done | python3 -c '
import json, sys
for line in sys.stdin:
    for t in json.loads(line.strip() or "{}").get("targets", []):
        print("%s:%s:%s:%s" % (t["rank"], t["step"], t["found"], t["step_probe"]))'
}
# training: all 4 ranks listed, each past its 5th step (or with no step probe to wait on).
training() {
	[ "$(targets | awk -F: '$2 >= 5 || $4 == "False"' | wc -l)" = 4 ]
}
# Polled once a second for 150 s at most (each poll asks both daemons over TLS).
deadline=$((SECONDS + 150))
until training || [ $SECONDS -ge $deadline ]; do sleep 1; done
if ! training; then
	not_ok "the job runs: 4 ranks listed, 2 a host" \
		"targets [$(targets | tr '\n' ' ')]; $(grep -v libbpf "$TMP"/d?.log | grep -i 'sampling\|error\|warn' | tail -6 | tr '\n' ' '); $(tail -3 "$TMP/node0.log" | tr '\n' ' ')"
	done_testing
	exit 0
fi
ok "the job runs: 4 ranks listed, 2 a host, found through their exec (rank:step:found:step_probe $(targets | sort | tr '\n' ' '))"
# Every rank stepped by torch with no rule, found through its exec: none in time
# slices, not even one found while `import torch` had mapped CUDA but not yet
# libtorch_cpu.so.
n=$(targets | grep -c ':exec:True$')
s=$(grep -h "sampling pid .* with time slices" "$TMP"/d?.log | wc -l)
[ "$n" = 4 ] && [ "$s" = 0 ] && ok "no step rule: the 4 ranks stepped by torch from their exec, no process in time slices" ||
	not_ok "no step rule: the 4 ranks stepped by torch from their exec" \
		"$n of 4; $s in time slices: $(grep -h 'sampling pid' "$TMP"/d?.log | tr '\n' ' ')"

# ---- the capture, through both daemons ----
N=3
timeout 150 "$CUPROBE" capture --job "$JOB" --steps $N -o "$TMP/cap" \
	--daemon "https://${IPS[0]}:$PORT,https://${IPS[1]}:$PORT" "${AUTH[@]}" --timeout 120 \
	>"$TMP/cap.log" 2>&1
rc=$?
RUN=$TMP/cap/$JOB/run_0
python3 - "$RUN" $N <<'PY' && ok "capture --job: 4 traces, ranks 0..3 of 4, the same ProfilerStep#S..S+$((N - 1)) at the same time, an optimizer step in each" ||
import collections, glob, json, os, sys
run, n = sys.argv[1], int(sys.argv[2])
c = json.load(open(run + ".capture.json"))
s = c["start_step"]
want = ["ProfilerStep#%d" % k for k in range(s, s + n)]
files = sorted(glob.glob(os.path.join(run, "*.pt.trace.json")))
got, at = [], {}
for f in files:
    t = json.load(open(f))
    ann = [e for e in t["traceEvents"] if e.get("ph") == "X" and e.get("cat") == "user_annotation"]
    base = t["baseTimeNanoseconds"] / 1e3  # ts and dur are us after it
    spans = {e["name"]: (base + float(e["ts"]), base + float(e["ts"]) + float(e["dur"])) for e in ann
             if e["name"].startswith("ProfilerStep#")}
    steps = sorted(spans, key=lambda x: int(x.split("#")[1]))
    for k in steps:
        at.setdefault(k, []).append(spans[k])
    opt = collections.Counter(e["name"] for e in ann).get("Optimizer.step#SGD.step", 0)
    d = t["distributedInfo"]
    got.append((d["rank"], d["world_size"], steps, opt, t["cuprobe"].get("partial")))
print("# S %d: %s" % (s, [(r, w, [x.split("#")[1] for x in st], o, p) for r, w, st, o, p in got]))
ok = sorted(r for r, *_ in got) == [0, 1, 2, 3]
ok = ok and all(w == 4 and st == want and o == n and not p for _, w, st, o, p in got)
ok = ok and all(r["found"] == "exec" and r["result"] == "ok" for r in c["ranks"])
# The same numbers are the same iterations: DDP's all-reduce in each, which no
# rank leaves before every rank entered it, makes the 4 spans of a step overlap.
common = {k: min(e for _, e in v) - max(b for b, _ in v) for k, v in at.items()}
apart = [k for k, us in common.items() if us <= 0]
print("# the 4 spans of each step in common, us: %s" % {k: round(us, 1) for k, us in common.items()})
t0 = min(b for v in at.values() for b, _ in v)
print("# spans: %s" % {k: [(round(b - t0, 1), round(e - b, 1)) for b, e in v] for k, v in at.items()})
ok = ok and not apart
sys.exit(0 if ok else 1)
PY
	not_ok "capture --job: 4 traces of the same steps" "rc $rc: $(tail -5 "$TMP/cap.log" | tr '\n' ' ')"
if [ -n "${REAL_HTA_PY:-}" ] && [ -x "$REAL_HTA_PY" ]; then
	expect "HTA loads the job's folder as 4 ranks" \
		"$REAL_HTA_PY" "$ROOT/tests/real/check_hta.py" "$RUN" --ranks 4
else
	not_ok "HTA loads the job's folder as 4 ranks" \
		"no REAL_HTA_PY in $REAL_DIR/env.sh: run scripts/install-real.sh"
fi
done_testing
