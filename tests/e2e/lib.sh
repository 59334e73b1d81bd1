# Shared by the end-to-end tests: TAP output and the paths they use.
# Each test prints "ok - NAME" or "not ok - NAME: why"; tests/run.sh counts them.
set -u
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CUPROBE=${CUPROBE:-$ROOT/cuprobe}
W=$ROOT/.output/workloads
CHECK="python3 $ROOT/tests/e2e/check_trace.py"
TMP=$(mktemp -d /tmp/cuprobe-e2e.XXXXXX)
# No cache of launch files unless a test names one (tests/run.sh says why).
export CUPROBE_CACHE=${CUPROBE_CACHE:-off}
# Every script ends with "# done" once it ran to its end (tests/run.sh checks).
trap 'rm -rf "$TMP"' EXIT
done_testing() { echo "# done"; }

ok() { echo "ok - $1"; }
not_ok() { echo "not ok - $1: $2"; }

# expect NAME COMMAND...: ok when COMMAND succeeds; else its output is the reason.
expect() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then ok "$name"; else not_ok "$name" "$(echo "$out" | tail -5 | tr '\n' ' ')"; fi
}

# expect_fail NAME PATTERN COMMAND...: ok when COMMAND exits non-zero and its
# stderr matches PATTERN (the message names the problem).
expect_fail() {
	local name=$1 pat=$2 out rc
	shift 2
	out=$("$@" 2>&1); rc=$?
	if [ $rc -eq 0 ]; then
		not_ok "$name" "exited 0: $out"
	elif ! grep -qE -- "$pat" <<<"$out"; then
		not_ok "$name" "message does not match /$pat/: $out"
	else
		ok "$name"
	fi
}

# until_true SECONDS COMMAND...: polls COMMAND until it succeeds.
until_true() {
	local n=$(( $1 * 20 ))
	shift
	while ! "$@" >/dev/null 2>&1 && [ $n -gt 0 ]; do sleep 0.05; n=$((n - 1)); done
	"$@" >/dev/null 2>&1
}

# wait_for FILE [SECONDS]: polls until FILE exists.
wait_for() {
	local f=$1 n=$(( ${2:-20} * 20 ))
	while [ ! -e "$f" ] && [ $n -gt 0 ]; do sleep 0.05; n=$((n - 1)); done
	[ -e "$f" ]
}

# The one trace file under a run folder.
trace_in() { ls "$1"/*.pt.trace.json 2>/dev/null; }

# attach_then_go PID OUT LOG GO [ARGS...]: cuprobe record -p PID -o OUT ARGS... into
# LOG; once it says it records, GO is made (the workload waits for it with
# --wait-file); then waits for the workload and cuprobe both.
attach_then_go() {
	local wl=$1 out=$2 log=$3 go=$4 rec
	shift 4
	"$CUPROBE" record -p "$wl" -o "$out" "$@" >"$log" 2>&1 &
	rec=$!
	for _ in $(seq 400); do
		grep -q "recording pid $wl" "$log" && break
		kill -0 $rec 2>/dev/null || break
		sleep 0.05
	done
	touch "$go"
	wait "$wl"
	wait "$rec"
}
