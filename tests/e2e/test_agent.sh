#!/usr/bin/env bash
# The agent (libcuprobe-agent.so) on real nvcc workloads, with the CUPTI
# simulator (tests/workloads/cupti_sim) in place of libcupti.so.13, driven
# from outside as cuprobe's loader will drive it: agent_harness attaches to
# the agent's USDT probes (records for the whole run, enable for a window)
# and decodes the chunks; check_agent.py compares them with the workload's
# ground truth and the simulator's call counts, and check_inject loads the
# agent as CUDA_INJECTION64_PATH does. Needs root (BPF). Prints TAP lines,
# then "# done".
source "$(dirname "$0")/lib.sh"

O=$ROOT/.output
AGENT=$O/libcuprobe-agent.so
SIM=$O/cupti_sim
HARNESS=$O/agent_tests/agent_harness
CHECK_AGENT="python3 $ROOT/tests/e2e/check_agent.py"

for f in "$AGENT" "$SIM/libcupti.so.13" "$HARNESS" "$O/agent_tests/check_inject" "$W/basic"; do
	if [ ! -e "$f" ]; then
		not_ok "agent tests" "$f is missing: make agent-tests"
		done_testing
		exit 0
	fi
done

# run NAME [HARNESS-OPTION...] -- WORKLOAD [ARGS...]
# Runs WORKLOAD under agent_harness with the agent and the simulator
# preloaded; it waits for the harness's go file before launching. Leaves
# $TMP/NAME.jsonl (records), .stats (simulator), .gt.json (ground truth), .log.
run() {
	local name=$1 hopts=() wl
	shift
	while [ "$1" != "--" ]; do hopts+=("$1"); shift; done
	shift
	wl=$1
	shift
	"$HARNESS" --agent "$AGENT" -e "LD_PRELOAD=$AGENT:$SIM/libcupti.so.13" \
		-e "LD_LIBRARY_PATH=$SIM" -e "CUPTI_SIM_STATS=$TMP/$name.stats" \
		-e "CUPROBE_GT=$TMP/$name.gt.json" --go-file "$TMP/$name.go" \
		-o "$TMP/$name.jsonl" "${hopts[@]}" -- "$W/$wl" --wait-file "$TMP/$name.go" "$@" \
		>"$TMP/$name.log" 2>&1
}

# ran NAME: the run ended well (the workload exited 0, every chunk decoded).
ran() {
	if [ "$2" -eq 0 ]; then ok "$1: harness and workload exit 0"
	else not_ok "$1: harness and workload exit 0" "$(tail -3 "$TMP/$1.log" | tr '\n' ' ')"; fi
}

# ---- without a workload ---------------------------------------------------

# The records' unit test (tests/unit/test_agent_records.c) runs in the unit and
# san tiers.
expect "injection: InitializeInjection starts the agent once" \
	"$O/agent_tests/check_inject" "$AGENT"
expect "injection: LD_PRELOAD and InitializeInjection together start it once" \
	env LD_PRELOAD="$AGENT" "$O/agent_tests/check_inject" "$AGENT"

# ---- dormant: not one CUPTI call ------------------------------------------

LD_PRELOAD="$AGENT:$SIM/libcupti.so.13" LD_LIBRARY_PATH="$SIM" CUPTI_SIM_STATS=$TMP/bare.stats \
	"$W/basic" --threads 2 --iters 5 >"$TMP/bare.log" 2>&1
ran bare $?
expect "dormant, no loader: no CUPTI call" $CHECK_AGENT stats "$TMP/bare.stats" cupti_calls=0

run idle --no-enable -- basic --threads 2 --iters 5
ran idle $?
expect "dormant, records attached: no CUPTI call" $CHECK_AGENT stats "$TMP/idle.stats" cupti_calls=0
expect "dormant, records attached: no record" $CHECK_AGENT count --equals 0 "$TMP/idle.jsonl" api

# Enabled with nobody on records(): CUPTI runs, nothing is fired, nothing breaks.
run deaf --no-records -- basic --threads 2 --iters 3
ran deaf $?
expect "enabled, no records listener: CUPTI on, no chunk fired" \
	python3 -c 'import json,sys
s = dict(l.split("\t") for l in open(sys.argv[1]))
e = [json.loads(l) for l in open(sys.argv[2])][-1]
sys.exit(not (int(s["records_written"]) > 0 and e["chunks"] == 0))' \
	"$TMP/deaf.stats" "$TMP/deaf.jsonl"

# ---- one window until exit: records equal the ground truth ------------------

run basic -- basic --threads 4 --iters 5
ran basic $?
expect "basic: API, kernel, graph, copy and set records equal ground truth" \
	$CHECK_AGENT match --gt "$TMP/basic.gt.json" "$TMP/basic.jsonl"
expect "basic: STARTED, then FLUSHED at exit with the window's count, names before use" \
	$CHECK_AGENT window --reasons exit "$TMP/basic.jsonl"
expect "basic: clock registered once before any kind, system thread ids, kinds off at exit" \
	$CHECK_AGENT stats "$TMP/basic.stats" clock_registrations=1 enable_before_clock=0 \
	enable_before_callbacks=0 thread_id_type=1 kinds_on_at_exit=0 buffers_misaligned=0
expect "basic: overhead records pass" $CHECK_AGENT count --equals 1 "$TMP/basic.jsonl" overhead

run ptsz -- basic_ptsz --threads 3 --iters 4
ran ptsz $?
expect "per-thread default stream: records equal ground truth" \
	$CHECK_AGENT match --gt "$TMP/ptsz.gt.json" "$TMP/ptsz.jsonl"

run driver -- driver --iters 6
ran driver $?
expect "driver API: records equal ground truth" \
	$CHECK_AGENT match --gt "$TMP/driver.gt.json" "$TMP/driver.jsonl"

run dlopen -- dlopen_main --iters 5
ran dlopen $?
expect "dlopen'd kernel library: records equal ground truth (names from .symtab)" \
	$CHECK_AGENT match --gt "$TMP/dlopen.gt.json" "$TMP/dlopen.jsonl"

# ---- windows closed by the loader -------------------------------------------

# GPU records arrive late (only at a forced flush): detaching enable must
# still bring every record of the window, then FLUSHED, then nothing.
run late --disable-after 30 -e CUPTI_SIM_LATE=1 -- basic --threads 2 --iters 100 --sleep-ms 5
ran late $?
expect "disable: late GPU records come at the flush, before FLUSHED, none after" \
	$CHECK_AGENT disable "$TMP/late.jsonl"
expect "disable: FLUSHED closes the window with its count" \
	$CHECK_AGENT window --reasons disable "$TMP/late.jsonl"
expect "disable: every API call of the window has its GPU records" \
	$CHECK_AGENT match --subset --gt "$TMP/late.gt.json" "$TMP/late.jsonl"
expect "disable: CUPTI kinds off, forced flushes" \
	$CHECK_AGENT stats "$TMP/late.stats" kinds_on_at_exit=0 flush_forced=2

run two --disable-after 20 --windows 2 -- basic --threads 2 --iters 250 --sleep-ms 5
ran two $?
expect "two windows: each closed by FLUSHED, names sent again in the second" \
	$CHECK_AGENT window --reasons disable,disable "$TMP/two.jsonl"
expect "two windows: callbacks, clock and thread-id type set once per process" \
	$CHECK_AGENT stats "$TMP/two.stats" cuptiActivityRegisterCallbacks=1 clock_registrations=1 \
	cuptiSetThreadIdType=1 cuptiActivityEnable=12 kinds_on_at_exit=0
expect "two windows: records are a part of the ground truth, correlations unique" \
	$CHECK_AGENT match --subset --gt "$TMP/two.gt.json" "$TMP/two.jsonl"

# ---- faults -----------------------------------------------------------------

run drop -e CUPTI_SIM_DROP=5 -- basic --threads 2 --iters 3
ran drop $?
expect "dropped: CUPTI's dropped count is reported" \
	$CHECK_AGENT dropped --reason 1 --equals 5 "$TMP/drop.jsonl"

run pool -e CUPTI_SIM_HOLD=1 -e CUPTI_SIM_BUFFER_BYTES=2048 -- basic --threads 4 --iters 10
ran pool $?
expect "pool spent: refused buffer requests are reported" \
	$CHECK_AGENT dropped --reason 2 --equals "STATS:$TMP/pool.stats:buffers_refused" "$TMP/pool.jsonl"
expect "pool spent: the records CUPTI lost for it are reported" \
	$CHECK_AGENT dropped --reason 1 --equals "STATS:$TMP/pool.stats:dropped_no_buffer" "$TMP/pool.jsonl"
expect "pool spent: the window still closes with its count" \
	$CHECK_AGENT window --reasons exit "$TMP/pool.jsonl"

run reorder -e CUPTI_SIM_REORDER=1 -e CUPTI_SIM_BUFFER_BYTES=4096 -- basic --threads 3 --iters 4
ran reorder $?
expect "reordered, split buffers: records equal ground truth" \
	$CHECK_AGENT match --gt "$TMP/reorder.gt.json" "$TMP/reorder.jsonl"
expect "reordered, split buffers: names still precede their kernels" \
	$CHECK_AGENT window --reasons exit "$TMP/reorder.jsonl"
expect "reordered, split buffers: many buffers" \
	$CHECK_AGENT stats "$TMP/reorder.stats" buffers_completed'>'5

run skew -e CUPTI_SIM_SKEW_NS=200000 -- basic --threads 2 --iters 3
ran skew $?
expect "clock fault: GPU starts before its launch, passed on as CUPTI gave it" \
	$CHECK_AGENT match --skew --gt "$TMP/skew.gt.json" "$TMP/skew.jsonl"

run other -e CUPTI_SIM_OTHER_SUBSCRIBER=1 -- basic --threads 2 --iters 3
ran other $?
expect "another subscriber: error record names it" \
	$CHECK_AGENT error --code 39 --stage 2 --message 'another profiler' "$TMP/other.jsonl"
expect "another subscriber: nothing enabled, no STARTED" \
	$CHECK_AGENT stats "$TMP/other.stats" cuptiActivityEnable=0 kinds_on_at_exit=0
expect "another subscriber: the window still ends with FLUSHED" \
	$CHECK_AGENT window --reasons exit "$TMP/other.jsonl"

run partial -e CUPTI_SIM_FAIL=cuptiActivityEnable@10=39 -- basic --threads 2 --iters 3
ran partial $?
expect "enable fails half way: error record" \
	$CHECK_AGENT error --code 39 --stage 5 --message CONCURRENT_KERNEL "$TMP/partial.jsonl"
expect "enable fails half way: the kinds already on are turned off" \
	$CHECK_AGENT stats "$TMP/partial.stats" cuptiActivityDisable=2 kinds_on_at_exit=0
expect "enable fails half way: no STARTED" $CHECK_AGENT count --equals 0 "$TMP/partial.jsonl" started

run version -e CUPTI_SIM_VERSION=28 -- basic --threads 1 --iters 2
ran version $?
expect "CUPTI of another major version: error record, CUPTI left alone" \
	$CHECK_AGENT error --code 14 --stage 1 --message 'agent built for' "$TMP/version.jsonl"
expect "CUPTI of another major version: no registration" \
	$CHECK_AGENT stats "$TMP/version.stats" cuptiActivityRegisterCallbacks=0 cuptiActivityEnable=0

# ---- the real libcupti.so.13 on a machine without a GPU ----------------------

"$HARNESS" --agent "$AGENT" -e "LD_PRELOAD=$AGENT" -e "CUPROBE_GT=$TMP/real.gt.json" \
	--go-file "$TMP/real.go" -o "$TMP/real.jsonl" -- "$W/basic" --threads 2 --iters 3 \
	--wait-file "$TMP/real.go" >"$TMP/real.log" 2>&1
ran real $?
expect "real CUPTI: the agent answers (STARTED or an error record) and closes the window" \
	$CHECK_AGENT window --reasons exit "$TMP/real.jsonl"
msg=$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r["t"] in ("error", "started"): print(r["t"], r.get("message", r.get("cupti_version")))' \
	"$TMP/real.jsonl" | head -2 | tr '\n' ' ')
echo "# real CUPTI here says: $msg"

done_testing
