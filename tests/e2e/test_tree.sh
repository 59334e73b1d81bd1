#!/usr/bin/env bash
# Process trees: record -- LAUNCHER follows every descendant, held at exec so
# that none of its first launches is missed; ranks from the environment; all
# ranks' files of cycle k in run_<k>. -p PID --children does the same for a
# running launcher; without --children, a child that takes up CUDA is said.
source "$(dirname "$0")/lib.sh"

# A launcher starting eight ranks, each with RANK and WORLD_SIZE and its own ground truth.
cat > "$TMP/ranks.sh" <<SH
#!/bin/sh
[ -n "\$1" ] && while [ ! -e "\$1" ]; do sleep 0.02; done
for r in 0 1 2 3 4 5 6 7; do
	RANK=\$r WORLD_SIZE=8 CUPROBE_GT=$TMP/rank\$r.gt.json "$W/basic" --threads 1 --iters 10 \\
		--steps --sleep-ms 20 2>/dev/null &
done
wait
SH
chmod +x "$TMP/ranks.sh"

"$CUPROBE" record -o "$TMP/tree" --step cuprobe_step --schedule wait=1,warmup=1,active=2,repeat=2 \
	-- "$TMP/ranks.sh" >"$TMP/tree.log" 2>&1
rc=$?
[ $rc -eq 0 ] && ok "record -- LAUNCHER (8 ranks): exit 0" || not_ok "record -- LAUNCHER (8 ranks): exit 0" "rc $rc: $(tail -3 "$TMP/tree.log")"
for k in 0 1; do
	n=$(ls "$TMP/tree/run_$k"/*.pt.trace.json 2>/dev/null | wc -l)
	[ "$n" = 8 ] && ok "cycle $k: one trace per rank in run_$k, none for the launcher" ||
		not_ok "cycle $k: one trace per rank in run_$k" "$n traces"
done
python3 - "$TMP" <<'PY' && ok "each rank's trace names its rank and world size" || not_ok "each rank's trace names its rank and world size" "see above"
import glob, json, sys
seen = set()
for f in glob.glob(sys.argv[1] + "/tree/run_0/*.pt.trace.json"):
    d = json.load(open(f))["distributedInfo"]
    if d["world_size"] != 8:
        print("world_size", d)
        sys.exit(1)
    seen.add(d["rank"])
sys.exit(0 if seen == set(range(8)) else 1)
PY
# Exact per rank and per cycle: the file of rank r matches rank r's ground truth in that cycle's steps.
bad=""
for k in 0 1; do
	for f in "$TMP/tree/run_$k"/*.pt.trace.json; do
		r=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['distributedInfo']['rank'])" "$f")
		$CHECK match --gt "$TMP/rank$r.gt.json" --steps $((4 * k + 2)),$((4 * k + 3)) "$f" >/dev/null || bad="$bad $k/$r"
	done
done
[ -z "$bad" ] && ok "every rank's every cycle equals its ground truth" || not_ok "every rank's every cycle equals its ground truth" "cycle/rank:$bad"

# A launcher that starts its rank by vfork (Python's subprocess, posix_spawn): the
# child runs in the launcher's memory until its exec, and is scanned there; one that
# waits in it (vfork_exec) is scanned as the launcher's copy after 50 ms. Both exact.
# vfork_case NAME WHAT PATTERN LAUNCHER...: record -v -- LAUNCHER env ... basic; the
# log has PATTERN, and basic's trace (the vfork child's) every launch.
vfork_case() {
	local name=$1 what=$2 pattern=$3 rc f
	shift 3
	"$CUPROBE" record -v -o "$TMP/$name" -- "$@" /usr/bin/env CUPROBE_GT="$TMP/$name.gt.json" \
		"$W/basic" --threads 1 --iters 10 >"$TMP/$name.log" 2>&1
	rc=$?
	[ $rc -eq 0 ] && ok "$what: exit 0" || not_ok "$what: exit 0" "rc $rc: $(tail -3 "$TMP/$name.log")"
	expect "$what: -v says when the child was scanned" grep -qE "$pattern" "$TMP/$name.log"
	f=$(grep -l '"basic"' "$TMP/$name/run_0"/*.pt.trace.json 2>/dev/null | head -1)
	expect "$what: every launch of the child" $CHECK match --gt "$TMP/$name.gt.json" "${f:-none}"
}
vfork_case vf "python3's subprocess" \
	"pid [0-9]+ shares pid [0-9]+'s memory \(vfork\): scanned at its exec" \
	python3 -c 'import subprocess, sys; sys.exit(subprocess.run(sys.argv[1:]).returncode)'
vfork_case vfw "vfork_exec 300 (no exec for 300 ms)" \
	"pid [0-9]+ ran no program in 50 ms after its vfork: scanned as it is" "$W/vfork_exec" 300

# A running launcher, with --children: ranks it starts after the attach are recorded.
rm -f "$TMP"/rank*.gt.json
"$TMP/ranks.sh" "$TMP/go" &
launcher=$!
sleep 0.2
"$CUPROBE" record -o "$TMP/kids" -p $launcher --children >"$TMP/kids.log" 2>&1 &
rec=$!
for _ in $(seq 100); do grep -q "recording pid" "$TMP/kids.log" && break; sleep 0.05; done
touch "$TMP/go"
wait $launcher
wait $rec
# The launcher's own trace (it is the -p target) is there too, with no launches.
n=$(grep -l '"world_size": 8' "$TMP/kids/run_0"/*.pt.trace.json 2>/dev/null | wc -l)
[ "$n" = 8 ] && ok "-p LAUNCHER --children: the eight ranks it starts are recorded" ||
	not_ok "-p LAUNCHER --children: the eight ranks it starts are recorded" "$n traces: $(tail -3 "$TMP/kids.log")"
bad=""
for f in $(grep -l '"world_size": 8' "$TMP/kids/run_0"/*.pt.trace.json); do
	r=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['distributedInfo']['rank'])" "$f")
	$CHECK match --gt "$TMP/rank$r.gt.json" --any-step "$f" >/dev/null || bad="$bad $r"
done
[ -z "$bad" ] && ok "-p LAUNCHER --children: every launch of every rank" || not_ok "-p LAUNCHER --children: every launch of every rank" "ranks:$bad"

# Without --children, a child that takes up CUDA is said, with how to record it.
rm -f "$TMP/go"
"$TMP/ranks.sh" "$TMP/go" &
launcher=$!
sleep 0.2
"$CUPROBE" record -o "$TMP/nokids" -p $launcher >"$TMP/nokids.log" 2>&1 &
rec=$!
for _ in $(seq 100); do grep -q "recording pid" "$TMP/nokids.log" && break; sleep 0.05; done
touch "$TMP/go"
wait $launcher
wait $rec
expect "-p LAUNCHER: a child that uses CUDA is said, with --children or -p to record it" \
	grep -qE "pid [0-9]+ \(basic\), started by pid $launcher, uses CUDA but is not recorded" "$TMP/nokids.log"
expect_fail "--children without -p" "--children goes with -p" "$CUPROBE" record --children -- true

# Short-lived forked children that map the runtime (a DataLoader's workers, an epoch
# at a time): each is followed and probed as it comes, and one that exits while its
# probes go in is no warning (before: "cannot probe ...: No such process"). A worker
# that never launched leaves no trace (it has its parent's RANK: a second rank 0); the
# one of the last round that launches, once its probes are in, has its own.
cat > "$TMP/workers.py" <<'PY'
import ctypes, os, sys, time
rt = ctypes.CDLL("/usr/local/cuda/lib64/libcudart.so.13")
rt.cudaLaunchKernel.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32,
                                ctypes.c_uint64, ctypes.c_uint32, ctypes.c_void_p,
                                ctypes.c_size_t, ctypes.c_void_p]
for epoch in range(4):
    kids = []
    for w in range(4):
        pid = os.fork()
        if pid == 0:
            if epoch == 3 and w == 0:
                # Launch once its own probes are in (tens of ms). The int3 on the
                # entry cannot tell: the child has its parent's copy of the code.
                time.sleep(1.0)
                for _ in range(15):
                    rt.cudaLaunchKernel(0x1234, 1 | (1 << 32), 1, 32 | (1 << 32), 1, None, 0, None)
                time.sleep(0.1)
                os._exit(0)
            # Epochs 0 and 1: gone within ms (while probed); 2: probed, no launch.
            time.sleep(0.3 if epoch == 2 else 0.008 * (w + epoch))
            os._exit(0)
        kids.append(pid)
    for pid in kids:
        os.waitpid(pid, 0)
PY
bad=""
for i in 1 2 3; do
	"$CUPROBE" record -o "$TMP/workers$i" -- python3 "$TMP/workers.py" >"$TMP/workers$i.log" 2>&1 ||
		bad="$bad run $i: exit $?;"
	grep -q 'warning' "$TMP/workers$i.log" && bad="$bad run $i: $(grep -m1 warning "$TMP/workers$i.log");"
done
[ -z "$bad" ] && ok "forked children exiting while they are probed: exit 0, no warning" ||
	not_ok "forked children exiting while they are probed: exit 0, no warning" "$bad"
python3 - "$TMP"/workers1/run_0 <<'PY' && ok "forked workers: no trace for those that never launched, one for the one that did" || not_ok "forked workers: no trace for those that never launched, one for the one that did" "see above"
import glob, json, sys
got = sorted(json.load(open(f))["cuprobe"]["launches"] for f in glob.glob(sys.argv[1] + "/*.pt.trace.json"))
# The command (no launch: it is the command, so its trace is written) and the worker.
if got != [0, 15]:
    print("launches per trace:", got)
    sys.exit(1)
PY

# -p --children on a process whose children come and go (workers of a few ms each): a
# child gone before its attach is no error (the user did not name it), and those
# attached are adopted: none that never launched leaves a trace.
cat > "$TMP/churn.py" <<'PY'
import ctypes, os, sys, time
ctypes.CDLL("/usr/local/cuda/lib64/libcudart.so.13")
end = time.time() + float(sys.argv[1])
while time.time() < end:
    kids = []
    for w in range(8):
        pid = os.fork()
        if pid == 0:
            time.sleep(0.002 * w)
            os._exit(0)
        kids.append(pid)
    for pid in kids:
        os.waitpid(pid, 0)
PY
bad=""
for i in 1 2 3; do
	python3 "$TMP/churn.py" 4 &
	churn=$!
	sleep 0.5
	"$CUPROBE" record -o "$TMP/churn$i" -p $churn --children --duration 1 >"$TMP/churn$i.log" 2>&1 ||
		bad="$bad run $i: exit $?;"
	wait $churn
	grep -qE 'error|warning' "$TMP/churn$i.log" && bad="$bad run $i: $(grep -m1 -E 'error|warning' "$TMP/churn$i.log");"
	n=$(ls "$TMP/churn$i"/run_0/*.pt.trace.json 2>/dev/null | wc -l)
	[ "$n" = 1 ] || bad="$bad run $i: $n traces (the -p target's alone expected);"
done
[ -z "$bad" ] && ok "-p --children on churning children: exit 0, no error, no trace of theirs" ||
	not_ok "-p --children on churning children: exit 0, no error, no trace of theirs" "$bad"
done_testing
