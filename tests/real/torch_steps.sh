#!/usr/bin/env bash
# The torch tier: --step torch on an unmodified PyTorch training loop (CPU
# tensors, tests/real/torch_train.py), with torch.profiler as the oracle. The
# same loop run once under torch.profiler (the same schedule, prof.step()
# right after the optimizer step, tensorboard_trace_handler) and once under
# cuprobe record --step torch: the same cycles, each with the same
# ProfilerStep#N numbers, for SGD, Adam, gradient accumulation, a user's range,
# one optimizer of two, a DataLoader, a torch.compile'd model. Then the errors:
# no torch loaded, a libtorch_cpu.so without record_function's entry and exit,
# a Python function named as a symbol.
source "$(dirname "$0")/lib.sh"
need_torch
TRAIN=$ROOT/tests/real/torch_train.py
# Ten iterations end inside cycle 1's first active step: torch.profiler writes
# that partial cycle with ProfilerStep#10 alone, so a step counted twice an
# iteration (or once every two) shows as other numbers, not only other times.
SCHED=3,1,2,2
ITERS=10
source "$ROOT/tests/real/oracle.sh"

oracle sgd torch --opt sgd
oracle adam torch --opt adam
# Gradient accumulation: three backward passes, one optimizer step, one step.
oracle accum torch --opt sgd --accum 3
# A user's own range, the loop's body: with record_function("train_step").
oracle user_range torch:train_step --user-range
# Two optimizers: the prefix picks one (plain torch would count both).
oracle pick_adam 'torch:Optimizer.step#Adam' --opt both
# Batches from a DataLoader: in the loop's process, and from two forked workers.
oracle loader torch --loader 0
oracle loader_workers torch --loader 2

# A torch.compile'd model (inductor, which builds C++ with gcc): its compiled
# regions are no record_function of the user's (torch.profiler counts them as
# cpu_op), so the steps and spans are the eager loop's.
oracle compiled torch --compile inductor
python3 - "$TMP/compiled.torch" <<'PY' &&
import glob, json, sys
names = {e.get("name", "") for f in glob.glob(sys.argv[1] + "/*.pt.trace.json")
         for e in json.load(open(f))["traceEvents"]}
sys.exit(0 if any(n.startswith("Torch-Compiled Region") for n in names) else 1)
PY
	ok "compiled: the model ran compiled (torch.profiler's Torch-Compiled Region)" ||
	not_ok "compiled: the model ran compiled" "no Torch-Compiled Region in torch.profiler's trace"

# report sums the ranges' time by name, cuprobe's spans as torch.profiler's.
for src in sgd.cp sgd.torch; do
	"$CUPROBE" report --format json -o "$TMP/$src.report.json" "$TMP/$src" 2>/dev/null
done
python3 - "$TMP/sgd.cp.report.json" "$TMP/sgd.torch.report.json" <<'PY' &&
import json, sys
calls = [{a["name"]: a["calls"] for a in json.load(open(f))["annotations"]} for f in sys.argv[1:]]
print(f"# report, annotations: cuprobe {calls[0]}, torch.profiler {calls[1]}")
sys.exit(0 if calls[0] == calls[1] and calls[0].get("Optimizer.step#SGD.step") == 2 else 1)
PY
	ok "report: the ranges' calls by name, cuprobe's as torch.profiler's" ||
	not_ok "report: the ranges' calls by name" "see above"

# Step parts: each recorded step of the DataLoader loop has data and optimizer time, and
# they fit in it.
"$CUPROBE" report --format json -o "$TMP/loader.report.json" "$TMP/loader.cp" 2>/dev/null
python3 - "$TMP/loader.report.json" <<'PY' &&
import json, sys
st = [s for s in json.load(open(sys.argv[1]))["steps"] if not s["partial"]]
print(f"# step parts: {[(s['step'], s['data_ns'], s['optimizer_ns'], s['wall_ns']) for s in st]}")
sys.exit(0 if st and all(s["data_ns"] > 0 and s["optimizer_ns"] > 0 and
                         s["data_ns"] + s["optimizer_ns"] < s["wall_ns"] for s in st) else 1)
PY
	ok "report: each step's DataLoader and optimizer parts" ||
	not_ok "report: each step's DataLoader and optimizer parts" "see above"

# A program that runs torch.profiler itself: its own ProfilerStep# ranges are
# no annotation of cuprobe's, and its steps are still the optimizer's.
oracle profiled torch --profile "$SCHED" --out "$TMP/profiled.own"

# The entry and exit were looked up after the hold that found libtorch_cpu.so, not inside it.
expect "sgd: record_function's exit looked up off the hold" \
	grep -q "libtorch_cpu.so: record_function's entry and exit looked up in" "$TMP/sgd.cp.log"
python3 - "$(trace_in "$TMP/sgd.cp/run_0" | head -1)" <<'PY' &&
import json, sys
h = json.load(open(sys.argv[1]))["cuprobe"]["holds"]
print(f"# sgd: holds {h['count']}, the longest {h['max_ms']} ms")
sys.exit(0 if h["max_ms"] < 100 else 1)
PY
	ok "sgd: no hold of 100 ms or more (the .symtab walk is not in one)" ||
	not_ok "sgd: no hold of 100 ms or more" "see above"

# Plain torch with two optimizers counts both steps: twice the steps of the loop.
timeout 300 "$CUPROBE" record -v --step torch -o "$TMP/both" -- "$REAL_PY" "$TRAIN" --opt both --iters 8 \
	>"$TMP/both.log" 2>&1
n=$(grep -c 'step [0-9]* (NONE) ended\|step [0-9]* (RECORD[_A-Z]*) ended' "$TMP/both.log")
[ "$n" -ge 16 ] && ok "two optimizers, plain torch: a step per optimizer step ($n for 8 iterations)" ||
	not_ok "two optimizers, plain torch: a step per optimizer step" "$n steps ended for 8 iterations"

# -p on a trainer that has run for a while: steps count from the attach (the
# range open then is not one), and the first cycle is complete.
"$REAL_PY" "$TRAIN" --iters 100000000 >/dev/null 2>&1 &
tp=$!
sleep 5
timeout 120 "$CUPROBE" record -v -p $tp --step torch --schedule wait=2,warmup=1,active=2,repeat=1 \
	--duration 10 -o "$TMP/attach" >"$TMP/attach.log" 2>&1
rc=$?
kill $tp 2>/dev/null
wait $tp 2>/dev/null
got=$(steps_of "$TMP/attach")
f=$(trace_in "$TMP/attach/run_0" | head -1)
[ $rc = 0 ] && [ "$got" = "3 4" ] && python3 -c 'import json, sys
sys.exit(1 if json.load(open(sys.argv[1]))["cuprobe"].get("partial") else 0)' "$f" &&
	ok "-p on a running trainer: steps from the attach, cycle 0 complete (ProfilerStep#3, #4)" ||
	not_ok "-p on a running trainer: steps from the attach, cycle 0 complete" \
		"rc $rc, steps [$got]; $(grep -m2 error "$TMP/attach.log" | tr '\n' ' ')"

# torchrun, two ranks of DDP on gloo, under record --: each rank counts its own
# steps; cycle k of both ranks is run_<k>, one file per rank with its rank.
timeout 300 "$CUPROBE" record --step torch --schedule wait=3,warmup=1,active=2,repeat=2 -o "$TMP/ddp" -- \
	"$REAL_PY" -m torch.distributed.run --nproc-per-node 2 "$TRAIN" --ddp --iters 12 >"$TMP/ddp.log" 2>&1
rc=$?
python3 - "$TMP/ddp" <<'PY' && ok "torchrun, 2 DDP ranks: each its own cycles, the same steps, one run folder a cycle" ||
import glob, json, sys
runs = {}
for f in glob.glob(sys.argv[1] + "/run_*/*.pt.trace.json"):
    d = json.load(open(f))
    steps = sorted(e["name"] for e in d["traceEvents"] if e.get("name", "").startswith("ProfilerStep#"))
    runs.setdefault(f.split("/")[-2], []).append((d["distributedInfo"]["rank"], d["cuprobe"]["pid"], steps))
print(f"# {sorted(runs.items())}")
ok = sorted(runs) == ["run_0", "run_1"]
for k, want in (("run_0", ["ProfilerStep#4", "ProfilerStep#5"]), ("run_1", ["ProfilerStep#10", "ProfilerStep#11"])):
    files = sorted(runs.get(k, []))
    ok = ok and [r for r, _, _ in files] == [0, 1] and len({p for _, p, _ in files}) == 2
    ok = ok and all(s == want for _, _, s in files)
sys.exit(0 if ok else 1)
PY
	not_ok "torchrun, 2 DDP ranks: each its own cycles" "rc $rc: see above; $(grep -m2 error "$TMP/ddp.log" | tr '\n' ' ')"

# -p --children on a torchrun job running for a while: its ranks are found as
# children, each counts its steps from the attach, both in the same run folder.
"$REAL_PY" -m torch.distributed.run --nproc-per-node 2 "$TRAIN" --ddp --iters 100000000 >/dev/null 2>&1 &
tl=$!
sleep 12
timeout 120 "$CUPROBE" record -p $tl --children --step torch --schedule wait=2,warmup=1,active=2,repeat=1 \
	--duration 15 -o "$TMP/pddp" >"$TMP/pddp.log" 2>&1
rc=$?
kill $tl 2>/dev/null
wait $tl 2>/dev/null
python3 - "$TMP/pddp" <<'PY' && ok "-p --children on a running torchrun: each rank's steps from the attach, one run folder" ||
import glob, json, sys
got = sorted((d["distributedInfo"]["rank"], sorted(e["name"] for e in d["traceEvents"]
              if e.get("name", "").startswith("ProfilerStep#")))
             for d in (json.load(open(f)) for f in glob.glob(sys.argv[1] + "/run_0/*.pt.trace.json")))
print(f"# {got}")
sys.exit(0 if got == [(r, ["ProfilerStep#3", "ProfilerStep#4"]) for r in (0, 1)] else 1)
PY
	not_ok "-p --children on a running torchrun" "rc $rc: $(grep -m2 error "$TMP/pddp.log" | tr '\n' ' ')"

# compare on the same loop, stepped by torch: windows of each mode, their steps measured.
timeout 300 "$CUPROBE" compare --step torch --modes off,bpf -o "$TMP/cmp" -- \
	"$REAL_PY" "$TRAIN" --iters 400 >"$TMP/cmp.log" 2>&1
rc=$?
python3 - "$TMP/cmp/compare.json" <<'PY' && ok "compare --step torch: each mode's steps measured" ||
import json, sys
d = json.load(open(sys.argv[1]))
steps = {r["mode"]: r["steps"] for r in d["results"]}
print(f"# compare, step {d['step']}: steps per mode {steps}")
sys.exit(0 if d["step"] == "torch" and steps.get("off") and steps.get("bpf") else 1)
PY
	not_ok "compare --step torch: each mode's steps measured" "rc $rc: $(grep -m2 error "$TMP/cmp.log" | tr '\n' ' ')"

# Ranges nested past the depth BPF follows (64): counted and said, never silent.
# 4 iterations inside 70 "nest" ranges: 6 of those and zero_grad's and step's
# ranges are deeper than 64, 8 an iteration.
timeout 300 "$CUPROBE" record --step torch -o "$TMP/deep" -- "$REAL_PY" "$TRAIN" --nest 70 --iters 4 \
	>"$TMP/deep.log" 2>&1
rc=$?
[ $rc = 0 ] && grep -q "warning: --step torch: 32 record_function ranges were entered more than 64 deep: they are no spans, and a step range among them ended no step" "$TMP/deep.log" &&
	ok "ranges nested more than 64 deep: counted and said (32 for 4 iterations)" ||
	not_ok "ranges nested more than 64 deep: counted and said" "rc $rc: $(grep -m3 'warning\|error' "$TMP/deep.log" | tr '\n' ' ')"

# Errors. No torch loaded: an error that says so, and a non-zero exit.
timeout 120 "$CUPROBE" record --step torch -o "$TMP/e_none" -- "$REAL_PY" -c 'print(1)' >"$TMP/e_none.log" 2>&1
rc=$?
[ $rc != 0 ] && grep -q "error: --step torch: pid [0-9]* (python[0-9.]*) never loaded libtorch_cpu.so" "$TMP/e_none.log" &&
	ok "--step torch, no torch loaded: error (rc $rc)" ||
	not_ok "--step torch, no torch loaded: error" "rc $rc: $(tr '\n' ' ' <"$TMP/e_none.log")"

# A libtorch_cpu.so without record_function's entry and exit (a release that renamed them).
mkdir -p "$TMP/fake/torch/lib"
echo "__version__ = '2.99.0+renamed'" >"$TMP/fake/torch/version.py"
echo 'int fake_torch(void) { return 1; }' >"$TMP/fake/f.c"
cc -shared -fPIC -o "$TMP/fake/torch/lib/libtorch_cpu.so" "$TMP/fake/f.c"
timeout 120 "$CUPROBE" record --step torch -o "$TMP/e_old" -- \
	env LD_PRELOAD="$TMP/fake/torch/lib/libtorch_cpu.so" "$REAL_PY" -c 'print(1)' >"$TMP/e_old.log" 2>&1
rc=$?
[ $rc != 0 ] && grep -q "error: --step torch: .*libtorch_cpu.so (torch 2.99.0+renamed) has no record_function_enter_new (with a C++11 or pre-C++11 std::string) nor record_function_exit_new in its .symtab: this torch is not supported by --step torch (2.4 to 2.15 tested)" "$TMP/e_old.log" &&
	ok "--step torch, a torch without the range calls: error naming the version and the calls (rc $rc)" ||
	not_ok "--step torch, a torch without the range calls: error" "rc $rc: $(tr '\n' ' ' <"$TMP/e_old.log")"

# A Python function named as a symbol: it is no symbol; --step torch is named.
timeout 300 "$CUPROBE" record --step train_step -o "$TMP/e_py" -- "$REAL_PY" "$TRAIN" --iters 2 >"$TMP/e_py.log" 2>&1
rc=$?
[ $rc != 0 ] && grep -q "runs Python: Python functions are not native symbols; for a PyTorch loop use --step torch" "$TMP/e_py.log" &&
	ok "--step train_step on a Python loop: Python functions are not symbols, --step torch named (rc $rc)" ||
	not_ok "--step train_step on a Python loop: the hint" "rc $rc: $(grep error "$TMP/e_py.log" | tr '\n' ' ')"

done_testing
