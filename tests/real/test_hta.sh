#!/usr/bin/env bash
# cuprobe's traces in the tools that read torch.profiler's: Holistic Trace
# Analysis (HTA 0.5.0) and TensorBoard's profiler plugin (torch-tb-profiler
# 0.4.3), the real PyPI packages in the venv scripts/install-real.sh makes
# (REAL_HTA_PY). Each folder of traces cuprobe writes is loaded as a user loads
# it (HTA's TraceAnalysis(trace_dir=), the plugin's RunLoader) and what the tool
# parsed is compared with the files (check_hta.py, check_tb_plugin.py): launches
# only; launches and GPU work (--cupti on the CUPTI simulator); ranks of one job,
# each from its RANK and WORLD_SIZE; CUDA graph replays.
source "$(dirname "$0")/lib.sh"
O=$ROOT/.output
AGENT=$O/libcuprobe-agent.so
SIM=$O/cupti_sim
if [ -z "${REAL_HTA_PY:-}" ] || [ ! -x "$REAL_HTA_PY" ]; then
	not_ok "HTA in $REAL_DIR/hta-venv" "not installed: run scripts/install-real.sh (make test does)"
	done_testing
	exit 0
fi
need_built "$CUPROBE" "$AGENT" "$SIM/libcupti.so.13" "$W/basic" "$W/graphs"
HTA="$REAL_HTA_PY $ROOT/tests/real/check_hta.py"
PLUGIN="$REAL_HTA_PY $ROOT/tests/real/check_tb_plugin.py"
# The simulator in place of libcupti, and the agent, in a workload's environment.
WITH_SIM=(LD_PRELOAD="$AGENT:$SIM/libcupti.so.13" LD_LIBRARY_PATH="$SIM")
STEPS=(--step cuprobe_step --schedule wait=1,warmup=1,active=2,repeat=1)

# recorded NAME RC N: the recording exited 0 and wrote $TMP/NAME/run_0 with N valid traces.
recorded() {
	local name=$1 rc=$2 n=$3 files
	files=$(trace_in "$TMP/$name/run_0")
	if [ "$rc" -ne 0 ] || [ "$(wc -w <<<"$files")" -ne "$n" ]; then
		not_ok "$name: recorded, $n traces" \
			"rc $rc, $(wc -w <<<"$files") traces: $(tail -3 "$TMP/$name.log" | tr '\n' ' ')"
		return 1
	fi
	expect "$name: recorded, $n valid traces" $CHECK valid $files
}

# Launches only: no step, no GPU work.
"$CUPROBE" record -o "$TMP/plain" -- "$W/basic" --threads 2 --iters 3 >"$TMP/plain.log" 2>&1
if recorded plain $? 1; then
	expect "launches only: HTA sees rank 0 and every launch" $HTA "$TMP/plain/run_0" --ranks 1
	expect "launches only: the plugin loads the run" $PLUGIN "$TMP/plain/run_0"
fi

# --cupti: launches, kernels, copies, sets and a graph's two kernels, in two steps.
"$CUPROBE" record --cupti -o "$TMP/gpu" "${STEPS[@]}" -- env "${WITH_SIM[@]}" \
	"$W/basic" --steps --threads 2 --iters 6 --sleep-ms 50 >"$TMP/gpu.log" 2>&1
if recorded gpu $? 1; then
	expect "--cupti: HTA's kernels, breakdowns and joins equal the trace's" \
		$HTA "$TMP/gpu/run_0" --ranks 1 --gpu
	# HTA rounds ns to us unless told not to: then its durations are the file's exactly.
	expect "--cupti: the same, exact, with HTA_DISABLE_NS_ROUNDING=1" \
		env HTA_DISABLE_NS_ROUNDING=1 $HTA "$TMP/gpu/run_0" --ranks 1 --gpu
	expect "--cupti: the plugin's kernels and steps equal the trace's" $PLUGIN "$TMP/gpu/run_0"
fi

# Three ranks of one job, started by a launcher, each with RANK and WORLD_SIZE as
# torchrun sets them: cuprobe writes their traces into one run_0, as a distributed
# job's profiler does, each with its distributedInfo.
"$CUPROBE" record --cupti -o "$TMP/ranks" "${STEPS[@]}" -- env "${WITH_SIM[@]}" sh -c '
	for r in 0 1 2; do
		RANK=$r WORLD_SIZE=3 "$0" --steps --threads 2 --iters 6 --sleep-ms 50 &
	done
	wait' "$W/basic" >"$TMP/ranks.log" 2>&1
if recorded ranks $? 3; then
	expect "3 ranks: HTA sees ranks 0-2, each rank's launches and GPU work" \
		$HTA "$TMP/ranks/run_0" --ranks 3 --gpu
	expect "3 ranks: the plugin has the 3 workers, each with its kernels" $PLUGIN "$TMP/ranks/run_0"
	# A rank count that the folder does not hold fails: the check is not vacuous.
	expect_fail "3 ranks: a check for 4 ranks fails" "HTA sees ranks \[0, 1, 2\].*expected 4" \
		$HTA "$TMP/ranks/run_0" --ranks 4 --gpu
fi

# CUDA graphs (stand-in runtime and driver, no CUPTI): replays through the runtime and
# the driver, captured calls (cuda_capture) beside them, in two steps.
"$CUPROBE" record -o "$TMP/graphs" --step cuprobe_step --schedule wait=1,warmup=1,active=2 -- \
	"$W/graphs" --iters 4 --steps >"$TMP/graphs.log" 2>&1
if recorded graphs $? 1; then
	f=$(trace_in "$TMP/graphs/run_0")
	expect "graphs: the trace has replays" python3 -c \
		"import json,sys; sys.exit(not json.load(open(sys.argv[1]))['cuprobe']['graph_replays'] > 0)" "$f"
	expect "graphs: HTA loads them, every launch and replay" $HTA "$TMP/graphs/run_0" --ranks 1
	expect "graphs: the plugin loads them" $PLUGIN "$TMP/graphs/run_0"
fi
done_testing
