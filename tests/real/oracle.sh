# The torch tier's oracle, sourced by torch_steps.sh and torch_versions.sh:
# the same loop (TRAIN, ITERS iterations) under torch.profiler with the
# schedule SCHED and under cuprobe record --step, with TORCH_PY (REAL_PY
# unless set), compared cycle by cycle. Needs lib.sh's ok/not_ok and TMP.

# The ProfilerStep#N numbers of each cycle, one line per cycle in step order:
# torch.profiler's files (one per cycle) or cuprobe's run_<k> folders. With
# "names", each step also lists the other user_annotation spans in it (the
# record_function ranges), by name with their count.
steps_of() {
	python3 - "$@" <<'PY'
import glob, json, os, re, sys
root, names = sys.argv[1], len(sys.argv) > 2
files = sorted(glob.glob(os.path.join(root, "run_*", "*.pt.trace.json")),
               key=lambda f: int(re.search(r"run_(\d+)", f).group(1)))
files = files or glob.glob(os.path.join(root, "*.pt.trace.json"))
cycles = []
for f in files:
    ev = [e for e in json.load(open(f))["traceEvents"]
          if e.get("cat") == "user_annotation" and e.get("ph") == "X"]
    steps = sorted((int(e["name"].split("#")[1]), e) for e in ev
                   if e["name"].startswith("ProfilerStep#"))
    out = []
    for n, s in steps:
        if not names:
            out.append(str(n))
            continue
        t0, t1 = float(s["ts"]), float(s["ts"]) + float(s["dur"])
        inside = sorted(e["name"] for e in ev if not e["name"].startswith("ProfilerStep#")
                        and e["tid"] == s["tid"] and t0 <= float(e["ts"]) <= t1)
        counts = {k: inside.count(k) for k in inside}
        out.append(f"{n}(" + ",".join(f"{k}={v}" for k, v in counts.items()) + ")")
    cycles.append(out)
for c in sorted(cycles, key=lambda c: c and int(c[0].split("(")[0])):
    print(" ".join(c))
PY
}

# oracle NAME STEP ARGS...: the loop under torch.profiler and under cuprobe --step STEP.
oracle() {
	local name=$1 step=$2
	shift 2
	local w u a r
	local py=${TORCH_PY:-$REAL_PY}
	IFS=, read -r w u a r <<<"$SCHED"
	"$py" "$TRAIN" --iters $ITERS "$@" --profile "$SCHED" --out "$TMP/$name.torch" >"$TMP/$name.torch.log" 2>&1
	timeout 300 "$CUPROBE" record -v --step "$step" --schedule "wait=$w,warmup=$u,active=$a,repeat=$r" \
		-o "$TMP/$name.cp" -- "$py" "$TRAIN" --iters $ITERS "$@" >"$TMP/$name.cp.log" 2>&1
	local rc=$? want got
	want=$(steps_of "$TMP/$name.torch" names)
	got=$(steps_of "$TMP/$name.cp" names)
	if [ $rc = 0 ] && [ -n "$want" ] && [ "$want" = "$got" ]; then
		ok "$name: --step $step, the cycles, steps and record_function spans of torch.profiler ($(echo "$want" | tr '\n' '/'))"
	else
		not_ok "$name: --step $step, the cycles, steps and record_function spans of torch.profiler" \
			"rc $rc; torch.profiler: [$(echo $want)], cuprobe: [$(echo $got)]; $(grep -m2 'error' "$TMP/$name.cp.log" | tr '\n' ' ')"
	fi
}
