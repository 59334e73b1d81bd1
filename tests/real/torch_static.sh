#!/usr/bin/env bash
# The torch tier: the self-contained build (make STATIC=1's cuprobe, built by
# make as .output/static/cuprobe), which the GPU check (tests/gpu/run.sh)
# carries to a machine without libbpf, steps an unmodified PyTorch training
# loop by --step torch as the dynamic build does: the schedule's cycles and
# steps, each with the optimizer's record_function ranges, and report's
# Annotations and Step parts tables of them.
source "$(dirname "$0")/lib.sh"
need_torch
STATIC=$ROOT/.output/static/cuprobe
if [ ! -x "$STATIC" ]; then
	not_ok "built $STATIC" "missing: make .output/static/cuprobe (make test-torch builds it)"
	done_testing
	exit 0
fi
expect "the static build is statically linked" sh -c "file '$STATIC' | grep -q 'statically linked'"

timeout 300 "$STATIC" record -v --step torch --schedule wait=2,warmup=1,active=2,repeat=2 \
	-o "$TMP/st" -- "$REAL_PY" "$ROOT/tests/real/torch_train.py" --iters 10 >"$TMP/st.log" 2>&1
rc=$?
python3 - "$TMP/st" <<'PY' &&
import glob, json, sys
got = []
for f in sorted(glob.glob(sys.argv[1] + "/run_*/*.pt.trace.json")):
    ev = [e for e in json.load(open(f))["traceEvents"]
          if e.get("cat") == "user_annotation" and e.get("ph") == "X"]
    steps = sorted((e for e in ev if e["name"].startswith("ProfilerStep#")), key=lambda e: e["ts"])
    for s in steps:
        t0, t1 = s["ts"], s["ts"] + s["dur"]
        inside = sorted(e["name"] for e in ev
                        if not e["name"].startswith("ProfilerStep#") and t0 <= e["ts"] <= t1)
        got.append((s["name"], inside))
want = [("ProfilerStep#%d" % n, ["Optimizer.step#SGD.step", "Optimizer.zero_grad#SGD.zero_grad"])
        for n in (3, 4, 8, 9)]
print(f"# static build: {got}")
sys.exit(0 if got == want else 1)
PY
	ok "static build: --step torch gives the schedule's steps 3, 4, 8 and 9, each with the optimizer's ranges" ||
	not_ok "static build: --step torch gives the schedule's steps, each with the optimizer's ranges" \
		"rc $rc; $(grep -m2 -i 'error' "$TMP/st.log" | tr '\n' ' ')"

"$STATIC" report "$TMP/st" >"$TMP/st.report" 2>&1
expect "static build: report's Annotations table counts the optimizer's steps" \
	grep -qE '^ +4 .*Optimizer\.step#SGD\.step$' "$TMP/st.report"
expect "static build: report's Step parts table" grep -q '^Step parts (record_function ranges)' "$TMP/st.report"
done_testing
