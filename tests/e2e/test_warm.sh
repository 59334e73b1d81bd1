#!/usr/bin/env bash
# Uprobe registration kept warm while holds come (internals.md, "Holds"): a
# record whose command loads a CUDA library keeps it warm and says so with
# -v; so are windows well after the start, each a stretch of its own, their
# launches exact; it leaves no tracefs event behind; CUPROBE_WARM=off turns it off and
# says so; a cuprobe killed with SIGKILL leaves its event, which the next
# session removes. Where no tracefs is mounted, cuprobe mounts one for its own
# thread, leaving the mounts it sees as they were. What it buys is measured in
# bench/ (torch_hold_max_ms_cold).
EVENTS=/sys/kernel/tracing/uprobe_events
# A host with no tracefs mounted: this script looks at the events through a
# mount of its own, in a mount namespace of its own (the host's mounts stay).
if [ ! -e "$EVENTS" ] && [ -z "${WARM_OWN_NS:-}" ]; then
	WARM_OWN_NS=1 exec unshare --mount --propagation private -- bash -c \
		'mount -t tracefs tracefs /sys/kernel/tracing && exec "$0" "$@"' "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"

if [ ! -w "$EVENTS" ]; then
	not_ok "warm: tracefs's uprobe_events is writable" "$EVENTS: mount tracefs at /sys/kernel/tracing"
	done_testing
	exit 0
fi
# events_of PID: the tracefs events of cuprobe process PID.
events_of() { grep -c "^p:cuprobe/warm_$1_" "$EVENTS"; }

CUPROBE_GT=$TMP/dl.gt.json "$CUPROBE" record -v -o "$TMP/dl" -- "$W/dlopen_main" --iters 5 \
	>"$TMP/dl.log" 2>&1 &
rec=$!
wait $rec
rc=$?
[ $rc = 0 ] && ok "warm: record of a dlopen'd CUDA library exits 0" ||
	not_ok "warm: record of a dlopen'd CUDA library exits 0" "rc $rc: $(tail -3 "$TMP/dl.log")"
expect "warm: its launches equal its ground truth" $CHECK match --gt "$TMP/dl.gt.json" \
	"$(trace_in "$TMP/dl/run_0")"
line=$(grep 'holds: uprobe registration kept warm for' "$TMP/dl.log")
writes=$(sed -n 's/.*kept warm for [0-9.]* s in [0-9]* stretches (\([0-9]*\) writes.*/\1/p' <<<"$line")
[ -n "$writes" ] && [ "$writes" -ge 1 ] && ok "warm: -v says registration was kept warm ($writes writes)" ||
	not_ok "warm: -v says registration was kept warm" "${line:-no line}: $(grep 'holds:' "$TMP/dl.log")"
[ "$(events_of $rec)" = 0 ] && ok "warm: the session leaves no tracefs event" ||
	not_ok "warm: the session leaves no tracefs event" "$(grep "warm_${rec}_" "$EVENTS")"

# Windows well after the start (100 steps of 20 ms apart, the start's warm window being 1 s):
# each is kept warm from before its attach to after its detach, a stretch of its own.
CUPROBE_GT=$TMP/win.gt.json "$CUPROBE" record -v -o "$TMP/win" --step cuprobe_step \
	--schedule wait=100,warmup=1,active=1,repeat=3 -- "$W/basic" --iters 310 --steps \
	--sleep-ms 20 >"$TMP/win.log" 2>&1
line=$(grep 'holds: uprobe registration kept warm for' "$TMP/win.log")
stretches=$(sed -n 's/.*kept warm for [0-9.]* s in \([0-9]*\) stretches.*/\1/p' <<<"$line")
[ -n "$stretches" ] && [ "$stretches" -ge 4 ] &&
	ok "warm: the start and each of 3 later windows are kept warm ($stretches stretches)" ||
	not_ok "warm: the start and each of 3 later windows are kept warm" "${line:-no line}"
expect "warm: those windows' launches equal the ground truth" $CHECK match --gt "$TMP/win.gt.json" \
	--steps 101 "$(trace_in "$TMP/win/run_0")"

CUPROBE_WARM=off "$CUPROBE" record -v -o "$TMP/off" -- "$W/dlopen_main" --iters 2 >"$TMP/off.log" 2>&1
expect "warm: CUPROBE_WARM=off is said with -v" \
	grep -q 'uprobe registration not kept warm (CUPROBE_WARM=off): a hold that attaches may wait' "$TMP/off.log"
! grep -q 'kept warm for' "$TMP/off.log" && ok "warm: CUPROBE_WARM=off makes no writes" ||
	not_ok "warm: CUPROBE_WARM=off makes no writes" "$(grep 'kept warm' "$TMP/off.log")"

# SIGKILL: the event stays (the kernel cannot take it out), and the next session removes it.
"$CUPROBE" record -o "$TMP/kill" -- sleep 30 >"$TMP/kill.log" 2>&1 &
rec=$!
if until_true 10 grep -q "^p:cuprobe/warm_${rec}_" "$EVENTS"; then
	cmd=$(pgrep -P $rec -x sleep)
	kill -9 $rec
	wait $rec 2>/dev/null
	[ "$(events_of $rec)" = 1 ] && ok "warm: a killed cuprobe's event is left in tracefs" ||
		not_ok "warm: a killed cuprobe's event is left in tracefs" "$(events_of $rec) events"
	"$CUPROBE" record -o "$TMP/next" -- "$W/dlopen_main" --iters 1 >"$TMP/next.log" 2>&1
	[ "$(events_of $rec)" = 0 ] && ok "warm: the next session removes a killed one's event" ||
		not_ok "warm: the next session removes a killed one's event" "$(grep "warm_${rec}_" "$EVENTS")"
else
	not_ok "warm: a record's tracefs event exists while its command starts" "$(cat "$TMP/kill.log")"
	kill -9 $rec 2>/dev/null
fi
[ -n "${cmd:-}" ] && kill -9 "$cmd" 2>/dev/null

# No tracefs where cuprobe looks (a mount namespace without it): the warmer's thread
# mounts its own; the namespace cuprobe ran in still has none after.
PIDFILE=$TMP/ns.pid unshare --mount --propagation private -- bash -c '
	umount -l /sys/kernel/tracing 2>/dev/null; umount -l /sys/kernel/debug 2>/dev/null
	[ -e /sys/kernel/tracing/uprobe_events ] && { echo "tracefs still mounted"; exit 9; }
	"$@" & echo $! >"$PIDFILE"; wait $!; rc=$?
	[ -e /sys/kernel/tracing/uprobe_events ] && { echo "tracefs left mounted"; exit 8; }
	exit $rc' bash env CUPROBE_GT="$TMP/ns.gt.json" "$CUPROBE" record -v -o "$TMP/ns" -- \
	"$W/dlopen_main" --iters 3 >"$TMP/ns.log" 2>&1
rc=$?
[ $rc = 0 ] && ok "warm, no tracefs mounted: record exits 0 and leaves no tracefs mounted" ||
	not_ok "warm, no tracefs mounted: record exits 0 and leaves no tracefs mounted" \
		"rc $rc: $(tail -3 "$TMP/ns.log")"
expect "warm, no tracefs mounted: -v says cuprobe mounted its own and kept registration warm" \
	grep -qE 'kept warm for [0-9.]+ s in [0-9]+ stretches \([1-9][0-9]* writes.*no tracefs was mounted: cuprobe mounted one for its own thread' \
	"$TMP/ns.log"
expect "warm, no tracefs mounted: its launches equal its ground truth" $CHECK match \
	--gt "$TMP/ns.gt.json" "$(trace_in "$TMP/ns/run_0")"
left=$(events_of "$(cat "$TMP/ns.pid")")
[ "$left" = 0 ] && ok "warm, no tracefs mounted: the session leaves no tracefs event" ||
	not_ok "warm, no tracefs mounted: the session leaves no tracefs event" "$left left"
done_testing
