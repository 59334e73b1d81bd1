#!/usr/bin/env bash
# record --cupti on a process using the real driver (the CUDA 12 runtime of
# PyPI's wheel, which calls cuInit) and PyPI's real libcupti 13: the driver
# loads the agent at cuInit, the agent loads that libcupti, CUPTI cannot start
# without a device, and cuprobe says so, naming the cause (the agent looks for
# the NVIDIA kernel driver and the CUDA driver's version), while the launches
# are recorded exactly.
source "$(dirname "$0")/lib.sh"
need_built "$R/basic12" "$ROOT/.output/libcuprobe-agent.so"
CUPTI_DIR=$(dirname "$REAL_CUPTI")

LD_DEBUG=libs LD_DEBUG_OUTPUT=$TMP/ld LD_LIBRARY_PATH=$CU12:$REAL_LIBDIR:$CUPTI_DIR \
	CUPROBE_GT=$TMP/gt.json timeout 120 "$CUPROBE" record --cupti -o "$TMP/out" \
	-- "$R/basic12" --threads 2 --iters 10 >"$TMP/log" 2>&1
rc=$?
[ $rc = 0 ] && ok "--cupti on the real driver: exits 0" || not_ok "--cupti on the real driver: exits 0" "rc $rc: $(tail -3 "$TMP/log" | tr '\n' ' ')"
# What the target's dynamic linker loaded, in order: the real pieces, the agent among them.
loaded=$(cat "$TMP"/ld.* 2>/dev/null | sed -n 's/.*calling init: //p')
for lib in "$REAL_CUDART12" "$REAL_LIBDIR/libcuda.so.1" "$REAL_CUPTI" "$ROOT/.output/libcuprobe-agent.so"; do
	grep -qxF "$lib" <<<"$loaded" && ok "--cupti: the target loaded $(basename "$lib")" ||
		not_ok "--cupti: the target loaded $(basename "$lib")" "not in: $(echo $loaded)"
done
expect "--cupti: the CUPTI error is said with its cause (no NVIDIA kernel driver, no GPU)" \
	grep -qE "CUPTI error [0-9]+: .*CUPTI_ERROR_[A-Z_]+; no NVIDIA kernel driver \(no /proc/driver/nvidia\): the CUDA driver finds no GPU here" "$TMP/log"
expect "--cupti: the launches are recorded all the same" $CHECK match --gt "$TMP/gt.json" \
	"$(trace_in "$TMP/out/run_0")"
done_testing
