#!/usr/bin/env bash
# One trap per launch: a runtime launch that enters the driver pays the
# runtime's probe and the driver's while cuprobe learns each host stub's
# CUfunction from them; then the runtime's kernel launch probes go and the
# driver's record those launches, named from what was learned. Names and
# counts stay exact, for a command and for -p, on NVIDIA's real driver
# (through a stand-in runtime that takes its entry from cuGetProcAddress, as
# libcudart does) and on the stand-in driver.
source "$(dirname "$0")/lib.sh"
REAL=${CUPROBE_REAL:-/var/cache/cuprobe/real}
ITERS=1500 # 1 ms apart: learning ends after 1000 quiet nested launches, seen every 200 ms

# one_trap NAME TRACE: every hit is a launch or a nested driver entry, and fewer
# than the 2 x ITERS runtime launches paid a nested one (two traps).
one_trap() {
	python3 - "$2" "$ITERS" <<'PY' >"$TMP/one_trap.out" 2>&1 &&
import json, sys
m = json.load(open(sys.argv[1]))["cuprobe"]
runtime = 2 * int(sys.argv[2])
print(f"{m['launches']} launches, {m['nested_skipped']} nested, {m['probe_hits']} hits")
sys.exit(not (m["probe_hits"] == m["launches"] + m["nested_skipped"] and
              m["nested_skipped"] < runtime - 500))
PY
		ok "$1: one trap per runtime launch once stubs are learned ($(cat "$TMP/one_trap.out"))" ||
		not_ok "$1: one trap" "$(cat "$TMP/one_trap.out")"
}

lib=$(find "$REAL/libcuda1/usr/lib" -name 'libcuda.so.[0-9]*.*' -type f 2>/dev/null | sort | head -1)
if [ -z "$lib" ] && [ -x "$ROOT/scripts/install-real.sh" ]; then
	"$ROOT/scripts/install-real.sh" >"$TMP/install.log" 2>&1
	lib=$(find "$REAL/libcuda1/usr/lib" -name 'libcuda.so.[0-9]*.*' -type f 2>/dev/null | sort | head -1)
fi
if [ -z "$lib" ]; then
	not_ok "real libcuda" "none under $REAL/libcuda1 and it could not be fetched: run scripts/install-real.sh (needs deb.debian.org)"
else
	export REAL_LIBCUDA=$lib
	"$CUPROBE" record -v -o "$TMP/cmd" -- env CUPROBE_GT="$TMP/cmd.gt.json" "$W/real_nested" \
		--iters $ITERS --sleep-ms 1 >"$TMP/cmd.log" 2>&1
	f=$(trace_in "$TMP/cmd/run_0")
	expect "real driver, command: names and counts exact" $CHECK match --gt "$TMP/cmd.gt.json" "$f"
	expect "real driver, command: -v says when one trap begins" \
		grep -q "one trap per launch from now on" "$TMP/cmd.log"
	one_trap "real driver, command" "$f"

	"$CUPROBE" record --latency -o "$TMP/lat" -- env CUPROBE_GT="$TMP/lat.gt.json" \
		"$W/real_nested" --iters $ITERS --sleep-ms 1 >"$TMP/lat.log" 2>&1
	f=$(trace_in "$TMP/lat/run_0")
	expect "real driver, --latency: names and counts exact" \
		$CHECK match --gt "$TMP/lat.gt.json" "$f"
	one_trap "real driver, --latency" "$f"

	# -p: the handles and stubs predate cuprobe; they are learned from live launches.
	CUPROBE_GT=$TMP/p.gt.json "$W/real_nested" --iters $ITERS --sleep-ms 1 --wait-file "$TMP/go" \
		2>/dev/null &
	wl=$!
	attach_then_go $wl "$TMP/p" "$TMP/p.log" "$TMP/go"
	f=$(trace_in "$TMP/p/run_0")
	expect "real driver, -p: names and counts exact" $CHECK match --gt "$TMP/p.gt.json" "$f"
	one_trap "real driver, -p" "$f"
fi

# The stand-in driver (the toolkit's stub libcuda) under libfakert.so: the same.
"$CUPROBE" record -o "$TMP/fake" -- env CUPROBE_GT="$TMP/fake.gt.json" "$W/nested" \
	--iters $ITERS --sleep-ms 1 >"$TMP/fake.log" 2>&1
f=$(trace_in "$TMP/fake/run_0")
expect "stand-in driver: names and counts exact" $CHECK match --gt "$TMP/fake.gt.json" "$f"
one_trap "stand-in driver" "$f"
done_testing
