#!/usr/bin/env bash
# record -p PID: attached before the first launch, every launch is recorded;
# attached while launching, what follows the attach is.
source "$(dirname "$0")/lib.sh"

# start_recording LOG PID ARGS...: cuprobe in the background, waits until it says it records.
start_recording() {
	local log=$1 pid=$2
	shift 2
	"$CUPROBE" record -p "$pid" "$@" >"$log" 2>&1 &
	REC=$!
	for _ in $(seq 200); do
		grep -q "recording pid ${pid##*,}" "$log" && return 0
		kill -0 $REC 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

# Before launching: the workload waits for a file that the test creates once cuprobe is in.
CUPROBE_GT=$TMP/before.gt.json "$W/basic" --threads 2 --iters 20 --wait-file "$TMP/go" 2>/dev/null &
wl=$!
sleep 0.3
if start_recording "$TMP/before.log" $wl -o "$TMP/before"; then
	touch "$TMP/go"
	wait $wl
	wait $REC
	rc=$?
	[ $rc = 0 ] && ok "-p: exits 0 when the target ends" || not_ok "-p: exits 0 when the target ends" "rc $rc"
	expect "-p before launching: launches equal ground truth" $CHECK match \
		--gt "$TMP/before.gt.json" "$(trace_in "$TMP/before/run_0")"
else
	not_ok "-p before launching" "$(cat "$TMP/before.log")"
	kill $wl 2>/dev/null
fi

# A process with no CUDA library yet: cuprobe says it waits, then finds the dlopen'd one.
CUPROBE_GT=$TMP/dl.gt.json "$W/dlopen_main" --iters 10 --wait-file "$TMP/go2" 2>/dev/null &
wl=$!
sleep 0.3
if start_recording "$TMP/dl.log" $wl -o "$TMP/dl"; then
	touch "$TMP/go2"
	wait $wl
	wait $REC
	expect "-p: says it watches for a CUDA library" grep -q "no CUDA library mapped yet" "$TMP/dl.log"
	expect "-p: library loaded after attach is probed" $CHECK match \
		--gt "$TMP/dl.gt.json" "$(trace_in "$TMP/dl/run_0")"
else
	not_ok "-p dlopen after attach" "$(cat "$TMP/dl.log")"
	kill $wl 2>/dev/null
fi

# While launching: some iterations are missed, none is invented or doubled.
CUPROBE_GT=$TMP/during.gt.json "$W/basic" --threads 2 --iters 60 --sleep-ms 20 \
	--ready-file "$TMP/ready" 2>/dev/null &
wl=$!
wait_for "$TMP/ready"
sleep 0.2
if start_recording "$TMP/during.log" $wl -o "$TMP/during"; then
	wait $wl
	wait $REC
	python3 - "$TMP/during.gt.json" "$(trace_in "$TMP/during/run_0")" <<'PY' && ok "-p while launching: a subset, none doubled" || not_ok "-p while launching: a subset, none doubled" "see above"
import collections, json, sys
sys.path.insert(0, "tests/e2e")
from check_trace import gt_key, launch_key
gt = collections.Counter()
for c in json.load(open(sys.argv[1]))["calls"]:
    gt[gt_key(c)] += c["count"]
got = collections.Counter(launch_key(e) for e in json.load(open(sys.argv[2]))["traceEvents"]
                          if e.get("cat") == "cuda_runtime")
total = sum(got.values())
bad = [k for k in got if got[k] > gt[k]]
print(f"# {total} of {sum(gt.values())} launches recorded")
sys.exit(1 if bad or total == 0 or total >= sum(gt.values()) else 0)
PY
else
	not_ok "-p while launching" "$(cat "$TMP/during.log")"
	kill $wl 2>/dev/null
fi

# Two processes at once: one file each in the same run folder.
CUPROBE_GT=$TMP/a.gt.json "$W/basic" --threads 1 --iters 10 --wait-file "$TMP/go3" 2>/dev/null &
a=$!
CUPROBE_GT=$TMP/b.gt.json "$W/static" --iters 10 --wait-file "$TMP/go3" 2>/dev/null &
b=$!
sleep 0.3
if start_recording "$TMP/two.log" "$a,$b" -o "$TMP/two" && grep -q "recording pid $b" "$TMP/two.log"; then
	touch "$TMP/go3"
	wait $a $b
	wait $REC
	expect "-p A,B: first process" $CHECK match --gt "$TMP/a.gt.json" "$(ls "$TMP"/two/run_0/*_$a.*.json)"
	expect "-p A,B: second process" $CHECK match --gt "$TMP/b.gt.json" "$(ls "$TMP"/two/run_0/*_$b.*.json)"
else
	not_ok "-p A,B" "$(cat "$TMP/two.log")"
	kill $a $b 2>/dev/null
fi
done_testing
