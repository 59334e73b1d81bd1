# Shared by the real and torch tiers: tests/e2e/lib.sh's TAP helpers, plus
# where scripts/install-real.sh put NVIDIA's binaries (its env.sh: REAL_LIBDIR,
# REAL_LIBCUDA, REAL_CUDART13, REAL_CUDART12, REAL_CUPTI, REAL_PY, REAL_TORCH, and
# REAL_HTA_PY, the python of the venv with HTA and the TensorBoard plugin).
source "$(dirname "${BASH_SOURCE[0]}")/../e2e/lib.sh"
REAL_DIR=${CUPROBE_REAL:-/var/cache/cuprobe/real}
R=$ROOT/.output/real
if [ ! -r "$REAL_DIR/env.sh" ]; then
	not_ok "NVIDIA's real binaries" "no $REAL_DIR/env.sh: run scripts/install-real.sh (make test does)"
	done_testing
	exit 0
fi
source "$REAL_DIR/env.sh"
CU13=$(dirname "$REAL_CUDART13")
CU12=$(dirname "$REAL_CUDART12")

# need_torch: a not-ok line and the end of the script where the cache has no torch.
need_torch() {
	[ "${REAL_TORCH:-0}" = 1 ] && return 0
	not_ok "torch in $REAL_DIR/venv" "not installed: run scripts/install-real.sh --torch (make test-torch does)"
	done_testing
	exit 0
}

# need_built FILE...: a not-ok line and the end of the script when one is missing.
need_built() {
	local f
	for f in "$@"; do
		[ -e "$f" ] && continue
		not_ok "built $f" "missing: make real-tests (make test builds it)"
		done_testing
		exit 0
	done
}

# The per-call time real_driver --time prints ("ns/call X"), or nothing.
ns_per_call() {
	sed -n 's/^ns\/call \([0-9]*\)$/\1/p' "$1"
}
