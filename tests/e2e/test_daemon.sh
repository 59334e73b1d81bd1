#!/usr/bin/env bash
# cuprobe daemon on loopback: CUDA workloads that start (before and after the
# daemon) and stop during the test, in a cgroup of the test's own so that the
# daemon samples nothing else on the host; a real Prometheus server scrapes it
# and its HTTP API's counts are checked against the traces and the workloads'
# ground truth; promtool checks the exposition; an on-demand capture; bad
# requests, a bad config, a port in use, SIGHUP reloads; 50 short-lived CUDA
# processes with no leak; SIGTERM.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"
DC="python3 $ROOT/tests/e2e/check_daemon.py"

DPID= PROMPID=
cleanup() {
	[ -n "$DPID" ] && kill -KILL "$DPID" 2>/dev/null
	[ -n "$PROMPID" ] && kill "$PROMPID" 2>/dev/null && wait "$PROMPID" 2>/dev/null
	cgroup_kill
	rm -rf "$TMP"
}
trap cleanup EXIT
if ! cgroup_setup cuprobe-daemon-test; then
	not_ok "daemon: a cgroup of the test's own" "no writable cgroup2 mount in /proc/mounts"
	done_testing
	exit 0
fi

# metric NAME_AND_LABELS: its value in the daemon's /metrics, 0 when absent.
metric() {
	curl -s "http://127.0.0.1:$PORT/metrics" | awk -v k="$1" 'index($0, k" ") == 1 { print $2; f = 1 } END { if (!f) print 0 }'
}

# metric_is NAME_AND_LABELS OP VALUE: test(1) of the metric's value now (for until_true).
metric_is() { test "$(metric "$1")" "$2" "$3"; }

PORT=$(free_port)
cat > "$TMP/d.conf" <<CONF
# cuprobe daemon test config
interval = 1
window-steps = 2
warmup = 3
budget = 100
linger = 120
cgroup = /$CGNAME
step = basic=cuprobe_step
cupti = true
CONF

# A: runs before the daemon starts (found by the /proc scan).
"${in_cg[@]}" env CUPROBE_GT="$TMP/A.gt.json" "$W/basic" --steps --threads 1 --sleep-ms 50 --iters 120 2>/dev/null &
A=$!
sleep 0.5
"$CUPROBE" daemon -c "$TMP/d.conf" -l "127.0.0.1:$PORT" -o "$TMP/out" -v >"$TMP/d.log" 2>&1 &
DPID=$!
if ! until_true 60 grep -q "listening on" "$TMP/d.log"; then
	not_ok "daemon starts" "$(grep -v libbpf "$TMP/d.log" | tail -5)"
	done_testing
	exit 0
fi
ok "daemon starts and listens on 127.0.0.1:$PORT"
grep -q "listening on .*; 1 CUDA process found;" "$TMP/d.log" &&
	ok "it found the one CUDA process of its cgroup, said in the singular" ||
	not_ok "it found the one CUDA process of its cgroup, said in the singular" \
		"$(grep "listening on" "$TMP/d.log")"

# Prometheus, its own config, storage and port; stopped by its pid.
PPORT=$(free_port)
cat > "$TMP/prom.yml" <<PROM
global: { scrape_interval: 1s, evaluation_interval: 1s }
scrape_configs:
  - job_name: cuprobe
    static_configs: [ { targets: [ '127.0.0.1:$PORT' ] } ]
PROM
prometheus --config.file="$TMP/prom.yml" --storage.tsdb.path="$TMP/prom" \
	--web.listen-address="127.0.0.1:$PPORT" >"$TMP/prom.log" 2>&1 &
PROMPID=$!
expect "prometheus starts" until_true 60 curl -sf "http://127.0.0.1:$PPORT/-/ready"

# B (step probe) and C (time slices), started after the daemon: found from their exec;
# E has cuprobe's agent (with the CUPTI simulator as CUPTI): its windows are cupti ones.
"${in_cg[@]}" env LD_PRELOAD="$ROOT/.output/libcuprobe-agent.so:$ROOT/.output/cupti_sim/libcupti.so.13" \
	LD_LIBRARY_PATH="$ROOT/.output/cupti_sim" CUPROBE_GT="$TMP/E.gt.json" "$W/basic" --steps --threads 1 --sleep-ms 50 \
	--iters 100 2>/dev/null &
E=$!
"${in_cg[@]}" env CUPROBE_GT="$TMP/B.gt.json" "$W/basic" --steps --threads 1 --sleep-ms 50 --iters 100 2>/dev/null &
B=$!
"${in_cg[@]}" "$W/basic_ptsz" --threads 1 --sleep-ms 20 --iters 250 2>/dev/null &
C=$!
wait $A $B $C $E
expect "found by the /proc scan: pid A" grep -q "sampling pid $A (basic) with step probe" "$TMP/d.log"
expect "found from its exec: pid B" grep -q "sampling pid $B (basic) with step probe" "$TMP/d.log"
expect "found from its exec, no rule: pid C in time slices" \
	grep -q "sampling pid $C (basic_ptsz) with time slices" "$TMP/d.log"
expect "the cgroup is a label" grep -q "cgroup=\"/$CGNAME\"" <(curl -s "http://127.0.0.1:$PORT/metrics")

# The traces are the ground truth of the sampled windows; Prometheus must agree exactly.
$DC traces "$TMP/out" >"$TMP/traces.json"
$DC metrics "http://127.0.0.1:$PORT/metrics" >"$TMP/metrics.json"
expect "/metrics: launches and windows per pid equal the traces'" \
	$DC compare "$TMP/traces.json" "$TMP/metrics.json" "$A,$B,$C,$E"
prom_agrees() {
	$DC prom "http://127.0.0.1:$PPORT" >"$TMP/prom.json" &&
		$DC compare "$TMP/traces.json" "$TMP/prom.json" "$A,$B,$C,$E"
}
curl -s "http://127.0.0.1:$PORT/metrics" >"$TMP/metrics.txt"
until_true 60 prom_agrees
expect "prometheus (HTTP API): launches and windows per pid equal the traces'" prom_agrees
expect "every complete window of A, B and E: the calls of 2 steps of its ground truth" \
	$DC ground "$TMP/out" 2 "$A:$TMP/A.gt.json" "$B:$TMP/B.gt.json" "$E:$TMP/E.gt.json"
$DC gpu "$TMP/out" $E >"$TMP/gpu.json"
gpu_count=$(metric "cuprobe_gpu_kernel_seconds_count{pid=\"$E\",comm=\"basic\",cgroup=\"/$CGNAME\"}")
expect "E (agent): cupti windows, GPU kernel histogram counts every kernel of its traces" python3 -c "
import json, sys
g = json.load(open('$TMP/gpu.json'))
ok = g['modes'] == ['cupti'] and g['kernels'] > 0 and g['kernels'] == int('$gpu_count')
sys.exit(0 if ok else 'traces %s, histogram count $gpu_count' % g)"
expect "A (no agent): bpf windows though cupti = true" grep -q \
	"cuprobe_windows_total{pid=\"$A\".*mode=\"bpf\",result=\"ok\"}" "$TMP/metrics.txt"
expect "time slices of C recorded launches" python3 -c "
import json, sys
t = json.load(open('$TMP/traces.json'))
sys.exit(0 if t.get('$C', {}).get('launches', 0) > 0 else 'no launches of C: %s' % t)"
expect "promtool check metrics" promtool check metrics <"$TMP/metrics.txt"

# D lives through the rest: captures, reloads, budget, SIGTERM.
"${in_cg[@]}" "$W/basic" --steps --threads 1 --sleep-ms 50 --iters 100000 2>/dev/null &
D=$!
until_true 60 grep -q "sampling pid $D " "$TMP/d.log"
if "$CUPROBE" capture --daemon "127.0.0.1:$PORT" --pid $D --steps 3 >"$TMP/cap.json" 2>"$TMP/cap.err"; then
	expect "capture: the answer's trace holds 3 steps x 9 launches, under captures/ (apart from sampled windows)" python3 -c "
import json, sys
a = json.load(open('$TMP/cap.json'))
c = json.load(open(a['trace']))['cuprobe']
ok = a['pid'] == $D and a['launches'] == c['launches'] and c['steps'][1] - c['steps'][0] == 2 \
	and c['launches'] + c['drops'] == 27 and not c['partial'] and a['trace'].startswith(a['dir']) \
	and a['dir'].startswith('$TMP/out/captures/run_')
sys.exit(0 if ok else 'answer %s, trace %s' % (a, c))"
else
	not_ok "capture" "$(cat "$TMP/cap.err")"
fi
expect_fail "capture: an unknown pid is refused" "not a CUDA process this daemon samples" \
	"$CUPROBE" capture --daemon "127.0.0.1:$PORT" --pid 1 --steps 2
expect_fail "capture: no daemon there" "cannot reach the daemon" \
	"$CUPROBE" capture --daemon "127.0.0.1:$(free_port)" --pid $D --steps 2

# Bad requests: a clear status and message; the daemon keeps serving.
http_is() { # CODE PATTERN CURL-ARGS...
	local code=$1 pat=$2 got
	shift 2
	got=$(curl -s -o "$TMP/body" -w '%{http_code}' "$@")
	[ "$got" = "$code" ] && grep -qE "$pat" "$TMP/body" || { echo "got $got: $(cat "$TMP/body")"; return 1; }
}
U=http://127.0.0.1:$PORT
expect "bad request: /capture without pid is 400" http_is 400 "give pid and steps" -X POST "$U/capture?steps=2"
expect "bad request: steps=0 is 400" http_is 400 "not a number from 1" -X POST "$U/capture?pid=$D&steps=0"
expect "bad request: mode=xyz is 400" http_is 400 "not bpf or cupti" -X POST "$U/capture?pid=$D&steps=1&mode=xyz"
expect "bad request: mode=cupti without the agent is 409" http_is 409 "no cuprobe agent" \
	-X POST "$U/capture?pid=$D&steps=1&mode=cupti"
expect "bad request: GET /capture is 405" http_is 405 "use POST" "$U/capture?pid=$D&steps=1"
expect "bad request: unknown path is 404" http_is 404 "not found" "$U/nope"
expect "GET /trace without a web-config: 403, naming --web-config (traces are root's)" \
	http_is 403 "web-config" "$U/trace?path=run_0/x.pt.trace.json"
expect "the daemon still serves /metrics" http_is 200 "cuprobe_targets" "$U/metrics"

# Bad config and port in use, as a second daemon: clear message, non-zero exit.
printf 'interval = 1\nprobability = 2\n' >"$TMP/bad.conf"
expect_fail "bad config: file and line named" "bad.conf:2: probability: '2' is not a number from 0 to 1" \
	"$CUPROBE" daemon -c "$TMP/bad.conf" -l "127.0.0.1:$(free_port)" -o "$TMP/out2"
expect_fail "bad option: named" "listen: 'nowhere' is not ADDR:PORT" "$CUPROBE" daemon -l nowhere
mkdir -m 0777 "$TMP/open" && chmod 0777 "$TMP/open"
expect_fail "an output folder others may write: refused, with the fix" "chmod go-w" \
	"$CUPROBE" daemon -l "127.0.0.1:$(free_port)" -o "$TMP/open"
# An empty cgroup (--cgroup must exist), so that this daemon samples nothing.
mkdir "$CG-none"
expect_fail "port in use: said, exits non-zero" "cannot listen on 127.0.0.1:$PORT: Address already in use" \
	"$CUPROBE" daemon -l "127.0.0.1:$PORT" -o "$TMP/out2" --cgroup "/$CGNAME-none"
rmdir "$CG-none"

# SIGHUP: a bad config changes nothing; a good one applies (linger 1 s: A's series go).
cp "$TMP/d.conf" "$TMP/good.conf"
echo "window-steps = banana" >>"$TMP/d.conf"
kill -HUP $DPID
expect "SIGHUP, bad config: refused, the daemon keeps running" \
	until_true 30 grep -q "config not reloaded.*window-steps: 'banana'" "$TMP/d.log"
expect "SIGHUP, bad config: counted" until_true 10 metric_is 'cuprobe_config_reloads_total{result="error"}' = 1
sed 's/^linger = .*/linger = 1/' "$TMP/good.conf" >"$TMP/d.conf"
kill -HUP $DPID
expect "SIGHUP, good config: reloaded" until_true 30 grep -q "config reloaded:" "$TMP/d.log"
a_gone() { ! curl -s "$U/metrics" | grep -q "pid=\"$A\""; }
expect "linger: an exited process's series go" until_true 30 a_gone
expect "a live process's series stay" grep -q "pid=\"$D\"" <(curl -s "$U/metrics")

# The budget: a tiny one holds D's sampling back and says so.
sed 's/^budget = .*/budget = 0.001/' "$TMP/good.conf" >"$TMP/d.conf"
kill -HUP $DPID
backoff() { test "$(metric "cuprobe_budget_backoff{pid=\"$D\",comm=\"basic\",cgroup=\"/$CGNAME\"}")" = 1; }
expect "budget: backoff said in a metric" until_true 30 backoff
skipped() { curl -s "$U/metrics" | grep -q "cuprobe_windows_total{pid=\"$D\".*result=\"skipped_budget\"}"; }
expect "budget: windows skipped are counted" until_true 30 skipped
cp "$TMP/good.conf" "$TMP/d.conf"
kill -HUP $DPID

# 50 short-lived CUDA processes, in batches of 10: each waits for a file until the
# daemon samples it, then runs and goes; the daemon then holds what it held before
# (its BPF map entries and probes go a little after each exit: waited for, boundedly).
# D is not sampled meanwhile (probability 0), so that no window's links come and go.
settled() { # the daemon's map entries are D's alone, and its fds the same a second apart
	$DC holds $DPID >"$TMP/holds1.json" && sleep 1 && $DC holds $DPID >"$TMP/holds.json" &&
		python3 -c "
import json, sys
a = json.load(open('$TMP/holds1.json')); b = json.load(open('$TMP/holds.json'))
sys.exit(b['entries'].get('proc_conf') != 1 or a['fds'] != b['fds'])"
}
sed 's/^probability = .*//' "$TMP/good.conf" >"$TMP/d.conf"
echo "probability = 0" >>"$TMP/d.conf"
kill -HUP $DPID
until_true 30 metric_is cuprobe_targets = 1
until_true 12 settled
cp "$TMP/holds.json" "$TMP/before.json"
churn=()
for b in 1 2 3 4 5; do
	pids=()
	for i in $(seq 10); do
		"${in_cg[@]}" "$W/basic" --steps --threads 1 --sleep-ms 5 --iters 10 --wait-file "$TMP/go$b" 2>/dev/null &
		pids+=($!)
	done
	until_true 120 metric_is cuprobe_targets -ge 11
	touch "$TMP/go$b"
	wait "${pids[@]}"
	churn+=("${pids[@]}")
done
missed=""
for p in "${churn[@]}"; do grep -q "sampling pid $p " "$TMP/d.log" || missed="$missed $p"; done
[ -z "$missed" ] && ok "churn: each of 50 short-lived processes was found" ||
	not_ok "churn: each of 50 short-lived processes was found" "not found:$missed"
until_true 60 metric_is cuprobe_targets = 1
until_true 12 settled
cp "$TMP/holds.json" "$TMP/after.json"
expect "churn: no leak (fds, BPF map entries, RSS)" python3 -c "
import json, sys
b = json.load(open('$TMP/before.json')); a = json.load(open('$TMP/after.json'))
bad = []
if a['fds'] > b['fds'] + 2: bad.append('fds %d -> %d' % (b['fds'], a['fds']))
for k, v in a['entries'].items():
    if v > b['entries'].get(k, 0): bad.append('%s entries %d -> %d' % (k, b['entries'].get(k, 0), v))
if a['entries'].get('proc_conf') != 1: bad.append('proc_conf %s, want 1 (D)' % a['entries'])
if a['rss_kb'] > b['rss_kb'] + 16384: bad.append('rss %d -> %d kB' % (b['rss_kb'], a['rss_kb']))
sys.exit('; '.join(bad) if bad else 0)"

cp "$TMP/good.conf" "$TMP/d.conf"
kill -HUP $DPID

# SIGTERM: ends cleanly, every trace whole, D runs on untouched.
kill -TERM $DPID
wait $DPID
rc=$?
DPID=
[ $rc = 0 ] && ok "SIGTERM: exits 0" || not_ok "SIGTERM: exits 0" "rc $rc: $(tail -3 "$TMP/d.log")"
expect "SIGTERM: every trace is whole" $DC traces "$TMP/out"
expect "SIGTERM: the target runs on, not stopped" python3 -c "
import sys
s = open('/proc/$D/stat').read().rsplit(')', 1)[1].split()[0]
sys.exit(0 if s in 'RS' else 'state ' + s)"
kill -KILL $D 2>/dev/null

# The daemon built with ThreadSanitizer: the HTTP server's threads and the daemon's
# share nothing but messages. Scrapes and a capture at once, then SIGTERM.
TSAN=$ROOT/.output/tsan/cuprobe
"${in_cg[@]}" "$W/basic" --steps --threads 1 --sleep-ms 50 --iters 100000 2>/dev/null &
F=$!
PORT=$(free_port)
TSAN_OPTIONS=halt_on_error=0:exitcode=66 "$TSAN" daemon -c "$TMP/good.conf" -l "127.0.0.1:$PORT" \
	-o "$TMP/tsan-out" >"$TMP/tsan.log" 2>&1 &
DPID=$!
if until_true 120 grep -q "listening on" "$TMP/tsan.log" &&
	until_true 60 grep -q "sampling pid $F " "$TMP/tsan.log"; then
	scrapes=()
	for i in 1 2 3 4; do curl -s -o /dev/null "http://127.0.0.1:$PORT/metrics" & scrapes+=($!); done
	"$CUPROBE" capture --daemon "127.0.0.1:$PORT" --pid $F --steps 2 >"$TMP/tsan-cap.json" 2>&1
	cap=$?
	wait "${scrapes[@]}"
	kill -TERM $DPID
	wait $DPID
	rc=$?
	DPID=
	if [ $rc -ne 0 ] || [ $cap -ne 0 ] || grep -q "ThreadSanitizer" "$TMP/tsan.log"; then
		not_ok "ThreadSanitizer: the daemon: scrapes, a capture, SIGTERM" \
			"rc $rc, capture $cap: $(grep -m3 -A3 'WARNING: ThreadSanitizer' "$TMP/tsan.log")"
	else
		ok "ThreadSanitizer: the daemon: scrapes, a capture, SIGTERM: clean"
	fi
else
	not_ok "ThreadSanitizer: the daemon" "$(grep -v libbpf "$TMP/tsan.log" | tail -3)"
fi
kill -KILL $F 2>/dev/null

# --stack true: a capture's trace gives every launch its stack, as record --stack does.
"${in_cg[@]}" "$W/basic" --steps --threads 1 --sleep-ms 50 --iters 100000 2>/dev/null &
S=$!
PORT=$(free_port)
"$CUPROBE" daemon -c "$TMP/good.conf" --stack true -l "127.0.0.1:$PORT" -o "$TMP/stack-out" \
	>"$TMP/stack.log" 2>&1 &
DPID=$!
if until_true 120 grep -q "listening on" "$TMP/stack.log" &&
	until_true 60 grep -q "sampling pid $S " "$TMP/stack.log" &&
	"$CUPROBE" capture --daemon "127.0.0.1:$PORT" --pid $S --steps 2 >"$TMP/stack-cap.json" \
		2>"$TMP/stack-cap.err"; then
	expect "--stack true: each launch of a capture has its stack" python3 -c "
import json, sys
a = json.load(open('$TMP/stack-cap.json'))
c = json.load(open(a['trace']))['cuprobe']
st = c['stacks']
sys.exit(0 if c['launches'] == 18 and st['taken'] == 18 and st['lost'] == 0 else 'cuprobe %s' % c)"
else
	not_ok "--stack true: a capture" "$(tail -3 "$TMP/stack.log") $(cat "$TMP/stack-cap.err" 2>/dev/null)"
fi
kill -TERM $DPID 2>/dev/null
wait $DPID 2>/dev/null
DPID=
kill -KILL $S 2>/dev/null
kill "$PROMPID" && wait "$PROMPID" 2>/dev/null
PROMPID=
done_testing
