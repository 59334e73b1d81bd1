#!/usr/bin/env bash
# A trace that cannot be written (a full disk, the output folder removed or
# made read-only) loses its cycle and nothing else: the command runs to its
# end and its exit status is cuprobe's, the cause is said once, the lost
# cycles and launches are counted at the end, and every trace left is whole.
source "$(dirname "$0")/lib.sh"

# basic --threads 2 makes 9 calls per thread per step: 18 launches a step.
PER_STEP=18
ITERS=24
SCHED=wait=1,warmup=1,active=2,repeat=4
CYCLES=4
# The command (a shell) exits 3 after the workload, once it marks its end:
# the status must come through, and the shell must not be ended early.
RC=3
MOUNTS=()
cleanup() {
	for m in "${MOUNTS[@]}"; do umount -l "$m" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT

# start NAME OUT [SCHEDULE]: record in the background; its pid in $rec.
start() {
	local name=$1 out=$2 sched=${3:-$SCHED}
	CUPROBE_GT=$TMP/$name.gt.json "$CUPROBE" record -o "$out" --step cuprobe_step \
		--schedule "$sched" -- sh -c \
		"'$W/basic' --steps --threads 2 --sleep-ms 30 --iters $ITERS; touch '$TMP/$name.end'; exit $RC" \
		>"$TMP/$name.log" 2>&1 &
	rec=$!
}

# wait_log NAME PATTERN: until the log says PATTERN (or the run ends).
wait_log() {
	local n=400
	while ! grep -qsE -- "$2" "$TMP/$1.log" && kill -0 "$rec" 2>/dev/null && [ $n -gt 0 ]; do
		sleep 0.01
		n=$((n - 1))
	done
}

# check NAME OUT CAUSE LAUNCHES_PER_CYCLE: what every failure must keep true.
check() {
	local name=$1 out=$2 cause=$3 per=$4 rc bad="" f said lost launches written
	wait "$rec"
	rc=$?
	[ $rc -eq $RC ] && ok "$name: cuprobe exits with the command's status ($RC)" ||
		not_ok "$name: cuprobe exits with the command's status ($RC)" \
			"rc $rc: $(grep -v 'step [0-9]' "$TMP/$name.log" | tail -3 | tr '\n' ' ')"
	# The workload writes its ground truth as it exits, then the shell marks its end.
	[ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["steps"])' \
		"$TMP/$name.gt.json" 2>/dev/null)" = "$ITERS" ] && [ -e "$TMP/$name.end" ] &&
		ok "$name: the command ran to its end ($ITERS steps)" ||
		not_ok "$name: the command ran to its end ($ITERS steps)" \
			"no ground truth: $(grep -v 'step [0-9]' "$TMP/$name.log" | tail -2 | tr '\n' ' ')"
	said=$(grep -cE "cycle [0-9]+ is lost: its [0-9]+ launches could not be written to .*: $cause; " \
		"$TMP/$name.log")
	[ "$said" = 1 ] && ok "$name: the loss is said once, with its cause" ||
		not_ok "$name: the loss is said once, with its cause" \
			"$said lines: $(grep -E 'lost|cannot' "$TMP/$name.log" | head -3 | tr '\n' ' ')"
	[ "$(grep -c 'is lost:' "$TMP/$name.log")" = 1 ] && ok "$name: one message for one cause" ||
		not_ok "$name: one message for one cause" "$(grep -c 'is lost:' "$TMP/$name.log") lines"
	for f in "$out"/run_*/*; do
		[ -e "$f" ] || continue
		python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$f" 2>/dev/null || bad="$bad $f"
	done
	bad="$bad$(find "$out" -name '*.tmp' -o -name '.*' -type f 2>/dev/null)"
	[ -z "$bad" ] && ok "$name: the traces left are whole JSON, nothing half-written" ||
		not_ok "$name: the traces left are whole JSON, nothing half-written" "$bad"
	lost=$(sed -nE 's/.* ([0-9]+) cycles? lost, with ([0-9]+) launches.*/\1/p' "$TMP/$name.log")
	launches=$(sed -nE 's/.* ([0-9]+) cycles? lost, with ([0-9]+) launches.*/\2/p' "$TMP/$name.log")
	written=$(ls "$out"/run_*/*.pt.trace.json 2>/dev/null | wc -l)
	LOST=${lost:-0}
	[ -n "$lost" ] && [ "$lost" -ge 1 ] && [ $((lost + written)) = $CYCLES ] &&
		[ "$launches" = $((lost * per)) ] &&
		ok "$name: the lost count is said at the end ($lost cycles, $launches launches)" ||
		not_ok "$name: the lost count is said at the end" \
			"lost '$lost' launches '$launches', $written written of $CYCLES: $(tail -1 "$TMP/$name.log")"
}

# A full disk: the cycles lost while it is full; once space is back, the next are written.
mkdir -p "$TMP/full"
if mount -t tmpfs -o size=256k tmpfs "$TMP/full"; then
	MOUNTS+=("$TMP/full")
	dd if=/dev/zero of="$TMP/full/filler" bs=4k >/dev/null 2>&1
	start full "$TMP/full"
	# Space comes back once cycles 0 and 1 were lost (cycle 2 begins at step 9).
	wait_log full "step 10 RECORD"
	rm -f "$TMP/full/filler"
	check full "$TMP/full" "No space left on device" $((2 * PER_STEP))
	[ "$LOST" -ge 2 ] && ok "full disk: two cycles lost, said once" ||
		not_ok "full disk: two cycles lost, said once" "lost $LOST"
	[ -n "$(ls "$TMP"/full/run_*/*.pt.trace.json 2>/dev/null)" ] &&
		ok "full disk: cycles after space came back are written" ||
		not_ok "full disk: cycles after space came back are written" "$(ls -R "$TMP/full")"
else
	not_ok "full disk" "cannot mount a small tmpfs"
fi

# The output folder removed while a cycle is written: that cycle is lost, the
# folder is made again and the next cycles go there.
start removed "$TMP/removed" wait=1,warmup=1,active=3,repeat=4
n=500
while [ ! -d "$TMP/removed/run_0" ] && kill -0 "$rec" 2>/dev/null && [ $n -gt 0 ]; do
	sleep 0.005
	n=$((n - 1))
done
rm -rf "$TMP/removed"
check removed "$TMP/removed" "No such file or directory" $((3 * PER_STEP))
[ "$(grep -c "the output folder $TMP/removed was removed while recording: made it again" \
	"$TMP/removed.log")" = 1 ] && ok "removed folder: made again, said once" ||
	not_ok "removed folder: made again, said once" "$(grep -i removed "$TMP/removed.log")"

# The output folder made read-only after its first cycle: the rest are lost.
mkdir -p "$TMP/ro"
if mount -t tmpfs -o size=4m tmpfs "$TMP/ro"; then
	MOUNTS+=("$TMP/ro")
	start ro "$TMP/ro"
	wait_log ro "cycle 0: [0-9]+ launches ->"
	# A remount waits for no trace to be open for writing (EBUSY while one is).
	n=200
	until mount -o remount,ro "$TMP/ro" 2>/dev/null || [ $n -eq 0 ]; do
		sleep 0.005
		n=$((n - 1))
	done
	check ro "$TMP/ro" "Read-only file system" $((2 * PER_STEP))
	[ -n "$(trace_in "$TMP/ro/run_0")" ] && ok "read-only: the cycle before it is kept" ||
		not_ok "read-only: the cycle before it is kept" "$(ls -R "$TMP/ro")"
else
	not_ok "read-only folder" "cannot mount a tmpfs"
fi
done_testing
