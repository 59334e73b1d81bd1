#!/usr/bin/env bash
# The daemon's HTTP server under hostile clients: half-open sockets and a
# slowloris (a header line a second) fill the pool, and /healthz and /metrics
# still answer at once; slow clients are closed at the request deadline (5 s
# from the accept) while a capture that takes longer is not; past the limits
# (64 connections, 16 from one address) a client reads a real 503; a body over
# 4096 bytes is 413; pid and steps take plain digits only; /healthz takes GET
# and HEAD only. cuprobe capture refuses an answer that is not the daemon's
# JSON. Clients use source addresses 127.0.0.2-9 (all of 127/8 is loopback)
# so that the per-address bound does not stop the test's own curl.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"
HC="python3 $ROOT/tests/e2e/check_http.py"

DPID= FAKE= WL=
cleanup() {
	[ -n "$DPID" ] && kill -KILL "$DPID" 2>/dev/null
	[ -n "$FAKE" ] && kill "$FAKE" 2>/dev/null
	for j in $(jobs -p); do kill "$j" 2>/dev/null; done
	cgroup_kill
	rm -rf "$TMP"
}
trap cleanup EXIT
if ! cgroup_setup cuprobe-http-test; then
	not_ok "http: a cgroup of the test's own" "no writable cgroup2 mount in /proc/mounts"
	done_testing
	exit 0
fi

# http_is CODE PATTERN CURL-ARGS...: the status, and the body or headers match PATTERN.
http_is() {
	local want=$1 pat=$2 got
	shift 2
	got=$(curl -s -m 5 -D "$TMP/hdrs" -o "$TMP/body" -w '%{http_code}' "$@")
	[ "$got" = "$want" ] || { echo "HTTP $got, not $want: $(cat "$TMP/body")"; return 1; }
	grep -qE -- "$pat" "$TMP/body" "$TMP/hdrs" || { echo "no /$pat/ in: $(cat "$TMP/hdrs" "$TMP/body")"; return 1; }
}

# fast CODE SECONDS CURL-ARGS...: answered CODE within SECONDS.
fast() {
	local want=$1 secs=$2 got
	shift 2
	got=$(curl -s -m 10 -o "$TMP/fast.body" -w '%{http_code} %{time_total}' "$@")
	python3 -c "import sys; c, t = '$got'.split(); sys.exit(0 if c == '$want' and float(t) < $secs else 'HTTP %s in %s s: %s' % (c, t, open('$TMP/fast.body', errors='replace').read().strip()))"
}

# hold NAME GROUP...: unfinished requests (check_http.py hold), opened by one process in
# the background; waits until they are connected. Their report: $TMP/NAME.json.
hold() {
	local name=$1
	shift
	$HC hold "$PORT" "$TMP/$name.ready" "$TMP/$name.json" "$@" &
	wait_for "$TMP/$name.ready" 10
}

# closed REPORT GROUP MIN MAX [N]: every connection of GROUP that was let in (not
# answered 503 at once; N of them at least) was closed by the server MIN to MAX s
# after its connect.
closed() {
	wait_for "$TMP/$1.json" 20 && python3 -c "
import json, sys
r = json.load(open('$TMP/$1.json'))['$2']
c = [x['closed'] for x in r if not x['first'].startswith('HTTP/1.1 503')]
bad = [x for x in c if x is None or not $3 <= x <= $4]
sys.exit('closed after %s s' % sorted(c, key=lambda x: x or 99) if bad or len(c) < ${5:-16} else 0)"
}

PORT=$(free_port)
U=http://127.0.0.1:$PORT
cat >"$TMP/d.conf" <<CONF
interval = 1
window-steps = 2
warmup = 1
cgroup = /$CGNAME
step = basic=cuprobe_step
CONF
# A capture that takes longer than the request deadline: 1 + 3 steps of 2 s.
"${in_cg[@]}" "$W/basic" --steps --threads 1 --sleep-ms 2000 --iters 1000 2>/dev/null &
WL=$!
"$CUPROBE" daemon -c "$TMP/d.conf" -l "127.0.0.1:$PORT" -o "$TMP/out" -v >"$TMP/d.log" 2>&1 &
DPID=$!
if ! until_true 60 grep -q "listening on" "$TMP/d.log"; then
	not_ok "daemon starts" "$(grep -v libbpf "$TMP/d.log" | tail -5)"
	done_testing
	exit 0
fi
ok "daemon starts and listens on 127.0.0.1:$PORT"
until_true 30 grep -q "sampling pid $WL " "$TMP/d.log"
CAP_T0=$(date +%s.%N)
( "$CUPROBE" capture --daemon "127.0.0.1:$PORT" --pid $WL --steps 3 >"$TMP/cap.json" 2>"$TMP/cap.err"
  echo "$? $(python3 -c "print($(date +%s.%N) - $CAP_T0)")" >"$TMP/cap.rc" ) &
CAP=$!

# The pool filled: 48 half-open sockets (16 silent, 32 with a request line) and 16
# slowloris clients, from 4 addresses (16 each, the per-address bound).
# The capture's connection is in first (it holds a slot: the 16th slowloris is the 65th).
until_true 10 test "$(ss -tnH state established "( dport = :$PORT )" | wc -l)" -ge 1
hold flood silent=127.0.0.2:16 line3=127.0.0.3:16:line line4=127.0.0.4:16:line \
	slow=127.0.0.5:16:trickle
# Every flood connection is in by now: from here, the oldest of them has waited longer.
T0=$(date +%s.%N)
got=$($HC ask "$PORT" 127.0.0.6 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n')
case "$got" in
"HTTP/1.1 503 "*) ok "past 64 connections (none waiting 1 s yet): an HTTP 503 answer" ;;
*) not_ok "past 64 connections: an HTTP 503 answer" "got '$got'" ;;
esac
# Once the oldest have waited 1 s, each newcomer takes the place of the oldest
# (timed from when the last was in: a loaded machine starts the flood late).
sleep "$(python3 -c "print(max(0, 1.1 - ($(date +%s.%N) - $T0)))")"
expect "pool full of slow clients: /healthz answers 200 within 2 s" fast 200 2 "$U/healthz"
expect "pool full of slow clients: /metrics answers 200 within 2 s" fast 200 2 "$U/metrics"
expect "pool full of slow clients: HEAD /healthz answers 200" fast 200 2 -I "$U/healthz"
expect "slowloris (a header line a second): closed 5 to 7 s after its connect" closed flood slow 4.9 7 15
expect "half-open sockets with a request line: closed by 7 s" closed flood line4 0 7
expect "silent sockets: closed by 7 s" closed flood silent 0 7
expect "after the flood, /healthz answers" fast 200 2 "$U/healthz"

# The capture was asked before the flood, takes longer than the deadline, and is answered.
wait $CAP
read -r rc secs <"$TMP/cap.rc"
expect "a capture that took longer than the request deadline is answered (rc $rc, $secs s)" \
	python3 -c "
import json, sys
a = json.load(open('$TMP/cap.json'))
sys.exit(0 if $rc == 0 and $secs > 5 and a['pid'] == $WL and a['trace'] else 'answer %s: $(head -c 200 "$TMP/cap.err")' % a)"
{ kill -KILL $WL && wait $WL; } 2>/dev/null

# One address: 16 connections at most; the 17th reads 503 while another address gets in.
hold one one=127.0.0.7:16:line
got=$($HC ask "$PORT" 127.0.0.7 'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n')
case "$got" in
"HTTP/1.1 503 "*) ok "per address: the 17th connection from 127.0.0.7 reads 503" ;;
*) not_ok "per address: the 17th connection from 127.0.0.7 reads 503" "got '$got'" ;;
esac
expect "per address: another address is served meanwhile" fast 200 2 --interface 127.0.0.8 "$U/healthz"
expect "per address: the 503 says why" http_is 503 "too many connections from your address" \
	--interface 127.0.0.7 "$U/healthz"
wait_for "$TMP/one.json" 20

# Scrapes in a row from four clients at once: each one answered (an answer stamped
# just after the accept thread read the clock once looked 584 years old, and was shut).
bursts=()
for j in 1 2 3 4; do
	( for _ in $(seq 250); do curl -s -m 5 -o /dev/null -w '%{http_code}\n' "$U/metrics" || echo "curl $?"; done \
		>"$TMP/burst.$j" ) &
	bursts+=($!)
done
wait "${bursts[@]}"
bad=$(cat "$TMP"/burst.* | grep -vc '^200$')
[ "$bad" = 0 ] && ok "1000 scrapes from 4 clients at once: every one answered 200" ||
	not_ok "1000 scrapes from 4 clients at once: every one answered 200" \
		"$bad not: $(cat "$TMP"/burst.* | grep -v '^200$' | sort | uniq -c | tr '\n' ' ')"

# Bodies, arguments, methods.
head -c 8192 /dev/zero | tr '\0' a >"$TMP/big"
expect "a body over 4096 bytes is 413" http_is 413 "more than 4096" -X POST --data-binary @"$TMP/big" \
	"$U/capture?pid=1&steps=2"
for q in "pid=%2B1&steps=2" "pid=%201&steps=2" "pid=1%00&steps=2" "pid=01&steps=2" "pid=-1&steps=2" \
	"pid=1&steps=%2B2" "pid=1&steps=%202" "pid=1&steps=2%00" "pid=1&steps=02" "pid=1&steps=0x2"; do
	expect "capture?$q is 400" http_is 400 "plain decimal digits" -X POST "$U/capture?$q"
done
expect "capture?pid=1&steps=2 passes the checks (404: not sampled)" http_is 404 "not a CUDA process" \
	-X POST "$U/capture?pid=1&steps=2"
for m in PUT TRACE POST DELETE; do
	expect "$m /healthz is 405 with Allow: GET, HEAD" http_is 405 "Allow: GET, HEAD" -X $m "$U/healthz"
done
expect "PUT /metrics is 405 with Allow: GET, HEAD" http_is 405 "Allow: GET, HEAD" -X PUT "$U/metrics"
expect "GET /capture is 405 with Allow: POST" http_is 405 "Allow: POST" "$U/capture?pid=1&steps=2"
expect "the refusals are counted" python3 -c "
import re, sys, urllib.request
m = urllib.request.urlopen('$U/metrics').read().decode()
v = re.search(r'^cuprobe_http_errors_total (\d+)', m, re.M)
sys.exit(0 if v and int(v.group(1)) >= 20 else 'cuprobe_http_errors_total: %s' % (v and v.group(1)))"
kill -TERM $DPID
wait $DPID
expect "SIGTERM: the daemon exits 0" test $? -eq 0
DPID=

# The daemon built with ThreadSanitizer under the same flood: the accept thread,
# libmicrohttpd's and the daemon's share the slots and the queue under one mutex.
TSAN=$ROOT/.output/tsan/cuprobe
PORT=$(free_port)
U=http://127.0.0.1:$PORT
TSAN_OPTIONS=halt_on_error=0:exitcode=66 "$TSAN" daemon -c "$TMP/d.conf" -l "127.0.0.1:$PORT" \
	-o "$TMP/tsan-out" >"$TMP/tsan.log" 2>&1 &
DPID=$!
if until_true 120 grep -q "listening on" "$TMP/tsan.log"; then
	rm -f "$TMP"/*.ready "$TMP"/*.json
	hold tflood a=127.0.0.2:16 b=127.0.0.3:16:line c=127.0.0.4:16:trickle d=127.0.0.5:20:line
	sleep 1.1
	codes=$(for p in healthz metrics healthz; do curl -s -m 5 -o /dev/null -w '%{http_code} ' "$U/$p"; done)
	codes+=$(curl -s -m 5 -o /dev/null -w '%{http_code}' -X POST "$U/capture?pid=1&steps=2")
	wait_for "$TMP/tflood.json" 20
	kill -TERM $DPID
	wait $DPID
	rc=$?
	DPID=
	if [ $rc -ne 0 ] || [ "$codes" != "200 200 200 404" ] || grep -q "ThreadSanitizer" "$TMP/tsan.log"; then
		not_ok "ThreadSanitizer: the HTTP server under a flood, evictions, 503s, deadlines, SIGTERM" \
			"rc $rc, codes $codes: $(grep -m3 -A3 'WARNING: ThreadSanitizer' "$TMP/tsan.log")"
	else
		ok "ThreadSanitizer: the HTTP server under a flood, evictions, 503s, deadlines, SIGTERM: clean"
	fi
else
	not_ok "ThreadSanitizer: the daemon starts" "$(grep -v libbpf "$TMP/tsan.log" | tail -3)"
fi

# cuprobe capture against a server that is not the daemon.
fake() { # BODY: a fake daemon answering 200 with BODY; its port in FPORT
	[ -n "$FAKE" ] && kill "$FAKE" 2>/dev/null && wait "$FAKE" 2>/dev/null
	rm -f "$TMP/fake.port"
	$HC serve "$TMP/fake.port" "$1" &
	FAKE=$!
	wait_for "$TMP/fake.port" 10
	FPORT=$(cat "$TMP/fake.port")
}
fake '<html>proxy login</html>'
expect_fail "capture: an answer that is not JSON exits non-zero and says so" "answered 200, but not with a JSON object" \
	"$CUPROBE" capture --daemon "127.0.0.1:$FPORT" --pid 1 --steps 2
fake '{"pid": 1, "dir": "/x"}'
expect_fail "capture: JSON without the trace exits non-zero and says so" 'lacks "trace"' \
	"$CUPROBE" capture --daemon "127.0.0.1:$FPORT" --pid 1 --steps 2
GOOD='{"pid": 1, "comm": "x", "dir": "/x", "trace": "/x/t.json", "mode": "bpf", "result": "complete"}'
fake "$GOOD"
expect "capture: the daemon's JSON is printed as it came, exit 0" \
	test "$("$CUPROBE" capture --daemon "127.0.0.1:$FPORT" --pid 1 --steps 2)" = "$GOOD"
kill "$FAKE" 2>/dev/null
wait "$FAKE" 2>/dev/null
FAKE=
done_testing
