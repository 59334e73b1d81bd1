#!/usr/bin/env bash
# cuprobe capture against fake daemons and a fake Prometheus on loopback
# (fake_daemon.py), no root, no GPU: where its credentials may go (never over
# plain HTTP to an address it did not name so, whatever an instance label
# says; without a scheme, https when --cacert, --cert or --user is given);
# its bounds (an answer held to 64 MiB, a trace to 1 GiB, everything to
# --timeout, a peer that drips included, over TLS too), nothing half-written;
# and what it says of a redirect and of an answer too large.
source "$(dirname "$0")/lib.sh"

FAKES=()
cleanup() {
	for p in "${FAKES[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
	rm -rf "$TMP"
}
trap cleanup EXIT

# fake NAME ADDR MODE [ARG]: a fake daemon on ADDR, its port in $TMP/NAME.port, what it
# read in $TMP/NAME.log.
fake() {
	: >"$TMP/$1.log"
	python3 "$ROOT/tests/e2e/fake_daemon.py" "$2" "$TMP/$1.port" "$TMP/$1.log" "$3" "${4:-}" &
	FAKES+=($!)
	wait_for "$TMP/$1.port" 10
}
port() { cat "$TMP/$1.port"; }
# reached_without_auth NAME: the fake was reached, and no request carried credentials.
reached_without_auth() { [ -s "$TMP/$1.log" ] && ! grep -qi "authorization" "$TMP/$1.log"; }
# bounded SECONDS COMMAND...: COMMAND under a 2 GB address space and SECONDS at most
# (today's code, unbounded, must not take the machine down); its output in $OUT, its
# exit status in $RC, its time in $TOOK.
bounded() {
	local s=$1 t0
	shift
	t0=$(date +%s%N)
	OUT=$( (ulimit -v 2000000; timeout "$s" "$@") 2>&1)
	RC=$?
	TOOK=$(( ($(date +%s%N) - t0) / 1000000 ))
}

printf 'secretpw\n' >"$TMP/pass"
chmod 600 "$TMP/pass"
CA=/etc/ssl/certs/ca-certificates.crt
AUTH=(--user prom --password-file "$TMP/pass")

# ---- credentials only over TLS ----
fake i5 127.0.0.5 json '{"targets": []}'
fake i6 127.0.0.6 json '{"targets": []}'
fake prom 127.0.0.1 json "{\"status\": \"success\", \"data\": {\"resultType\": \"vector\",
	\"result\": [{\"metric\": {\"instance\": \"http://127.0.0.5:$(port i5)\"}, \"value\": [0, \"1\"]},
	{\"metric\": {\"instance\": \"127.0.0.6:$(port i6)\"}, \"value\": [0, \"1\"]}]}}"
P=http://127.0.0.1:$(port prom)
for with in "--cacert $CA" ""; do
	: >"$TMP/i5.log"
	: >"$TMP/i6.log"
	# shellcheck disable=SC2086
	bounded 30 "$CUPROBE" capture --job j --steps 1 -o "$TMP/out" --prometheus "$P" $with \
		"${AUTH[@]}" --timeout 10
	expect "--prometheus, --user ${with:+--cacert }: an instance labelled http:// gets TLS, never the password in clear" \
		reached_without_auth i5
	expect "--prometheus, --user ${with:+--cacert }: an instance without a scheme gets TLS, never the password" \
		reached_without_auth i6
	expect "... and each is said by its address, exit 1" \
		test "$RC" = 1 -a -n "$(grep "daemon 127.0.0.5:$(port i5): .*TLS" <<<"$OUT")"
done
expect "the Prometheus server itself never gets the password" reached_without_auth prom

fake plain 127.0.0.1 json '{"targets": []}'
PL=127.0.0.1:$(port plain)
: >"$TMP/plain.log"
bounded 30 "$CUPROBE" capture --job j --steps 1 -o "$TMP/out" --daemon "$PL" --cacert "$CA" \
	--timeout 10
expect "--job --daemon ADDR --cacert: no scheme is https (no plain GET /targets), said as TLS" \
	test "$RC" = 1 -a -s "$TMP/plain.log" -a -z "$(grep "GET /targets" "$TMP/plain.log")" \
	-a -n "$(grep "TLS handshake" <<<"$OUT")"
: >"$TMP/plain.log"
bounded 30 "$CUPROBE" capture --daemon "$PL" --pid 4242 --steps 1 "${AUTH[@]}" --timeout 10
expect "--pid --daemon ADDR --user: no scheme is https, the password never in clear" \
	test "$RC" = 1 -a -n "$(grep "TLS handshake" <<<"$OUT")"
expect "... the fake was reached without it" reached_without_auth plain
: >"$TMP/plain.log"
bounded 30 "$CUPROBE" capture --daemon "http://$PL" --pid 4242 --steps 1 "${AUTH[@]}" --timeout 10
expect "--pid --daemon http://127.0.0.1:PORT --user: loopback named plain takes the password" \
	grep -qi "authorization: basic cHJvbTpzZWNyZXRwdw==" "$TMP/plain.log"
# 0.0.0.0 is no loopback address, yet would reach only this host were the rule to fail.
expect_fail "--daemon http://NOT-LOOPBACK --user: refused before anything is sent" \
	"password would cross the network in clear: give https://0.0.0.0:9464" \
	"$CUPROBE" capture --daemon http://0.0.0.0:9464 --pid 4242 --steps 1 "${AUTH[@]}"
expect_fail "--job --daemon http://NOT-LOOPBACK --user: refused too (one rule)" \
	"password would cross the network in clear" \
	"$CUPROBE" capture --job j -o "$TMP/out" --daemon http://0.0.0.0:9464 --steps 1 "${AUTH[@]}"
expect_fail "--daemon http:// with --cacert: refused, naming https://" \
	"--cacert and --cert are for TLS, and http:// is plain: give https://$PL" \
	"$CUPROBE" capture --daemon "http://$PL" --pid 4242 --steps 1 --cacert "$CA"

# ---- bounded by --timeout, and in size ----
fake tlsdrip 127.0.0.1 tlsdrip
bounded 20 "$CUPROBE" capture --job j --steps 1 -o "$TMP/out" \
	--daemon "https://127.0.0.1:$(port tlsdrip)" --timeout 2
expect "--job --timeout 2, a TLS handshake that drips a byte a second: given up within 5 s (${TOOK} ms)" \
	test "$RC" = 1 -a "$TOOK" -lt 5000 -a -n "$(grep "no TLS handshake within --timeout" <<<"$OUT")"
fake endless 127.0.0.1 endless
bounded 60 /usr/bin/time -f "rss %M" "$CUPROBE" capture --daemon "127.0.0.1:$(port endless)" \
	--pid 4242 --steps 1 --timeout 30
rss=$(sed -n 's/^rss //p' <<<"$OUT")
expect "--pid, an answer without end: refused past 64 MiB, said, exit 1" \
	test "$RC" = 1 -a -n "$(grep "over 64 MiB" <<<"$OUT")"
expect "... its memory under 256 MiB (${rss:-?} KiB)" test "${rss:-999999999}" -lt 262144
fake drip 127.0.0.1 drip
bounded 20 "$CUPROBE" capture --daemon "127.0.0.1:$(port drip)" --pid 4242 --steps 1 --timeout 2
expect "--pid --timeout 2, a daemon that drips a byte a second: given up within 5 s (${TOOK} ms)" \
	test "$RC" = 1 -a "$TOOK" -lt 5000 -a -n "$(grep "no answer within --timeout" <<<"$OUT")"
bounded 20 "$CUPROBE" capture --daemon "https://127.0.0.1:$(port tlsdrip)" --pid 4242 --steps 1 \
	--timeout 2
expect "--pid --timeout 2, a TLS handshake that drips: given up within 5 s (${TOOK} ms)" \
	test "$RC" = 1 -a "$TOOK" -lt 5000 -a -n "$(grep "within --timeout" <<<"$OUT")"

# ---- GET /trace bounded, nothing half-written ----
fake huge 127.0.0.1 job huge
bounded 60 "$CUPROBE" capture --job j --steps 1 -o "$TMP/tr" --daemon "127.0.0.1:$(port huge)" \
	--timeout 30
expect "--job, a trace of Content-Length 2 GiB: refused at once (${TOOK} ms), said, exit 1" \
	test "$RC" = 1 -a "$TOOK" -lt 10000 -a -n "$(grep "trace is over 1 GiB" <<<"$OUT")"
expect "... nothing written in the run folder but the summary beside it" \
	test -z "$(ls -A "$TMP/tr/j/run_0")" -a -s "$TMP/tr/j/run_0.capture.json"
fake slow 127.0.0.1 job slow
bounded 30 "$CUPROBE" capture --job j --steps 1 -o "$TMP/tr" --daemon "127.0.0.1:$(port slow)" \
	--timeout 3
expect "--job --timeout 3, a trace without end: stopped at --timeout, exit 1" \
	test "$RC" = 1 -a "$TOOK" -lt 8000 -a -n "$(grep "rank 0: NOT written" <<<"$OUT")"
expect "... and nothing half-written" test -z "$(ls -A "$TMP/tr/j/run_1")"

# ---- what is said of a redirect and of an answer too large ----
bounded 30 "$CUPROBE" capture --job j --steps 1 -o "$TMP/out" \
	--daemon "127.0.0.1:$(port endless)" --timeout 20
expect "--job, GET /targets over 64 MiB: said so, not \"samples no rank\"" \
	test "$RC" = 1 -a -n "$(grep "over 64 MiB" <<<"$OUT")" \
	-a -n "$(grep "no daemon answered GET /targets" <<<"$OUT")" \
	-a -z "$(grep "samples a rank" <<<"$OUT")"
fake redir 127.0.0.1 redirect https://127.0.0.9:9464/targets
bounded 30 "$CUPROBE" capture --job j --steps 1 -o "$TMP/out" \
	--daemon "127.0.0.1:$(port redir)" --timeout 10
expect "--job, a 302: the status and where it points, not followed" \
	grep -q "daemon 127.0.0.1:$(port redir): GET /targets: HTTP 302, a redirect to https://127.0.0.9:9464/targets: not followed" <<<"$OUT"
bounded 30 "$CUPROBE" capture --daemon "127.0.0.1:$(port redir)" --pid 4242 --steps 1 --timeout 10
expect "--pid, a 302: said the same way, exit 1" \
	test "$RC" = 1 -a -n "$(grep "HTTP 302, a redirect to https://127.0.0.9:9464/targets" <<<"$OUT")"
done_testing
