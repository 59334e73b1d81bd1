#!/usr/bin/env bash
# The loader built with ThreadSanitizer: the session's thread, the prober and
# the reaper share no state but messages, on runs that exercise them all:
# threads, libraries loaded while held, schedules, return probes, the agent,
# and an attach to a running process. TSan reports nothing, and the counts
# are still exact.
source "$(dirname "$0")/lib.sh"
TSAN=$ROOT/.output/tsan/cuprobe
O=$ROOT/.output

# tsan NAME CUPROBE-ARGS...: records under TSan; ok when it exits 0 and TSan said nothing.
tsan() {
	local name=$1 rc
	shift
	CUPROBE_AGENT=$O/libcuprobe-agent.so TSAN_OPTIONS=halt_on_error=0:exitcode=66 "$TSAN" record -q -o "$TMP/$name" "$@" \
		>"$TMP/$name.log" 2>&1
	rc=$?
	if [ $rc -ne 0 ] || grep -q "ThreadSanitizer" "$TMP/$name.log"; then
		not_ok "ThreadSanitizer: $name" "rc $rc: $(grep -m3 -A3 'WARNING: ThreadSanitizer' "$TMP/$name.log")"
		return 1
	fi
	ok "ThreadSanitizer: $name: clean"
}

CUPROBE_GT=$TMP/basic.gt.json tsan basic -- "$W/basic" --threads 4 --iters 30 &&
	expect "ThreadSanitizer: basic: launches equal ground truth" \
		$CHECK match --gt "$TMP/basic.gt.json" "$(trace_in "$TMP/basic/run_0")"
CUPROBE_GT=$TMP/dl.gt.json tsan dlopen -- "$W/dlopen_main" --iters 10 &&
	expect "ThreadSanitizer: a library loaded while held: launches equal ground truth" \
		$CHECK match --gt "$TMP/dl.gt.json" "$(trace_in "$TMP/dlopen/run_0")"
CUPROBE_GT=$TMP/sched.gt.json tsan schedule --step cuprobe_step \
	--schedule wait=1,warmup=1,active=2,repeat=2 -- "$W/basic" --threads 2 --iters 10 --steps \
	--sleep-ms 30 &&
	expect "ThreadSanitizer: a schedule: cycle 1 equals ground truth" \
		$CHECK match --gt "$TMP/sched.gt.json" --steps 6,7 "$(trace_in "$TMP/schedule/run_1")"
CUPROBE_GT=$TMP/lat.gt.json tsan latency --latency -- "$W/basic" --threads 2 --iters 10 &&
	expect "ThreadSanitizer: --latency: launches equal ground truth" \
		$CHECK match --gt "$TMP/lat.gt.json" "$(trace_in "$TMP/latency/run_0")"
CUPROBE_GT=$TMP/cupti.gt.json tsan cupti --cupti -- env \
	LD_PRELOAD="$O/libcuprobe-agent.so:$O/cupti_sim/libcupti.so.13" \
	LD_LIBRARY_PATH="$O/cupti_sim" "$W/basic" --threads 2 --iters 10 &&
	expect "ThreadSanitizer: --cupti: every launch joined to its GPU record" \
		test "$($CHECK field "$(trace_in "$TMP/cupti/run_0")" gpu |
			python3 -c 'import json,sys; g = json.load(sys.stdin); print(g["joined_launches"] == 180 and g["launches_without_gpu"] == 0)')" = True
# The events ring grows (a thread puts the new ring in BPF's slot) under 4 launching threads.
CUPROBE_GT=$TMP/grow.gt.json tsan ring_grow --ringbuf-size 64K -- "$W/basic" --threads 4 \
	--iters 2000 &&
	expect "ThreadSanitizer: a growing ring: recorded + dropped = made" \
		$CHECK accounted --gt "$TMP/grow.gt.json" "$(trace_in "$TMP/ring_grow/run_0")"

# An attach to a process that loads its CUDA library and holds many times.
"$W/dlloop" --ready-file "$TMP/dl.ready" 2>/dev/null &
dl=$!
wait_for "$TMP/dl.ready"
tsan attach -p $dl --duration 1.5
kill $dl
wait $dl 2>/dev/null
done_testing
