#!/usr/bin/env bash
# record -- CMD on every workload: launches equal the workload's own ground
# truth exactly (per thread, API, kernel name, grid, block, shared memory,
# stream, bytes), and the trace is valid Kineto JSON.
source "$(dirname "$0")/lib.sh"

capture() { # NAME WORKLOAD ARGS...
	local name=$1 wl=$2 out=$TMP/$1
	shift 2
	if ! CUPROBE_GT=$TMP/$name.gt.json "$CUPROBE" record -o "$out" -- "$W/$wl" "$@" \
		>"$TMP/$name.log" 2>&1; then
		not_ok "$name: record" "$(tail -3 "$TMP/$name.log" | tr '\n' ' ')"
		return
	fi
	expect "$name: launches equal ground truth" $CHECK match --gt "$TMP/$name.gt.json" \
		"$(trace_in "$out/run_0")"
	expect "$name: valid Kineto trace" $CHECK valid "$(trace_in "$out/run_0")"
}

capture shared basic --threads 4 --iters 25
capture ptsz basic_ptsz --threads 3 --iters 10
capture static static --iters 20
capture dlopen dlopen_main --iters 15
capture driver driver --iters 10
capture nested nested --iters 12

# Kernel names are demangled signatures, templates and namespaces included.
f=$(trace_in "$TMP/shared/run_0")
expect "templated kernel in a namespace is named" grep -q '"kernel": "void ns::scale<float>(float\*, int)"' "$f"
f=$(trace_in "$TMP/dlopen/run_0")
expect "kernel of a dlopen'd library is named" grep -q '"kernel": "void kl::' "$f"
expect "a command with no CUDA library yet is watched, and says so" \
	grep -q "no CUDA library mapped yet: watching" "$TMP/dlopen.log"

# Several threads, each with its own tid and thread_name metadata.
f=$(trace_in "$TMP/shared/run_0")
n=$(python3 -c "
import json,sys
t=json.load(open(sys.argv[1]))
print(len({e['tid'] for e in t['traceEvents'] if e.get('cat')=='cuda_runtime'}),
      len([e for e in t['traceEvents'] if e.get('name')=='thread_name']))" "$f")
[ "$n" = "4 4" ] && ok "four launching threads, four named" || not_ok "four launching threads, four named" "got $n"

# --latency: every launch has a duration, and nothing is counted twice.
CUPROBE_GT=$TMP/lat.gt.json "$CUPROBE" record -q --latency -o "$TMP/lat" -- "$W/basic" --threads 2 --iters 10 >/dev/null 2>&1
f=$(trace_in "$TMP/lat/run_0")
expect "--latency: launches equal ground truth" $CHECK match --gt "$TMP/lat.gt.json" "$f"
zero=$(grep -c '"cat": "cuda_runtime".*"dur": 0.000' "$f")
[ "$zero" = 0 ] && ok "--latency: every launch has a duration" || not_ok "--latency: every launch has a duration" "$zero without"

# The exit status of the command is cuprobe's.
"$CUPROBE" record -q -o "$TMP/st" -- sh -c 'exit 7' >/dev/null 2>&1
rc=$?
[ $rc = 7 ] && ok "exit status of the command" || not_ok "exit status of the command" "got $rc"

# Never overwrite an earlier run: the next cycle goes to the next free index.
"$CUPROBE" record -q -o "$TMP/st" -- true >/dev/null 2>&1
mkdir -p "$TMP/st/run_5"
"$CUPROBE" record -q -o "$TMP/st" -- true >/dev/null 2>&1
[ -n "$(trace_in "$TMP/st/run_1")" ] && [ -n "$(trace_in "$TMP/st/run_6")" ] &&
	ok "runs go to the next free run_<k>" || not_ok "runs go to the next free run_<k>" "$(ls "$TMP/st")"
done_testing
