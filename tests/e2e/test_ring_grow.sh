#!/bin/bash
# The events ring grows with the rate (docs/performance.md): from a 64K start,
# four threads launching without pause make it grow, the growth is said with
# its rate, and every launch is accounted for exactly: recorded + dropped =
# made (a launch lost before the ring grew is counted, and said).
. "$(dirname "$0")/lib.sh"

CUPROBE_GT=$TMP/grow.gt.json timeout 120 "$CUPROBE" record --ringbuf-size 64K -o "$TMP/grow" \
	-- "$W/basic" --threads 4 --iters 5000 >"$TMP/grow.log" 2>&1
rc=$?
[ $rc -eq 0 ] && ok "64K start, 4 threads: the command runs to its end" ||
	not_ok "64K start, 4 threads: the command runs to its end" "rc $rc $(tail -3 "$TMP/grow.log")"
grep -qE "the events ring grew from 64K to [0-9]+[KMG]: it was [0-9]+% full, with launches coming at [0-9.]+ M/s" \
	"$TMP/grow.log" && ok "64K start: the ring grew, said with the rate" ||
	not_ok "64K start: the ring grew, said with the rate" "$(grep -i ring "$TMP/grow.log" | head -3)"
final=$(sed -nE 's/.*the events ring ended at ([0-9]+[KMG]), grown ([0-9]+) times?.*/\1/p' "$TMP/grow.log")
case $final in
"" | 64K | [0-9]K) not_ok "64K start: the final size is said, above the start" "final '$final'" ;;
*) ok "64K start: the final size is said, above the start ($final)" ;;
esac
# Each growth said once: as many lines as the count at the end.
n=$(grep -c "the events ring grew from" "$TMP/grow.log")
grew=$(sed -nE 's/.*the events ring ended at [0-9]+[KMG], grown ([0-9]+) times?.*/\1/p' "$TMP/grow.log")
[ "$n" = "$grew" ] && ok "each growth said once ($n)" || not_ok "each growth said once" "$n lines, grew '$grew'"
expect "64K start, 4 threads: launches + drops = launches made, probe hits explained, drops said" \
	$CHECK accounted --gt "$TMP/grow.gt.json" --said "$TMP/grow.log" "$(trace_in "$TMP/grow/run_0")"

# An 8K ring and one thread's burst of 90,000 launches, over before the loader's
# next turn: nearly all are lost. The growth says the burst's rate (what came
# over the span it came in, not the 0 of a window measured after it) and how
# many of them were lost, as the cycle does; or, with no rate measured, what
# was lost without one.
CUPROBE_GT=$TMP/burst.gt.json timeout 60 "$CUPROBE" record --ringbuf-size 8K -o "$TMP/burst" \
	-- "$W/basic" --threads 1 --iters 10000 >"$TMP/burst.log" 2>&1
if why=$(python3 - "$TMP/burst.log" 2>&1 <<'PY'
import re, sys
log = open(sys.argv[1]).read()
g = re.search(r"the events ring grew from 8K to \S+: it was \d+% full(.*)", log)
cycle = re.search(r"cycle 0 lost (\d+) launches: the ring buffer was full", log)
if not g or not cycle:
    sys.exit("no growth or no loss said: " + log[-300:])
said, dropped = g.group(1), int(cycle.group(1))
rate = re.fullmatch(r", with launches coming at ([\d.]+) M/s \((\d+) MB/s\): (\d+) came within "
                    r"([\d.]+) ms, (\d+) of them lost for want of room", said)
none = re.fullmatch(r"; (\d+) launches were lost for want of room \(no rate measured: .*\)", said)
if rate:
    m, n, ms, lost = float(rate.group(1)), int(rate.group(3)), float(rate.group(4)), int(rate.group(5))
    # The burst made 90,000 launches in well under a second: never a rate near 0.
    if m < 0.01 or abs(m - n / ms / 1e3) > 0.01 + m / 50 or not 0 < lost <= min(n, dropped):
        sys.exit("a rate or a loss that is not what came: " + g.group(0))
elif not none or not 0 < int(none.group(1)) <= dropped:
    sys.exit("neither the burst's rate nor what was lost: " + g.group(0))
PY
); then
	ok "8K burst: the growth says the burst's rate and what was lost"
else
	not_ok "8K burst: the growth says the burst's rate and what was lost" "$why"
fi

# A ring that never fills half never grows, and says nothing of it.
CUPROBE_GT=$TMP/still.gt.json timeout 60 "$CUPROBE" record -o "$TMP/still" \
	-- "$W/basic" --threads 2 --iters 10 >"$TMP/still.log" 2>&1
! grep -q "events ring" "$TMP/still.log" && ok "a ring that never fills half does not grow" ||
	not_ok "a ring that never fills half does not grow" "$(grep "events ring" "$TMP/still.log")"
expect "the default ring: launches = launches made" \
	$CHECK accounted --gt "$TMP/still.gt.json" "$(trace_in "$TMP/still/run_0")"
done_testing
