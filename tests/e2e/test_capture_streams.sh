#!/usr/bin/env bash
# Stream capture is not execution: the capture workload (tests/workloads/capture.cu,
# on the stand-in runtime) makes launches, copies and sets into captured streams
# (a fork/join across two streams through events, a thread-local capture on the
# per-thread default stream, a relaxed one) beside ordinary ones. The ordinary
# ones are exactly the trace's launches; the captured ones are exactly its
# cuda_capture events, each in its capture, and no count takes them for launches.
# (test_capture.sh is the daemon's /capture, another thing.)
source "$(dirname "$0")/lib.sh"
CAPCHECK="python3 $(dirname "$0")/check_capture.py"

# check_run NAME DIR GT: the trace of DIR against the workload's two ground truths.
check_run() {
	local name=$1 f
	f=$(trace_in "$2/run_0")
	expect "$name: every ordinary launch exact, no capture taken for one" \
		$CHECK match --any-step --gt "$3" "$f"
	expect "$name: every captured call in its capture, exactly, and counted as captured" \
		$CAPCHECK "$f" "$3.captured"
	expect "$name: the trace is valid" $CHECK valid "$f"
}

"$CUPROBE" record -o "$TMP/cmd" -- env CUPROBE_GT="$TMP/cmd.gt.json" "$W/capture" --iters 4 \
	>"$TMP/cmd.log" 2>&1
check_run "command" "$TMP/cmd" "$TMP/cmd.gt.json"
f=$(trace_in "$TMP/cmd/run_0")
launches=$($CHECK field "$f" launches)
[ "$launches" = 28 ] && ok "command: 7 launches an iteration, 4 iterations" ||
	not_ok "command: launches" "$launches (want 28)"
expect "command: cuprobe says how many were captured" \
	grep -q "cycle 0: 32 more made into captured streams" "$TMP/cmd.log"

# -p: the same once attached.
CUPROBE_GT=$TMP/p.gt.json "$W/capture" --iters 3 --wait-file "$TMP/go" 2>/dev/null &
wl=$!
attach_then_go $wl "$TMP/p" "$TMP/p.log" "$TMP/go"
check_run "-p" "$TMP/p" "$TMP/p.gt.json"

# The report: captured calls are in no kernel or API table, and said apart.
"$CUPROBE" report "$TMP/cmd" >"$TMP/cmd.report" 2>&1
expect "report: a Captured line counts them" \
	grep -q "^Captured   32 launches, copies and sets made into captured streams" "$TMP/cmd.report"
"$CUPROBE" report --format json "$TMP/cmd" >"$TMP/cmd.json" 2>&1
expect "report: the JSON has 28 launches and 32 captured" \
	python3 -c "import json,sys; r=json.load(open(sys.argv[1])); sys.exit(not (r['launches'] == 28 and r['captured'] == 32))" "$TMP/cmd.json"
expect "report: no captured kernel in the kernel table (k_c launched 8 times, 4 captured)" \
	python3 - "$TMP/cmd.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
rows = [k for k in r["kernels"] if "k_c" in k["name"]]
sys.exit(not (len(rows) == 1 and rows[0]["launches"] == 8))
PY
done_testing
