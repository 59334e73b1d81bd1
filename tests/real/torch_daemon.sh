#!/usr/bin/env bash
# The torch tier: cuprobe daemon with no step rule steps a PyTorch process by
# --step torch (it maps libtorch_cpu.so): its step times are in /metrics and
# its sampled windows are whole steps, with their record_function spans; with
# torch-steps = false it gets time slices. In a cgroup of the test's own.
source "$(dirname "$0")/lib.sh"
source "$ROOT/tests/e2e/daemon_lib.sh"
need_torch
DPID=
cleanup() {
	[ -n "$DPID" ] && kill -KILL "$DPID" 2>/dev/null
	cgroup_kill
	rm -rf "$TMP"
}
trap cleanup EXIT
if ! cgroup_setup cuprobe-torch-daemon; then
	not_ok "daemon: a cgroup of the test's own" "no writable cgroup2 mount in /proc/mounts"
	done_testing
	exit 0
fi
export LD_LIBRARY_PATH=$REAL_LIBDIR

# daemon NAME [SETTING...]: a daemon on a free port with the settings, its log in $TMP/NAME.log.
daemon() {
	local name=$1
	shift
	PORT=$(free_port)
	printf '%s\n' "interval = 1" "window-steps = 2" "warmup = 1" "budget = 100" \
		"cgroup = /$CGNAME" "$@" >"$TMP/$name.conf"
	"$CUPROBE" daemon -c "$TMP/$name.conf" -l "127.0.0.1:$PORT" -o "$TMP/$name.out" -v \
		>"$TMP/$name.log" 2>&1 &
	DPID=$!
	until_true 60 grep -q "listening on" "$TMP/$name.log"
}

"${in_cg[@]}" "$REAL_PY" "$ROOT/tests/real/torch_train.py" --iters 100000000 >/dev/null 2>&1 &
T=$!
daemon on
expect "daemon, no rule: the PyTorch process is stepped by torch" \
	until_true 60 grep -q "sampling pid $T (python.*) with step probe torch" "$TMP/on.log"
expect "daemon: cuprobe_step_seconds of the PyTorch process" \
	until_true 60 sh -c "curl -s http://127.0.0.1:$PORT/metrics | grep -q 'cuprobe_step_seconds_count{pid=\"$T\"'"
expect "daemon: a sampled window written" until_true 60 sh -c "ls $TMP/on.out/*/*.pt.trace.json 2>/dev/null | grep -q ."
f=$(ls "$TMP"/on.out/*/*.pt.trace.json 2>/dev/null | head -1)
python3 - "$f" <<'PY' && ok "daemon: a window of whole steps, with their optimizer spans" ||
import collections, json, sys
ev = [e for e in json.load(open(sys.argv[1]))["traceEvents"] if e.get("cat") == "user_annotation"]
c = collections.Counter(e["name"].split("#")[0] for e in ev)
print(f"# {sorted(c.items())}")
sys.exit(0 if c["ProfilerStep"] == 2 and c["Optimizer.step"] == 2 else 1)
PY
	not_ok "daemon: a window of whole steps, with their optimizer spans" "see above; $f"
kill "$DPID"
wait "$DPID" 2>/dev/null
DPID=

daemon off "torch-steps = false"
expect "daemon, torch-steps = false: time slices" \
	until_true 60 grep -q "sampling pid $T (python.*) with time slices" "$TMP/off.log"
kill "$DPID"
wait "$DPID" 2>/dev/null
DPID=
kill $T
done_testing
