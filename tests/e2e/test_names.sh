#!/usr/bin/env bash
# Kernels launched by handle (cuLaunchKernel, cuLaunchKernelEx, a cudaKernel_t
# given to cudaLaunchKernel) are named from the calls that made the handles:
# the names workload makes one through each handle API on a stand-in driver
# and runtime (tests/workloads/fakecuda.c, fakecudart.c). Handles made before
# cuprobe attached stay unnamed and are counted, or take CUPTI's name.
source "$(dirname "$0")/lib.sh"
O=$ROOT/.output

# unnamed_truth GT: the launches the ground truth says must stay unnamed.
unnamed_truth() {
	python3 -c "import json,sys; print(sum(c['count'] for c in json.load(open(sys.argv[1]))['calls'] if not c['kernel']))" "$1"
}

# A command: every handle made under cuprobe's eye; only the failed call's leftover is unnamed.
"$CUPROBE" record -o "$TMP/cmd" -- env CUPROBE_GT="$TMP/cmd.gt.json" "$W/names" --iters 4 \
	>"$TMP/cmd.log" 2>&1
f=$(trace_in "$TMP/cmd/run_0")
expect "command: every launch named as the ground truth says, exactly" \
	$CHECK match --gt "$TMP/cmd.gt.json" "$f"
want=$(unnamed_truth "$TMP/cmd.gt.json")
got=$($CHECK field "$f" unnamed_kernels)
[ "$want" = 4 ] && [ "$got" = "$want" ] && ok "command: unnamed_kernels counts the 4 launches of the failed call's leftover" ||
	not_ok "command: unnamed_kernels" "trace $got, truth $want (want 4)"
expect "command: a name cut at 255 bytes is said" \
	grep -q "1 kernel names were longer than 255 bytes and were cut short" "$TMP/cmd.log"

# -p: handles made before the attach stay unnamed (never guessed), and are counted.
CUPROBE_GT=$TMP/p.gt.json "$W/names" --iters 5 --wait-file "$TMP/go" 2>/dev/null &
wl=$!
attach_then_go $wl "$TMP/p" "$TMP/p.log" "$TMP/go"
f=$(trace_in "$TMP/p/run_0")
expect "-p: launches by handles made after attach are named, before it unnamed, exactly" \
	$CHECK match --gt "$TMP/p.gt.json" "$f"
want=$(unnamed_truth "$TMP/p.gt.json")
got=$($CHECK field "$f" unnamed_kernels)
# 3 handles made before the attach, the function of one of them, the failed call's, and
# the kernel a <<<>>> stub got (__cudaGetKernel) before it: 5 x 5.
[ "$want" = 25 ] && [ "$got" = "$want" ] && ok "-p: unnamed_kernels counts the 25 launches by unseen handles" ||
	not_ok "-p: unnamed_kernels" "trace $got, truth $want (want 25)"
"$CUPROBE" report "$TMP/p" >"$TMP/p.report" 2>&1
expect "-p: the report says how many launches are unnamed" \
	grep -q "^Unnamed    25 kernel launches" "$TMP/p.report"
"$CUPROBE" report --format json "$TMP/p" >"$TMP/p.json" 2>&1
expect "-p: the JSON report counts them" \
	python3 -c "import json,sys; sys.exit(json.load(open(sys.argv[1]))['unnamed_kernels'] != 25)" "$TMP/p.json"

# --cupti: an unseen handle takes CUPTI's name (the simulator's); seen ones keep theirs.
# Driver launches only: the simulator interposes cuLaunchKernel, so the stand-in runtime's
# forwarded call would return into it, not into a runtime, and count as a launch of its
# own (CUPTI interposes nothing: that is the harness's doing).
AGENT=$O/libcuprobe-agent.so SIM=$O/cupti_sim
# CUPTI starts at the warmup step, so that every launch of steps 2-3 has its records.
"$CUPROBE" record --cupti -o "$TMP/cupti" --step cuprobe_step \
	--schedule wait=1,warmup=1,active=2 -- env LD_PRELOAD="$AGENT:$SIM/libcupti.so.13" \
	LD_LIBRARY_PATH="$SIM" CUPROBE_GT="$TMP/cupti.gt.json" NAMES_DRIVER_ONLY=1 \
	"$W/names" --iters 5 --steps \
	--sleep-ms 20 >"$TMP/cupti.log" 2>&1
f=$(trace_in "$TMP/cupti/run_0")
python3 - "$f" "$TMP/cupti.gt.json" >"$TMP/cupti.check" 2>&1 <<'PY'
import collections, json, sys
t = json.load(open(sys.argv[1]))
gt = json.load(open(sys.argv[2]))
want = collections.Counter()
for c in gt["calls"]:
    if c["step"] in (2, 3):
        want[(c["api"], c["kernel"] or "sim_cufunction_%#x" % c["func"])] += c["count"]
got = collections.Counter((e["name"], e["args"]["kernel"]) for e in t["traceEvents"]
                          if e.get("cat") in ("cuda_runtime", "cuda_driver"))
bad = [f"trace {got[k]} vs truth {want[k]}: {k}" for k in set(got) | set(want) if got[k] != want[k]]
if t["cuprobe"]["unnamed_kernels"] != 0:
    bad.append(f"unnamed_kernels {t['cuprobe']['unnamed_kernels']}, want 0: CUPTI named them")
print("\n".join(bad))
sys.exit(1 if bad else 0)
PY
[ $? = 0 ] && ok "--cupti: CUPTI names only the handles cuprobe did not see made" ||
	not_ok "--cupti: CUPTI names only unseen handles" "$(head -5 "$TMP/cupti.check" | tr '\n' ' ')"

# The driver workload's made-up handles were made by no call: unnamed, as before.
"$CUPROBE" record -o "$TMP/drv" -- env CUPROBE_GT="$TMP/drv.gt.json" "$W/driver" --iters 3 \
	>"$TMP/drv.log" 2>&1
f=$(trace_in "$TMP/drv/run_0")
expect "driver: handles no call made stay CUfunction 0x..." $CHECK match --gt "$TMP/drv.gt.json" "$f"
[ "$($CHECK field "$f" unnamed_kernels)" = 12 ] && ok "driver: unnamed_kernels 12" ||
	not_ok "driver: unnamed_kernels 12" "$($CHECK field "$f" unnamed_kernels)"

done_testing
