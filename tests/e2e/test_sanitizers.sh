#!/usr/bin/env bash
# The loader built with ASan and UBSan records real workloads cleanly.
source "$(dirname "$0")/lib.sh"
SAN=$ROOT/.output/san/cuprobe

for wl in basic dlopen_main static names; do
	CUPROBE_GT=$TMP/$wl.gt.json ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 \
		UBSAN_OPTIONS=halt_on_error=1 "$SAN" record -q --latency -o "$TMP/$wl" -- "$W/$wl" \
		>"$TMP/$wl.log" 2>&1
	rc=$?
	if [ $rc -ne 0 ] || grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$TMP/$wl.log"; then
		not_ok "sanitized cuprobe on $wl" "rc $rc: $(grep -m3 -E 'ERROR|runtime error' "$TMP/$wl.log")"
		continue
	fi
	expect "sanitized cuprobe on $wl: launches equal ground truth" \
		$CHECK match --gt "$TMP/$wl.gt.json" "$(trace_in "$TMP/$wl/run_0")"
done
# The cache of launch files under ASan/UBSan: written by the first run, probed ahead from by
# the second (tests/e2e/test_cache.sh checks what they do).
for run in 1 2; do
	CUPROBE_CACHE=$TMP/san-cache/launch-files CUPROBE_GT=$TMP/cache$run.gt.json \
		ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=halt_on_error=1 \
		"$SAN" record -v -o "$TMP/cache$run" -- "$W/dlopen_main" >"$TMP/cache$run.log" 2>&1
	rc=$?
	if [ $rc -ne 0 ] || grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$TMP/cache$run.log"; then
		not_ok "sanitized cuprobe with a cache, run $run" "rc $rc: $(grep -m3 -E 'ERROR|runtime error' "$TMP/cache$run.log")"
	elif [ $run = 2 ] && ! grep -q "probed before it is mapped" "$TMP/cache$run.log"; then
		not_ok "sanitized cuprobe with a cache, run $run" "nothing probed ahead: $(grep -m3 cache "$TMP/cache$run.log")"
	else
		expect "sanitized cuprobe with a cache, run $run: clean, launches equal ground truth" \
			$CHECK match --gt "$TMP/cache$run.gt.json" "$(trace_in "$TMP/cache$run/run_0")"
	fi
done
# --stack under ASan/UBSan: native stacks through libdwfl, and Python frames read from a
# live interpreter (tests/e2e/test_stacks.sh checks what they say).
for wl in "$W/stacks" "python3 $ROOT/tests/workloads/py_launch.py --linger 1"; do
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=halt_on_error=1 \
		"$SAN" record -q --stack -o "$TMP/stack" -- $wl >"$TMP/stack.log" 2>&1
	rc=$?
	if [ $rc -ne 0 ] || grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$TMP/stack.log"; then
		not_ok "sanitized cuprobe --stack on ${wl##*/}" "rc $rc: $(grep -m3 -E 'ERROR|runtime error' "$TMP/stack.log")"
	else
		ok "sanitized cuprobe --stack on ${wl##*/}"
	fi
done
# The self-contained build (make STATIC=1) links and records the same.
STATIC=$ROOT/.output/static/cuprobe
if file "$STATIC" | grep -q "statically linked"; then
	ok "static build: statically linked"
else
	not_ok "static build: statically linked" "$(file "$STATIC")"
fi
CUPROBE_GT=$TMP/static.gt.json "$STATIC" record -q -o "$TMP/static-build" -- "$W/basic" --threads 2 --iters 5 \
	>"$TMP/static.log" 2>&1 &&
	expect "static build on basic: launches equal ground truth" \
		$CHECK match --gt "$TMP/static.gt.json" "$(trace_in "$TMP/static-build/run_0")" ||
	not_ok "static build on basic" "$(tail -3 "$TMP/static.log")"
done_testing
