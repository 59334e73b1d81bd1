#!/usr/bin/env bash
# cuprobe compare: windows rotate through the modes in a balanced order on the
# real basic workload (9 calls a step), the launch counts of every probe mode
# are exact against ground truth, cupti windows run the agent on the CUPTI
# simulator, the page renders in headless Chromium with every mode's plots,
# what could not be measured is said, and bad input is refused.
source "$(dirname "$0")/lib.sh"
O=$ROOT/.output
AGENT=$O/libcuprobe-agent.so
SIM=$O/cupti_sim
CC_PY="python3 $ROOT/tests/e2e/check_compare.py"
SIM_ENV=(env LD_PRELOAD="$AGENT:$SIM/libcupti.so.13" LD_LIBRARY_PATH="$SIM")

# note_in DIR PATTERN: the text, the JSON and the page all say it.
note_in() {
	grep -q -- "$2" "$1.out" && grep -q -- "$2" "$1/compare.json" && grep -q -- "$2" "$1/compare.html"
}

# shot DIR: a screenshot and the DOM of DIR/compare.html by headless Chromium.
# Its profile goes to a folder of its own, not to $HOME.
shot() {
	local c=(timeout 120 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$TMP/chromium")
	"${c[@]}" --hide-scrollbars --window-size=1000,1400 --screenshot="$1.png" \
		"file://$1/compare.html" >/dev/null 2>&1 &&
		"${c[@]}" --dump-dom "file://$1/compare.html" 2>/dev/null >"$1.dom"
}

# 1. All four modes, 2 rounds of 4 steps: 8 windows of 1 warmup + 4 steps = 40
# steps; the workload makes exactly that many and exits on its own.
A=$TMP/all
"$CUPROBE" compare -o "$A" --step cuprobe_step --modes off,bpf,cupti,latency --steps-per-mode 4 \
	--rounds 2 -- "${SIM_ENV[@]}" CUPROBE_GT="$TMP/all.gt.json" \
	"$W/basic" --steps --threads 1 --sleep-ms 15 --iters 40 >"$A.out" 2>"$A.err"
expect "all modes: compare exits 0" test $? -eq 0
expect "all modes: rotation order, 72 launches in each probe mode, each kernel 8 times, ratios with intervals" \
	$CC_PY json "$A/compare.json" modes=off,bpf,cupti,latency rounds=2 steps=4 exact=1 \
	complete=true clock=steps cupti=1 latency=1
expect "all modes: each window's trace equals ground truth for its steps" python3 - "$A/compare.json" "$TMP/all.gt.json" "$ROOT/tests/e2e/check_trace.py" <<'PY'
import json, subprocess, sys
d = json.load(open(sys.argv[1]))
ws = [w for w in d["windows"] if w["trace"]]
assert len(ws) == 6, ws
for w in ws:
    steps = ",".join(str(s) for s in range(w["first_step"], w["last_step"] + 1))
    r = subprocess.run(["python3", sys.argv[3], "match", "--gt", sys.argv[2], "--steps", steps,
                        w["trace"]], capture_output=True, text=True)
    if r.returncode:
        sys.exit(f"{w['trace']}: {r.stdout}")
PY
expect "all modes: text summary has one row per mode" \
	test "$(grep -cE '^(off|bpf|cupti|latency) ' "$A.out")" -eq 4
expect "all modes: nothing left unsaid (no notes)" test "$(grep -c '^note:' "$A.out")" -eq 0
expect "all modes: traces are Kineto JSON in <mode>/run_<k>/" $CHECK valid "$A"/bpf/run_0/*.json \
	"$A"/bpf/run_1/*.json "$A"/cupti/run_1/*.json "$A"/latency/run_0/*.json
expect "all modes: no folder for off windows" test ! -e "$A/off"
expect "all modes: cuprobe report reads a mode's traces" "$CUPROBE" report "$A/cupti/run_0"
if shot "$A"; then
	expect "page: Chromium's DOM has the plots and the cost table, nothing external" \
		$CC_PY dom "$A.dom" off bpf cupti latency
	expect "page: the screenshot shows every mode's colour" $CC_PY png "$A.png" off bpf cupti latency
else
	not_ok "page: headless Chromium renders compare.html" "chromium failed"
fi

# 1b. compare.md's own example, as it is written: four modes, 4 rounds of 10
# steps, 16 windows back to back. Without a driver that loads the agent, each
# cupti window has no GPU record to wait for; with the simulator, it waits for
# the agent's. Every mode gets all its 4 windows either way.
for how in plain sim; do
	D=$TMP/doc_$how
	pre=()
	[ $how = sim ] && pre=("${SIM_ENV[@]}")
	timeout 60 "$CUPROBE" compare -o "$D" --step cuprobe_step --modes off,bpf,cupti,latency \
		--steps-per-mode 10 --rounds 4 -- "${pre[@]}" "$W/basic" --steps --threads 1 \
		--sleep-ms 10 --iters 1000 >"$D.out" 2>"$D.err"
	expect "compare.md's example ($how): exits 0" test $? -eq 0
	expect "compare.md's example ($how): 16 windows, 4 of each mode, 360 launches in each probe mode" \
		$CC_PY json "$D/compare.json" modes=off,bpf,cupti,latency rounds=4 steps=10 exact=1 \
		complete=true cupti=$([ $how = sim ] && echo 1 || echo 0)
	expect "compare.md's example ($how): no error stopped it" \
		test "$(grep -c 'stopped on an error' "$D.out")" -eq 0
done

# 2. -p: a running process, the default cupti left out; counts exact again.
"$W/basic" --steps --threads 1 --sleep-ms 15 --iters 400 --ready-file "$TMP/p.ready" 2>/dev/null &
wl=$!
wait_for "$TMP/p.ready"
P=$TMP/pid
"$CUPROBE" compare -o "$P" -p $wl --step cuprobe_step --modes off,bpf --steps-per-mode 5 \
	--rounds 3 >"$P.out" 2>"$P.err"
expect "-p: compare exits 0" test $? -eq 0
expect "-p: order off bpf bpf off off bpf, 135 launches in bpf" $CC_PY json "$P/compare.json" \
	modes=off,bpf rounds=3 steps=5 exact=1 complete=true
expect "-p: the process runs on after compare" kill -0 $wl
kill $wl 2>/dev/null
wait $wl 2>/dev/null

# 2b. -p on a process started without the agent: the cupti mode brings it in
# (ptrace + dlopen, as record --cupti -p does) and its windows get the
# simulator's GPU records; --stack puts each launch's stack in the traces.
env LD_PRELOAD="$SIM/libcupti.so.13" LD_LIBRARY_PATH="$SIM" "$W/basic" --steps --threads 1 \
	--sleep-ms 15 --iters 400 --ready-file "$TMP/pi.ready" 2>/dev/null &
wl=$!
wait_for "$TMP/pi.ready"
PI=$TMP/pinject
"$CUPROBE" compare -o "$PI" -p $wl --step cuprobe_step --modes off,cupti --steps-per-mode 4 \
	--rounds 2 --stack >"$PI.out" 2>"$PI.err"
expect "-p, cupti, no agent at start: compare exits 0" test $? -eq 0
expect "-p, cupti, no agent at start: the agent is brought in" \
	grep -q "agent loaded into the running process" "$PI.err"
expect "-p, cupti, no agent at start: exact launches, every kernel's GPU time" \
	$CC_PY json "$PI/compare.json" modes=off,cupti rounds=2 steps=4 exact=1 cupti=1
expect "--stack: every launch of the cupti windows has its stack" python3 - "$PI/compare.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ws = [w for w in d["windows"] if w["trace"]]
assert len(ws) == 2, ws
for w in ws:
    t = json.load(open(w["trace"]))
    st = t["cuprobe"]["stacks"]
    n = sum(1 for e in t["traceEvents"] if e.get("cat") in ("cuda_runtime", "cuda_driver"))
    assert st["taken"] == n and st["lost"] == 0, (st, n)
PY
expect "-p, cupti: the process runs on after compare" kill -0 $wl
kill $wl 2>/dev/null
wait $wl 2>/dev/null

# 3. The target ends before every mode ran: said, and what ran is kept.
E=$TMP/early
"$CUPROBE" compare -o "$E" --step cuprobe_step --modes off,bpf,latency --steps-per-mode 3 \
	--rounds 2 -- "$W/basic" --steps --threads 1 --sleep-ms 10 --iters 9 >"$E.out" 2>"$E.err"
expect "early end: compare exits 0 with what ran" test $? -eq 0
expect "early end: said in text, JSON and page" note_in "$E" "before every window ran"
expect "early end: the mode that never ran is named" note_in "$E" "latency: never"
expect "early end: complete is false" $CC_PY json "$E/compare.json" modes=off,bpf,latency rounds=2 \
	steps=3 complete=false
if shot "$E"; then
	expect "early end: the page shows the modes that ran" $CC_PY png "$E.png" off bpf
	expect_fail "early end: the screenshot check finds no latency plot" "latency: .* pixels" \
		$CC_PY png "$E.png" latency
fi

# 4. No usable CUPTI (no agent, no driver): said; the other modes are kept.
N=$TMP/nocupti
"$CUPROBE" compare -o "$N" --step cuprobe_step --steps-per-mode 3 --rounds 2 -- \
	"$W/basic" --steps --threads 1 --sleep-ms 10 --iters 24 >"$N.out" 2>"$N.err"
expect "no CUPTI: compare exits 0" test $? -eq 0
expect "no CUPTI: said in text, JSON and page" note_in "$N" "no usable CUPTI"
expect "no CUPTI: bpf counted exactly all the same" $CC_PY json "$N/compare.json" \
	modes=off,bpf,cupti rounds=2 steps=3 exact=1 cupti=0

# 5. One round of 2 steps: no rotation back, too few steps for an interval.
S=$TMP/short
"$CUPROBE" compare -o "$S" --step cuprobe_step --modes off,bpf --steps-per-mode 2 --rounds 1 -- \
	"$W/basic" --steps --threads 1 --sleep-ms 10 --iters 6 >"$S.out" 2>"$S.err"
expect "short: one round is said" note_in "$S" "one round"
expect "short: too few steps for a confidence interval is said" note_in "$S" \
	"too few steps for a confidence interval"
expect "short: the ratio has no interval" python3 -c "
import json,sys; r=json.load(open('$S/compare.json'))['results'][1]
sys.exit(not (r['ratio_to_off']['value'] > 0 and r['ratio_to_off']['ci95_low'] is None))"

# 6. No --step: time slices, said.
L=$TMP/slices
"$CUPROBE" compare -o "$L" --modes off,bpf --slice 100 --steps-per-mode 2 --rounds 2 -- \
	"$W/basic" --threads 1 --sleep-ms 10 --iters 400 >"$L.out" 2>"$L.err"
expect "slices: compare exits 0" test $? -eq 0
expect "slices: said" note_in "$L" "time slices of 100 ms stand in for steps"
expect "slices: clock is slices, bpf windows counted launches" python3 -c "
import json,sys; d=json.load(open('$L/compare.json')); r=d['results'][1]
sys.exit(not (d['clock'] == 'slices' and r['launches'] > 0 and len(d['windows']) == 4))"

# 7. The ASan/UBSan build on all modes, ending early: clean.
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=halt_on_error=1 \
	"$O/san/cuprobe" compare -q -o "$TMP/san" --step cuprobe_step --modes off,bpf,cupti,latency \
	--steps-per-mode 3 --rounds 2 -- "${SIM_ENV[@]}" "$W/basic" --steps --threads 1 --sleep-ms 10 \
	--iters 28 >"$TMP/san.log" 2>&1
rc=$?
if [ $rc -ne 0 ] || grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$TMP/san.log"; then
	not_ok "sanitized compare" "rc $rc: $(grep -m3 -E 'ERROR|runtime error' "$TMP/san.log")"
else
	ok "sanitized compare: clean, with an early end"
fi

# 8. Bad input: a clear message, non-zero exit, nothing made or lost.
bad() { expect_fail "bad input: $1" "$2" "$CUPROBE" compare "${@:3}"; }
bad "unknown mode" "--modes: unknown mode.*off, bpf, cupti and latency" --modes off,gpu -- true
bad "a mode twice" "given twice" --modes off,bpf,off -- true
bad "empty modes" "no mode given" --modes , -- true
bad "zero steps per mode" "--steps-per-mode: not a count" --steps-per-mode 0 -- true
bad "rounds not a number" "--rounds: not a count" --rounds x -- true
bad "--slice with --step" "--slice with --step" --slice 50 --step cuprobe_step -- true
bad "nothing to compare" "nothing to compare" --modes off,bpf
bad "-p and a command" "both -p and a command" -p 1 -- true
bad "--cupti-wait without cupti" "--cupti-wait without the cupti mode" --modes off,bpf \
	--cupti-wait 3 -- true
bad "a bad pid" "-p: not a process id" -p abc
bad "unknown option" "unknown option --frobnicate" --frobnicate -- true
before=$(sha256sum "$A/compare.json")
bad "an earlier compare's folder" "already holds a compare run" -o "$A" --step cuprobe_step -- true
expect "an earlier compare is left as it was" test "$(sha256sum "$A/compare.json")" = "$before"
bad "a missing step symbol in a named file" "not found in" --step "$W/basic:no_such_step" -- true
expect_fail "a step probe never hit: no window ran" "no window ran: nothing was compared" \
	"$CUPROBE" compare -q -o "$TMP/never/out" --step cuprobe_step -- true
expect "a step probe never hit: nothing left behind" test ! -e "$TMP/never"
done_testing
