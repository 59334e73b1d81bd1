#!/usr/bin/env bash
# record --cupti -p on a process started without the agent: cuprobe brings the
# agent in at run time (ptrace, a trampoline that calls dlopen, user/core/gpu/inject.c),
# or says why it cannot and records launches only. Then what the agent costs
# when dormant, between windows and after the last one (its wakeups are
# counted). CUPTI is the simulator (tests/workloads/cupti_sim) or the real
# libcupti, which has no GPU here and answers with an error. The target is
# tests/workloads/regcheck.c.
source "$(dirname "$0")/lib.sh"
O=$ROOT/.output
AGENT=$O/libcuprobe-agent.so
SIM=$O/cupti_sim
RC=$W/regcheck
RC_STATIC=$W/regcheck_static

if [ "$(uname -m)" != x86_64 ]; then
	# Elsewhere cuprobe says that it brings the agent in on x86_64 only, and records launches.
	sleep 30 &
	wl=$!
	"$CUPROBE" record --cupti -o "$TMP/arch" -p $wl --duration 1 >"$TMP/arch.log" 2>&1
	rc=$?
	kill $wl
	[ $rc = 0 ] && grep -q "cannot bring it in: .*on x86_64 only.*recording launches only" "$TMP/arch.log" &&
		ok "$(uname -m): cuprobe says the agent is brought in on x86_64 only, exit 0" ||
		not_ok "$(uname -m): cuprobe says the agent is brought in on x86_64 only, exit 0" \
			"exit $rc: $(tail -2 "$TMP/arch.log")"
	done_testing
	exit 0
fi

# gpu FILE KEY: cuprobe.gpu.KEY of a trace.
gpu() { python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['cuprobe']['gpu'][sys.argv[2]])" "$1" "$2"; }
# kernels FILE: the kernel events of a trace.
kernels() { python3 -c "
import json,sys; t=json.load(open(sys.argv[1]))
print(sum(1 for e in t['traceEvents'] if e.get('cat')=='kernel'))" "$1"; }
# free PID: the process runs on, neither stopped nor traced.
free() {
	local st tr
	st=$(awk '/^State:/ {print $2}' "/proc/$1/status" 2>/dev/null)
	tr=$(awk '/^TracerPid:/ {print $2}' "/proc/$1/status" 2>/dev/null)
	[ -n "$st" ] && [ "$st" != t ] && [ "$st" != T ] && [ "$tr" = 0 ] ||
		{ echo "pid $1: state '$st', tracer '$tr'"; return 1; }
}
has_agent() { grep -q libcuprobe-agent "/proc/$1/maps" 2>/dev/null; }
# wait_log FILE PATTERN [SECONDS]
wait_log() {
	local n=$(( ${3:-20} * 20 ))
	while ! grep -q "$2" "$1" 2>/dev/null && [ $n -gt 0 ]; do sleep 0.05; n=$((n - 1)); done
	grep -q "$2" "$1" 2>/dev/null
}

STEPS=(--step cuprobe_step --schedule wait=1,warmup=1,active=2,repeat=1)

# ---- the agent brought in, CUPTI simulated: exact GPU records of the window ----
env LD_PRELOAD="$SIM/libcupti.so.13" LD_LIBRARY_PATH="$SIM" CUPTI_SIM_STATS="$TMP/sim.stats" \
	CUPROBE_GT="$TMP/sim.gt.json" "$W/basic" --steps --threads 2 --iters 8 --sleep-ms 50 \
	--wait-file "$TMP/sim.go" >/dev/null 2>&1 &
wl=$!
"$CUPROBE" record --cupti -o "$TMP/sim" -p $wl "${STEPS[@]}" >"$TMP/sim.log" 2>&1 &
rec=$!
wait_log "$TMP/sim.log" "recording pid $wl"
has_agent $wl && ok "injected (simulator): the agent is mapped in the running process" ||
	not_ok "injected (simulator): the agent is mapped in the running process" "$(tail -3 "$TMP/sim.log")"
expect "injected (simulator): the process runs on, not stopped, not traced" free $wl
touch "$TMP/sim.go"
wait $wl; wlrc=$?
wait $rec; rc=$?
f=$(trace_in "$TMP/sim/run_0")
[ $wlrc = 0 ] && [ $rc = 0 ] && ok "injected (simulator): workload and cuprobe exit 0" ||
	not_ok "injected (simulator): workload and cuprobe exit 0" "workload $wlrc, cuprobe $rc"
expect "injected (simulator): said so, with what CUPTI cannot see" \
	grep -q "agent loaded into the running process; CUPTI sees the GPU work of launches from the first window on" "$TMP/sim.log"
expect "injected (simulator): launches of steps 2-3 equal ground truth" \
	$CHECK match --gt "$TMP/sim.gt.json" --steps 2,3 "$f"
if [ -n "$f" ] && [ "$(gpu "$f" joined_launches)" = 36 ] &&
	[ "$(gpu "$f" launches_without_api_record)" = 0 ] &&
	[ "$(gpu "$f" launches_without_gpu)" = 0 ] && [ "$(kernels "$f")" = 32 ]; then
	ok "injected (simulator): 36 launches joined to their CUPTI records, 32 kernels"
else
	not_ok "injected (simulator): 36 launches joined to their CUPTI records, 32 kernels" \
		"$([ -n "$f" ] && gpu "$f" joined_launches) joined, $([ -n "$f" ] && kernels "$f") kernels"
fi
grep -q "no agent in the process\|said nothing" "$TMP/sim.log" &&
	not_ok "injected (simulator): no 'no agent' warning" "$(grep -m1 agent "$TMP/sim.log")" ||
	ok "injected (simulator): no 'no agent' warning"

# ---- -p LAUNCHER --children: each running rank brought the agent, the launcher left alone ----
env LD_PRELOAD="$SIM/libcupti.so.13" LD_LIBRARY_PATH="$SIM" sh -c "
	CUPROBE_GT=$TMP/kid1.gt.json $W/basic --threads 2 --iters 15 --sleep-ms 20 --wait-file $TMP/kids.go &
	CUPROBE_GT=$TMP/kid2.gt.json $W/basic --threads 2 --iters 15 --sleep-ms 20 --wait-file $TMP/kids.go &
	wait" >/dev/null 2>&1 &
sh=$!
n=100; while [ "$(pgrep -c -P $sh)" != 2 ] && [ $n -gt 0 ]; do sleep 0.05; n=$((n - 1)); done
"$CUPROBE" record --cupti -o "$TMP/kids" -p $sh --children >"$TMP/kids.log" 2>&1 &
rec=$!
wait_log "$TMP/kids.log" "recording pid $sh"
touch "$TMP/kids.go"
wait $sh; wlrc=$?
wait $rec; rc=$?
[ $wlrc = 0 ] && [ $rc = 0 ] && [ "$(grep -c "agent loaded into the running process" "$TMP/kids.log")" = 2 ] &&
	! grep -q "($sh).*cannot bring it in" "$TMP/kids.log" &&
	ok "-p LAUNCHER --children: both ranks brought the agent, the launcher left alone" ||
	not_ok "-p LAUNCHER --children: both ranks brought the agent, the launcher left alone" \
		"exit $wlrc/$rc: $(grep -v '^libbpf' "$TMP/kids.log" | head -4 | tr '\n' ' ')"
for kid in $(sed -n 's/.*pid \([0-9]*\) (basic): agent loaded.*/\1/p' "$TMP/kids.log"); do
	f=$(ls "$TMP"/kids/run_0/*"_$kid".*.pt.trace.json 2>/dev/null)
	gt=$(grep -l . "$TMP"/kid?.gt.json | while read -r g; do
		python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if d.get('pid')==int(sys.argv[2]) else 1)" "$g" "$kid" 2>/dev/null && echo "$g"; done)
	if [ -n "$f" ] && [ -n "$gt" ] && $CHECK match --gt "$gt" "$f" >/dev/null &&
		[ "$(gpu "$f" launches_without_api_record)" = 0 ] && [ "$(gpu "$f" launches_without_gpu)" = 0 ] &&
		[ "$(gpu "$f" joined_launches)" -gt 0 ]; then
		ok "-p LAUNCHER --children: rank $kid's launches equal ground truth, each joined to CUPTI"
	else
		not_ok "-p LAUNCHER --children: rank $kid's launches equal ground truth, each joined to CUPTI" \
			"trace '$f', ground truth '$gt'"
	fi
done

# ---- the real libcupti (no GPU here): its error is said, launches recorded ----
env CUPROBE_GT="$TMP/real.gt.json" "$W/basic" --threads 1 --iters 20 --sleep-ms 20 \
	--wait-file "$TMP/real.go" >/dev/null 2>&1 &
wl=$!
"$CUPROBE" record --cupti -o "$TMP/real" -p $wl >"$TMP/real.log" 2>&1 &
rec=$!
wait_log "$TMP/real.log" "recording pid $wl"
touch "$TMP/real.go"
wait $wl; wlrc=$?
wait $rec; rc=$?
f=$(trace_in "$TMP/real/run_0")
if [ -e /dev/nvidia0 ]; then
	[ $rc = 0 ] && [ -n "$f" ] && [ "$(gpu "$f" joined_launches)" -gt 0 ] &&
		ok "injected (real CUPTI, GPU): launches joined to GPU work" ||
		not_ok "injected (real CUPTI, GPU): launches joined to GPU work" "$(tail -3 "$TMP/real.log")"
else
	[ $wlrc = 0 ] && [ $rc = 0 ] && grep -q "agent loaded into the running process" "$TMP/real.log" &&
		grep -q "CUPTI error .*no usable GPU" "$TMP/real.log" &&
		ok "injected (real CUPTI, no GPU): loaded, CUPTI's refusal said, exit 0" ||
		not_ok "injected (real CUPTI, no GPU): loaded, CUPTI's refusal said, exit 0" \
			"workload $wlrc, cuprobe $rc: $(tail -3 "$TMP/real.log" | tr '\n' ' ')"
fi
expect "injected (real CUPTI): every launch recorded" $CHECK match --gt "$TMP/real.gt.json" "$f"

# ---- every register the kernel keeps across a syscall is kept across the injection ----
"$RC" --iters 120 --sleep-ms 20 >"$TMP/regs.out" 2>&1 &
wl=$!
sleep 0.3
"$CUPROBE" record -v --cupti -o "$TMP/regs" -p $wl --duration 1 >"$TMP/regs.log" 2>&1
has_agent $wl && ok "registers: the agent was loaded (dlopen of it and of libcupti)" ||
	not_ok "registers: the agent was loaded (dlopen of it and of libcupti)" "$(tail -2 "$TMP/regs.log")"
page=$(sed -n 's/.*trampoline at 0x\([0-9a-f]*\) unmapped.*/\1/p' "$TMP/regs.log")
[ -n "$page" ] && ! grep -q "^0*$page-" /proc/$wl/maps &&
	ok "registers: the trampoline's pages were taken away again" ||
	not_ok "registers: the trampoline's pages were taken away again" "$(grep -m1 trampoline "$TMP/regs.log")"
wait $wl; wlrc=$?
[ $wlrc = 0 ] && grep -q " 0 differences" "$TMP/regs.out" &&
	ok "registers: general and vector registers intact, the sleep restarted (not EINTR)" ||
	not_ok "registers: general and vector registers intact, the sleep restarted (not EINTR)" \
		"exit $wlrc: $(tail -3 "$TMP/regs.out" | tr '\n' ' ')"

# ---- refusals: said, launches only, the process untouched ----------------------
# refused NAME PATTERN PID: cuprobe says PATTERN, exits 0, the process runs on untouched.
refused() {
	local name=$1 pat=$2 pid=$3 rc
	"$CUPROBE" record --cupti -o "$TMP/$name" -p "$pid" --duration 1 >"$TMP/$name.log" 2>&1
	rc=$?
	[ $rc = 0 ] && grep -q "cannot bring it in: .*$pat.*recording launches only" "$TMP/$name.log" &&
		! has_agent "$pid" && ok "refused ($name): said why, exit 0, no agent" ||
		not_ok "refused ($name): said why, exit 0, no agent" \
			"exit $rc: $(grep -v '^libbpf' "$TMP/$name.log" | tail -2 | tr '\n' ' ')"
}

# Already traced (strace): cuprobe shares no traced process.
strace -f -o /dev/null "$RC" --iters 150 --sleep-ms 20 --ready-file "$TMP/traced.ready" \
	>"$TMP/traced.out" 2>&1 &
st=$!
wait_for "$TMP/traced.ready"
wl=$(pgrep -P $st | head -1)
refused traced "traced by pid $st" "$wl"
wait $st
expect "refused (traced): the process ran to its end intact" grep -q " 0 differences" "$TMP/traced.out"

# Seccomp (an allow-all filter): dlopen's calls might be what a filter kills for.
python3 - "$RC" --iters 100 --sleep-ms 20 --ready-file "$TMP/sec.ready" >"$TMP/sec.out" 2>&1 <<'PY' &
import ctypes, os, struct, sys
libc = ctypes.CDLL(None, use_errno=True)
assert libc.prctl(38, 1, 0, 0, 0) == 0  # PR_SET_NO_NEW_PRIVS
insn = struct.pack("HBBI", 0x06, 0, 0, 0x7FFF0000)  # BPF_RET|BPF_K SECCOMP_RET_ALLOW
buf = ctypes.create_string_buffer(insn)
class Prog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]
prog = Prog(1, ctypes.cast(buf, ctypes.c_void_p))
assert libc.prctl(22, 2, ctypes.byref(prog), 0, 0) == 0  # PR_SET_SECCOMP, FILTER
os.execv(sys.argv[1], sys.argv[1:])
PY
wl=$!
wait_for "$TMP/sec.ready"
refused seccomp "seccomp" $wl
expect "refused (seccomp): not stopped, not traced" free $wl
wait $wl
expect "refused (seccomp): the process ran to its end intact" grep -q " 0 differences" "$TMP/sec.out"

# A static binary: no libc mapped, no dlopen to call.
"$RC_STATIC" --iters 100 --sleep-ms 20 --ready-file "$TMP/static.ready" >"$TMP/static.out" 2>&1 &
wl=$!
wait_for "$TMP/static.ready"
refused static "static binary" $wl
wait $wl
expect "refused (static): the process ran to its end intact" grep -q " 0 differences" "$TMP/static.out"

# Another mount namespace where the agent's path is not the same file (a container).
mkdir -p "$TMP/agentdir"
cp "$AGENT" "$TMP/agentdir/"
unshare -m --propagation private sh -c "mount -t tmpfs none '$TMP/agentdir' && exec '$RC' \
	--iters 100 --sleep-ms 20 --ready-file '$TMP/ns.ready'" >"$TMP/ns.out" 2>&1 &
wl=$!
wait_for "$TMP/ns.ready"
CUPROBE_AGENT=$TMP/agentdir/libcuprobe-agent.so refused mountns "not the same file inside its mount namespace" $wl
wait $wl
expect "refused (mount namespace): the process ran to its end intact" grep -q " 0 differences" "$TMP/ns.out"

# No thread ever waits at a safe point (a busy loop): refused after a bounded look.
CUDART=$(ldd "$RC" | awk '/libcudart/ {print $3}')
python3 -c "
import ctypes, os
ctypes.CDLL('$CUDART')  # a CUDA process, as the agent is brought only into those
open('$TMP/busy.ready', 'w').close()
n = 0
while not (n % 100000 == 0 and os.path.exists('$TMP/busy.stop')): n += 1" &
wl=$!
wait_for "$TMP/busy.ready"
refused busy "no thread of it waited in sleep, poll, select or wait" $wl
expect "refused (busy): not stopped, not traced" free $wl
touch "$TMP/busy.stop"
wait $wl
[ $? = 0 ] && ok "refused (busy): the process ran to its end" || not_ok "refused (busy): the process ran to its end" "exit $?"

# A process that maps no CUDA library (a launcher, a shell): left alone, no ptrace stop.
sleep 30 &
wl=$!
"$CUPROBE" record --cupti -o "$TMP/nocuda" -p $wl --duration 1 >"$TMP/nocuda.log" 2>&1
rc=$?
[ $rc = 0 ] && grep -q "has no cuprobe agent loaded: --cupti needs the process started with" "$TMP/nocuda.log" &&
	! grep -q "cannot bring it in" "$TMP/nocuda.log" && ! has_agent $wl &&
	ok "no CUDA in the process: not brought the agent, the usual word said" ||
	not_ok "no CUDA in the process: not brought the agent, the usual word said" \
		"exit $rc: $(grep -v '^libbpf' "$TMP/nocuda.log" | tail -2 | tr '\n' ' ')"
expect "no CUDA in the process: not stopped, not traced" free $wl
kill $wl

# ---- cuprobe killed in the middle: the process is never left stopped or traced ----
# killed STAGE: SIGKILL of cuprobe while it holds the thread stopped at STAGE.
killed() {
	local stage=$1 wl rec
	"$RC" --iters 200 --sleep-ms 20 --ready-file "$TMP/k$stage.ready" >"$TMP/k$stage.out" 2>&1 &
	wl=$!
	wait_for "$TMP/k$stage.ready"
	CUPROBE_INJECT_TEST_PAUSE=$stage "$CUPROBE" record --cupti -o "$TMP/k$stage" -p $wl \
		--duration 60 >"$TMP/k$stage.log" 2>&1 &
	rec=$!
	if wait_log "$TMP/k$stage.log" "injection paused at $stage"; then
		grep -q "^State:.*t (tracing stop)" /proc/$wl/status &&
			ok "killed at $stage: the thread was held in a ptrace stop" ||
			not_ok "killed at $stage: the thread was held in a ptrace stop" "$(grep State /proc/$wl/status)"
	else
		not_ok "killed at $stage: cuprobe reached the pause" "$(tail -2 "$TMP/k$stage.log")"
	fi
	kill -KILL $rec
	wait $rec 2>/dev/null
	sleep 0.2
	expect "killed at $stage: the process runs on, not stopped, not traced" free $wl
	KILLED_PID=$wl
}
killed stopped
wait $KILLED_PID; wlrc=$?
[ $wlrc = 0 ] && grep -q " 0 differences" "$TMP/kstopped.out" &&
	ok "killed while stopped: registers intact, the process ran to its end" ||
	not_ok "killed while stopped: registers intact, the process ran to its end" \
		"exit $wlrc: $(tail -2 "$TMP/kstopped.out" | tr '\n' ' ')"
killed armed
# Armed: the thread was sent into the trampoline; it loads the agent and comes back by itself.
n=200; while ! has_agent $KILLED_PID && [ $n -gt 0 ]; do sleep 0.05; n=$((n - 1)); done
has_agent $KILLED_PID && ok "killed when armed: the trampoline finished the load by itself" ||
	not_ok "killed when armed: the trampoline finished the load by itself" "no agent mapped"
wait $KILLED_PID; wlrc=$?
[ $wlrc = 0 ] && grep -q " 0 differences" "$TMP/karmed.out" &&
	ok "killed when armed: registers intact, the process ran to its end" ||
	not_ok "killed when armed: registers intact, the process ran to its end" \
		"exit $wlrc: $(tail -2 "$TMP/karmed.out" | tr '\n' ' ')"

# ---- what the agent costs: wakeups of its thread ----------------------------------
# switches PID: context switches of the agent's thread (the first named cuprobe-agent;
# threads it starts, such as CUPTI's, inherit the name).
switches() {
	local t
	for t in $(ls /proc/$1/task | sort -n); do
		if [ "$(cat /proc/$1/task/$t/comm 2>/dev/null)" = cuprobe-agent ]; then
			awk '/ctxt_switches/ {n += $2} END {print n}' /proc/$1/task/$t/status
			return
		fi
	done
	echo 1000000 # gone: no bound holds
}
env LD_PRELOAD="$AGENT:$SIM/libcupti.so.13" LD_LIBRARY_PATH="$SIM" CUPTI_SIM_STATS="$TMP/cost.stats" \
	"$W/basic" --steps --threads 1 --iters 2000 --sleep-ms 20 --ready-file "$TMP/cost.ready" \
	>/dev/null 2>&1 &
wl=$!
wait_for "$TMP/cost.ready"
a=$(switches $wl); sleep 3; b=$(switches $wl)
[ $((b - a)) -le 1 ] && ok "dormant agent: $((b - a)) wakeups in 3 s (at most 1)" ||
	not_ok "dormant agent: at most 1 wakeup in 3 s" "$a -> $b"
# Two windows 150 steps (3 s or more) apart: between them the agent waits with CUPTI set up.
"$CUPROBE" record --cupti -o "$TMP/cost" -p $wl --duration 10 --step cuprobe_step \
	--schedule wait=150,warmup=1,active=2,repeat=2 >"$TMP/cost.log" 2>&1 &
rec=$!
n=600; while [ -z "$(trace_in "$TMP/cost/run_0")" ] && [ $n -gt 0 ]; do sleep 0.05; n=$((n - 1)); done
# The first window's tail (the agent's flush and CUPTI's off) settles first: 0.5 s, then
# 1.5 s counted, still well before the second window's warmup (150 steps of 20 ms).
sleep 0.5
c=$(switches $wl); sleep 1.5; d=$(switches $wl)
if [ -n "$(trace_in "$TMP/cost/run_0")" ] && [ -z "$(trace_in "$TMP/cost/run_1")" ]; then
	[ $((d - c)) -le 3 ] && ok "between windows: $((d - c)) wakeups in 1.5 s (at most 3)" ||
		not_ok "between windows: at most 3 wakeups in 1.5 s" "$c -> $d"
else
	not_ok "between windows: measured between the two cycles" "$(ls "$TMP/cost")"
fi
wait $rec
for k in 0 1; do
	f=$(trace_in "$TMP/cost/run_$k")
	[ -n "$f" ] && [ "$(gpu "$f" joined_launches)" = 18 ] && [ "$(gpu "$f" launches_without_gpu)" = 0 ] &&
		ok "cost: window $k started at once, its 18 launches joined to GPU work" ||
		not_ok "cost: window $k started at once, its 18 launches joined to GPU work" \
			"$([ -n "$f" ] && gpu "$f" joined_launches) joined: $(tail -2 "$TMP/cost.log" | tr '\n' ' ')"
done
sleep 1.5 # CUPTI is torn down within CUPROBE_AGENT_IDLE_CHECK_MS of cuprobe leaving
e=$(switches $wl); sleep 3; g=$(switches $wl)
[ $((g - e)) -le 1 ] && ok "after cuprobe left: $((g - e)) wakeups in 3 s (at most 1)" ||
	not_ok "after cuprobe left: at most 1 wakeup in 3 s" "$e -> $g"
# Profiled again after the teardown: CUPTI is set up afresh (callbacks, clock), the window
# has its GPU times, and it is torn down again once cuprobe has left.
"$CUPROBE" record --cupti -o "$TMP/again" -p $wl --duration 5 "${STEPS[@]}" >"$TMP/again.log" 2>&1
f=$(trace_in "$TMP/again/run_0")
[ -n "$f" ] && [ "$(gpu "$f" joined_launches)" = 18 ] && [ "$(gpu "$f" clock_faults)" = 0 ] &&
	ok "profiled again after the teardown: 18 launches joined, no clock fault" ||
	not_ok "profiled again after the teardown: 18 launches joined, no clock fault" \
		"$([ -n "$f" ] && gpu "$f" joined_launches): $(tail -2 "$TMP/again.log" | tr '\n' ' ')"
sleep 1.5
h=$(switches $wl); sleep 2; i=$(switches $wl)
[ $((i - h)) -le 1 ] && ok "after the second cuprobe left: $((i - h)) wakeups in 2 s (at most 1)" ||
	not_ok "after the second cuprobe left: at most 1 wakeup in 2 s" "$h -> $i"
wait $wl
expect "after cuprobe left: CUPTI finalized after each of the two sessions" grep -qx "cuptiFinalize	2" "$TMP/cost.stats"
expect "after cuprobe left: the clock registered once per setup (2)" grep -qx "clock_registrations	2" "$TMP/cost.stats"
expect "after cuprobe left: every kind off before cuptiFinalize" grep -qx "finalize_with_kinds_on	0" "$TMP/cost.stats"
expect "after cuprobe left: nothing of CUPTI set up at exit" grep -qx "set_up_at_exit	0" "$TMP/cost.stats"
done_testing
