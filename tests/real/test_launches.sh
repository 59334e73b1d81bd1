#!/usr/bin/env bash
# Launches through the real driver's exports, recorded exactly: cuLaunchKernel,
# cuLaunchKernel_ptsz and cuLaunchKernelEx called directly (each returns 3,
# NOT_INITIALIZED, after its probe fired), by record -- and by record -p; a
# stand-in runtime that reaches them through cuGetProcAddress_v2 as libcudart
# does, nested calls counted once; and where the probes on the driver sit.
source "$(dirname "$0")/lib.sh"
need_built "$W/real_driver" "$W/real_nested" "$R/uprobe_at"
export REAL_LIBCUDA

# record -- : every launch, arguments exact; real_driver exits 1 if one did not return 3.
if CUPROBE_GT=$TMP/cmd.gt.json "$CUPROBE" record -v -o "$TMP/cmd" -- "$W/real_driver" --iters 25 \
	>"$TMP/cmd.log" 2>&1; then
	ok "real_driver under record: every launch returned 3 (NOT_INITIALIZED)"
	expect "record --: driver launches equal ground truth" $CHECK match \
		--gt "$TMP/cmd.gt.json" "$(trace_in "$TMP/cmd/run_0")"
	expect "record --: the probes are on the real libcuda" \
		grep -qF "launch probes on /proc/$(sed -n 's/.*pid \([0-9]*\) (real_driver).*/\1/p' "$TMP/cmd.log" | head -1)/root$REAL_LIBCUDA" "$TMP/cmd.log"
else
	not_ok "real_driver under record" "$(tail -3 "$TMP/cmd.log" | tr '\n' ' ')"
fi

# record -p before the first launch.
CUPROBE_GT=$TMP/p.gt.json "$W/real_driver" --iters 25 --wait-file "$TMP/go" 2>"$TMP/p.wl.log" &
wl=$!
"$CUPROBE" record -p $wl -o "$TMP/p" >"$TMP/p.log" 2>&1 &
rec=$!
for _ in $(seq 200); do
	grep -q "recording pid $wl" "$TMP/p.log" && break
	kill -0 $rec 2>/dev/null || break
	sleep 0.05
done
touch "$TMP/go"
wait $wl; wrc=$?
wait $rec; rrc=$?
if [ $wrc = 0 ] && [ $rrc = 0 ]; then
	expect "record -p: driver launches equal ground truth" $CHECK match \
		--gt "$TMP/p.gt.json" "$(trace_in "$TMP/p/run_0")"
else
	not_ok "record -p on real_driver" "real_driver $wrc, cuprobe $rrc: $(tail -3 "$TMP/p.log" | tr '\n' ' ')"
fi

# A runtime that launches through cuGetProcAddress's pointer: 2 runtime
# launches per iteration, each entering the driver's cuLaunchKernel, and one
# direct driver launch. Counted once: 3 per iteration recorded, 2 skipped.
if CUPROBE_GT=$TMP/nested.gt.json "$CUPROBE" record -o "$TMP/nested" -- "$W/real_nested" --iters 12 \
	>"$TMP/nested.log" 2>&1; then
	f=$(trace_in "$TMP/nested/run_0")
	expect "stand-in runtime on the real driver: launches equal ground truth" $CHECK match \
		--gt "$TMP/nested.gt.json" "$f"
	got=$($CHECK field "$f" nested_skipped)/$($CHECK field "$f" probe_hits)
	[ "$got" = 24/60 ] && ok "stand-in runtime: 24 nested driver calls skipped of 60 probe hits" ||
		not_ok "stand-in runtime: 24 nested driver calls skipped of 60 probe hits" "nested_skipped/probe_hits $got"
else
	not_ok "nested on the real driver under record" "$(tail -3 "$TMP/nested.log" | tr '\n' ' ')"
fi

# Placement. Every export begins with a RIP-relative cmp, which a uprobe at
# +0 single-steps; at +10 (the je) the kernel emulates it. Bare perf uprobes
# at +0 and at +10 give the two costs in this run; cuprobe's recorded loop
# must cost less than halfway between them (its BPF program adds ~0.5 us).
n=40000
"$R/uprobe_at" "$REAL_LIBCUDA" cuLaunchKernel 0 -- "$W/real_driver" --time $n >"$TMP/at0" 2>&1
"$R/uprobe_at" "$REAL_LIBCUDA" cuLaunchKernel 10 -- "$W/real_driver" --time $n >"$TMP/at10" 2>&1
"$CUPROBE" record -q -o "$TMP/timed" -- "$W/real_driver" --time $n >"$TMP/rec" 2>&1
at0=$(ns_per_call "$TMP/at0") at10=$(ns_per_call "$TMP/at10") rec=$(ns_per_call "$TMP/rec")
echo "# ns per cuLaunchKernel: bare uprobe at +0 $at0, at +10 $at10, under cuprobe record $rec"
if [ -z "$at0" ] || [ -z "$at10" ] || [ -z "$rec" ]; then
	not_ok "placement: cost of a recorded driver launch" "$(cat "$TMP/at0" "$TMP/at10" "$TMP/rec" | tr '\n' ' ')"
elif [ "$rec" -lt $(( (at0 + at10) / 2 )) ]; then
	ok "placement: a recorded driver launch ($rec ns) is not single-stepped (+0 $at0, +10 $at10)"
else
	not_ok "placement: a recorded driver launch is not single-stepped" \
		"$rec ns per call, nearer a single-stepped uprobe ($at0) than an emulated one ($at10)"
fi
# And -v says, for every probed driver export (launches, handles, stream capture and graph
# calls: 535 has no cuStreamBeginCaptureToGraph), that its probe moved to +10 and why.
missing=""
for fn in cuLaunchKernel cuLaunchKernel_ptsz cuLaunchKernelEx cuLaunchKernelEx_ptsz cuGraphLaunch \
	cuGraphLaunch_ptsz cuModuleGetFunction cuLibraryGetKernel cuKernelGetFunction cuModuleLoad \
	cuLibraryLoadFromFile cuModuleLoadData cuModuleLoadDataEx cuModuleLoadFatBinary cuLibraryLoadData \
	cuStreamBeginCapture cuStreamBeginCapture_ptsz cuStreamBeginCapture_v2 cuStreamBeginCapture_v2_ptsz \
	cuStreamEndCapture cuStreamEndCapture_ptsz cuEventRecord cuEventRecord_ptsz cuEventRecordWithFlags \
	cuEventRecordWithFlags_ptsz cuStreamWaitEvent cuStreamWaitEvent_ptsz cuThreadExchangeStreamCaptureMode \
	cuGraphCreate cuGraphClone cuGraphAddKernelNode_v2 cuGraphAddMemcpyNode cuGraphAddMemsetNode \
	cuGraphAddChildGraphNode cuGraphAddEmptyNode cuGraphInstantiateWithFlags cuGraphExecUpdate_v2 \
	cuGraphExecKernelNodeSetParams_v2 cuGraphDestroy cuGraphExecDestroy; do
	grep -F "$fn: probe at +10 (je), the entry's cmpl (rip-relative) would be single-stepped" \
		"$TMP/cmd.log" >/dev/null || missing="$missing $fn"
done
[ -z "$missing" ] && ok "placement: -v says every probed driver export's probe moved to +10" ||
	not_ok "placement: -v says every probed driver export's probe moved to +10" "not said for:$missing"
# The bench's baseline places its empty uprobe as cuprobe does (the GPU check's stage (h)
# relies on it on a driver whose thunk may differ), and needs no libbpf where it runs.
EMPTY=$ROOT/.output/bench/empty_uprobe
"$EMPTY" --lib "$REAL_LIBCUDA" --func cuLaunchKernel --place -- "$W/real_driver" --time 1000 \
	>"$TMP/place" 2>&1
grep -qx "empty_uprobe: cuLaunchKernel at +10" "$TMP/place" && [ -n "$(ns_per_call "$TMP/place")" ] &&
	ok "placement: the bench's empty uprobe goes where cuprobe's probe goes (+10)" ||
	not_ok "placement: the bench's empty uprobe goes where cuprobe's probe goes (+10)" \
		"$(tr '\n' ' ' <"$TMP/place")"
! ldd "$EMPTY" | grep -qE 'libbpf|libelf|libcapstone' &&
	ok "the bench's empty uprobe links libbpf, libelf and Capstone from their archives" ||
	not_ok "the bench's empty uprobe links libbpf, libelf and Capstone from their archives" \
		"$(ldd "$EMPTY" | grep -E 'libbpf|libelf|libcapstone' | tr '\n' ' ')"
done_testing
