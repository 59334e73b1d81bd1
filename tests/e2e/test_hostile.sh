#!/usr/bin/env bash
# Hostile targets: an unprivileged process (nobody) maps a file, deletes it and
# plants something at the "PATH (deleted)" name /proc/PID/maps shows: a FIFO, a
# symlink to a FIFO or to /etc/shadow, another regular file. Nothing cuprobe
# opens on its behalf may block or be swapped (docs/safety.md): record -p ends
# on time, the daemon keeps answering and stops on SIGTERM, no link is followed
# and the launches through the mapped file are all recorded.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
LAUNCHES=7
as_nobody=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
HPID= HD= DPID= CG=
cleanup() {
	[ -n "$HPID" ] && kill -KILL "$HPID" 2>/dev/null
	[ -n "$DPID" ] && kill -KILL "$DPID" 2>/dev/null
	[ -n "$HD" ] && rm -rf "$HD" "$HD.out"
	cgroup_kill
	rm -rf "$TMP"
}
trap cleanup EXIT

# start_hostile MODE [PREFIX...]: the target, as nobody, in a folder of its own
# (HD, which holds a copy of the script: nobody may not read the tree); returns
# once its trap is set. PREFIX runs first (as root), then execs the rest.
start_hostile() {
	local mode=$1 n=200
	shift
	HD=$(mktemp -d /tmp/cuprobe-hostile.XXXXXX)
	chmod 755 "$HD"
	cp "$ROOT/tests/e2e/hostile_target.py" "$HD/"
	chown -R nobody:nogroup "$HD"
	"$@" "${as_nobody[@]}" "$PY" "$HD/hostile_target.py" "$mode" "$HD" "$HD/ready" "$HD/go" \
		$LAUNCHES 2>"$HD.err" &
	HPID=$!
	while [ ! -e "$HD/ready" ] && [ $n -gt 0 ] && kill -0 $HPID 2>/dev/null; do
		sleep 0.05
		n=$((n - 1))
	done
	[ -e "$HD/ready" ]
}

stop_hostile() {
	kill -KILL "$HPID" 2>/dev/null
	wait "$HPID" 2>/dev/null
	HPID=
	rm -rf "$HD" "$HD.out" "$HD.err"
	HD=
}

launches_in() {
	"$PY" -c 'import json, sys
t = json.load(open(sys.argv[1]))
print(sum(1 for e in t["traceEvents"] if e.get("name") == "cudaLaunchKernel"))' "$1"
}

# A: a FIFO at the mapped path; record -p --duration 3 ends on time.
if start_hostile fifo; then
	t0=$(date +%s)
	timeout -k 2 20 "$CUPROBE" record -v -p $HPID --duration 3 -o "$HD.out" >"$TMP/fifo.log" 2>&1
	rc=$? t=$(( $(date +%s) - t0 ))
	if [ $rc = 0 ] && [ $t -le 12 ] && grep -q "launch probes on .*libcudart.so.13" "$TMP/fifo.log"; then
		ok "record -p: a FIFO at a mapped path does not block it, libcudart is probed (${t}s)"
	else
		not_ok "record -p: a FIFO at a mapped path does not block it" \
			"rc $rc after ${t}s (124, 137: killed by timeout 20): $(grep -v libbpf "$TMP/fifo.log" | tail -3 | tr '\n' ' ')"
	fi
else
	not_ok "record -p: a FIFO at a mapped path" "the target did not start: $(cat "$HD.err")"
fi
stop_hostile

# B: a link or another file at the mapped copy of libcudart's path. The
# launches through the mapped copy are recorded, every one: probes on the
# planted file, or none, would miss them. The link is never followed (strace).
for mode in link-fifo link-shadow swap; do
	if ! start_hostile $mode; then
		not_ok "$mode: the target starts" "$(cat "$HD.err")"
		stop_hostile
		continue
	fi
	strace -f -qq -e trace=open,openat,openat2 -o "$TMP/$mode.strace" timeout -k 2 20 \
		"$CUPROBE" record -p $HPID --duration 4 -o "$HD.out" >"$TMP/$mode.log" 2>&1 &
	REC=$!
	for _ in $(seq 200); do
		grep -q "recording pid $HPID" "$TMP/$mode.log" && break
		kill -0 $REC 2>/dev/null || break
		sleep 0.05
	done
	touch "$HD/go"
	wait $REC
	rc=$?
	trace=$(trace_in "$HD.out/run_0")
	n=$([ -n "$trace" ] && launches_in "$trace")
	if [ $rc = 0 ] && [ "$n" = $LAUNCHES ]; then
		ok "$mode: record -p ends and records the $LAUNCHES launches of the mapped file"
	else
		not_ok "$mode: record -p records the launches of the mapped file" \
			"rc $rc, ${n:-no} launches of $LAUNCHES: $(grep -v libbpf "$TMP/$mode.log" | tail -3 | tr '\n' ' ')"
	fi
	if grep -qE '"(/etc/shadow|[^"]*/fifo|[^"]*\(deleted\))"' "$TMP/$mode.strace"; then
		not_ok "$mode: nothing planted is opened" \
			"$(grep -E 'shadow|fifo|deleted' "$TMP/$mode.strace" | head -3 | tr '\n' ' ')"
	else
		ok "$mode: nothing planted is opened"
	fi
	stop_hostile
done

# C: the daemon, watching a cgroup of the test's own, meets the FIFO target:
# /healthz and /metrics keep answering, and SIGTERM stops it.
if ! cgroup_setup cuprobe-hostile-test; then
	not_ok "daemon: a cgroup of the test's own" "no writable cgroup2 mount in /proc/mounts"
	CG=
	done_testing
	exit 0
fi
PORT=$(free_port)
cat >"$TMP/d.conf" <<CONF
interval = 1
window-steps = 2
budget = 100
cgroup = /$CGNAME
CONF
"$CUPROBE" daemon -c "$TMP/d.conf" -l "127.0.0.1:$PORT" -o "$TMP/dout" -v >"$TMP/d.log" 2>&1 &
DPID=$!
for _ in $(seq 600); do grep -q "listening on" "$TMP/d.log" && break; sleep 0.1; done
# Root moves the shell into the cgroup, which then becomes nobody.
if ! start_hostile fifo sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$CG"; then
	not_ok "daemon: the FIFO target starts" "$(cat "$HD.err")"
else
	# The daemon looks at it within an interval or two; then it must still answer.
	for _ in $(seq 100); do grep -q "pid $HPID" "$TMP/d.log" && break; sleep 0.1; done
	sleep 3
	if curl -sf -m 3 -o /dev/null "http://127.0.0.1:$PORT/healthz" &&
	   curl -sf -m 3 -o /dev/null "http://127.0.0.1:$PORT/metrics" &&
	   grep -q "pid $HPID: .* launch probes on" "$TMP/d.log"; then
		ok "daemon: probes the FIFO target, /healthz and /metrics keep answering"
	else
		not_ok "daemon: probes the FIFO target, /healthz and /metrics keep answering" \
			"$(grep -v libbpf "$TMP/d.log" | tail -3 | tr '\n' ' ')"
	fi
fi
kill -TERM $DPID
for _ in $(seq 50); do kill -0 $DPID 2>/dev/null || break; sleep 0.1; done
if kill -0 $DPID 2>/dev/null; then
	not_ok "daemon: stops on SIGTERM within 5 s" "still running: $(grep -v libbpf "$TMP/d.log" | tail -3 | tr '\n' ' ')"
else
	wait $DPID
	rc=$?
	DPID=
	[ $rc = 0 ] && ok "daemon: stops on SIGTERM within 5 s" ||
		not_ok "daemon: stops on SIGTERM within 5 s" "exit status $rc"
fi
stop_hostile
done_testing
