#!/usr/bin/env bash
# cuprobe report on CUDA graph replays (tests/e2e/fixtures/graphs.pt.trace.json): each
# replay's kernels in the Kernels table with a "from graphs" count, the Graphs line, the
# JSON graphs object, the CSV rows, the folded stacks and the flame graph, exact, and
# the warning of a replay of unknown content. The fixture is in cuprobe record's line
# layout (read a line at a time); the same trace on one line (read a value at a time)
# must give the same reports. A trace whose graph launches name no content gives the
# report it gave before graphs were followed: no graph column, line or key.
source "$(dirname "$0")/lib.sh"

FX=$ROOT/tests/e2e/fixtures/graphs.pt.trace.json
CG="python3 $ROOT/tests/e2e/check_report_graphs.py"

expect "the checks' counts are the fixture's own" $CG truth "$FX"
mkdir -p "$TMP/lines" "$TMP/one"
cp "$FX" "$TMP/lines/g.pt.trace.json"
python3 -c 'import json, sys; json.dump(json.load(open(sys.argv[1])), open(sys.argv[2], "w"))' \
	"$FX" "$TMP/one/g.pt.trace.json"

for t in lines one; do
	"$CUPROBE" report "$TMP/$t" >"$TMP/$t.txt" 2>"$TMP/$t.txt.err"
	expect "$t: text: the Graphs line, FROM GRAPHS, the warning" \
		$CG text "$TMP/$t.txt" "$TMP/$t.txt.err"
	"$CUPROBE" report --format json "$TMP/$t" >"$TMP/$t.json" 2>/dev/null
	expect "$t: json: the graphs object and each kernel's from_graphs" $CG json "$TMP/$t.json"
	"$CUPROBE" report --format csv "$TMP/$t" >"$TMP/$t.csv" 2>/dev/null
	expect "$t: csv: kernel, graph_kernel and summary rows" $CG csv "$TMP/$t.csv"
	"$CUPROBE" report --format folded "$TMP/$t" >"$TMP/$t.folded" 2>"$TMP/$t.folded.err"
	expect "$t: folded: each replay's kernels under its stack" \
		$CG folded "$TMP/$t.folded" "$TMP/$t.folded.err"
done
for f in txt json csv folded; do
	expect "the one-line trace gives the same $f" cmp "$TMP/lines.$f" "$TMP/one.$f"
done
"$CUPROBE" report --flamegraph "$TMP/g.svg" "$TMP/lines" 2>/dev/null
expect "the flame graph weighs what the folded stacks do" $CG svg "$TMP/g.svg"

# The same trace of a process that had no CUDA driver: its replay of unknown content is
# blamed on that, not on a late attach.
python3 - "$FX" "$TMP/nodrv/g.pt.trace.json" <<'EOF'
import json, os, sys
d = json.load(open(sys.argv[1]))
d["cuprobe"]["driver_loaded"] = False
os.makedirs(os.path.dirname(sys.argv[2]))
json.dump(d, open(sys.argv[2], "w"))
EOF
"$CUPROBE" report "$TMP/nodrv" >/dev/null 2>"$TMP/nodrv.err"
grep -q "1 graph replay ran no graph: the processes that made them had no CUDA driver loaded" "$TMP/nodrv.err" &&
	! grep -q "before cuprobe attached" "$TMP/nodrv.err" &&
	ok "no CUDA driver: the replay of unknown content is blamed on it, not on the attach" ||
	not_ok "no CUDA driver: the replay of unknown content is blamed on it, not on the attach" \
		"$(cat "$TMP/nodrv.err")"
# Recorded where there is no driver (this machine, unless it has a GPU's), it is said so.
if ! ldconfig -p | grep -q "libcuda\.so\.1 "; then
	"$CUPROBE" record -o "$TMP/rec" -- "$W/basic" --iters 2 >/dev/null 2>&1
	"$CUPROBE" report "$TMP/rec" >/dev/null 2>"$TMP/rec.err"
	grep -q '"driver_loaded": false' "$(trace_in "$TMP/rec/run_0")" &&
		grep -qE "graph replays? ran no graph: the processes that made them had no CUDA driver" "$TMP/rec.err" &&
		ok "recorded without a driver: the trace and the report say so" ||
		not_ok "recorded without a driver: the trace and the report say so" "$(cat "$TMP/rec.err")"
fi

# The same trace without "graph content" (as written before graphs were followed).
python3 - "$FX" "$TMP/old/g.pt.trace.json" <<'EOF'
import json, os, sys
d = json.load(open(sys.argv[1]))
for e in d["traceEvents"]:
    for k in ("graph content", "graph nodes", "graph kernels"):
        e.get("args", {}).pop(k, None)
for k in ("graph_replays", "graph_unknown_replays", "graph_kernels", "graphs"):
    d["cuprobe"].pop(k)
os.makedirs(os.path.dirname(sys.argv[2]))
json.dump(d, open(sys.argv[2], "w"))
EOF
"$CUPROBE" report "$TMP/old" >"$TMP/old.txt" 2>"$TMP/old.err"
"$CUPROBE" report --format json "$TMP/old" >"$TMP/old.json" 2>/dev/null
"$CUPROBE" report --format csv "$TMP/old" >"$TMP/old.csv" 2>/dev/null
expect "graph launches without content: one launch each, no graph line, column or key" \
	python3 -c 'import json, sys
txt, js, cs, err = (open(p).read() for p in sys.argv[1:5])
r = json.loads(js)
assert "Graphs" not in txt and "FROM GRAPHS" not in txt and err == "", (txt, err)
assert "graphs" not in r and all("from_graphs" not in k for k in r["kernels"]), r
assert [(k["name"], k["launches"]) for k in r["kernels"]][:2] == [("graph 0xa1", 3), ("gemm_kernel(float*)", 2)], r["kernels"]
assert "graph_" not in cs, cs' "$TMP/old.txt" "$TMP/old.json" "$TMP/old.csv" "$TMP/old.err"
done_testing
