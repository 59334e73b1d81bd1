#!/usr/bin/env bash
# CUDA graphs without CUPTI: the graphs workload (tests/workloads/graphs.cu, on
# the stand-in runtime and driver) captures graphs from streams (fork/join,
# thread-local), builds them by hand and through the driver, instantiates,
# changes nodes of an executable graph, updates, clones, replays and
# destroys them, reusing freed handles. Every replay in the trace must carry
# exactly the content that instance ran (check_graphs.py against
# $CUPROBE_GT.graphs); the replays' own launches and the captured calls stay
# as test_capture_streams.sh checks them; a graph made before cuprobe
# attached is of unknown content, counted, never guessed; one trap per replay
# once the runtime's replays are seen entering the driver; the daemon's graph
# metrics.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"
GCHECK="python3 $(dirname "$0")/check_graphs.py"
CAPCHECK="python3 $(dirname "$0")/check_capture.py"

# check_run NAME DIR GT: the trace of DIR against the workload's three ground truths.
check_run() {
	local name=$1 f
	f=$(trace_in "$2/run_0")
	expect "$name: every replay carries the content its instance ran" $GCHECK "$f" "$3.graphs"
	expect "$name: every ordinary launch and replay exact" \
		$CHECK match --any-step --gt "$3" "$f"
	expect "$name: every captured call in its capture, and counted as captured" \
		$CAPCHECK "$f" "$3.captured"
	expect "$name: the trace is valid" $CHECK valid "$f"
}

"$CUPROBE" record -o "$TMP/cmd" -- env CUPROBE_GT="$TMP/cmd.gt.json" "$W/graphs" --iters 3 \
	>"$TMP/cmd.log" 2>&1
check_run "command" "$TMP/cmd" "$TMP/cmd.gt.json"
f=$(trace_in "$TMP/cmd/run_0")
expect "command: 62 replays, every one of known content" \
	python3 -c "import json,sys; c=json.load(open(sys.argv[1]))['cuprobe']; sys.exit(not (c['graph_replays'] == 62 and c['graph_unknown_replays'] == 0))" "$f"
expect "command: a content that was replayed is listed once" \
	python3 -c "import json,sys; g=json.load(open(sys.argv[1]))['cuprobe']['graphs']; ids=[x['id'] for x in g]; sys.exit(not (ids and len(ids) == len(set(ids))))" "$f"

# -p at the wait: the graph built and instantiated before it is of unknown content.
CUPROBE_GT=$TMP/p.gt.json "$W/graphs" --iters 2 --wait-file "$TMP/go" 2>/dev/null &
wl=$!
attach_then_go $wl "$TMP/p" "$TMP/p.log" "$TMP/go"
check_run "-p" "$TMP/p" "$TMP/p.gt.json"
f=$(trace_in "$TMP/p/run_0")
expect "-p: the 5 replays of the graph made before attaching are of unknown content" \
	python3 -c "import json,sys; c=json.load(open(sys.argv[1]))['cuprobe']; sys.exit(not c['graph_unknown_replays'] == 5)" "$f"

# A schedule: captures in steps that record nothing still fill their graphs.
CUPROBE_GT=$TMP/s.gt.json "$CUPROBE" record -o "$TMP/s" --step cuprobe_step \
	--schedule wait=1,warmup=0,active=1 -- "$W/graphs" --iters 3 --steps >"$TMP/s.log" 2>&1
f=$(trace_in "$TMP/s/run_0")
expect "schedule: the active step's replays carry their contents" $GCHECK "$f" "$TMP/s.gt.json.graphs"

# One trap per replay: after 100 runtime replays seen entering cuGraphLaunch the
# runtime's probe goes, and every replay stays exact; a runtime that refused one
# before the driver (GRAPHS_REFUSED=1: a replay of no graph) keeps it, and the
# refused replays are recorded too.
for refused in 0 1; do
	GRAPHS_REFUSED=$refused CUPROBE_GT=$TMP/t$refused.gt.json "$CUPROBE" record -v -o "$TMP/t$refused" \
		-- "$W/graphs" --iters 40 --sleep-ms 20 >"$TMP/t$refused.log" 2>&1
	check_run "one trap, refused=$refused" "$TMP/t$refused" "$TMP/t$refused.gt.json"
done
expect "one trap: the runtime's replay probe goes once replays are seen entering the driver" \
	grep -q "runtime graph replays entered the driver, none was refused before it: one trap per replay" "$TMP/t0.log"
expect_fail_grep() { ! grep -q "$@"; }
# events_after_capture LOG: the event calls' probes went in only once a capture began.
events_after_capture() {
	awk '/a stream capture began/ { c = NR } /event probes on/ { if (!e) e = NR }
	     END { exit !(c && e && e > c) }' "$1"
}
expect "the event calls' probes go in at the first capture, not before" events_after_capture "$TMP/t0.log"
# 3 s between iterations: the capture probes go 2 s after each one's captures, and the
# next iteration's first capture holds the process until they are in again.
CUPROBE_GT=$TMP/l.gt.json "$CUPROBE" record -v -o "$TMP/l" -- "$W/graphs" --iters 2 --sleep-ms 3000 \
	>"$TMP/l.log" 2>&1
check_run "linger" "$TMP/l" "$TMP/l.gt.json"
twice() { test "$(grep -c "$1" "$2")" -ge "$3"; }
expect "linger: the capture probes went after 2 s without a capture" \
	grep -q "no stream capture for 2000 ms: the probes kept for captures go" "$TMP/l.log"
expect "linger: and came back with the next capture" twice "event probes on" "$TMP/l.log" 2
expect "one trap: a runtime that refused a replay before the driver keeps its probe" \
	expect_fail_grep "one trap per replay" "$TMP/t1.log"
f=$(trace_in "$TMP/t1/run_0")
expect "one trap: the 40 refused replays are there, of unknown content" \
	python3 -c "import json,sys; c=json.load(open(sys.argv[1]))['cuprobe']; sys.exit(not c['graph_unknown_replays'] == 40)" "$f"

# --cupti on the CUPTI simulator, which gives each replay 2 kernel records with a
# graph id and node id: every one is joined to its replay, and a replay whose
# expansion is not 2 kernels is counted as a mismatch (the simulator does not know
# the graphs: the count is checked, not the graphs).
SIM=$ROOT/.output/cupti_sim
CUPROBE_GT=$TMP/c.gt.json "$CUPROBE" record --cupti -o "$TMP/c" --step cuprobe_step \
	--schedule wait=0,warmup=1,active=2 -- env LD_PRELOAD="$ROOT/.output/libcuprobe-agent.so:$SIM/libcupti.so.13" \
	LD_LIBRARY_PATH="$SIM" "$W/graphs" --iters 4 --steps --sleep-ms 20 >"$TMP/c.log" 2>&1
f=$(trace_in "$TMP/c/run_0")
expect "--cupti: every replay's CUPTI kernels joined to it, mismatches counted exactly" python3 - "$f" <<'PY'
import json, sys
t = json.load(open(sys.argv[1]))
c = t["cuprobe"]
g = {x["id"]: x for x in c["graphs"]}
reps = [e for e in t["traceEvents"] if e.get("ph") == "X" and "graph content" in e.get("args", {})]
kern = [e for e in t["traceEvents"] if e.get("cat") == "kernel" and "graph id" in e.get("args", {})]
mm = sum(1 for e in reps if g[e["args"]["graph content"]]["kernels"] != 2)
ok = (reps and c["graph_unknown_replays"] == 0 and c["graph_gpu_kernels"] == 2 * len(reps)
      and len(kern) == 2 * len(reps) and c["graph_mismatches"] == mm and 0 < mm < len(reps))
sys.exit(0 if ok else "replays %d, graph_gpu_kernels %s, kernel events %d, mismatches %s, want %d"
         % (len(reps), c.get("graph_gpu_kernels"), len(kern), c.get("graph_mismatches"), mm))
PY

# The daemon: its graph metrics equal what the traces it wrote say, replay by replay.
DPID=
cleanup_daemon() { [ -n "$DPID" ] && kill -KILL "$DPID" 2>/dev/null; cgroup_kill; rm -rf "$TMP"; }
trap cleanup_daemon EXIT
if cgroup_setup cuprobe-graphs-test; then
	PORT=$(free_port)
	printf 'interval = 1\nwindow-steps = 2\nwarmup = 0\nbudget = 100\nlinger = 120\ncgroup = /%s\nstep = graphs=cuprobe_step\n' \
		"$CGNAME" >"$TMP/d.conf"
	"$CUPROBE" daemon -c "$TMP/d.conf" -l "127.0.0.1:$PORT" -o "$TMP/dout" -v >"$TMP/d.log" 2>&1 &
	DPID=$!
	until_true 60 grep -q "listening on" "$TMP/d.log"
	# It waits until sampled, so that the daemon's step numbers are its ground truth's.
	"${in_cg[@]}" env CUPROBE_GT="$TMP/d.gt.json" "$W/graphs" --iters 40 --steps --sleep-ms 100 \
		--wait-file "$TMP/dgo" >/dev/null 2>&1 &
	G=$!
	expect "daemon: the graphs workload is sampled" \
		until_true 60 grep -q "sampling pid $G (graphs) with step probe" "$TMP/d.log"
	touch "$TMP/dgo"
	wait $G
	curl -s "http://127.0.0.1:$PORT/metrics" >"$TMP/metrics.txt"
	each_window() { local f; for f in "$TMP"/dout/run_*/*.pt.trace.json; do $GCHECK "$f" "$TMP/d.gt.json.graphs" --unknown-ok || return 1; done; }
	expect "daemon: every window's replays carry the content their instance ran" each_window
	expect "daemon: graph replays and graph kernels in /metrics equal its traces'" \
		python3 "$(dirname "$0")/check_graph_metrics.py" "$TMP/dout" "$TMP/metrics.txt" $G
	expect "daemon: promtool checks /metrics" promtool check metrics <"$TMP/metrics.txt"
	kill -TERM $DPID && wait $DPID
	DPID=
else
	not_ok "daemon: a cgroup of the test's own" "no writable cgroup2 mount in /proc/mounts"
fi
done_testing
