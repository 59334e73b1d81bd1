#!/usr/bin/env bash
# --step and --schedule on real workloads: each cycle holds exactly the
# launches of its active steps, one folder per cycle, ProfilerStep spans for
# active steps only; stops in warmup write nothing, stops in active write a
# partial cycle; probes are detached while waiting.
source "$(dirname "$0")/lib.sh"

# Steps of basic --steps are 50 ms: far longer than attaching a probe, so
# warmup (one step) always absorbs it.
STEPARGS=(--steps --threads 2 --sleep-ms 50)

# spans FILE: the ProfilerStep numbers in a trace, space-separated.
spans() {
	python3 -c "
import json,sys
t=json.load(open(sys.argv[1]))
print(' '.join(str(e['args']['step']) for e in sorted(t['traceEvents'], key=lambda e: e.get('ts',0))
               if e.get('cat')=='user_annotation'))" "$1"
}

# schedule NAME SCHEDULE ITERS "CYCLE:STEPS ..." [EXTRA cuprobe args]
schedule() {
	local name=$1 sched=$2 iters=$3 want=$4 out=$TMP/$1 k steps f
	shift 4
	if ! CUPROBE_GT=$TMP/$name.gt.json "$CUPROBE" record -q -o "$out" --step cuprobe_step \
		--schedule "$sched" "$@" -- "$W/basic" "${STEPARGS[@]}" --iters "$iters" \
		>"$TMP/$name.log" 2>&1; then
		not_ok "$name: record" "$(tail -3 "$TMP/$name.log" | tr '\n' ' ')"
		return
	fi
	local n=0
	for cs in $want; do
		k=${cs%%:*}
		steps=${cs#*:}
		f=$(trace_in "$out/run_$k")
		expect "$name: cycle $k holds exactly the launches of steps $steps" \
			$CHECK match --gt "$TMP/$name.gt.json" --steps "$steps" "$f"
		[ "$(spans "$f")" = "${steps//,/ }" ] && ok "$name: cycle $k has spans for steps $steps only" ||
			not_ok "$name: cycle $k has spans for steps $steps only" "got $(spans "$f")"
		n=$((n + 1))
	done
	local got
	got=$(ls -d "$out"/run_* 2>/dev/null | wc -l)
	[ "$got" = "$n" ] && ok "$name: $n cycle folders" || not_ok "$name: $n cycle folders" "got $got"
}

schedule reference "wait=1,warmup=1,active=2,repeat=2" 10 "0:2,3 1:6,7"
schedule skip_first "skip_first=2,wait=1,warmup=1,active=1,repeat=2" 10 "0:4 1:7"
schedule skip_first_wait "skip_first=1,skip_first_wait=1,wait=3,warmup=1,active=2,repeat=2" 12 "0:2,3 1:8,9"
schedule no_wait "wait=0,warmup=1,active=2,repeat=3" 11 "0:1,2 1:4,5 2:7,8"

# --step-every 2 counts every second hit: cuprobe's step k is the workload's steps 2k, 2k+1.
CUPROBE_GT=$TMP/every.gt.json "$CUPROBE" record -q -o "$TMP/every" --step cuprobe_step \
	--step-every 2 --schedule wait=1,warmup=1,active=1,repeat=2 \
	-- "$W/basic" "${STEPARGS[@]}" --iters 14 >/dev/null 2>&1
expect "--step-every 2: cycle 0 is workload steps 4,5" $CHECK match --gt "$TMP/every.gt.json" \
	--steps 4,5 --step-div 2 "$(trace_in "$TMP/every/run_0")"
expect "--step-every 2: cycle 1 is workload steps 10,11" $CHECK match --gt "$TMP/every.gt.json" \
	--steps 10,11 --step-div 2 "$(trace_in "$TMP/every/run_1")"
[ "$(spans "$(trace_in "$TMP/every/run_1")")" = 5 ] && ok "--step-every 2: cycle 1 is step 5" ||
	not_ok "--step-every 2: cycle 1 is step 5" "got $(spans "$(trace_in "$TMP/every/run_1")")"

# A long wait: steps far from a window leave cuprobe asleep (they wait for its poll), and
# the windows still hold exactly their steps. 2 ms steps: it wakes from about 64 steps
# before a window; of 400 steps, well under half wake it.
CUPROBE_GT=$TMP/far.gt.json "$CUPROBE" record -v -o "$TMP/far" --step cuprobe_step \
	--schedule wait=150,warmup=1,active=2,repeat=2 -- "$W/basic" --steps --threads 1 \
	--sleep-ms 2 --iters 400 >"$TMP/far.log" 2>&1
expect "a long wait: cycle 0 holds exactly the launches of steps 151,152" \
	$CHECK match --gt "$TMP/far.gt.json" --steps 151,152 "$(trace_in "$TMP/far/run_0")"
expect "a long wait: cycle 1 holds exactly the launches of steps 304,305" \
	$CHECK match --gt "$TMP/far.gt.json" --steps 304,305 "$(trace_in "$TMP/far/run_1")"
told=$(sed -n 's/.*step records: \([0-9]*\), of them \([0-9]*\) woke.*/\1/p' "$TMP/far.log")
woke=$(sed -n 's/.*step records: \([0-9]*\), of them \([0-9]*\) woke.*/\2/p' "$TMP/far.log")
[ "${told:-0}" -ge 400 ] && [ "${woke:-400}" -lt $((told / 2)) ] && [ "${woke:-0}" -ge 6 ] &&
	ok "a long wait: only steps near a window wake cuprobe ($woke of $told)" ||
	not_ok "a long wait: only steps near a window wake cuprobe" \
		"$(grep -E 'step records|wakes cuprobe' "$TMP/far.log")"

# A stop during warmup writes nothing; a stop during active writes the partial cycle.
CUPROBE_GT=$TMP/warm.gt.json "$CUPROBE" record -q -o "$TMP/warm" --step cuprobe_step \
	--schedule wait=2,warmup=5,active=2 -- "$W/basic" "${STEPARGS[@]}" --iters 4 >/dev/null 2>&1
[ ! -e "$TMP/warm/run_0" ] && ok "stop in warmup: no cycle written" ||
	not_ok "stop in warmup: no cycle written" "$(ls -R "$TMP/warm")"

CUPROBE_GT=$TMP/part.gt.json "$CUPROBE" record -q -o "$TMP/part" --step cuprobe_step \
	--schedule wait=1,warmup=1,active=10 -- "$W/basic" "${STEPARGS[@]}" --iters 5 >/dev/null 2>&1
f=$(trace_in "$TMP/part/run_0")
expect "stop in active: the partial cycle holds steps 2-4" \
	$CHECK match --gt "$TMP/part.gt.json" --steps 2,3,4 "$f"
[ "$($CHECK field "$f" partial)" = true ] && ok "stop in active: marked partial" ||
	not_ok "stop in active: marked partial" "partial is $($CHECK field "$f" partial)"
[ "$(spans "$f")" = "2 3 4 5" ] && ok "stop in active: spans 2-4 and the cut step 5" ||
	not_ok "stop in active: spans 2-4 and the cut step 5" "got $(spans "$f")"

# The target crashes in an active window: the partial cycle is written, whole.
"$CUPROBE" record -q -o "$TMP/crash" --step cuprobe_step --schedule wait=1,warmup=1,active=500 \
	-- "$W/basic" "${STEPARGS[@]}" --iters 100 --ready-file "$TMP/crash.ready" >/dev/null 2>&1 &
rec=$!
wait_for "$TMP/crash.ready"
sleep 0.5
pkill -SEGV -f "^$W/basic .*crash.ready"
wait $rec
rc=$?
f=$(trace_in "$TMP/crash/run_0")
[ $rc = 139 ] && [ "$($CHECK field "$f" partial)" = true ] && $CHECK valid "$f" >/dev/null &&
	ok "target crash: partial cycle written whole, exit 139" ||
	not_ok "target crash: partial cycle written whole, exit 139" "rc $rc, $f"

# Ctrl-C (SIGINT) to cuprobe during an active window of -p: the partial cycle is written,
# cuprobe exits 0, and the process it watched runs on.
"$W/basic" "${STEPARGS[@]}" --iters 100000 --ready-file "$TMP/int.ready" 2>/dev/null &
wl=$!
wait_for "$TMP/int.ready"
"$CUPROBE" record -o "$TMP/int" -p $wl --step cuprobe_step --schedule wait=1,warmup=1,active=500 \
	>"$TMP/int.log" 2>&1 &
rec=$!
for _ in $(seq 200); do grep -q "step 2 RECORD" "$TMP/int.log" && break; sleep 0.05; done
sleep 0.3
kill -INT $rec
wait $rec
rc=$?
f=$(trace_in "$TMP/int/run_0")
alive=no
kill -0 $wl 2>/dev/null && alive=yes
partial=$($CHECK field "$f" partial 2>&1)
[ $rc = 0 ] && [ "$partial" = true ] && [ $alive = yes ] &&
	grep -q "cycle 0 (partial).*-> .*run_0" "$TMP/int.log" &&
	ok "Ctrl-C: partial cycle written and named, exit 0, the process runs on" ||
	not_ok "Ctrl-C: partial cycle written and named, exit 0, the process runs on" \
		"rc $rc, partial $partial, alive $alive: $(tail -1 "$TMP/int.log")"
kill $wl 2>/dev/null

# The step symbol of a library that the process dlopens later.
CUPROBE_GT=$TMP/lib.gt.json "$CUPROBE" record -q -o "$TMP/lib" --step libkernlib.so:kernlib_step \
	--schedule wait=1,warmup=1,active=2,repeat=1 -- "$W/dlopen_main" --steps --iters 6 \
	--sleep-ms 50 >"$TMP/lib.log" 2>&1
expect "step symbol in a dlopen'd library" $CHECK match --gt "$TMP/lib.gt.json" --steps 2,3 \
	"$(trace_in "$TMP/lib/run_0")"

# A USDT step probe with a semaphore gives the same cycles as the symbol.
CUPROBE_GT=$TMP/usdt.gt.json "$CUPROBE" record -q -o "$TMP/usdt" \
	--step "usdt:$W/basic:cuprobe_wl:step" --schedule wait=1,warmup=1,active=2,repeat=1 \
	-- "$W/basic" "${STEPARGS[@]}" --iters 6 >"$TMP/usdt.log" 2>&1
expect "USDT step probe" $CHECK match --gt "$TMP/usdt.gt.json" --steps 2,3 \
	"$(trace_in "$TMP/usdt/run_0")"

# Two processes: cycle k of each in run_k, one file per process.
CUPROBE_GT=$TMP/a.gt.json "$W/basic" "${STEPARGS[@]}" --iters 8 --wait-file "$TMP/go" 2>/dev/null &
a=$!
CUPROBE_GT=$TMP/b.gt.json "$W/static" --steps --sleep-ms 50 --iters 8 --wait-file "$TMP/go" 2>/dev/null &
b=$!
"$CUPROBE" record -o "$TMP/two" -p "$a,$b" --step cuprobe_step \
	--schedule wait=1,warmup=1,active=2,repeat=2 >"$TMP/two.log" 2>&1 &
rec=$!
for _ in $(seq 200); do grep -q "recording pid $b" "$TMP/two.log" && break; sleep 0.05; done
touch "$TMP/go"
wait $a $b $rec
for k in 0 1; do
	steps=$([ $k = 0 ] && echo 2,3 || echo 6,7)
	expect "two processes: cycle $k of the first" $CHECK match --gt "$TMP/a.gt.json" --steps $steps \
		"$(ls "$TMP"/two/run_$k/*_$a.*.json)"
	expect "two processes: cycle $k of the second" $CHECK match --gt "$TMP/b.gt.json" --steps $steps \
		"$(ls "$TMP"/two/run_$k/*_$b.*.json)"
done

# Attached to a running process, step 0 starts at the attach: cuprobe's steps 2 and 3
# are whole iterations, 9 launches per thread each.
"$W/basic" "${STEPARGS[@]}" --iters 30 --ready-file "$TMP/ready" 2>/dev/null &
wl=$!
wait_for "$TMP/ready"
sleep 0.3
"$CUPROBE" record -o "$TMP/late" -p $wl --step cuprobe_step \
	--schedule wait=1,warmup=1,active=2,repeat=1 >"$TMP/late.log" 2>&1
wait $wl
f=$(trace_in "$TMP/late/run_0")
per_step=$(python3 -c "
import collections,json,sys
t=json.load(open(sys.argv[1]))
c=collections.Counter(e['args']['step'] for e in t['traceEvents'] if e.get('cat')=='cuda_runtime')
print(' '.join(f'{k}:{c[k]}' for k in sorted(c)))" "$f")
[ "$per_step" = "2:18 3:18" ] && ok "-p: steps count from the attach" ||
	not_ok "-p: steps count from the attach" "launches per step: $per_step"
expect "-p: status line per phase change" grep -q "step 2 RECORD, cycle 0/1" "$TMP/late.log"

# --step alone: every step recorded, one cycle, a span per step.
CUPROBE_GT=$TMP/alone.gt.json "$CUPROBE" record -q -o "$TMP/alone" --step cuprobe_step \
	-- "$W/basic" "${STEPARGS[@]}" --iters 6 >"$TMP/alone.log" 2>&1
f=$(trace_in "$TMP/alone/run_0")
expect "--step without --schedule: every launch" $CHECK match --gt "$TMP/alone.gt.json" --any-step "$f"
spans=$(grep -c '"ProfilerStep#' "$f")
[ "$spans" -ge 6 ] && [ ! -e "$TMP/alone/run_1" ] && ok "--step without --schedule: one cycle, a span per step" ||
	not_ok "--step without --schedule: one cycle, a span per step" "$spans spans; $(ls "$TMP/alone")"

# While waiting, no launch probe is attached: the probe hit counter stands still.
"$CUPROBE" record -v -o "$TMP/hits" --step cuprobe_step --schedule wait=2,warmup=1,active=1,repeat=2 \
	-- "$W/basic" "${STEPARGS[@]}" --iters 11 2>&1 | grep 'launch probe hits' > "$TMP/hits.log"
hits() { sed -n "s/.*step $1 (\([A-Z_]*\)) ended: \([0-9]*\) launch.*/\2/p" "$TMP/hits.log"; }
# Steps 0,1 wait; 2 warmup; 3 active; 4,5 wait (4 may see hits while detaching); 6 warmup; 7 active.
for s in 0 1 5; do
	[ "$(hits $s)" = 0 ] && ok "step $s (wait): no launch probe hit" ||
		not_ok "step $s (wait): no launch probe hit" "$(hits $s) hits"
done
[ "$(hits 3)" = 18 ] && ok "step 3 (active): a hit per launch" || not_ok "step 3 (active): a hit per launch" "$(hits 3) hits"

# Steps too short for the attach: when the first active step lost launches, cuprobe said so.
said=0
for run in 1 2 3; do
	rm -rf "$TMP/short"
	"$CUPROBE" record -o "$TMP/short" --step cuprobe_step --schedule wait=1,warmup=1,active=1,repeat=1 \
		-- "$W/basic" --steps --threads 1 --iters 5 >"$TMP/short.log" 2>&1
	n=$($CHECK field "$(trace_in "$TMP/short/run_0")" launches)
	if grep -q "step 2 began before the launch probes were in.*warmup" "$TMP/short.log"; then
		said=$((said + 1))
	elif [ "$n" != 9 ]; then
		not_ok "a warmup too short for the attach is said" "run $run lost launches ($n of 9) silently"
		said=-100
	fi
done
[ $said -ge 0 ] && ok "a warmup too short for the attach is said ($said of 3 runs were too short)"
grep -q "began before the launch probes" "$TMP/late.log" &&
	not_ok "no warning when the warmup absorbed the attach" "$(cat "$TMP/late.log")" ||
	ok "no warning when the warmup absorbed the attach"

# Steps of ~2 ms, far shorter than an attach, and a long wait: the attach begins that many
# steps before warmup, said once; each cycle then holds exactly the launches of its active
# step (or, on a machine too loaded even for that, cuprobe says the step began early).
rm -rf "$TMP/lead"
CUPROBE_GT=$TMP/lead.gt.json "$CUPROBE" record -o "$TMP/lead" --step cuprobe_step \
	--schedule wait=20,warmup=1,active=1,repeat=2 \
	-- "$W/basic" --steps --threads 1 --sleep-ms 2 --iters 46 >"$TMP/lead.log" 2>&1
n=$(grep -cE "steps? before warmup, recording nothing until it" "$TMP/lead.log")
[ "$n" = 1 ] && ok "short steps: the early attach is said once" ||
	not_ok "short steps: the early attach is said once" "said $n times: $(head -5 "$TMP/lead.log")"
for cs in 0:21 1:43; do
	k=${cs%%:*} s=${cs#*:}
	if grep -q "step $s began before the launch probes were in" "$TMP/lead.log"; then
		ok "short steps: cycle $k's active step began before the attach ended, and it was said"
	else
		expect "short steps: cycle $k holds exactly the launches of step $s" \
			$CHECK match --gt "$TMP/lead.gt.json" --steps "$s" "$(trace_in "$TMP/lead/run_$k")"
	fi
done

# Bad step specs and schedules are refused before anything runs.
expect_fail "--schedule without --step" "needs --step" "$CUPROBE" record --schedule wait=1,warmup=1,active=1 -- true
expect_fail "active=0" "active must be > 0" "$CUPROBE" record --step f --schedule wait=1,warmup=1,active=0 -- true
expect_fail "unknown schedule key" "unknown key 'wiat'" "$CUPROBE" record --step f --schedule wiat=1,warmup=1,active=1 -- true
expect_fail "malformed step" "not usdt:OBJECT:PROVIDER:NAME" "$CUPROBE" record --step usdt:x:y -- true
out=$("$CUPROBE" record --step f --schedule wait=1 -- true 2>&1)
[ "$(grep -o "e\.g\." <<<"$out" | wc -l)" = 1 ] && ok "a schedule without its keys: one example" ||
	not_ok "a schedule without its keys: one example" "$out"
# The hint lists what was searched: nm reads .symtab, where cuprobe_step is (nm -D would not).
expect_fail "unknown symbol in a named object, with close matches" \
	"cuprobe_stpe not found in .*basic; close matches: cuprobe_step; check the name \(nm /" \
	"$CUPROBE" record -o "$TMP/bad" --step "$W/basic:cuprobe_stpe" -- "$W/basic"
expect_fail "unknown USDT probe, with close matches" "close matches: cuprobe_wl:step" \
	"$CUPROBE" record -o "$TMP/bad" --step "usdt:$W/basic:cuprobe_wl:stop" -- "$W/basic"
expect_fail "step symbol never found" "step probe no_such_step was never found" \
	"$CUPROBE" record -o "$TMP/bad" --step no_such_step -- "$W/basic" --iters 2
# A step probe missing from every object of a process that launches is said while it runs,
# with only the close names, once each; and again, as an error, at the end.
"$CUPROBE" record -o "$TMP/miss" --step cuprobe_stp -- "$W/basic" --iters 100 --sleep-ms 10 \
	--steps >"$TMP/miss.log" 2>&1; rc=$?
warn=$(grep -n "warning: step probe cuprobe_stp not found in any of .*which uses CUDA" "$TMP/miss.log" |
	cut -d: -f1)
end=$(grep -n "^basic: " "$TMP/miss.log" | cut -d: -f1)
[ $rc -ne 0 ] && [ -n "$warn" ] && [ -n "$end" ] && [ "$warn" -lt "$end" ] &&
	ok "a missing step probe is said while the program runs" ||
	not_ok "a missing step probe is said while the program runs" "rc $rc: $(tr '\n' ' ' <"$TMP/miss.log")"
matches=$(sed -n 's/.*close matches: \([^;]*\);.*/\1/p' "$TMP/miss.log" | sort -u)
[ "$matches" = cuprobe_step ] && ! grep -q ",;" "$TMP/miss.log" &&
	ok "close matches: only the close name, once" ||
	not_ok "close matches: only the close name, once" "$(tr '\n' ' ' <"$TMP/miss.log")"
expect_fail "warmup=0 is warned about" "warmup=0" \
	sh -c "'$CUPROBE' record -o '$TMP/w0' --step cuprobe_step --schedule wait=0,warmup=0,active=1 -- true; exit 1"
done_testing
