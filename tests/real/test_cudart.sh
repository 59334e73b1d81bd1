#!/usr/bin/env bash
# The real libcudart 13 and 12 of PyPI's wheels (not the toolkit's), recorded
# exactly on nvcc workloads: without a driver they fail at "no driver" after
# the probe fired; with the real libcuda they reach it (CUDA 12: no device;
# CUDA 13: the 535 driver is older than the runtime) and the driver is probed too.
source "$(dirname "$0")/lib.sh"
need_built "$W/basic" "$R/basic12"

# cudaGetDeviceCount's result through a runtime, with LD_LIBRARY_PATH=$2.
device_count() { # libcudart, LD_LIBRARY_PATH
	LD_LIBRARY_PATH=$2 "$REAL_PY" -c '
import ctypes, sys
n = ctypes.c_int(-1)
print(ctypes.CDLL(sys.argv[1]).cudaGetDeviceCount(ctypes.byref(n)))' "$1" 2>&1
}
# 35 cudaErrorInsufficientDriver, 100 cudaErrorNoDevice.
r=$(device_count "$REAL_CUDART12" "")
[ "$r" = 35 ] && ok "cudart 12 wheel, no driver: cudaGetDeviceCount 35 (insufficient driver)" ||
	not_ok "cudart 12 wheel, no driver: cudaGetDeviceCount 35 (insufficient driver)" "got $r"
r=$(device_count "$REAL_CUDART12" "$REAL_LIBDIR")
[ "$r" = 100 ] && ok "cudart 12 wheel on the real driver: cudaGetDeviceCount 100 (no device)" ||
	not_ok "cudart 12 wheel on the real driver: cudaGetDeviceCount 100 (no device)" "got $r"

# record NAME WORKLOAD LD_LIBRARY_PATH RUNTIME [DRIVER]: launches exact, and
# the probes on the wheel's runtime (and on the real driver, when given).
record() {
	local name=$1 wl=$2 path=$3 rt=$4 drv=${5:-} pid
	if ! LD_LIBRARY_PATH=$path CUPROBE_GT=$TMP/$name.gt.json "$CUPROBE" record -v -o "$TMP/$name" \
		-- "$wl" --threads 2 --iters 10 >"$TMP/$name.log" 2>&1; then
		not_ok "$name: record" "$(tail -3 "$TMP/$name.log" | tr '\n' ' ')"
		return
	fi
	expect "$name: launches equal ground truth" $CHECK match --gt "$TMP/$name.gt.json" \
		"$(trace_in "$TMP/$name/run_0")"
	pid=$(sed -n 's/.*pid \([0-9]*\) ([a-z0-9]*).*/\1/p' "$TMP/$name.log" | head -1)
	expect "$name: the probes are on the wheel's $(basename "$rt")" \
		grep -qF "launch probes on /proc/$pid/root$rt" "$TMP/$name.log"
	if [ -n "$drv" ]; then
		expect "$name: the real driver is loaded and probed" \
			grep -qF "launch probes on /proc/$pid/root$drv" "$TMP/$name.log"
	elif grep -q 'probes on .*/libcuda\.so' "$TMP/$name.log"; then
		not_ok "$name: no driver is loaded" "$(grep 'probes on .*/libcuda\.so' "$TMP/$name.log" | head -1)"
	else
		ok "$name: no driver is loaded"
	fi
}
record cudart13 "$W/basic" "$CU13" "$REAL_CUDART13"
record cudart13+driver "$W/basic" "$CU13:$REAL_LIBDIR" "$REAL_CUDART13" "$REAL_LIBCUDA"
record cudart12 "$R/basic12" "$CU12" "$REAL_CUDART12"
record cudart12+driver "$R/basic12" "$CU12:$REAL_LIBDIR" "$REAL_CUDART12" "$REAL_LIBCUDA"
done_testing
