#!/usr/bin/env bash
# GPU check of cuprobe on a real PyTorch training loop (tests/gpu/README.md).
#
#   bash tests/gpu/run.sh        from the repository root, as root, on a GPU machine
#
# Needs ./cuprobe (make STATIC=1 where libbpf is missing) and
# .output/libcuprobe-agent.so. Runs tests/gpu/train.py in five processes:
#   c   no profiler (the baseline)
#   d   cuprobe record --step torch --schedule ...
#   a   cuprobe record --cupti --step torch --schedule ...
#   b   torch.profiler with the same schedule
#   c2  no profiler again (how much the baseline itself moves)
#   cmp cuprobe compare --modes off,bpf,cupti (windows interleaved in one process)
#   e   started without the agent; cuprobe record --cupti -p brings it in (ptrace +
#       dlopen) while the loop runs, and its cycles must have GPU times (E_STEPS, 4000)
#   f   the real driver: where cuprobe puts its probes (record -v), cuGetProcAddress
#       against the exports (tests/real/procaddr.c), and a launch's cost in a PyTorch loop alone
#       (f0) and under cuprobe record (f1), nested launches and one trap included
#   g   torch.cuda.graph replays (tests/gpu/graph_replay.py) under cuprobe record --cupti
#       (g1: each replay's expansion against CUPTI's kernels of its correlation id) and
#       record alone (g2: each replay of known content, with kernels)
#   h   make bench's per-launch figures (probe_vs_empty_uprobe, driver_ and
#       nested_launch_vs_empty_uprobe) on this machine's CPU and driver (.output/bench carried)
# then compares the traces and step times (tests/gpu/compare.py), and sets
# compare's inflation beside torch.profiler's own (tests/gpu/inflation.py).
#
# $OUT gets summary.txt (everything printed), summary.json (the figures),
# traces.tar.gz (every trace, log and step-time file, from $WORK), and
# compare.json, compare.html and inflation.json from the compare stage.
# Exit status: 0 the comparison ran (its checks may still WARN); 2 the binaries
# are missing; 10 BPF does not work here; 11 no torch; 12 no usable CUDA;
# 13 a configuration failed.
#
# Environment: OUT (default /tmp/cuprobe-gpu-out), WORK (default
# /tmp/cuprobe-gpu-work), PYTHON (python3), SCHED, STEPS (60), BUDGET_S (300:
# every stage's timeout is cut to what is left of it), STEP_PROBE (the --step of
# the training runs a, d, cmp and e: default torch, PyTorch's own optimizer steps),
# G_STEP_PROBE (the --step of stage g, whose graph replays run no optimizer: default
# libcudart:cudaDeviceSynchronize), TRAIN_ARGS (more train.py options for every
# run, e.g. "--device cpu --batch 4" for a dry run of this script on a machine
# without a GPU), G_REPLAYS (50: the replays of stage g).
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 2
ROOT=$PWD
OUT=${OUT:-/tmp/cuprobe-gpu-out}
WORK=${WORK:-/tmp/cuprobe-gpu-work}
PY=${PYTHON:-python3}
SCHED=${SCHED:-wait=5,warmup=2,active=5,repeat=2}
STEPS=${STEPS:-60}
BUDGET_S=${BUDGET_S:-300}
STEP_PROBE=${STEP_PROBE:-torch}
G_STEP_PROBE=${G_STEP_PROBE:-libcudart:cudaDeviceSynchronize}
CUPROBE=$ROOT/cuprobe
AGENT=$ROOT/.output/libcuprobe-agent.so
TRAIN="$PY $ROOT/tests/gpu/train.py ${TRAIN_ARGS:-}"
export PYTHONUNBUFFERED=1

mkdir -p "$OUT" || exit 2
rm -rf "$WORK" && mkdir -p "$WORK" || exit 2
SUMMARY=$OUT/summary.txt
: >"$SUMMARY"
START=$SECONDS

say() { printf '%s\n' "$*" | tee -a "$SUMMARY"; }
# show FILE [N]: the last N lines of a log, indented, into the summary too.
show() { tail -n "${2:-15}" "$1" 2>/dev/null | sed 's/^/    | /' | tee -a "$SUMMARY"; }
# left: seconds of the budget still unspent.
left() { echo $((BUDGET_S - (SECONDS - START))); }
# limit WANT: WANT seconds, or what is left of the budget less a margin for the report.
limit() { local l=$(($(left) - 25)); echo $(($1 < l ? $1 : l)); }

finish() {
	local rc=$?
	say ""
	say "run.sh: exit $rc after $((SECONDS - START)) s; raw files in traces.tar.gz"
	tar -czf "$OUT/traces.tar.gz" -C "$WORK" . 2>/dev/null ||
		say "run.sh: could not write $OUT/traces.tar.gz"
}
trap finish EXIT

die() { # die STATUS MESSAGE
	say "run.sh: FAILED: $2"
	exit "$1"
}

# ---- 0. what is here -----------------------------------------------------------

say "== cuprobe GPU check: $(date -u '+%Y-%m-%d %H:%M:%S UTC'), $(uname -r), $(nproc) CPUs =="
if command -v nvidia-smi >/dev/null; then
	timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader \
		2>&1 | sed 's/^/gpu: /' | tee -a "$SUMMARY"
else
	say "gpu: nvidia-smi is not on PATH"
fi
[ -x "$CUPROBE" ] || die 2 "./cuprobe is missing: build it with 'make STATIC=1' and name it in the \
device tool's carry list (it is gitignored)"
[ -r "$AGENT" ] || die 2 ".output/libcuprobe-agent.so is missing: build it with 'make agent' and \
name it in the carry list"
# ldd's output is kept first: under pipefail, ldd's own status (1 for a static
# binary) and grep -q closing the pipe early would decide the test.
CUPROBE_LIBS=$(ldd "$CUPROBE" 2>&1)
AGENT_LIBS=$(ldd "$AGENT" 2>&1)
if grep -q 'not found' <<<"$CUPROBE_LIBS"; then
	grep 'not found' <<<"$CUPROBE_LIBS" | sed 's/^/    | /' | tee -a "$SUMMARY"
	die 2 "./cuprobe needs libraries this machine lacks: build it with 'make STATIC=1'"
fi
if grep -qE 'not a dynamic executable|statically linked' <<<"$CUPROBE_LIBS"; then
	say "cuprobe: statically linked"
else
	say "cuprobe: dynamically linked (works here, but 'make STATIC=1' is what this check expects)"
fi
say "agent: $(grep -E 'cupti|not found' <<<"$AGENT_LIBS" | tr -s ' \t' ' ' | tr '\n' ';')"

# ---- 1. BPF -------------------------------------------------------------------------

say ""
say "== 1. BPF: cuprobe record -- true =="
timeout 30 "$CUPROBE" record -o "$WORK/bpfcheck" -- true >"$WORK/bpfcheck.log" 2>&1
rc=$?
if [ $rc -ne 0 ]; then
	say "kernel $(uname -r); uid $(id -u)"
	say "$(ls -l /sys/kernel/btf/vmlinux 2>&1)"
	say "cuprobe record -- true exited $rc; its first lines:"
	head -n 20 "$WORK/bpfcheck.log" | sed 's/^/    | /' | tee -a "$SUMMARY"
	die 10 "BPF does not work on this machine (see above): nothing else can run"
fi
say "ok: BPF programs load and attach here ($(ls /sys/kernel/btf/vmlinux 2>&1))"

# ---- 2. torch and CUDA ------------------------------------------------------------

say ""
say "== 2. torch and CUDA =="
timeout "$(limit 120)" $TRAIN --check >"$WORK/check.json" 2>"$WORK/check.log"
rc=$?
if [ $rc -ne 0 ]; then
	show "$WORK/check.log" 10
	case $rc in
	3) die 11 "$PY cannot import torch: this test needs PyTorch with CUDA" ;;
	126 | 127) die 11 "$PY cannot be run here (set PYTHON=)" ;;
	4) die 12 "torch sees no usable CUDA device" ;;
	124) die 12 "torch's CUDA check did not finish in time" ;;
	*) die 12 "torch's CUDA check exited $rc" ;;
	esac
fi
$PY - "$WORK/check.json" <<'EOF' | tee -a "$SUMMARY"
import json, sys
c = json.load(open(sys.argv[1]))
print(f"torch {c['torch']} (CUDA {c['torch_cuda']}, cuDNN {c['cudnn']}), python {c['python']} "
      f"({c['executable']}), {c['device']} (compute capability {c['capability']})")
print(f"libcudart in use: {c['libcudart']}; exports cudaDeviceSynchronize: "
      f"{c['libcudart_exports_cudaDeviceSynchronize']}")
print(f"libcupti folders of the wheels: {c['cupti_dirs']}")
EOF
# libc10_cuda.so calls cudaDeviceSynchronize from torch.cuda.synchronize().
C10=$(grep -o '"[^"]*libc10_cuda\.so"' "$WORK/check.json" | head -1 | tr -d '"')
if [ -n "$C10" ] && command -v nm >/dev/null; then
	say "$(basename "$C10") imports: $(nm -D --undefined-only "$C10" 2>/dev/null |
		grep -oE 'cuda(Device|Stream)Synchronize[^ ]*' | sort -u | tr '\n' ' ')"
fi
# The CUDA wheel's library folder (libcupti.so.13, libcudart.so.13), empty if none.
WHEEL_LIB=$($PY -c 'import json,sys; d=json.load(open(sys.argv[1]))["cupti_dirs"]; print(d[0] if d else "")' \
	"$WORK/check.json" 2>/dev/null)
# The agent needs libcupti.so.13: from its RUNPATH, else from the CUDA wheels.
if grep -q 'libcupti.*not found' <<<"$AGENT_LIBS"; then
	CUPTI_DIR=$WHEEL_LIB
	[ -n "$CUPTI_DIR" ] || die 2 "the agent's libcupti.so.13 is not found here, nor in the CUDA wheels"
	export LD_LIBRARY_PATH="$CUPTI_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	say "libcupti.so.13 is not in the agent's RUNPATH here: LD_LIBRARY_PATH=$CUPTI_DIR for every run"
fi

# ---- 3. the four configurations ------------------------------------------------------

# stage NAME WANT_S COMMAND...: runs COMMAND with its output in $WORK/NAME.log.
stage() {
	local name=$1 want=$2 t0 rc lim
	shift 2
	lim=$(limit "$want")
	if [ "$lim" -lt 20 ]; then
		say "[$name] skipped: the time budget ($BUDGET_S s) is spent"
		return 124
	fi
	t0=$SECONDS
	timeout -k 15 "$lim" "$@" >"$WORK/$name.log" 2>&1
	rc=$?
	say "[$name] exit $rc in $((SECONDS - t0)) s (limit $lim s): $*"
	grep -E '^train.py:' "$WORK/$name.log" | sed 's/^/    | /' | tee -a "$SUMMARY"
	grep -E '^cuprobe' "$WORK/$name.log" | grep -vE ' (WARMUP|RECORD|RECORD_AND_SAVE|NONE), ' |
		tail -n 12 | sed 's/^/    | /' | tee -a "$SUMMARY"
	[ $rc -eq 0 ] || show "$WORK/$name.log" 15
	return $rc
}

cuprobe_run() { # cuprobe_run NAME PROBE [--cupti]
	local name=$1 probe=$2
	shift 2
	rm -rf "${WORK:?}/$name"
	CUPROBE_AGENT=$AGENT stage "$name" 150 "$CUPROBE" record "$@" --step "$probe" \
		--schedule "$SCHED" -o "$WORK/$name" -- \
		$TRAIN --config "$name" --steps "$STEPS" --out "$WORK/$name.steps.json"
}

say ""
say "== 3. training runs: $STEPS steps, schedule $SCHED, step probe $STEP_PROBE =="
failed=()
stage c 90 $TRAIN --config c --steps "$STEPS" --out "$WORK/c.steps.json" || failed+=(c)

cuprobe_run d "$STEP_PROBE"
d_rc=$?
# Is cuprobe's step k the loop's iteration k? (A note: the checks below say it too.)
$PY tests/gpu/compare.py stepcheck --schedule "$SCHED" --trace-dir "$WORK/d" \
	--steps-file "$WORK/d.steps.json" 2>&1 | sed 's/^/    | /' | tee -a "$SUMMARY"
[ "${PIPESTATUS[0]}" -eq 0 ] || say "[d] WARN: --step $STEP_PROBE does not end one step per loop iteration"
[ $d_rc -eq 0 ] || failed+=(d)

cuprobe_run a "$STEP_PROBE" --cupti || failed+=(a)
stage b 120 $TRAIN --config b --steps "$STEPS" --profile-dir "$WORK/b" --schedule "$SCHED" \
	--out "$WORK/b.steps.json" || failed+=(b)
stage c2 90 $TRAIN --config c2 --steps "$STEPS" --out "$WORK/c2.steps.json" || failed+=(c2)
# cuprobe compare: off, bpf and cupti windows of 5 steps, interleaved in one process
# (off bpf cupti cupti bpf off) after 5 steps left alone; it ends the loop when done.
rm -rf "${WORK:?}/cmp"
CUPROBE_AGENT=$AGENT stage cmp 150 "$CUPROBE" compare --step "$STEP_PROBE" \
	--modes off,bpf,cupti --steps-per-mode 5 --rounds 2 --skip-first 5 -o "$WORK/cmp" -- \
	$TRAIN --config cmp --steps "$STEPS" --out "$WORK/cmp.steps.json" || failed+=(cmp)
if [ -f "$WORK/cmp/compare.json" ]; then
	cp "$WORK/cmp/compare.json" "$WORK/cmp/compare.html" "$OUT/" 2>/dev/null
	say ""
	say "== cuprobe compare's summary =="
	grep -vE '^(cuprobe: |train.py:)' "$WORK/cmp.log" | sed 's/^/    /' | tee -a "$SUMMARY"
fi

# ---- 3b. the agent brought into a running loop: --cupti -p -------------------------
# (e) is train.py started without the agent; once its loop runs, cuprobe record --cupti
# -p brings the agent in (ptrace + dlopen) and records the schedule's cycles with GPU
# times. The loop does not stop for it.
say ""
say "== 3b. --cupti -p on a loop started without the agent (schedule $SCHED) =="
E_STEPS=${E_STEPS:-4000}
rm -rf "${WORK:?}/e" "${WORK:?}/e.ready"
lim=$(limit 150)
if [ "$lim" -lt 30 ]; then
	say "[e] skipped: the time budget ($BUDGET_S s) is spent"
	failed+=(e)
else
	timeout -k 15 "$lim" $TRAIN --config e --steps "$E_STEPS" --out "$WORK/e.steps.json" \
		--ready-file "$WORK/e.ready" >"$WORK/e.train.log" 2>&1 &
	e_job=$!
	for _ in $(seq 1200); do
		{ [ -e "$WORK/e.ready" ] || ! kill -0 $e_job 2>/dev/null; } && break
		sleep 0.05
	done
	e_pid=$(pgrep -n -f -- "--config e --steps $E_STEPS")
	if [ -z "$e_pid" ] || grep -q libcuprobe-agent "/proc/$e_pid/maps" 2>/dev/null; then
		say "[e] FAILED: the loop is not running, or has the agent already"
		show "$WORK/e.train.log" 10
		failed+=(e)
	else
		sleep 0.5 # into the loop
		CUPROBE_AGENT=$AGENT timeout -k 15 "$lim" "$CUPROBE" record --cupti -p "$e_pid" \
			--step "$STEP_PROBE" --schedule "$SCHED" -o "$WORK/e" >"$WORK/e.log" 2>&1
		e_rc=$?
		wait $e_job
		e_train_rc=$?
		say "[e] cuprobe exit $e_rc, train.py exit $e_train_rc"
		grep -E '^train.py:' "$WORK/e.train.log" | sed 's/^/    | /' | tee -a "$SUMMARY"
		grep -E '^cuprobe' "$WORK/e.log" | grep -vE ' (WARMUP|RECORD|RECORD_AND_SAVE|NONE), ' |
			tail -n 12 | sed 's/^/    | /' | tee -a "$SUMMARY"
		$PY - "$WORK/e" <<'EOF' | tee -a "$SUMMARY"
import glob, json, sys
files = sorted(glob.glob(sys.argv[1] + "/run_*/*.pt.trace.json"))
bad = not files
for f in files:
    t = json.load(open(f))
    g = t["cuprobe"]["gpu"]
    kernels = sum(1 for e in t["traceEvents"] if e.get("cat") == "kernel")
    print(f"    {f.split('/')[-2]}: {kernels} kernels, gpu {g}")
    if not g["joined_launches"] or not kernels or g["launches_without_api_record"]:
        bad = True
print("[e] " + ("FAILED: not every cycle's launches joined to CUPTI's records" if bad else
                "ok: every cycle's launches joined to CUPTI's records after the injection"))
sys.exit(1 if bad else 0)
EOF
		e_ok=${PIPESTATUS[0]}
		if ! grep -q "agent loaded into the running process" "$WORK/e.log"; then
			say "[e] FAILED: cuprobe did not bring the agent in"
			show "$WORK/e.log" 10
			e_ok=1
		fi
		[ $e_rc -eq 0 ] && [ $e_train_rc -eq 0 ] && [ "$e_ok" -eq 0 ] || failed+=(e)
	fi
fi

# cuprobe report of (a) and (d): the first 60 lines of (a)'s, then the record_function
# ranges of each (--step torch): time by annotation, and each step split into the
# DataLoader's, the optimizer's and the rest.
for k in a d; do
	[ -d "$WORK/$k" ] || continue
	timeout 60 "$CUPROBE" report "$WORK/$k" >"$WORK/$k.report.txt" 2>&1
	say ""
	if [ $k = a ]; then
		say "== cuprobe report of (a) (first 60 lines) =="
		head -n 60 "$WORK/a.report.txt" | sed 's/^/    /' | tee -a "$SUMMARY"
		say ""
	fi
	say "== cuprobe report of ($k): the Annotations and Step parts tables =="
	$PY tests/gpu/compare.py parts "$WORK/$k.report.txt" 2>&1 | sed 's/^/    /' | tee -a "$SUMMARY"
done

# ---- 3c. the real driver: placement, cuGetProcAddress, one trap per launch ----------
# What only a GPU machine's (newer) driver shows: the first instructions of its exports
# and where cuprobe puts each probe, whether cuGetProcAddress hands out the exports
# there, and what a launch of a real PyTorch loop costs with and without cuprobe (the
# runtime's launch enters the driver: two traps until cuprobe learned its kernels, then
# one).
say ""
say "== 3c. the real driver: placement, cuGetProcAddress, launch cost =="
if command -v cc >/dev/null && cc -O2 -o "$WORK/procaddr" tests/real/procaddr.c -ldl 2>"$WORK/procaddr.cc.log"; then
	timeout 30 "$WORK/procaddr" libcuda.so.1 --device >"$WORK/procaddr.log" 2>&1
	say "[procaddr] exit $? (0: every probed entry cuGetProcAddress hands out is the export)"
	show "$WORK/procaddr.log" 30
else
	say "[procaddr] not built here (no cc): $(head -2 "$WORK/procaddr.cc.log" 2>/dev/null)"
fi
stage f0 90 $PY tests/gpu/launch_cost.py
rm -rf "${WORK:?}/f1"
stage f1 120 "$CUPROBE" record -v -o "$WORK/f1" -- $PY tests/gpu/launch_cost.py
grep -E 'probe at \+|single-stepped|one trap per launch' "$WORK/f1.log" | sort -u | head -n 40 |
	sed 's/^/    | /' | tee -a "$SUMMARY"
$PY - "$WORK/f0.log" "$WORK/f1.log" <<'EOF' | tee -a "$SUMMARY"
import json, sys
def cost(path):
    for line in open(path, errors="replace"):
        if line.startswith("{"):
            return json.loads(line)["ns_per_launch"]
    return None
a, b = cost(sys.argv[1]), cost(sys.argv[2])
if a and b:
    print(f"[f] a launch of torch's x.add_(1): {a:.0f} ns alone, {b:.0f} ns under cuprobe record: "
          f"+{b - a:.0f} ns per launch ({b / a:.2f}x)")
else:
    print(f"[f] launch cost not measured (alone: {a}, under cuprobe: {b})")
EOF

# ---- 3d. torch.cuda.graph replays -----------------------------------------------------
# (g1) and (g2): one forward pass of a small MLP captured with torch.cuda.graph and replayed
# G_REPLAYS times, one step per replay, recorded in one cycle (--step alone, so that the
# capture and the instantiation are seen): with --cupti each replay's expansion must be the
# kernels CUPTI saw it run; without, each replay must be of known content, with kernels.
say ""
G_REPLAYS=${G_REPLAYS:-50}
GRAPH="$PY $ROOT/tests/gpu/graph_replay.py"
say "== 3d. torch.cuda.graph: $G_REPLAYS replays, step probe $G_STEP_PROBE =="
graph_check() { # graph_check NAME [ARGS...]: graph_replay.py check on NAME's traces
	local name=$1
	shift
	timeout 60 $GRAPH check --trace-dir "$WORK/$name" --replays "$G_REPLAYS" "$@" \
		>"$WORK/$name.check" 2>&1
	local rc=$?
	sed 's/^/    | /' "$WORK/$name.check" | tee -a "$SUMMARY"
	if [ $rc -eq 0 ]; then
		say "[$name] ok: every check holds"
	else
		say "[$name] FAILED: graph_replay.py check exited $rc"
	fi
	return $rc
}
rm -rf "${WORK:?}/g1" "${WORK:?}/g2"
if CUPROBE_AGENT=$AGENT stage g1 150 "$CUPROBE" record --cupti --step "$G_STEP_PROBE" \
	-o "$WORK/g1" -- $GRAPH --replays "$G_REPLAYS" --out "$WORK/g1.json"; then
	grep -E '^graph_replay.py:' "$WORK/g1.log" | sed 's/^/    | /' | tee -a "$SUMMARY"
	graph_check g1 --cupti || failed+=(g1)
else
	failed+=(g1)
fi
if stage g2 120 "$CUPROBE" record --step "$G_STEP_PROBE" -o "$WORK/g2" -- \
	$GRAPH --replays "$G_REPLAYS" --out "$WORK/g2.json"; then
	graph_check g2 --kernels-from "$WORK/g1" || failed+=(g2)
else
	failed+=(g2)
fi

# ---- 3e. make bench's per-launch figures on this machine's CPU and driver -------------
# (h) What the shared VM without a GPU cannot settle: a recorded launch's cost over an
# empty uprobe's, on this machine's CPU (its trap and helper costs) and its driver (the
# thunk, placed where cuprobe places it): probe_vs_empty_uprobe on libcudart with the
# devices hidden (its launches fail before the driver, as on the VM), and
# driver_probe_vs_empty_uprobe and nested_launch_vs_empty_uprobe on this driver's
# cuLaunchKernel (called without cuInit). Needs .output/bench carried (make bench-tools).
say ""
say "== 3e. make bench's per-launch figures here =="
H_LIBCUDA=$(ldconfig -p 2>/dev/null | awk '/libcuda\.so\.1 .*x86-64/ { print $NF; exit }')
if [ ! -x .output/bench/empty_uprobe ] || [ ! -x .output/bench/real_loop ]; then
	say "[h] skipped: .output/bench is not here (make bench-tools, and carry .output/bench)"
elif [ -z "$H_LIBCUDA" ]; then
	say "[h] skipped: ldconfig knows no libcuda.so.1"
else
	H_LIBCUDA=$(readlink -f "$H_LIBCUDA")
	say "[h] driver: $H_LIBCUDA"
	# launch_loop's libcudart.so.13 is the toolkit's (RUNPATH); else the CUDA wheel's.
	H_LDPATH=${LD_LIBRARY_PATH:-}
	if ldd .output/bench/launch_loop 2>/dev/null | grep -q 'libcudart.*not found'; then
		H_LDPATH="$WHEEL_LIB${H_LDPATH:+:$H_LDPATH}"
		say "[h] libcudart.so.13 is not where launch_loop was built to find it: LD_LIBRARY_PATH=$WHEEL_LIB"
	fi
	LD_LIBRARY_PATH=$H_LDPATH CUDA_VISIBLE_DEVICES= REAL_LIBCUDA=$H_LIBCUDA BENCH_REPS=${H_REPS:-5} \
		BENCH_ONLY=probe_vs_empty_uprobe,driver_probe_vs_empty_uprobe,nested_launch_vs_empty_uprobe \
		stage h 150 $PY bench/bench.py
	grep -E '^(== | +[ABC] | +\(B-A\)| +ERROR|bench: )' "$WORK/h.log" |
		sed 's/^/    | /' | tee -a "$SUMMARY"
fi

# ---- 4. the comparison ----------------------------------------------------------------

say ""
steps_args=()
for k in c d a b c2; do
	[ -f "$WORK/$k.steps.json" ] && steps_args+=(--steps "$k=$WORK/$k.steps.json")
done
timeout 120 $PY tests/gpu/compare.py report --schedule "$SCHED" --nsteps "$STEPS" \
	--a "$WORK/a" --b "$WORK/b" --d "$WORK/d" ${steps_args[@]+"${steps_args[@]}"} \
	--json "$OUT/summary.json" \
	2>&1 | tee -a "$SUMMARY"
crc=${PIPESTATUS[0]}
[ "$crc" -eq 0 ] || say "run.sh: compare.py exited $crc"

# cuprobe compare's inflation beside torch.profiler's own, on the same loop.
say ""
infl_args=()
for k in c b d a c2; do
	[ -f "$WORK/$k.steps.json" ] && infl_args+=(--steps "$k=$WORK/$k.steps.json")
done
timeout 60 $PY tests/gpu/inflation.py --compare "$WORK/cmp/compare.json" --schedule "$SCHED" \
	${infl_args[@]+"${infl_args[@]}"} --json "$OUT/inflation.json" 2>&1 | tee -a "$SUMMARY"

if [ ${#failed[@]} -gt 0 ]; then
	die 13 "configurations that did not exit 0: ${failed[*]} (their logs are in traces.tar.gz)"
fi
[ "$crc" -eq 0 ] || exit 13
exit 0
