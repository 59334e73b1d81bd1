#!/usr/bin/env bash
# What a local user can do to the daemon, and what it must withstand: a
# capture as large as the API allows is cut at the window's bound and the
# retention limit holds; an output path whose folders another user may write
# is refused; traces are root's only (or a group's, with --group); process
# names with invalid UTF-8, quotes, backslashes and newlines keep /metrics
# valid for promtool and the capture's answer valid JSON; captures answer at
# every moment of a process's life; a thread id is told its process id.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

DPID=
cleanup() {
	[ -n "$DPID" ] && kill -KILL "$DPID" 2>/dev/null
	cgroup_kill
	rm -rf "$TMP"
}
trap cleanup EXIT
if ! cgroup_setup cuprobe-dsafety; then
	not_ok "daemon safety: a cgroup of the test's own" "no writable cgroup2 mount"
	done_testing
	exit 0
fi

# start_daemon LOG ARGS...: a daemon on a free port of its own, sampling the test's cgroup.
start_daemon() {
	local log=$1
	shift
	PORT=$(free_port)
	"$CUPROBE" daemon -l "127.0.0.1:$PORT" --cgroup "/$CGNAME" -v "$@" >"$log" 2>&1 &
	DPID=$!
	until_true 60 grep -q "listening on" "$log"
}

stop_daemon() {
	kill -TERM "$DPID" 2>/dev/null
	wait "$DPID" 2>/dev/null
	DPID=
}

# ---- a capture that would fill the disk ----
mkdir -m 0700 "$TMP/out"
# A sampled window's folder from before: captures, kept apart, must never push it out.
mkdir -m 0700 "$TMP/out/run_0" && head -c 300000 /dev/urandom >"$TMP/out/run_0/old.pt.trace.json" &&
	chmod 0600 "$TMP/out/run_0/old.pt.trace.json"
if start_daemon "$TMP/d1.log" -o "$TMP/out" -i 3600 --step basic=cuprobe_step --warmup 1 \
	--window-max-launches 200 --window-max-bytes 256K --retention 1M --capture-retention 1M; then
	ok "daemon starts with window bounds"
else
	not_ok "daemon starts with window bounds" "$(grep -v libbpf "$TMP/d1.log" | tail -3)"
fi
"${in_cg[@]}" "$W/basic" --steps --threads 1 --sleep-ms 5 --iters 100000 2>/dev/null &
P=$!
until_true 20 grep -q "sampling pid $P" "$TMP/d1.log"
sleep 0.5
start=$(date +%s)
curl -s -m 60 -X POST "http://127.0.0.1:$PORT/capture?pid=$P&steps=10000" >"$TMP/cut.json"
took=$(( $(date +%s) - start ))
expect "a capture of 10000 steps is cut at 200 launches and answered at once (${took}s)" python3 -c "
import json, sys
a = json.load(open(sys.argv[1]))
assert a['result'] == 'cut' and a['cut'] is True, a
assert a['launches'] == 200, a
assert a['cut_launches'] >= 1, a
t = json.load(open(a['trace']))
c = t['cuprobe']['cut']
assert c['bound'] == 'launches' and c['launches_not_written'] == a['cut_launches'], c
assert c['step'] >= a['first_step'] and c['step'] <= a['last_step'], (c, a)
n = sum(1 for e in t['traceEvents'] if e.get('cat') == 'cuda_runtime')
assert n == 200, n
# The window ended soon after the cut: far fewer steps than asked for.
assert a['last_step'] - a['first_step'] < 100, a
" "$TMP/cut.json"
expect "a cut capture's window says so in the log" grep -q "reached its bound of 200 launches" "$TMP/d1.log"
# Many captures and windows: what is kept stays within the retention limit.
for i in 1 2 3 4 5 6 7 8; do
	curl -s -m 30 -X POST "http://127.0.0.1:$PORT/capture?pid=$P&steps=10000" >/dev/null
done
kb=$(du -sk "$TMP/out/captures" | cut -f1)
[ "$kb" -le 1100 ] && ok "capture-retention: 9 cut captures keep $kb KiB of 1 MiB" ||
	not_ok "capture-retention holds for captures" "$kb KiB under $TMP/out/captures"
expect "captures never push a sampled window's trace out (their retention is apart)" \
	test -f "$TMP/out/run_0/old.pt.trace.json"

stop_daemon
# A sampled window of 1000 steps is cut too, and counted so.
if start_daemon "$TMP/d1b.log" -o "$TMP/out" -i 1 -P 1 -n 1000 --budget 100 --step basic=cuprobe_step \
	--window-max-launches 50 --window-max-bytes 256K --retention 1M; then
	until_true 30 sh -c "curl -s http://127.0.0.1:$PORT/metrics | grep -q 'pid=\"$P\".*result=\"cut\"} [1-9]'"
	expect "a sampled window is cut, and counted as result=\"cut\"" sh -c \
		"curl -s http://127.0.0.1:$PORT/metrics | grep -q 'pid=\"$P\".*result=\"cut\"} [1-9]'"
else
	not_ok "a sampled window is cut" "$(grep -v libbpf "$TMP/d1b.log" | tail -3)"
fi

# ---- traces are root's ----
f=$(ls "$TMP"/out/run_*/*.pt.trace.json | head -1)
m=$(stat -c %a "$f"); dm=$(stat -c %a "$(dirname "$f")"); om=$(stat -c %a "$TMP/out")
[ "$m" = 600 ] && [ "$dm" = 700 ] && ok "traces 0600 in 0700 folders" ||
	not_ok "traces 0600 in 0700 folders" "trace $m, folder $dm"
expect_fail "another user cannot read a trace" "Permission denied" \
	setpriv --reuid=nobody --regid=nogroup --clear-groups cat "$f"
stop_daemon
kill "$P" 2>/dev/null; wait "$P" 2>/dev/null

# --group: shared with that group, still not with others.
groupadd -f cuprobe-test-readers
if start_daemon "$TMP/d2.log" -o "$TMP/gout" -i 3600 --step basic=cuprobe_step --group cuprobe-test-readers; then
	"${in_cg[@]}" "$W/basic" --steps --threads 1 --sleep-ms 20 --iters 100000 2>/dev/null &
	P=$!
	until_true 20 grep -q "sampling pid $P" "$TMP/d2.log"
	curl -s -m 30 -X POST "http://127.0.0.1:$PORT/capture?pid=$P&steps=2" >"$TMP/g.json"
	f=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['trace'])" "$TMP/g.json" 2>/dev/null)
	if [ -n "$f" ] && [ -f "$f" ]; then
		st="$(stat -c '%a %G' "$f") $(stat -c '%a %G' "$(dirname "$f")") $(stat -c '%a %G' "$TMP/gout")"
		[ "$st" = "640 cuprobe-test-readers 750 cuprobe-test-readers 750 cuprobe-test-readers" ] &&
			ok "--group: traces 0640 and folders 0750 of that group" ||
			not_ok "--group: traces 0640 and folders 0750 of that group" "$st"
	else
		not_ok "--group: a capture" "$(cat "$TMP/g.json")"
	fi
	stop_daemon
	kill "$P" 2>/dev/null; wait "$P" 2>/dev/null
else
	not_ok "--group: the daemon starts" "$(grep -v libbpf "$TMP/d2.log" | tail -3)"
fi
expect_fail "--group: an unknown group is refused, said" "no such group" \
	"$CUPROBE" daemon -l "127.0.0.1:$(free_port)" -o "$TMP/x" --group no-such-group-here
groupdel cuprobe-test-readers 2>/dev/null
expect_fail "window-max-bytes over retention is refused, said" "more than retention" \
	"$CUPROBE" daemon -o "$TMP/x" --retention 1M --window-max-bytes 2M
expect_fail "window-max-bytes over capture-retention is refused, said" "more than capture-retention" \
	"$CUPROBE" daemon -o "$TMP/x" --capture-retention 1M --window-max-bytes 2M

# ---- an output folder under a folder another user owns ----
mkdir -p "$TMP/x/up"
chown nobody "$TMP/x/up"
expect_fail "an output folder under another user's folder is refused, said" \
	"may be written by another user.*only root may write" \
	"$CUPROBE" daemon -l "127.0.0.1:$(free_port)" -o "$TMP/x/up/out"
[ ! -e "$TMP/x/up/out" ] && ok "... and nothing is made there" || not_ok "... and nothing is made there" "$(ls -la "$TMP/x/up")"
ln -s "$TMP/out" "$TMP/link"
expect_fail "an output folder given as a link is refused" "a link or a file" \
	"$CUPROBE" daemon -l "127.0.0.1:$(free_port)" -o "$TMP/link"

# ---- names that break text formats ----
mkdir -p "$TMP/bin"
bad=$(printf 'b\xff\xfe')
quote='q"x\y'
nl=$(printf 'n\nl')
for n in "$bad" "$quote" "$nl"; do cp "$W/basic" "$TMP/bin/$n"; done
if start_daemon "$TMP/d3.log" -o "$TMP/nout" -i 3600; then
	for n in "$bad" "$quote" "$nl"; do
		"${in_cg[@]}" "$TMP/bin/$n" --threads 1 --sleep-ms 20 --iters 100000 2>/dev/null &
	done
	until_true 20 test "$(grep -c 'sampling pid' "$TMP/d3.log")" -ge 3
	curl -s "http://127.0.0.1:$PORT/metrics" >"$TMP/names.txt"
	expect "promtool checks /metrics with names of invalid UTF-8, quotes, newlines" \
		promtool check metrics <"$TMP/names.txt"
	expect "the invalid bytes are U+FFFD in the comm label" grep -q "comm=\"b$(printf '\xef\xbf\xbd\xef\xbf\xbd')\"" "$TMP/names.txt"
	qp=$(pgrep -f "$TMP/bin/q" | head -1)
	if "$CUPROBE" capture --daemon "127.0.0.1:$PORT" --pid "$qp" --steps 2 >"$TMP/q.json" 2>"$TMP/q.err"; then
		expect "a capture's answer is valid JSON for a name with quotes and backslashes" python3 -c "
import json, sys
a = json.load(open(sys.argv[1]))
assert a['comm'] == 'q\"x\\\\y', a['comm']
assert a['launches'] > 0, a
" "$TMP/q.json"
	else
		not_ok "a capture of a process named with quotes" "$(cat "$TMP/q.err")"
	fi
	stop_daemon
else
	not_ok "the daemon for names starts" "$(grep -v libbpf "$TMP/d3.log" | tail -3)"
fi
for p in $(cat "$CG/cgroup.procs" 2>/dev/null); do kill "$p" 2>/dev/null; done

# ---- captures at every moment of a process's life ----
# capture_exact NAME PID STEPS: 200 and 9 launches a step (basic with one thread).
capture_exact() {
	local name=$1 pid=$2 steps=$3 out
	if ! out=$(curl -s -m 60 -w '\n%{http_code}' -X POST "http://127.0.0.1:$PORT/capture?pid=$pid&steps=$steps"); then
		not_ok "$name" "no answer"
		return
	fi
	python3 - "$out" "$steps" <<'PY' && ok "$name" || not_ok "$name" "$out"
import json, sys
body, code = sys.argv[1].rsplit("\n", 1)
steps = int(sys.argv[2])
assert code == "200", code
a = json.loads(body)
assert a["launches"] == 9 * steps, a
assert a["last_step"] - a["first_step"] + 1 == steps, a
PY
}
cat >"$TMP/life.conf" <<CONF
interval = 1
window-steps = 2
warmup = 2
step = basic=cuprobe_step
CONF
if start_daemon "$TMP/d4.log" -c "$TMP/life.conf" -o "$TMP/lout" -i 1 -P 1 -n 2 --budget 100; then
	"${in_cg[@]}" "$W/basic" --steps --threads 1 --sleep-ms 30 --iters 100000 2>/dev/null &
	P=$!
	until_true 20 grep -q "sampling pid $P" "$TMP/d4.log"
	capture_exact "capture before the first sampled window" $P 3
	until_true 20 grep -q "pid $P: window ok" "$TMP/d4.log"
	capture_exact "capture after a sampled window" $P 3
	# During one: ask once a sampled window's probes are in and it is not written yet.
	in_window() {
		[ "$(grep -c "launch probes on /proc/$P/" "$TMP/d4.log")" -gt \
		  "$(grep -c "pid $P: window" "$TMP/d4.log")" ]
	}
	until_true 20 in_window
	capture_exact "capture during a sampled window" $P 4
	capture_exact "capture right after another capture" $P 2
	kill -HUP "$DPID"
	until_true 10 grep -q "config reloaded" "$TMP/d4.log"
	capture_exact "capture after a reload" $P 3
	"${in_cg[@]}" "$W/basic" --threads 2 --sleep-ms 30 --iters 100000 2>/dev/null &
	T=$!
	until_true 20 grep -q "sampling pid $T" "$TMP/d4.log"
	tid=$(ls /proc/$T/task | grep -v "^$T$" | head -1)
	P=$T
	if [ -n "$tid" ]; then
		out=$(curl -s -X POST "http://127.0.0.1:$PORT/capture?pid=$tid&steps=2")
		grep -q "thread of process $P: give its process id" <<<"$out" &&
			ok "a thread id is told its process id" || not_ok "a thread id is told its process id" "$out"
	else
		not_ok "a thread id is told its process id" "basic has no second thread"
	fi
	stop_daemon
	for p in $(cat "$CG/cgroup.procs" 2>/dev/null); do kill "$p" 2>/dev/null; done
else
	not_ok "the daemon for captures starts" "$(grep -v libbpf "$TMP/d4.log" | tail -3)"
fi
# While the budget holds sampling back: a capture is the user's, not the sampler's.
if start_daemon "$TMP/d5.log" -o "$TMP/bout" -i 1 -P 1 -n 2 --budget 0.001 --step basic=cuprobe_step; then
	"${in_cg[@]}" "$W/basic" --steps --threads 1 --sleep-ms 30 --iters 100000 2>/dev/null &
	P=$!
	until_true 30 grep -q "pid $P (basic): sampling held back" "$TMP/d5.log"
	capture_exact "capture while the budget holds sampling back" $P 3
	stop_daemon
	kill "$P" 2>/dev/null; wait "$P" 2>/dev/null
else
	not_ok "the daemon for the budget starts" "$(grep -v libbpf "$TMP/d5.log" | tail -3)"
fi
done_testing
