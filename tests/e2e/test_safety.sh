#!/usr/bin/env bash
# What cuprobe promises the processes it profiles and the files it writes
# (README: Safety): no stop left behind whatever ends cuprobe, a stopped
# process stays stopped, every launch recorded or counted as dropped, and no
# write through a planted symlink or into another user's folder.
source "$(dirname "$0")/lib.sh"

state_of() { awk '{print $3}' "/proc/$1/stat" 2>/dev/null; }

# not_stopped PID: the process is not left in state T (the guardian may take ~1 s).
not_stopped() {
	local n=40
	while [ "$(state_of "$1")" = T ] && [ $n -gt 0 ]; do sleep 0.05; n=$((n - 1)); done
	[ "$(state_of "$1")" != T ]
}

# ---- SIGKILL at random moments against a process that is often held ----------
"$W/dlloop" --ready-file "$TMP/dl.ready" 2>/dev/null &
dl=$!
wait_for "$TMP/dl.ready"
KILLS=${SAFETY_KILLS:-200}
left=0 continued=0 recorded=0
for i in $(seq "$KILLS"); do
	"$CUPROBE" record -p $dl -o "$TMP/kills" >"$TMP/kill.log" 2>&1 &
	rec=$!
	# From before the attach to well into the recording, where holds come every few ms.
	sleep "0.$(printf '%03d' $((RANDOM % 450 + 20)))"
	kill -9 $rec
	wait $rec 2>/dev/null
	if ! not_stopped $dl; then
		left=$((left + 1))
		kill -CONT $dl
	fi
	grep -q "guardian: continued" "$TMP/kill.log" && continued=$((continued + 1))
	grep -q "recording pid" "$TMP/kill.log" && recorded=$((recorded + 1))
	kill -0 $dl 2>/dev/null || break
done
echo "# $KILLS SIGKILLs: $recorded while recording, $continued found the target held and the guardian continued it"
[ $left -eq 0 ] && ok "SIGKILL x$KILLS: no target left stopped" ||
	not_ok "SIGKILL x$KILLS: no target left stopped" "$left left in state T"
[ $continued -gt 0 ] && ok "SIGKILL: some kills caught a hold, and the guardian answered it" ||
	not_ok "SIGKILL: some kills caught a hold" "none of $KILLS did: the test proves little"
kill -0 $dl 2>/dev/null && ok "SIGKILL: the target lives on" || not_ok "SIGKILL: the target lives on" "it died"
# A trace is unnamed until whole: a killed cuprobe leaves no temporary and no half-written file.
left_files=$(find "$TMP/kills" -type f \( -name '*.tmp' -o -name '.*' \) 2>/dev/null)
bad=""
for f in $(find "$TMP/kills" -name '*.pt.trace.json' 2>/dev/null); do
	python3 -m json.tool "$f" >/dev/null 2>&1 || bad="$bad $f"
done
[ -z "$left_files$bad" ] && ok "SIGKILL: no temporary file, no partial trace left" ||
	not_ok "SIGKILL: no temporary file, no partial trace left" "$left_files$bad"
sleep 1.5
# A guardian that exited may wait for its new parent to reap it: only live ones count,
# and only this test's (a guardian keeps its cuprobe's command line).
live=$(ps -eo stat=,comm=,args= | grep -F -- "$TMP/kills" | awk '$2 == "cuprobe-guard" && $1 !~ /^Z/' | wc -l)
[ "$live" -eq 0 ] && ok "guardians leave once their cuprobe is gone" ||
	not_ok "guardians leave once their cuprobe is gone" "$live still run"

# ---- record -- CMD killed while its command waits to exec ---------------------
# The command's child waits for the parent's go (its probes in) before exec; a parent
# killed first must end it, and with it the guardian. CUPROBE_SPAWN_TEST_PAUSE_MS holds
# the parent between the fork and the probing, long enough to be killed in.
CUPROBE_SPAWN_TEST_PAUSE_MS=1000 "$CUPROBE" record -o "$TMP/spawnkill" -- "$W/basic" --iters 5 \
	>"$TMP/spawnkill.log" 2>&1 &
rec=$!
# The child has not run the command yet: its name is still cuprobe's (the guardian's is
# cuprobe-guard). Looked for until it is there: a loaded machine forks late.
until_true 5 pgrep -P $rec -x cuprobe >/dev/null
waiting=$(pgrep -P $rec -x cuprobe | wc -l)
kill -9 $rec
wait $rec 2>/dev/null
gone() { ! pgrep -f -- "$TMP/spawnkill" >/dev/null; }
[ "$waiting" -ge 1 ] && until_true 5 gone &&
	ok "record -- CMD killed before its command's exec: the waiting child and the guardian end" ||
	not_ok "record -- CMD killed before its command's exec: the waiting child and the guardian end" \
		"$waiting child waiting when killed; left: $(pgrep -af -- "$TMP/spawnkill")"

# ---- a stderr whose reader is gone does not end the recording -----------------
# cuprobe record -v ... 2>&1 | head: once the reader has gone, a message fails (EPIPE)
# instead of raising SIGPIPE, which would end cuprobe and lose the recording. The
# command's own output goes elsewhere: its status is cuprobe's.
( CUPROBE_GT=$TMP/epipe.gt.json "$CUPROBE" record -v -o "$TMP/epipe" -- sh -c \
	'"$0" --steps --iters 10 --sleep-ms 20 >/dev/null 2>&1' "$W/basic" 2>&1
  echo $? >"$TMP/epipe.rc" ) | true
rc=$(cat "$TMP/epipe.rc")
[ "$rc" = 0 ] && ok "record -v, its stderr's reader gone: it records on and exits with the command's 0" ||
	not_ok "record -v, its stderr's reader gone: it records on and exits with the command's 0" "rc $rc"
expect "record -v, its stderr's reader gone: its launches equal the ground truth" $CHECK match --any-step \
	--gt "$TMP/epipe.gt.json" $(ls "$TMP"/epipe/run_0/*.pt.trace.json 2>/dev/null)

# ---- a tiny ring: holds still answered, the target never frozen -------------
# CPU time (utime + stime, in ticks) only grows while the process runs.
cpu_of() { awk '{print $14 + $15}' "/proc/$1/stat"; }
"$CUPROBE" record -q --ringbuf-size 8K -p $dl --duration 2 -o "$TMP/tinyring" >"$TMP/tiny.log" 2>&1 &
rec=$!
sleep 0.7
c0=$(cpu_of $dl)
sleep 1
c1=$(cpu_of $dl)
wait $rec
rc=$?
[ $rc -eq 0 ] && [ $((c1 - c0)) -ge 5 ] && ok "-p with an 8K ring: the target keeps running" ||
	not_ok "-p with an 8K ring: the target keeps running" "rc $rc, $((c1 - c0)) ticks of CPU in 1 s"
not_stopped $dl && ok "-p with an 8K ring: not stopped after" || not_ok "-p with an 8K ring: not stopped after" "state T"

# ---- a cuprobe that is stopped (or starved) does not freeze its target -------
"$CUPROBE" record -p $dl -o "$TMP/stall" >"$TMP/stall.log" 2>&1 &
rec=$!
# Stopped once attached (its linker hook in), so that the target's next dlopen is held.
until_true 10 grep -q "recording pid" "$TMP/stall.log"
sleep 1
kill -STOP $rec
# The guardian steps in after 5 s of an unanswered hold (the hold itself comes at the
# target's next dlopen).
sleep 7
c0=$(cpu_of $dl)
sleep 1
c1=$(cpu_of $dl)
kill -CONT $rec
sleep 0.5
kill -INT $rec
wait $rec
rc=$?
[ $((c1 - c0)) -ge 20 ] && ok "a stopped cuprobe: its target runs on" ||
	not_ok "a stopped cuprobe: its target runs on" "$((c1 - c0)) ticks of CPU in 1 s"
grep -q "guardian: continued pid $dl, held for over" "$TMP/stall.log" &&
	ok "a stopped cuprobe: the guardian said it continued the target" ||
	not_ok "a stopped cuprobe: the guardian said it continued the target" "$(cat "$TMP/stall.log")"
[ $rc -eq 0 ] && not_stopped $dl && ok "a stopped cuprobe, continued: ends cleanly, target running" ||
	not_ok "a stopped cuprobe, continued: ends cleanly, target running" "rc $rc, state $(state_of $dl)"

# ---- a crash of cuprobe, like a kill, leaves no stop -------------------------
ulimit -c 0
for sig in SEGV ABRT BUS; do
	"$CUPROBE" record -p $dl -o "$TMP/crash" >"$TMP/crash.log" 2>&1 &
	rec=$!
	sleep 0.6
	kill -$sig $rec
	wait $rec 2>/dev/null
	not_stopped $dl && ok "SIG$sig of cuprobe: no target left stopped" ||
		not_ok "SIG$sig of cuprobe: no target left stopped" "state T"
	kill -CONT $dl
done

# ---- a process its user stopped stays stopped --------------------------------
kill -STOP $dl
"$CUPROBE" record -q -p $dl --duration 1 -o "$TMP/stopped" >"$TMP/stopped.log" 2>&1
sleep 1.3
[ "$(state_of $dl)" = T ] && ok "a process stopped by its user stays stopped" ||
	not_ok "a process stopped by its user stays stopped" "state $(state_of $dl)"
kill -CONT $dl
kill $dl
wait $dl 2>/dev/null

# ---- an 8K ring under 4 launching threads: recorded + dropped = made ---------
CUPROBE_GT=$TMP/ring.gt.json timeout 60 "$CUPROBE" record -q --ringbuf-size 8K -o "$TMP/ring" \
	-- "$W/basic" --threads 4 --iters 300 >"$TMP/ring.log" 2>&1
rc=$?
[ $rc -eq 0 ] && ok "8K ring, 4 threads: the command runs to its end" ||
	not_ok "8K ring, 4 threads: the command runs to its end" "rc $rc $(tail -3 "$TMP/ring.log")"
expect "8K ring, 4 threads: launches + drops = launches made, and drops are said" \
	$CHECK accounted --gt "$TMP/ring.gt.json" --said "$TMP/ring.log" "$(trace_in "$TMP/ring/run_0")"

# Per cycle too, with step boundaries in their own ring: every cycle has its steps.
# Steps are long enough for warmup to absorb the attach.
CUPROBE_GT=$TMP/rs.gt.json timeout 60 "$CUPROBE" record -q --ringbuf-size 8K -o "$TMP/rs" \
	--step cuprobe_step --schedule wait=1,warmup=1,active=2,repeat=3 \
	-- "$W/basic" --threads 4 --iters 14 --steps --sleep-ms 30 >"$TMP/rs.log" 2>&1
for k in 0 1 2; do
	expect "8K ring with steps: cycle $k holds steps $((4 * k + 2))-$((4 * k + 3)), recorded + dropped = made" \
		$CHECK accounted --gt "$TMP/rs.gt.json" --steps $((4 * k + 2))-$((4 * k + 3)) \
		"$(trace_in "$TMP/rs/run_$k")"
done

# ---- output paths: never through a planted symlink or into another's folder ----
mkdir -p "$TMP/secret" "$TMP/shared"
chmod 1777 "$TMP/shared"
# The run folder is planted after cuprobe chose it, before its first cycle is written.
"$CUPROBE" record -q -o "$TMP/shared" --step cuprobe_step --schedule wait=3,warmup=1,active=1 \
	-- "$W/basic" --threads 1 --iters 12 --steps --sleep-ms 40 >"$TMP/plant.log" 2>&1 &
rec=$!
sleep 0.1
ln -s "$TMP/secret" "$TMP/shared/run_0"
wait $rec
rc=$?
# Refused, said, and its cycle lost; the command is not disturbed (its status, 0).
[ $rc -eq 0 ] && grep -q "cycle 0 is lost: .*run_0: .*not a folder cuprobe can write in" "$TMP/plant.log" &&
	ok "a planted run_0 symlink: refused, with a clear error" ||
	not_ok "a planted run_0 symlink: refused" "rc $rc: $(cat "$TMP/plant.log")"
[ -z "$(ls -A "$TMP/secret")" ] && ok "a planted run_0 symlink: nothing written through it" ||
	not_ok "a planted run_0 symlink: nothing written through it" "$(ls "$TMP/secret")"

# A folder of its own: the first run went on to write run_1 in shared, so the next run
# starts at run_2 there.
mkdir -p "$TMP/shared2"
chmod 1777 "$TMP/shared2"
"$CUPROBE" record -q -o "$TMP/shared2" --step cuprobe_step --schedule wait=3,warmup=1,active=1 \
	-- "$W/basic" --threads 1 --iters 12 --steps --sleep-ms 40 >"$TMP/own.log" 2>&1 &
rec=$!
sleep 0.1
mkdir "$TMP/shared2/run_0" && chown 65534:65534 "$TMP/shared2/run_0"
wait $rec
rc=$?
[ $rc -eq 0 ] && grep -q "cycle 0 is lost: .*run_0: .*belongs to another user" "$TMP/own.log" &&
	ok "a run folder made by another user: refused" ||
	not_ok "a run folder made by another user: refused" "rc $rc: $(cat "$TMP/own.log")"
[ -z "$(ls -A "$TMP/shared2/run_0")" ] && ok "a run folder made by another user: nothing written in it" ||
	not_ok "a run folder made by another user: nothing written in it" "$(ls "$TMP/shared2/run_0")"
done_testing
