#!/usr/bin/env bash
# record --cupti: the real cuprobe switches the agent (libcuprobe-agent.so) with
# the schedule and joins uprobe launches to CUPTI's records. CUPTI is the
# simulator (tests/workloads/cupti_sim), which makes API and GPU records for
# the workload's real launches; the agent and cuprobe are the product code.
source "$(dirname "$0")/lib.sh"
O=$ROOT/.output
AGENT=$O/libcuprobe-agent.so
SIM=$O/cupti_sim

# cupti NAME [cuprobe options] -- WORKLOAD [args]: CUPTI_ENV=(VAR=value...) set
# before the call adds to the workload's environment, for that call only.
CUPTI_ENV=()
cupti() {
	local name=$1 opts=()
	shift
	while [ "$1" != "--" ]; do opts+=("$1"); shift; done
	shift
	"$CUPROBE" record --cupti -o "$TMP/$name" "${opts[@]}" -- env \
		LD_PRELOAD="$AGENT:$SIM/libcupti.so.13" LD_LIBRARY_PATH="$SIM" \
		CUPTI_SIM_STATS="$TMP/$name.stats" CUPROBE_GT="$TMP/$name.gt.json" "${CUPTI_ENV[@]}" \
		"$W/$1" "${@:2}" >"$TMP/$name.log" 2>&1
	local rc=$?
	CUPTI_ENV=()
	return $rc
}

# gpu FILE KEY: cuprobe.gpu.KEY of a trace.
gpu() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['cuprobe']['gpu'][sys.argv[2]])" "$1" "$2"; }

# joined FILE: every launch's correlation names GPU work of the same kernel, and
# GPU events and flows pair up. Prints what is wrong, exits non-zero.
joined() {
	python3 - "$1" <<'PY'
import collections, json, sys
t = json.load(open(sys.argv[1]))
ev = t["traceEvents"]
launches = [e for e in ev if e.get("cat") in ("cuda_runtime", "cuda_driver")]
gpu = collections.defaultdict(list)
for e in ev:
    if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
        gpu[e["args"]["correlation"]].append(e)
starts = {e["id"] for e in ev if e.get("ph") == "s"}
ends = {e["id"] for e in ev if e.get("ph") == "f"}
bad = []
for l in launches:
    work = gpu.get(l["args"]["correlation"], [])
    if not work:
        bad.append(f"no GPU work for {l['name']} correlation {l['args']['correlation']}")
    for w in work:
        if w["cat"] == "kernel" and "graph" not in l["args"] and w["name"] != l["args"]["kernel"]:
            bad.append(f"kernel {w['name']} for launch of {l['args']['kernel']}")
        if w["ts"] < l["ts"]:
            bad.append(f"GPU work before its launch: {w['name']}")
        if "stream" not in w["args"]:
            bad.append("GPU event without a stream arg")
if starts != ends or len(starts) != len(launches):
    bad.append(f"{len(starts)} flow starts, {len(ends)} ends, {len(launches)} launches")
print("\n".join(bad[:5]))
sys.exit(1 if bad else 0)
PY
}

STEPS=(--step cuprobe_step --schedule wait=1,warmup=1,active=2,repeat=1)
WL=(basic --steps --threads 2 --iters 6 --sleep-ms 50)

# The exact join: every launch of the cycle, its API record, its GPU work.
cupti join "${STEPS[@]}" -- "${WL[@]}"
f=$(trace_in "$TMP/join/run_0")
expect "join: launches of steps 2-3 equal ground truth" $CHECK match --gt "$TMP/join.gt.json" --steps 2,3 "$f"
expect "join: each launch has its GPU work, names agree, flows pair" joined "$f"
[ "$(gpu "$f" joined_launches)" = 36 ] && [ "$(gpu "$f" launches_without_api_record)" = 0 ] &&
	[ "$(gpu "$f" malformed_chunks)" = 0 ] &&
	ok "join: 36 launches joined, none unmatched" ||
	not_ok "join: 36 launches joined, none unmatched" "$(gpu "$f" joined_launches) joined"
# basic launches 2 graph nodes per cudaGraphLaunch: 2 threads x 2 steps = 4 graph launches.
kernels=$(python3 -c "
import json,sys; t=json.load(open(sys.argv[1]))
print(sum(1 for e in t['traceEvents'] if e.get('cat')=='kernel'))" "$f")
[ "$kernels" = $((2 * 2 * (6 + 2))) ] && ok "join: a graph launch names its 2 kernels" ||
	not_ok "join: a graph launch names its 2 kernels" "$kernels kernel events"
valid_out=$($CHECK valid "$f") && ok "join: valid Kineto trace" || not_ok "join: valid Kineto trace" "$valid_out"

# Cycles back to back (wait=0): the agent's window stays open across both, so
# both cycles' GPU records come at its one flush; each cycle gets its own
# (cycles are written oldest first: writing one lets go of older records).
CUPTI_ENV=(CUPTI_SIM_LATE=1)
cupti adjacent --step cuprobe_step --schedule wait=0,warmup=1,active=2,repeat=2 -- \
	basic --steps --threads 2 --iters 8 --sleep-ms 20
bad=""
for k in 0 1; do
	g=$(trace_in "$TMP/adjacent/run_$k")
	[ -n "$g" ] && [ "$(gpu "$g" joined_launches)" = 36 ] &&
		[ "$(gpu "$g" launches_without_api_record)" = 0 ] || bad="$bad run_$k"
done
[ -z "$bad" ] && ok "cycles back to back: each joined to its own GPU records (36 and 36)" ||
	not_ok "cycles back to back: each joined to its own GPU records (36 and 36)" "not joined:$bad"

# GPU records that come only when the window is flushed: the cycle waits for them.
CUPTI_ENV=(CUPTI_SIM_LATE=1); cupti late "${STEPS[@]}" -- "${WL[@]}"
f=$(trace_in "$TMP/late/run_0")
expect "records after the window closed: still joined" joined "$f"
[ "$(gpu "$f" missing_at_timeout)" = 0 ] && ok "records after the window closed: none missing" ||
	not_ok "records after the window closed: none missing" "$(gpu "$f" missing_at_timeout)"

# Records CUPTI dropped are counted and said.
CUPTI_ENV=(CUPTI_SIM_DROP=5); cupti drop "${STEPS[@]}" -- "${WL[@]}"
f=$(trace_in "$TMP/drop/run_0")
[ "$(gpu "$f" cupti_dropped)" -ge 5 ] && ok "dropped records are counted" ||
	not_ok "dropped records are counted" "cupti_dropped $(gpu "$f" cupti_dropped)"
expect "dropped records are said" grep -q "dropped" "$TMP/drop.log"

# A GPU clock that runs behind: GPU work before its launch is a clock fault.
CUPTI_ENV=(CUPTI_SIM_SKEW_NS=5000000); cupti skew "${STEPS[@]}" -- "${WL[@]}"
f=$(trace_in "$TMP/skew/run_0")
[ "$(gpu "$f" clock_faults)" -gt 0 ] && ok "clock faults are counted" ||
	not_ok "clock faults are counted" "clock_faults $(gpu "$f" clock_faults)"
expect "clock faults are said" grep -q "clock fault" "$TMP/skew.log"

# The process exits in the middle of an active window: the agent flushes at exit.
cupti exit --step cuprobe_step --schedule wait=1,warmup=1,active=20 -- basic --steps --threads 2 \
	--iters 5 --sleep-ms 50
f=$(trace_in "$TMP/exit/run_0")
[ "$($CHECK field "$f" partial)" = true ] && [ "$(gpu "$f" launches_without_gpu)" = 0 ] &&
	[ "$(gpu "$f" joined_launches)" -gt 0 ] && ok "exit mid-cycle: partial cycle, GPU work flushed" ||
	not_ok "exit mid-cycle: partial cycle, GPU work flushed" "$(cat "$TMP/exit.log" | tail -3)"

# Another profiler holds CUPTI: said, exit 0, launches still written.
CUPTI_ENV=(CUPTI_SIM_OTHER_SUBSCRIBER=1); cupti other "${STEPS[@]}" -- "${WL[@]}"
rc=$?
f=$(trace_in "$TMP/other/run_0")
[ $rc = 0 ] && grep -q "CUPTI error 39.*another profiler" "$TMP/other.log" &&
	$CHECK match --gt "$TMP/other.gt.json" --steps 2,3 "$f" >/dev/null &&
	ok "another CUPTI subscriber: warned, exit 0, launches kept" ||
	not_ok "another CUPTI subscriber: warned, exit 0, launches kept" "rc $rc: $(tail -3 "$TMP/other.log")"

# The real libcupti on a machine without a GPU: CUPTI's refusal is said, launches are kept.
"$CUPROBE" record --cupti -o "$TMP/real" -- env LD_PRELOAD="$AGENT" CUPROBE_GT="$TMP/real.gt.json" \
	"$W/basic" --iters 20 --sleep-ms 20 >"$TMP/real.log" 2>&1
rc=$?
f=$(trace_in "$TMP/real/run_0")
if [ -e /dev/nvidia0 ]; then
	# With a GPU the real CUPTI works: the launches are joined to real GPU work.
	[ $rc = 0 ] && [ "$(gpu "$f" joined_launches)" -gt 0 ] &&
		ok "real CUPTI with a GPU: launches joined to GPU work" ||
		not_ok "real CUPTI with a GPU: launches joined to GPU work" "rc $rc: $(tail -3 "$TMP/real.log")"
else
	[ $rc = 0 ] && grep -q "CUPTI error .*no usable GPU" "$TMP/real.log" &&
		$CHECK match --gt "$TMP/real.gt.json" "$f" >/dev/null &&
		ok "real CUPTI without a GPU: said, exit 0, launches kept" ||
		not_ok "real CUPTI without a GPU: said, exit 0, launches kept" "rc $rc: $(tail -3 "$TMP/real.log")"
fi

# Driver-API kernels are named by CUPTI.
cupti driver -- driver --iters 30 --sleep-ms 10
f=$(trace_in "$TMP/driver/run_0")
expect "driver launches are named from CUPTI" grep -q '"cat": "cuda_driver".*"kernel": "sim_cufunction_' "$f"

# No driver to load the agent (CUDA_INJECTION64_PATH goes unheeded here): said, with the
# likely cause, and the launches are still recorded; with the agent there, no such word.
CUPROBE_GT=$TMP/noinj.gt.json "$CUPROBE" record --cupti -o "$TMP/noinj" -- "$W/basic" --threads 1 \
	--iters 3 >"$TMP/noinj.log" 2>&1
expect "--cupti with no agent loaded: said, with the likely cause" \
	grep -q "no agent in the process by the end of cycle 0, so no GPU times: the CUDA driver did not load CUDA_INJECTION64_PATH" "$TMP/noinj.log"
expect "--cupti with no agent loaded: the launches are recorded" \
	$CHECK match --gt "$TMP/noinj.gt.json" "$(trace_in "$TMP/noinj/run_0")"
bad=$(grep -l "no agent in the process\|the agent is loaded but said nothing" "$TMP"/*.log | grep -v noinj)
[ -z "$bad" ] && ok "--cupti with the agent answering: no such warning" || not_ok "--cupti with the agent answering: no such warning" "$bad"

# Without --cupti the agent stays dormant: not one CUPTI call.
"$CUPROBE" record -o "$TMP/dormant" -- env LD_PRELOAD="$AGENT:$SIM/libcupti.so.13" \
	LD_LIBRARY_PATH="$SIM" CUPTI_SIM_STATS="$TMP/dormant.stats" "$W/basic" --iters 20 \
	--sleep-ms 10 >/dev/null 2>&1
expect "dormant agent makes no CUPTI call" grep -qx "cupti_calls	0" "$TMP/dormant.stats"

# -p with --cupti on a process started with the agent (as a job launcher would start it).
env LD_PRELOAD="$AGENT:$SIM/libcupti.so.13" LD_LIBRARY_PATH="$SIM" CUPROBE_GT="$TMP/pa.gt.json" \
	"$W/basic" --steps --threads 2 --iters 8 --sleep-ms 50 --wait-file "$TMP/pa.go" 2>/dev/null &
wl=$!
"$CUPROBE" record --cupti -o "$TMP/pa" -p $wl --step cuprobe_step \
	--schedule wait=1,warmup=1,active=2,repeat=1 >"$TMP/pa.log" 2>&1 &
rec=$!
for _ in $(seq 200); do grep -q "recording pid $wl" "$TMP/pa.log" && break; sleep 0.05; done
touch "$TMP/pa.go"
wait $wl $rec
f=$(trace_in "$TMP/pa/run_0")
expect "-p --cupti, agent loaded at start: steps 2-3 equal ground truth" \
	$CHECK match --gt "$TMP/pa.gt.json" --steps 2,3 "$f"
expect "-p --cupti, agent loaded at start: joined to GPU work" joined "$f"

# -p with --cupti on a process started without the agent, and no agent file to bring
# in (test_inject.sh tests bringing it in): said plainly.
"$W/basic" --iters 30 --sleep-ms 20 --ready-file "$TMP/ready" 2>/dev/null &
wl=$!
wait_for "$TMP/ready"
CUPROBE_AGENT=$TMP/no-such-agent.so "$CUPROBE" record --cupti -o "$TMP/noagent" -p $wl \
	>"$TMP/noagent.log" 2>&1
wait $wl
expect "-p --cupti without the agent: says how to load it" \
	grep -q "has no cuprobe agent loaded.*CUDA_INJECTION64_PATH" "$TMP/noagent.log"
done_testing
