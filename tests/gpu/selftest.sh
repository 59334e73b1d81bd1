#!/usr/bin/env bash
# Checks tests/gpu/ without a GPU: the scripts parse, compare.py gives the right
# figures on a cuprobe --cupti recording made with the CUPTI simulator and a
# torch.profiler-like trace made from it (fixtures.py), stepcheck tells a good
# step probe from a bad one, and run.sh stops with a clear message where torch
# or CUDA is missing. Needs root (BPF) and a built tree:
#   make && make agent-tests && bash tests/gpu/selftest.sh
# Prints "ok - ..." / "not ok - ..." lines, then "# done"; make test runs it.
set -u -o pipefail
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
O=$ROOT/.output
KINETO_REF=${KINETO_REF:-$ROOT/tests/gpu/kineto-minimal.pt.trace.json}
TMP=$(mktemp -d /tmp/cuprobe-gpu-selftest.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
passed=0 failed=0
ok() { echo "ok - $1"; passed=$((passed + 1)); }
not_ok() { echo "not ok - $1: $2"; failed=$((failed + 1)); }
expect() { # expect NAME COMMAND...
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then ok "$name"; else not_ok "$name" "$(tail -5 <<<"$out" | tr '\n' ' ')"; fi
}
# expect_rc NAME RC PATTERN COMMAND...: COMMAND exits RC and prints PATTERN.
expect_rc() {
	local name=$1 want=$2 pat=$3 out rc
	shift 3
	out=$("$@" 2>&1); rc=$?
	if [ $rc -ne "$want" ]; then not_ok "$name" "exit $rc, not $want: $(tail -3 <<<"$out" | tr '\n' ' ')"
	elif ! grep -qE -- "$pat" <<<"$out"; then not_ok "$name" "no /$pat/ in: $(tail -3 <<<"$out" | tr '\n' ' ')"
	else ok "$name"; fi
}

expect "run.sh parses" bash -n tests/gpu/run.sh
# Compiled in memory: py_compile would leave __pycache__ in the tree.
expect "the Python helpers compile" python3 -c \
	'import sys; [compile(open(f).read(), f, "exec") for f in sys.argv[1:]]' \
	tests/gpu/train.py tests/gpu/compare.py tests/gpu/fixtures.py tests/gpu/inflation.py \
	tests/gpu/graph_replay.py
for f in ./cuprobe "$O/libcuprobe-agent.so" "$O/cupti_sim/libcupti.so.13" "$O/workloads/basic" \
	"$KINETO_REF"; do
	if [ ! -e "$f" ]; then
		not_ok "inputs" "$f is missing (make && make agent-tests; KINETO_REF=)"
		echo "$passed passed, $failed failed"
		exit 1
	fi
done

# A --cupti recording on the simulator: one cycle, steps 2 and 3.
SCHED=wait=1,warmup=1,active=2,repeat=1
expect "cuprobe record --cupti on the CUPTI simulator" \
	./cuprobe record -q --cupti -o "$TMP/a" --step cuprobe_step --schedule "$SCHED" -- \
	env LD_PRELOAD="$O/libcuprobe-agent.so:$O/cupti_sim/libcupti.so.13" \
	LD_LIBRARY_PATH="$O/cupti_sim" "$O/workloads/basic" --steps --iters 6 --sleep-ms 30
expect "fixtures from it" python3 tests/gpu/fixtures.py "$TMP/a" "$KINETO_REF" "$TMP/fx" \
	--gpu-scale 1.05 --steps 6
steps=()
for k in c c2 a b d; do steps+=(--steps "$k=$TMP/fx/$k.steps.json"); done
# (a) and (d): the recording with the record_function spans --step torch writes.
expect "compare.py report runs" python3 tests/gpu/compare.py report --schedule "$SCHED" \
	--a "$TMP/fx/a" --b "$TMP/fx/b" --d "$TMP/fx/a" "${steps[@]}" --json "$TMP/summary.json"
expect "compare.py's figures" python3 - "$TMP/summary.json" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
n = r["names"]
assert n["a"] == n["b"] == n["both"] == n["equal_counts"] > 0, n
assert n["a_per_step"] == n["b_per_step"] > 0, n
d = r["durations"]["summary"]
assert abs(d["median_diff_pct"] - (1 / 1.05 - 1) * 100) < 0.01, d
assert r["join"]["rate"] == 1.0 and r["join"]["clock_faults"] == 0, r["join"]
assert r["mapping"]["a"]["offset"] == 0 and r["mapping"]["a"]["consistent"], r["mapping"]
t = r["times"]
assert abs(t["b"]["ratio_to_c"]["active"] - 1.2) < 1e-9, t["b"]
assert abs(t["a"]["ratio_to_c"]["all"] - 1.05) < 1e-9, t["a"]
rows = r["per_step"]
assert [x["step"] for x in rows] == [2, 3], rows
assert all(x["a"]["gpu"] == x["b"]["gpu"] > 0 and x["a"]["launches"] == x["b"]["calls"]
           for x in rows), rows
assert r["ranges_match"], r["ranges"]
assert [(x["name"], x["a"], x["b"], x["d"]) for x in r["ranges"]] == [
    (n, [1, 1], [1, 1], [1, 1])
    for n in ("Optimizer.step#SGD.step", "Optimizer.zero_grad#SGD.zero_grad")], r["ranges"]
c = [x for x in r["checks"] if "record_function ranges" in x["what"]]
assert len(c) == 1 and c[0]["ok"], c
EOF
expect "compare.py: a side without the ranges does not match" python3 - "$TMP" "$SCHED" <<'EOF'
import json, subprocess, sys
tmp, sched = sys.argv[1], sys.argv[2]
r = subprocess.run(["python3", "tests/gpu/compare.py", "report", "--schedule", sched,
                    "--a", f"{tmp}/fx/a", "--b", f"{tmp}/fx/b", "--d", f"{tmp}/a",
                    "--json", f"{tmp}/noranges.json"], capture_output=True, text=True)
assert r.returncode == 0, r.stdout + r.stderr
out = json.load(open(f"{tmp}/noranges.json"))
assert not out["ranges_match"] and all(x["d"] == [0, 0] for x in out["ranges"]), out["ranges"]
assert "WARN (a), (b) and (d) have the same record_function ranges" in r.stdout, r.stdout
EOF
# run.sh's summary: the Annotations and Step parts tables of cuprobe report.
./cuprobe report "$TMP/fx/a" >"$TMP/a.report.txt" 2>&1
expect_rc "compare.py parts: report's Annotations and Step parts tables" 0 \
	"^Step parts \(record_function ranges\)" python3 tests/gpu/compare.py parts "$TMP/a.report.txt"
expect "compare.py parts: each range and each active step" python3 - "$TMP/a.report.txt" <<'EOF'
import re, subprocess, sys
out = subprocess.run(["python3", "tests/gpu/compare.py", "parts", sys.argv[1]],
                     capture_output=True, text=True).stdout
assert out.startswith("Annotations (record_function ranges)"), out
for name in ("Optimizer.step#SGD.step", "Optimizer.zero_grad#SGD.zero_grad"):
    assert re.search(r"^\s+2\s.*" + re.escape(name) + "$", out, re.M), (name, out)
steps = re.findall(r"^\s+\d+\s+([23])\s+[\d.]+\s+0\.000\s+[\d.]+\s+[\d.]+$", out, re.M)
assert steps == ["2", "3"], out
assert "Kernels" not in out and "Cycles" not in out, out
EOF
./cuprobe report "$TMP/a" >"$TMP/a0.report.txt" 2>&1
expect_rc "compare.py parts: a report without ranges says so" 1 "were the steps counted by --step torch" \
	python3 tests/gpu/compare.py parts "$TMP/a0.report.txt"
expect_rc "stepcheck: a probe hit once per iteration" 0 "spans \[2, 3\]" \
	python3 tests/gpu/compare.py stepcheck --schedule "$SCHED" --trace-dir "$TMP/a" \
	--steps-file "$TMP/fx/a.steps.json"
python3 tests/gpu/fixtures.py "$TMP/a" "$KINETO_REF" "$TMP/fx1" --offset 1 --steps 6 >/dev/null
expect_rc "stepcheck: a probe hit once more before the loop" 1 "loop iteration k - 1" \
	python3 tests/gpu/compare.py stepcheck --schedule "$SCHED" --trace-dir "$TMP/a" \
	--steps-file "$TMP/fx1/a.steps.json"
expect_rc "stepcheck: no trace" 2 "no trace" \
	python3 tests/gpu/compare.py stepcheck --schedule "$SCHED" --trace-dir "$TMP/none"

# graph_replay.py check, on hand-made traces of 3 replays of 6 kernels: CUPTI saw 6, 6, 6
# (good) or 6, 6, 5 (bad, the writer's counts made to agree); plain: no correlation.
python3 - "$TMP" <<'EOF'
import json, os, sys
def trace(path, gpu, cupti=True):
    ev, obj = [], {"graph_replays": 3, "graph_unknown_replays": 0, "graph_kernels": 18}
    for r, n in enumerate(gpu):
        a = {"graph": "0x7f00", "graph content": 1, "graph nodes": 7, "graph kernels": 6}
        if cupti:
            a["correlation"] = 40 + r
            ev += [{"ph": "X", "cat": "kernel", "name": "k", "args": {"correlation": 40 + r}}] * n
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaGraphLaunch", "args": a})
    if cupti:
        obj.update(graph_gpu_kernels=sum(gpu), graph_mismatches=sum(n != 6 for n in gpu))
    os.makedirs(path + "/run_0")
    json.dump({"traceEvents": ev, "cuprobe": obj}, open(path + "/run_0/h_1.1.pt.trace.json", "w"))
trace(sys.argv[1] + "/g_good", [6, 6, 6])
trace(sys.argv[1] + "/g_bad", [6, 6, 5])
trace(sys.argv[1] + "/g_plain", [6, 6, 6], cupti=False)
EOF
GCHECK="python3 tests/gpu/graph_replay.py check"
expect_rc "graph_replay.py check: expansions equal to CUPTI's kernels" 0 \
	"CUPTI kernels per replay: \[6\]" $GCHECK --trace-dir "$TMP/g_good" --replays 3 --cupti
expect_rc "graph_replay.py check: one replay CUPTI saw run 5 kernels of 6" 1 \
	"FAILED: every replay's graph kernels" $GCHECK --trace-dir "$TMP/g_bad" --replays 3 --cupti
expect_rc "graph_replay.py check: a plain recording, against the --cupti one's kernels" 0 \
	"expansions \[6\] here, CUPTI's kernels per replay \[6\]" \
	$GCHECK --trace-dir "$TMP/g_plain" --replays 3 --kernels-from "$TMP/g_good"
expect_rc "graph_replay.py check: fewer replays recorded than made" 1 \
	"FAILED: 3 graph launches" $GCHECK --trace-dir "$TMP/g_plain" --replays 4
expect_rc "graph_replay.py check: a plain recording has no CUPTI records" 1 \
	"FAILED: every replay joined" $GCHECK --trace-dir "$TMP/g_plain" --replays 3 --cupti

# inflation.py: cuprobe compare's figures beside the separate runs' (fixtures: b is 1.2x c).
expect "cuprobe compare on the CUPTI simulator" \
	./cuprobe compare -q -o "$TMP/cmp" --step cuprobe_step --modes off,bpf,cupti \
	--steps-per-mode 5 --rounds 2 -- env LD_PRELOAD="$O/libcuprobe-agent.so:$O/cupti_sim/libcupti.so.13" \
	LD_LIBRARY_PATH="$O/cupti_sim" "$O/workloads/basic" --steps --iters 200 --sleep-ms 10
expect "inflation.py sets compare's figures beside torch.profiler's" python3 - "$TMP" "$SCHED" <<'EOF'
import json, subprocess, sys
tmp, sched = sys.argv[1], sys.argv[2]
r = subprocess.run(["python3", "tests/gpu/inflation.py", "--compare", f"{tmp}/cmp/compare.json",
                    "--schedule", sched, "--steps", f"c={tmp}/fx/c.steps.json",
                    "--steps", f"b={tmp}/fx/b.steps.json", "--json", f"{tmp}/infl.json"],
                   capture_output=True, text=True)
assert r.returncode == 0, r.stdout + r.stderr
out, cmp = json.load(open(f"{tmp}/infl.json")), json.load(open(f"{tmp}/cmp/compare.json"))
b = out["separate_runs"]["b"]
assert abs(b["ratio"] - 1.2) < 1e-9 and abs(b["ci95"][0] - 1.2) < 1e-9, b
for res in cmp["results"][1:]:
    got = out["compare"][res["mode"]]
    assert got["ratio"] == res["ratio_to_off"]["value"] and got["steps"] == 10, (got, res)
assert "torch.profiler run (b)" in r.stdout and "compare: cupti windows" in r.stdout, r.stdout
EOF

# run.sh where torch is missing, then where CUDA is.
mkdir -p "$TMP/py/notorch" "$TMP/py/nocuda/torch"
cat >"$TMP/py/notorch/torch.py" <<'EOF'
raise ImportError("no torch in this test")
EOF
cat >"$TMP/py/nocuda/torch/__init__.py" <<'EOF'
__version__ = "0.0-selftest"
class version:
    cuda = None
class cuda:
    @staticmethod
    def is_available():
        return False
EOF
expect_rc "run.sh without torch: exit 11, says so" 11 "cannot import torch" \
	env PYTHONPATH="$TMP/py/notorch" OUT="$TMP/out1" WORK="$TMP/work1" bash tests/gpu/run.sh
expect_rc "run.sh without CUDA: exit 12, says so" 12 "no usable CUDA" \
	env PYTHONPATH="$TMP/py/nocuda" OUT="$TMP/out2" WORK="$TMP/work2" bash tests/gpu/run.sh
expect_rc "graph_replay.py without torch: exit 3" 3 "" \
	env PYTHONPATH="$TMP/py/notorch" python3 tests/gpu/graph_replay.py --replays 2
expect "run.sh leaves summary.txt and traces.tar.gz" \
	test -s "$TMP/out2/summary.txt" -a -s "$TMP/out2/traces.tar.gz"

# tests/run.sh counts the lines above; "# done" says the script ran to its end.
echo "# $passed passed, $failed failed"
echo "# done"
[ $failed -eq 0 ]
