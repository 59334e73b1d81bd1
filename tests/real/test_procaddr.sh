#!/usr/bin/env bash
# The real driver's cuGetProcAddress_v2 and cuGetProcAddress hand out, for
# every driver entry cuprobe probes, exactly the export dlsym finds (where the
# uprobe is), for both stream flavours, before cuInit and after one that failed.
source "$(dirname "$0")/lib.sh"
need_built "$R/procaddr"

# The program prints one line per function, flavour and phase; one test here.
"$R/procaddr" "$REAL_LIBCUDA" >"$TMP/procaddr.out" 2>&1
rc=$?
n=$(grep -c '^ok ' "$TMP/procaddr.out")
# 12 names x 4 ways x 2 phases, and the failed cuInit.
[ $rc = 0 ] && [ "$n" = 97 ] && ok "procaddr: all 97 checks on $(basename "$REAL_LIBCUDA")" ||
	not_ok "procaddr: all 97 checks on $(basename "$REAL_LIBCUDA")" "exit $rc, $n ok: $(grep -v '^ok' "$TMP/procaddr.out" | head -4 | tr '\n' ' ')"

# The check tells a driver apart whose cuGetProcAddress gives other pointers:
# the toolkit's stub libcuda fails every call, so nothing it gives is the export.
stub=${CUDA_HOME:-/usr/local/cuda}/lib64/stubs/libcuda.so
"$R/procaddr" "$stub" >"$TMP/stub.out" 2>&1
rc=$?
[ $rc = 1 ] && grep -q '^not ok - before cuInit: cuGetProcAddress_v2 legacy(cuLaunchKernel)' "$TMP/stub.out" &&
	ok "procaddr: the toolkit's stub driver fails the check" ||
	not_ok "procaddr: the toolkit's stub driver fails the check" "exit $rc: $(head -3 "$TMP/stub.out" | tr '\n' ' ')"
done_testing
