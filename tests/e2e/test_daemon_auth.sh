#!/usr/bin/env bash
# cuprobe daemon's --web-config, with real parts only: a CA, a server
# certificate, a client certificate and a rogue one (signed by another CA)
# made here with openssl; a bcrypt hash made with mkpasswd. A non-loopback
# listen without a web-config (or with one that authenticates nobody) is
# refused at start; unauthenticated, wrong-password and wrong-certificate
# captures are refused (401/403) and start nothing; the right password and
# the right client certificate get real captures of a workload; /metrics is
# open or closed as the config says; Debian's Prometheus scrapes over TLS with
# basic auth (up == 1) and promtool checks the TLS-fetched exposition; a
# capture past --max-captures is 429 with Retry-After; oversized requests are
# refused.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

DA= DB= PROMPID=
cleanup() {
	[ -n "$DA" ] && kill -KILL "$DA" 2>/dev/null
	[ -n "$DB" ] && kill -KILL "$DB" 2>/dev/null
	[ -n "$PROMPID" ] && kill "$PROMPID" 2>/dev/null && wait "$PROMPID" 2>/dev/null
	for j in $(jobs -p); do kill "$j" 2>/dev/null; done
	cgroup_kill
	rm -rf "$TMP"
}
trap cleanup EXIT
if ! cgroup_setup cuprobe-auth-test; then
	not_ok "auth: a cgroup of the test's own" "no writable cgroup2 mount in /proc/mounts"
	done_testing
	exit 0
fi

# ---- the certificates and the password ----
K=$TMP/pki
mkdir -p "$K"
ca() { openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
	-subj "/CN=$1" -keyout "$K/$1.key" -out "$K/$1.crt" 2>/dev/null; }
# leaf NAME CA EXTENSIONS: a key and a certificate signed by CA.
leaf() {
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj "/CN=$1" \
		-keyout "$K/$1.key" -out "$K/$1.csr" 2>/dev/null &&
	printf '%b\n' "$3" >"$K/$1.ext" &&
	openssl x509 -req -in "$K/$1.csr" -CA "$K/$2.crt" -CAkey "$K/$2.key" -CAcreateserial \
		-days 2 -extfile "$K/$1.ext" -out "$K/$1.crt" 2>/dev/null
}
ca ca && ca rogue-ca &&
	leaf server ca "subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth" &&
	leaf client ca "extendedKeyUsage=clientAuth" &&
	leaf rogue rogue-ca "extendedKeyUsage=clientAuth"
expect "openssl: a CA, a server, a client and a rogue certificate" \
	openssl verify -CAfile "$K/ca.crt" "$K/server.crt" "$K/client.crt"
HASH=$(mkpasswd -m bcrypt -R 5 'correct horse')
echo 'correct horse' >"$TMP/pw"
echo 'wrong horse' >"$TMP/badpw"
chmod 600 "$TMP/pw" "$TMP/badpw" # secrets, as ssh's keys: readable by their owner only
expect "mkpasswd: a bcrypt hash" grep -qE '^\$2[aby]\$05\$.{53}$' <<<"$HASH"

# ---- refused at start ----
expect_fail "a non-loopback --listen without --web-config is refused" \
	"0.0.0.0:9464 is not a loopback address.*--web-config" \
	"$CUPROBE" daemon -l 0.0.0.0:9464 -o "$TMP/never"
expect_fail "... and [::] too" "not a loopback address.*--web-config" \
	"$CUPROBE" daemon -l "[::]:9464" -o "$TMP/never"
cat >"$TMP/tls-only.yml" <<EOF
tls_server_config: { cert_file: $K/server.crt, key_file: $K/server.key }
EOF
expect_fail "a non-loopback --listen with a web-config that authenticates nobody is refused" \
	"authenticates nobody \(TLS alone" \
	"$CUPROBE" daemon -l 0.0.0.0:9464 --web-config "$TMP/tls-only.yml" -o "$TMP/never"
printf 'tls_server_config:\n  cert_file: x\n  client_auth: y\n' >"$TMP/typo.yml"
expect_fail "a web-config's unknown key is refused, naming file, line and key" \
	"typo.yml:3: tls_server_config: unknown key 'client_auth'" \
	"$CUPROBE" daemon --web-config "$TMP/typo.yml" -o "$TMP/never"
expect "nothing was made by the refused starts" test ! -e "$TMP/never"

# ---- two workloads and two daemons ----
# D: fast steps (50 ms). S: slow ones (1.5 s), for a capture that waits.
"${in_cg[@]}" "$W/basic" --steps --threads 1 --sleep-ms 50 --iters 100000 2>/dev/null &
D=$!
"${in_cg[@]}" "$W/basic" --steps --threads 1 --sleep-ms 1500 --iters 1000 2>/dev/null &
S=$!
cat >"$TMP/d.conf" <<CONF
probability = 0
interval = 60
window-steps = 2
warmup = 1
cgroup = /$CGNAME
step = basic=cuprobe_step
max-captures = 1
CONF
# A: TLS and basic auth, on every address; only /healthz is open.
cat >"$TMP/a.yml" <<EOF
tls_server_config:
  cert_file: pki/server.crt
  key_file: pki/server.key
  min_version: TLS12
basic_auth_users:
  alice: '$HASH'
EOF
# B: TLS and client certificates, on loopback; /metrics and /healthz open.
cat >"$TMP/b.yml" <<EOF
tls_server_config:
  cert_file: $K/server.crt
  key_file: $K/server.key
  client_auth_type: RequireAndVerifyClientCert
  client_ca_file: $K/ca.crt
cuprobe:
  open_paths: [ /metrics, /healthz ]
EOF
PA=$(free_port) PB=$(free_port)
"$CUPROBE" daemon -c "$TMP/d.conf" -l "0.0.0.0:$PA" --web-config "$TMP/a.yml" -o "$TMP/outa" -v \
	>"$TMP/a.log" 2>&1 &
DA=$!
"$CUPROBE" daemon -c "$TMP/d.conf" -l "127.0.0.1:$PB" --web-config "$TMP/b.yml" -o "$TMP/outb" -v \
	>"$TMP/b.log" 2>&1 &
DB=$!
if ! until_true 60 grep -q "listening on https://0.0.0.0:$PA" "$TMP/a.log" ||
   ! until_true 60 grep -q "listening on https://127.0.0.1:$PB" "$TMP/b.log"; then
	not_ok "the daemons start with their web-configs" "$(grep -v libbpf "$TMP/a.log" "$TMP/b.log" | tail -6)"
	done_testing
	exit 0
fi
ok "a daemon with TLS and basic auth listens on 0.0.0.0; one with client certificates on loopback"
until_true 60 grep -q "sampling pid $D " "$TMP/a.log"
until_true 60 grep -q "sampling pid $S " "$TMP/a.log"
until_true 60 grep -q "sampling pid $D " "$TMP/b.log"
A=https://127.0.0.1:$PA B=https://127.0.0.1:$PB
CC=(--cacert "$K/ca.crt")

# http_is CODE PATTERN CURL-ARGS...: the status, and the body or headers match PATTERN.
http_is() {
	local want=$1 pat=$2 got
	shift 2
	got=$(curl -s -m 10 -D "$TMP/hdrs" -o "$TMP/body" -w '%{http_code}' "$@")
	[ "$got" = "$want" ] || { echo "HTTP $got, not $want: $(cat "$TMP/body")"; return 1; }
	grep -qE -- "$pat" "$TMP/body" "$TMP/hdrs" || { echo "no /$pat/ in: $(cat "$TMP/hdrs" "$TMP/body")"; return 1; }
}
runs() { ls -d "$1"/run_* "$1"/captures/run_* 2>/dev/null | wc -l; }

# ---- refused requests start nothing ----
expect "A: /healthz is open" http_is 200 "GET /metrics" "${CC[@]}" "$A/healthz"
expect "A: /metrics without a password is 401 with WWW-Authenticate" \
	http_is 401 'WWW-Authenticate: Basic realm="cuprobe"' "${CC[@]}" "$A/metrics"
expect "A: plain HTTP to the TLS port gets no answer" \
	bash -c "! curl -sf -m 5 http://127.0.0.1:$PA/healthz"
expect "A: POST /capture without a password is 401" \
	http_is 401 "give a user and password" "${CC[@]}" -X POST "$A/capture?pid=$D&steps=2"
expect "A: POST /capture with a wrong password is 401" \
	http_is 401 "wrong user or password" "${CC[@]}" -u 'alice:wrong horse' -X POST \
	"$A/capture?pid=$D&steps=2"
expect "A: an unknown user is 401" \
	http_is 401 "wrong user or password" "${CC[@]}" -u 'mallory:correct horse' -X POST \
	"$A/capture?pid=$D&steps=2"
expect_fail "A: cuprobe capture with a wrong --password-file is refused" "wrong user or password" \
	"$CUPROBE" capture --daemon "$A" "${CC[@]}" --user alice --password-file "$TMP/badpw" \
	--pid $D --steps 2
expect_fail "A: cuprobe capture without --cacert does not trust the daemon" \
	"certificate does not verify" "$CUPROBE" capture --daemon "$A" --user alice \
	--password-file "$TMP/pw" --pid $D --steps 2
expect "B: /metrics is open (open_paths)" http_is 200 "cuprobe_targets" "${CC[@]}" "$B/metrics"
expect "B: POST /capture without a client certificate is 403" \
	http_is 403 "give a client certificate" "${CC[@]}" -X POST "$B/capture?pid=$D&steps=2"
expect "B: POST /capture with a certificate of another CA is 403" \
	http_is 403 "does not verify" "${CC[@]}" --cert "$K/rogue.crt" --key "$K/rogue.key" \
	-X POST "$B/capture?pid=$D&steps=2"
expect_fail "B: cuprobe capture with the rogue certificate is refused" "does not verify" \
	"$CUPROBE" capture --daemon "$B" "${CC[@]}" --cert "$K/rogue.crt" --key "$K/rogue.key" \
	--pid $D --steps 2
expect "the refused captures started nothing: no window folder, no window in the logs" \
	bash -c "[ $(runs "$TMP/outa") -eq 0 ] && [ $(runs "$TMP/outb") -eq 0 ] &&
		! grep -q ': window ' '$TMP/a.log' '$TMP/b.log'"

# ---- the right client gets a real capture ----
# check_cap FILE: the answer's trace holds 2 steps x 9 launches of D.
check_cap() {
	python3 -c "
import json, sys
a = json.load(open('$1'))
c = json.load(open(a['trace']))['cuprobe']
ok = a['pid'] == $D and a['launches'] == c['launches'] and c['steps'][1] - c['steps'][0] == 1 \
	and c['launches'] + c['drops'] == 18 and not c['partial']
sys.exit(0 if ok else 'answer %s, trace %s' % (a, c))"
}
if "$CUPROBE" capture --daemon "$A" "${CC[@]}" --user alice --password-file "$TMP/pw" \
	--pid $D --steps 2 >"$TMP/capa.json" 2>"$TMP/capa.err"; then
	expect "A: cuprobe capture --user --password-file: a real capture, 2 steps x 9 launches" \
		check_cap "$TMP/capa.json"
else
	not_ok "A: cuprobe capture --user --password-file" "$(cat "$TMP/capa.err")"
fi
if "$CUPROBE" capture --daemon "$B" "${CC[@]}" --cert "$K/client.crt" --key "$K/client.key" \
	--pid $D --steps 2 >"$TMP/capb.json" 2>"$TMP/capb.err"; then
	expect "B: cuprobe capture --cacert --cert --key: a real capture, 2 steps x 9 launches" \
		check_cap "$TMP/capb.json"
else
	not_ok "B: cuprobe capture --cacert --cert --key" "$(cat "$TMP/capb.err")"
fi
expect "A: /metrics with the password is 200" \
	http_is 200 "cuprobe_targets" "${CC[@]}" -u 'alice:correct horse' "$A/metrics"

# ---- Prometheus over TLS with basic auth; promtool on the TLS-fetched exposition ----
PP=$(free_port)
cat >"$TMP/prom.yml" <<PROM
global: { scrape_interval: 1s, evaluation_interval: 1s }
scrape_configs:
  - job_name: cuprobe
    scheme: https
    tls_config: { ca_file: $K/ca.crt }
    basic_auth: { username: alice, password_file: $TMP/pw }
    static_configs: [ { targets: [ '127.0.0.1:$PA' ] } ]
PROM
prometheus --config.file="$TMP/prom.yml" --storage.tsdb.path="$TMP/prom" \
	--web.listen-address="127.0.0.1:$PP" >"$TMP/prom.log" 2>&1 &
PROMPID=$!
prom_up() {
	curl -s "http://127.0.0.1:$PP/api/v1/query?query=up%7Bjob%3D%22cuprobe%22%7D" | python3 -c "
import json, sys
r = json.load(sys.stdin)['data']['result']
sys.exit(0 if r and r[0]['value'][1] == '1' else 1)"
}
expect "prometheus scrapes the daemon over TLS with basic auth: up == 1" until_true 60 prom_up
curl -s "${CC[@]}" -u 'alice:correct horse' "$A/metrics" >"$TMP/metrics.txt"
expect "promtool check metrics on the exposition fetched over TLS" \
	bash -c "grep -q cuprobe_targets '$TMP/metrics.txt' && promtool check metrics <'$TMP/metrics.txt'"
kill "$PROMPID" && wait "$PROMPID" 2>/dev/null
PROMPID=

# ---- bounded work ----
# A takes one capture at once: S's (1 + 2 steps of 1.5 s) holds it; D's is 429 meanwhile.
# held: a capture of pid 1 (not sampled: 404 at once, holding no slot after) is 429 only
# while another capture holds the slot. S's capture tries again if it met such a probe.
AU=(-u 'alice:correct horse')
held() { test "$(curl -s -m 5 "${CC[@]}" "${AU[@]}" -o /dev/null -w '%{http_code}' -X POST \
	"$A/capture?pid=1&steps=1")" = 429; }
slow() {
	local code
	for _ in $(seq 20); do
		code=$(curl -s -m 30 "${CC[@]}" "${AU[@]}" -X POST "$A/capture?pid=$S&steps=2" \
			-o "$TMP/slow.json" -w '%{http_code}')
		[ "$code" = 429 ] || break
		sleep 0.1
	done
	echo "$code" >"$TMP/slow.code"
}
slow &
SLOW=$!
until_true 10 held
expect "A: a capture past --max-captures 1 is 429 with Retry-After" \
	http_is 429 "Retry-After: 5" "${CC[@]}" -u 'alice:correct horse' -X POST \
	"$A/capture?pid=$D&steps=2"
expect "... its message names --max-captures" grep -q -- "--max-captures" "$TMP/body"
wait $SLOW
expect "A: the capture that held the slot is answered 200" grep -qx 200 "$TMP/slow.code"
hs=()
for i in $(seq 40); do hs+=(-H "X-Pad-$i: v"); done
expect "40 headers are 431" http_is 431 "more than 32" "${CC[@]}" "${hs[@]}" "$A/healthz"
expect "a 20 KB query is refused (414)" http_is 414 "" "${CC[@]}" \
	"$A/metrics?x=$(head -c 20000 /dev/zero | tr '\0' a)"
head -c 8000 /dev/zero >"$TMP/big"
expect "an 8000-byte body is 413" http_is 413 "more than 4096" "${CC[@]}" \
	-u 'alice:correct horse' -X POST --data-binary @"$TMP/big" "$A/capture?pid=$D&steps=2"
expect "an oversized request from an unauthenticated client is 401 first" \
	http_is 401 "" "${CC[@]}" -X POST --data-binary @"$TMP/big" "$A/capture?pid=$D&steps=2"

kill -TERM "$DA" "$DB"
wait "$DA"; ra=$?
wait "$DB"; rb=$?
DA= DB=
expect "SIGTERM: both daemons exit 0" test "$ra$rb" = 00
done_testing
