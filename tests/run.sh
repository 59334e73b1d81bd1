#!/usr/bin/env bash
# Runs the test tiers and ends with one line: "N passed, N failed".
#   tests/run.sh            all tiers but torch
#   tests/run.sh unit san   some of them (unit, san, fuzz, bpf, e2e, real, torch)
# Each tier runs what one folder holds (tests/README.md): unit (tests/unit/,
# cmocka, no root), san (the same under ASan/UBSan), fuzz (tests/fuzz/, the
# agent's record decoder, briefly), bpf (tests/bpf/, root: cuprobe's BPF
# programs attached to the test binary's own functions), e2e (tests/e2e/,
# root: the real cuprobe on nvcc workloads, bad inputs, the ASan build of
# cuprobe, the agent on the CUPTI simulator; and the GPU check's self-test,
# tests/gpu/selftest.sh), real (tests/real/, root: NVIDIA's real libcuda,
# libcudart 12 and 13 and libcupti, from scripts/install-real.sh), torch
# (tests/real/torch_*.sh, root: import torch under cuprobe;
# scripts/install-real.sh --torch; make test-torch).
set -u
cd "$(dirname "$0")/.."
# Every test starts with no cache of launch files, so that one run's probing
# ahead does not change the next's holds; tests/e2e/test_cache.sh tests it.
export CUPROBE_CACHE=off
OUT=.output
passed=0 failed=0
failures=()

count_tap() { # name, then TAP text on stdin
	local name=$1 line
	while IFS= read -r line; do
		case "$line" in
		"ok "*) passed=$((passed + 1)) ;;
		"not ok "*) failed=$((failed + 1)); failures+=("$name: ${line#not ok }") ;;
		esac
		printf '%s\n' "$line"
	done
}

run_units() { # folder with test binaries, folder with their sources
	local dir=$1 src=$2 t rc
	for t in "$dir"/test_*; do
		[ -x "$t" ] || continue
		# A binary left by a test since renamed or split is not run.
		[ -f "$src/${t##*/}.c" ] || continue
		echo "# $t"
		CMOCKA_MESSAGE_OUTPUT=TAP "$t" > "$OUT/last-unit.log" 2>&1
		rc=$?
		count_tap "$t" < "$OUT/last-unit.log"
		# A crash before any result still counts as a failure.
		if [ $rc -ne 0 ] && ! grep -q '^not ok' "$OUT/last-unit.log"; then
			failed=$((failed + 1)); failures+=("$t: exited $rc")
			echo "not ok - $t exited $rc"
		fi
	done
}

# The decoder of the agent's records, fuzzed briefly (make fuzz runs it longer).
run_fuzz() {
	local fz=$OUT/agent_tests/fuzz_records
	if "$fz" -runs=20000 -max_len=8192 "$OUT/agent_tests/fuzz-corpus" >"$OUT/fuzz.log" 2>&1; then
		count_tap fuzz <<<"ok - record decoder: 20000 fuzzed chunks, no crash"
	else
		count_tap fuzz <<<"not ok - record decoder fuzzing: $(grep -m1 ERROR "$OUT/fuzz.log")"
	fi
}

# A tier that loads BPF programs counts one failure without root.
need_root() { # tier
	[ "$(id -u)" -eq 0 ] && return 0
	failed=$((failed + 1)); failures+=("$1: needs root")
	echo "not ok - $1 tests need root (BPF): run make test as root"
	return 1
}

run_e2e() {
	local t
	need_root e2e || return
	for t in tests/e2e/test_*.sh tests/gpu/selftest.sh; do
		echo "# $t"
		bash "$t" > "$OUT/last-e2e.log" 2>&1
		count_tap "$t" < "$OUT/last-e2e.log"
		# A script that stopped early (an error in the script itself) fails.
		if ! tail -1 "$OUT/last-e2e.log" | grep -q '^# done'; then
			failed=$((failed + 1)); failures+=("$t: did not run to its end")
			echo "not ok - $t did not run to its end"
		fi
	done
}

# Scripts of TAP lines, each ending "# done": the e2e, real and torch tiers.
run_scripts() { # tier, scripts...
	local tier=$1 t
	shift
	need_root "$tier" || return
	for t in "$@"; do
		echo "# $t"
		bash "$t" > "$OUT/last-$tier.log" 2>&1
		count_tap "$t" < "$OUT/last-$tier.log"
		if ! tail -1 "$OUT/last-$tier.log" | grep -q '^# done'; then
			failed=$((failed + 1)); failures+=("$t: did not run to its end")
			echo "not ok - $t did not run to its end"
		fi
	done
}

tiers=("$@")
[ ${#tiers[@]} -gt 0 ] || tiers=(unit san fuzz bpf e2e real)
for tier in "${tiers[@]}"; do
	case "$tier" in
	unit) run_units "$OUT/tests" tests/unit ;;
	san) run_units "$OUT/san/tests" tests/unit ;;
	fuzz) run_fuzz ;;
	bpf) need_root bpf && run_units "$OUT/bpf_tests" tests/bpf ;;
	e2e) run_e2e ;;
	real) run_scripts real tests/real/test_*.sh ;;
	torch) run_scripts torch tests/real/torch_*.sh ;;
	*) echo "run.sh: unknown tier $tier (unit, san, fuzz, bpf, e2e, real, torch)" >&2; exit 2 ;;
	esac
done

if [ ${#failures[@]} -gt 0 ]; then
	echo "# failures:"
	printf '#   %s\n' "${failures[@]}"
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
