#!/usr/bin/env bash
# The torch tier (make test-torch; scripts/install-real.sh --torch): PyPI's
# torch with its CUDA wheels, ~120 dlopens of NVIDIA libraries (some with a
# static runtime that cuprobe probes by symbol, some stripped). import torch
# under record -- completes, with the holds cuprobe put on it reported in the
# trace; a torch process attached with -p is recorded and left running.
source "$(dirname "$0")/lib.sh"
need_torch
export LD_LIBRARY_PATH=$REAL_LIBDIR

t0=$(date +%s.%N)
"$REAL_PY" -c 'import torch' >/dev/null 2>&1
t1=$(date +%s.%N)
timeout 300 "$CUPROBE" record -v -o "$TMP/imp" -- "$REAL_PY" -c 'import torch; print("imported", torch.__version__)' \
	>"$TMP/imp.log" 2>&1
rc=$?
t2=$(date +%s.%N)
awk -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN { printf "# import torch: %.2f s alone, %.2f s under cuprobe record\n", b - a, c - b }'
if [ $rc = 0 ] && grep -q '^imported ' "$TMP/imp.log"; then
	ok "import torch under record -- completes"
else
	not_ok "import torch under record -- completes" "rc $rc: $(tail -3 "$TMP/imp.log" | tr '\n' ' ')"
fi
f=$(trace_in "$TMP/imp/run_0" | head -1)
expect "import torch: the trace is valid" $CHECK valid "$f"
expect "import torch: cuprobe probed torch's CUDA libraries" grep -q 'probes on .*/nvidia/.*/lib/lib' "$TMP/imp.log"
# The holds on the target while cuprobe probed what it dlopened (trace: cuprobe.holds).
python3 - "$f" <<'PY' && ok "import torch: holds reported and consistent" || not_ok "import torch: holds reported and consistent" "see above"
import json, sys
h = json.load(open(sys.argv[1]))["cuprobe"].get("holds")
if not isinstance(h, dict) or not {"count", "total_ms", "max_ms"} <= set(h):
    print(f"# no cuprobe.holds {{count, total_ms, max_ms}} in the trace: {h!r}")
    sys.exit(1)
print(f"# holds: {h['count']}, {h['total_ms']} ms in all, the longest {h['max_ms']} ms")
c, tot, mx = h["count"], h["total_ms"], h["max_ms"]
sys.exit(0 if c >= 1 and 0 <= mx <= tot <= c * mx + 1e-6 else 1)
PY

# With a cache of launch files (CUPROBE_CACHE): the first import remembers torch's
# CUDA libraries, the next one has them probed before python maps them, so its
# holds attach nothing. Each import's holds, from its trace.
holds_of() {
	python3 -c 'import json, sys
h = json.load(open(sys.argv[1]))["cuprobe"]["holds"]
print("%d, %s ms in all, the longest %s ms" % (h["count"], h["total_ms"], h["max_ms"]))' "$(trace_in "$1/run_0" | head -1)" 2>&1
}
for run in cold warm; do
	CUPROBE_CACHE=$TMP/cache/launch-files timeout 300 "$CUPROBE" record -v -o "$TMP/$run" -- \
		"$REAL_PY" -c 'import torch' >"$TMP/$run.log" 2>&1
	echo "# import torch, cache $run: rc $?, holds $(holds_of "$TMP/$run")"
done
ahead=$(grep -c "probed before it is mapped" "$TMP/warm.log")
grep -q "libcudart.so.13 probed before it is mapped" "$TMP/warm.log" &&
	grep -q "libnccl.so.2 probed before it is mapped" "$TMP/warm.log" &&
	! grep -q "before it is mapped" "$TMP/cold.log" &&
	ok "import torch, cache warm: torch's CUDA libraries probed before they are mapped ($ahead)" ||
	not_ok "import torch, cache warm: torch's CUDA libraries probed before they are mapped" "$(grep -E 'cache|before it' "$TMP/warm.log" | head -5)"
n=$(grep -cE 'held [0-9.]+ ms for .*[0-9]+ objects?, [1-9][0-9]* probed' "$TMP/warm.log")
[ "$n" = 0 ] && ok "import torch, cache warm: no hold attaches a probe" ||
	not_ok "import torch, cache warm: no hold attaches a probe" "$n: $(grep -E 'held .* [1-9][0-9]* probed' "$TMP/warm.log" | head -3)"

# -p on a process that imported torch: recorded, then left running when cuprobe stops.
"$REAL_PY" -c '
import os, sys, time, torch
open(sys.argv[1], "w").close()
while not os.path.exists(sys.argv[2]):
    time.sleep(0.05)
print("available", torch.cuda.is_available())
' "$TMP/ready" "$TMP/go" >"$TMP/target.log" 2>&1 &
tgt=$!
if ! wait_for "$TMP/ready" 120; then
	not_ok "torch process for -p" "not ready: $(tail -3 "$TMP/target.log" | tr '\n' ' ')"
	kill $tgt 2>/dev/null
	done_testing
	exit 0
fi
"$CUPROBE" record -p $tgt -o "$TMP/att" >"$TMP/att.log" 2>&1 &
rec=$!
for _ in $(seq 1200); do
	grep -q "recording pid $tgt" "$TMP/att.log" && break
	kill -0 $rec 2>/dev/null || break
	sleep 0.05
done
grep -q "recording pid $tgt" "$TMP/att.log" && ok "-p on a torch process: recording" ||
	not_ok "-p on a torch process: recording" "$(tail -3 "$TMP/att.log" | tr '\n' ' ')"
sleep 0.5
kill -INT $rec
wait $rec
rrc=$?
[ $rrc = 0 ] && [ -n "$(trace_in "$TMP/att/run_0")" ] && ok "-p on a torch process: stopped by SIGINT, exits 0 with a trace" ||
	not_ok "-p on a torch process: stopped by SIGINT, exits 0 with a trace" "rc $rrc: $(tail -3 "$TMP/att.log" | tr '\n' ' ')"
kill -0 $tgt 2>/dev/null && ok "-p on a torch process: the process runs on after cuprobe" ||
	not_ok "-p on a torch process: the process runs on after cuprobe" "it is gone"
touch "$TMP/go"
wait $tgt
trc=$?
[ $trc = 0 ] && grep -q '^available False' "$TMP/target.log" &&
	ok "-p on a torch process: it ends normally (torch.cuda.is_available() False)" ||
	not_ok "-p on a torch process: it ends normally (torch.cuda.is_available() False)" "rc $trc: $(tail -3 "$TMP/target.log" | tr '\n' ' ')"
done_testing
