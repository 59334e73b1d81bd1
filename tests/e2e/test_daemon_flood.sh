#!/usr/bin/env bash
# A login flood against cuprobe daemon's basic auth, over TLS, with a bcrypt
# hash of cost 12 (~200 ms a check here): a right password costs one bcrypt
# and is then remembered; wrong ones from one address are 401 four times,
# then 429 with a growing Retry-After; and while 48 clients guess from 127.0.0.2-49 for
# 10 s, /healthz and an authenticated /metrics from 127.0.0.1 are answered
# within a second, every time, and no guesser gets more than the delays let it.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

DPID=
cleanup() {
	[ -n "$DPID" ] && kill -KILL "$DPID" 2>/dev/null
	for j in $(jobs -p); do kill "$j" 2>/dev/null; done
	cgroup_kill
	rm -rf "$TMP"
}
trap cleanup EXIT
if ! cgroup_setup cuprobe-flood-test; then
	not_ok "flood: a cgroup of the test's own" "no writable cgroup2 mount in /proc/mounts"
	done_testing
	exit 0
fi
HC="python3 $ROOT/tests/e2e/check_http.py"
# Flood: seconds, and requests a guesser makes at most.
FLOOD_S=10
FLOOD_MAX=400
# What /healthz and a remembered /metrics may take under the flood, in seconds.
ANSWER_S=1

# A self-signed certificate for 127.0.0.1, and a bcrypt hash of cost 12.
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
	-subj "/CN=127.0.0.1" -addext "subjectAltName=IP:127.0.0.1" \
	-keyout "$TMP/server.key" -out "$TMP/server.crt" 2>/dev/null
HASH=$(mkpasswd -m bcrypt -R 12 'correct horse')
expect "a certificate and a bcrypt hash of cost 12" \
	bash -c "[ -s '$TMP/server.crt' ] && grep -qE '^\\\$2[aby]\\\$12\\\$.{53}$' <<<'$HASH'"
cat >"$TMP/w.yml" <<EOF
tls_server_config: { cert_file: $TMP/server.crt, key_file: $TMP/server.key }
basic_auth_users:
  alice: '$HASH'
EOF
cat >"$TMP/d.conf" <<CONF
probability = 0
interval = 60
cgroup = /$CGNAME
CONF
PORT=$(free_port)
"$CUPROBE" daemon -c "$TMP/d.conf" -l "127.0.0.1:$PORT" --web-config "$TMP/w.yml" \
	-o "$TMP/out" -v >"$TMP/d.log" 2>&1 &
DPID=$!
if ! until_true 60 grep -q "listening on https://127.0.0.1:$PORT" "$TMP/d.log"; then
	not_ok "the daemon starts with TLS and basic auth" "$(grep -v libbpf "$TMP/d.log" | tail -4)"
	done_testing
	exit 0
fi
U=https://127.0.0.1:$PORT
CC=(--cacert "$TMP/server.crt")

# ask PATH [CURL-ARGS...]: "CODE SECONDS" of one request from 127.0.0.1.
ask() {
	local p=$1
	shift
	curl -s -m 5 "${CC[@]}" -o /dev/null -w '%{http_code} %{time_total}\n' "$@" "$U/$p"
}

# ---- a right password costs one bcrypt ----
first=$(ask metrics -u 'alice:correct horse')
later=$(for _ in 1 2 3; do ask metrics -u 'alice:correct horse'; done)
expect "the right password is 200, first checked with bcrypt (took $(cut -d' ' -f2 <<<"$first") s)" \
	test "${first%% *}" = 200
expect "... then remembered: three more are 200 without a bcrypt each ($(cut -d' ' -f2 <<<"$later" | tr '\n' ' ')s)" \
	awk '$1 != 200 || $2 >= 0.15 { bad = 1 } END { exit bad || NR != 3 }' <<<"$later"

# ---- wrong passwords from one address: 401, then 429 with a growing Retry-After ----
# wrong N: N wrong passwords in a row from 127.0.0.50, one "CODE RETRY-AFTER" a line.
wrong() {
	for i in $(seq "$1"); do
		curl -s -m 5 "${CC[@]}" --interface 127.0.0.50 -u "alice:wrong $i" -D "$TMP/h" \
			-o /dev/null -w '%{http_code} ' "$U/metrics"
		awk 'tolower($1) == "retry-after:" { r = $2 + 0 } END { print r + 0 }' "$TMP/h"
	done
}
got=$(wrong 4)
expect "four wrong passwords are 401 each (three free, the fourth delays): $(tr '\n' ' ' <<<"$got")" \
	test "$(echo $got)" = "401 0 401 0 401 0 401 0"
got=$(wrong 1)
expect "the next at once is 429 with Retry-After: 1: $got" test "$got" = "429 1"
sleep 1.2
got=$(wrong 2)
expect "after it, one more check (401), then 429 with Retry-After: 2: $(tr '\n' ' ' <<<"$got")" \
	test "$(echo $got)" = "401 0 429 2"
got=$(ask metrics -u 'alice:correct horse' --interface 127.0.0.50)
expect "a delayed address is 429 for the right password too (no oracle in the cache): $got" \
	test "${got%% *}" = 429
expect "another address is not delayed: the right password is 200" \
	test "$(ask metrics -u 'alice:correct horse' | cut -d' ' -f1)" = 200

# ---- 48 clients guess for FLOOD_S seconds ----
srcs=()
for i in $(seq 2 49); do srcs+=("127.0.0.$i"); done
$HC guess "$PORT" "$TMP/server.crt" alice "$FLOOD_S" "$FLOOD_MAX" "$TMP/flood.json" "${srcs[@]}" \
	2>"$TMP/flood.err" &
FLOOD=$!
sleep 1
: >"$TMP/probes"
end=$((SECONDS + FLOOD_S - 2))
while [ $SECONDS -lt $end ]; do
	echo "healthz $(ask healthz)" >>"$TMP/probes"
	echo "metrics $(ask metrics -u 'alice:correct horse')" >>"$TMP/probes"
	sleep 0.3
done
wait $FLOOD
probes_ok() {
	awk -v lim="$ANSWER_S" '{ n++; if ($2 != 200 || $3 > lim) bad++; if ($3 > max) max = $3 }
		END { printf "%d probes, slowest %.3f s, %d late or failed\n", n, max, bad
		      exit bad || n < 10 }' "$TMP/probes"
}
expect "under 48 guessing clients, /healthz and an authenticated /metrics answer 200 within $ANSWER_S s ($(probes_ok))" \
	probes_ok
# flood_ok: no guess was let in; each address got 7 checks at most (the 8th needs
# 0+0+0+1+2+4+8 s of delays, more than the flood's 10); every other request was
# answered at once, 429 (delayed) or 503 (the checks are full), with Retry-After.
flood_ok() {
	python3 -c "
import json, sys
r = json.load(open('$TMP/flood.json'))
c = lambda code: sum(a['codes'].get(code, 0) for a in r.values())
print('%d addresses: %d requests, %d 401, %d 429, %d 503, largest Retry-After %d s' % (len(r),
      sum(sum(a['codes'].values()) for a in r.values()), c('401'), c('429'), c('503'),
      max(a['retry_after'] for a in r.values())))
bad = [s for s, a in r.items() if a['codes'].get('401', 0) > 7 or set(a['codes']) - {'401', '429', '503'}]
if len(r) != 48 or bad:
    sys.exit('let in, unanswered or checked past the delays: %s' % {s: r[s] for s in bad})"
}
expect "the guessers: none let in, 7 checks an address at most, the rest 429 or 503 ($(flood_ok 2>&1 | head -1))" \
	flood_ok

kill -TERM "$DPID"
wait "$DPID"
rc=$?
DPID=
expect "SIGTERM: the daemon exits 0" test $rc = 0

# ---- the same with ThreadSanitizer: checks, cache, delays, and SIGTERM while checks wait ----
TSAN=$ROOT/.output/tsan/cuprobe
PORT=$(free_port)
U=https://127.0.0.1:$PORT
TSAN_OPTIONS=halt_on_error=0:exitcode=66 "$TSAN" daemon -c "$TMP/d.conf" -l "127.0.0.1:$PORT" \
	--web-config "$TMP/w.yml" -o "$TMP/tsan-out" >"$TMP/tsan.log" 2>&1 &
DPID=$!
if until_true 120 grep -q "listening on" "$TMP/tsan.log"; then
	codes=$(for _ in 1 2; do ask metrics -u 'alice:correct horse' | cut -d' ' -f1; done)
	$HC guess "$PORT" "$TMP/server.crt" alice 4 100 "$TMP/tflood.json" "${srcs[@]:0:8}" \
		2>/dev/null &
	FLOOD=$!
	sleep 3
	codes+=" $(ask healthz | cut -d' ' -f1)"
	kill -TERM $DPID
	wait $DPID
	rc=$?
	DPID=
	wait $FLOOD
	if [ $rc -ne 0 ] || [ "$(echo $codes)" != "200 200 200" ] || grep -q "ThreadSanitizer" "$TMP/tsan.log"; then
		not_ok "ThreadSanitizer: password checks under a flood, then SIGTERM" \
			"rc $rc, codes $codes: $(grep -m3 -A3 'WARNING: ThreadSanitizer' "$TMP/tsan.log")"
	else
		ok "ThreadSanitizer: password checks under a flood, then SIGTERM: clean"
	fi
else
	not_ok "ThreadSanitizer: the daemon starts" "$(grep -v libbpf "$TMP/tsan.log" | tail -3)"
fi
done_testing
