#!/usr/bin/env bash
# cuprobe capture against fake daemons on loopback (fake_daemon.py), no root,
# no GPU: everything within --timeout, a peer that drips included, over TLS too.
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

# ---- TLS bounded by --timeout ----
fake tlsdrip 127.0.0.1 tlsdrip
bounded 20 "$CUPROBE" capture --job j --steps 1 -o "$TMP/out" \
	--daemon "https://127.0.0.1:$(port tlsdrip)" --timeout 2
expect "--job --timeout 2, a TLS handshake that drips a byte a second: given up within 5 s (${TOOK} ms)" \
	test "$RC" = 1 -a "$TOOK" -lt 5000 -a -n "$(grep "no TLS handshake within --timeout" <<<"$OUT")"
done_testing
