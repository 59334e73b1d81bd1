#!/usr/bin/env bash
# What cuprobe daemon reads at start, held to the output folder's rule: a
# config, web-config, certificate and key another user owns, may write (or, for the
# key, read), or keeps in a folder others may write, are refused with the
# fix, and so is cuprobe capture's --password-file; a FIFO in their place is
# refused at once (each run under timeout, so a hang fails); a deeply nested
# or oversized web-config is refused fast, in bounded memory. --cgroup takes
# a cgroup's folder as mount shows it and refuses one that does not exist;
# --retention 10M alone starts, the default window bound following it.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

D= OUT=
cleanup() {
	[ -n "$D" ] && kill -KILL "$D" 2>/dev/null
	[ -n "$OUT" ] && kill -KILL "$OUT" 2>/dev/null
	cgroup_kill
	rm -rf "$TMP"
}
trap cleanup EXIT

# refused NAME PATTERN WEB-CONFIG: the daemon exits 2 within 10 s, saying PATTERN.
refused() {
	local name=$1 pat=$2 out rc
	out=$(timeout 10 "$CUPROBE" daemon --web-config "$3" -l 0.0.0.0:9 -o "$TMP/never" 2>&1)
	rc=$?
	if [ $rc -ne 2 ]; then
		not_ok "$name" "exit $rc (124: it hung): $out"
	elif ! grep -qE -- "$pat" <<<"$out"; then
		not_ok "$name" "message does not match /$pat/: $out"
	else
		ok "$name"
	fi
}

# ---- files another user controls ----
K=$TMP/open
mkdir -m 0777 "$K"
chmod 0777 "$K"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
	-subj /CN=127.0.0.1 -keyout "$K/server.key" -out "$K/server.crt" 2>/dev/null
printf 'tls_server_config: { cert_file: server.crt, key_file: server.key }\n' >"$K/web.yml"
chown nobody "$K/web.yml" "$K/server.key"
chmod 0666 "$K/web.yml" "$K/server.key"
# Each refusal names one fault; fixed as it says, the next one shows.
refused "a web-config in a folder anyone may write is refused" \
	"cannot use the web-config .*: its folder $K may be written by another user \(owner uid 0, mode 0777\)" \
	"$K/web.yml"
chmod 0755 "$K"
refused "... one owned by nobody is refused, saying chown" \
	"web.yml: it is owned by uid $(id -u nobody), who may write in it .*chown" "$K/web.yml"
chown root "$K/web.yml"
refused "... one anyone may write is refused, saying chmod go-w" \
	"web.yml: other users may write it \(mode 0666\): chmod go-w it" "$K/web.yml"
chmod 0644 "$K/web.yml"
refused "a key owned by nobody is refused" "key_file: cannot use .*server.key: it is owned by uid" \
	"$K/web.yml"
chown root "$K/server.key"
refused "a key anyone may write is refused" "key_file: .*other users may write it" "$K/web.yml"
chmod 0644 "$K/server.key"
refused "a key anyone may read is refused, as ssh refuses one: chmod 600" \
	"key_file: .*other users may read it \(mode 0644\), and it is a secret: chmod 600 it" \
	"$K/web.yml"
chmod 0600 "$K/server.key"
chmod 0666 "$K/server.crt"
refused "a certificate anyone may write is refused" "cert_file: .*chmod go-w" "$K/web.yml"
chmod 0644 "$K/server.crt"
refused "fixed, the web-config is read (and then refused only for authenticating nobody)" \
	"authenticates nobody" "$K/web.yml"
ln -s "$K" "$TMP/link"
refused "a web-config through a link is read where the link leads" "authenticates nobody" \
	"$TMP/link/web.yml"

# ---- FIFOs: refused at once, never waited on ----
mkfifo "$TMP/fifo.yml" "$K/fifo.key"
refused "a FIFO as the web-config is refused at once" "web-config .*fifo.yml: it is a FIFO: give a regular file" \
	"$TMP/fifo.yml"
printf 'tls_server_config: { cert_file: server.crt, key_file: fifo.key }\n' >"$K/fifo.yml"
refused "a FIFO as the key is refused at once" "key_file: cannot use .*fifo.key: it is a FIFO" \
	"$K/fifo.yml"
refused "a device as the web-config is refused" "it is a character device" /dev/zero
# --config chooses the web-config and the listen address: held the same way.
printf 'interval = 30\n' >"$K/d.conf"
chown nobody "$K/d.conf"
expect_fail "a --config owned by nobody is refused" \
	"cannot read config .*d.conf: it is owned by uid $(id -u nobody)" \
	timeout 10 "$CUPROBE" daemon -c "$K/d.conf" -o "$TMP/never"
mkfifo "$TMP/fifo.conf"
expect_fail "a FIFO as --config is refused at once" "cannot read config .*fifo.conf: it is a FIFO" \
	timeout 10 "$CUPROBE" daemon -c "$TMP/fifo.conf" -o "$TMP/never"

# ---- YAML bounds ----
python3 -c 'print("[" * 200000 + "]" * 200000)' >"$TMP/deep.yml"
python3 -c '
import sys
h = "$2y$10$" + "a" * 53
sys.stdout.write("basic_auth_users:\n" + "".join("  u%d: \x27%s\x27\n" % (i, h) for i in range(400000)))
' >"$TMP/big.yml"
head -c 900000 "$TMP/big.yml" >"$TMP/many.yml"
for f in deep big many; do
	/usr/bin/time -f '%e %M' -o "$TMP/$f.time" timeout 10 "$CUPROBE" daemon \
		--web-config "$TMP/$f.yml" -o "$TMP/never" >"$TMP/$f.out" 2>&1
	echo $? >"$TMP/$f.rc"
done
bounded() { # NAME PATTERN FILE: exit 2, the message, under 2 s and 64 MB
	local rc secs kb
	rc=$(cat "$TMP/$3.rc"); read -r secs kb < <(tail -1 "$TMP/$3.time")
	if [ "$rc" -ne 2 ] || ! grep -qE -- "$2" "$TMP/$3.out"; then
		not_ok "$1" "exit $rc: $(tail -3 "$TMP/$3.out")"
	elif awk -v s="$secs" -v k="$kb" 'BEGIN { exit !(s < 2 && k < 65536) }'; then
		ok "$1 ($secs s, $kb KB)"
	else
		not_ok "$1" "took $secs s and $kb KB"
	fi
}
bounded "200000-deep nesting is refused fast" "deep.yml:1: nested more than 16 deep" deep
bounded "a web-config over 1 MiB is refused before it is parsed" "big.yml: it is over 1 MiB" big
bounded "... and 900 KB of users, by their count, before any is kept" \
	"many.yml:[0-9]+: more than 1024 values" many
expect "nothing was made by the refused starts" test ! -e "$TMP/never"

# ---- cuprobe capture's --password-file: a secret, as the key ----
P=$(free_port)
echo 'secret pw' >"$TMP/pw"
chmod 0644 "$TMP/pw"
cap() { timeout 10 "$CUPROBE" capture --daemon "https://127.0.0.1:$P" --cacert "$K/server.crt" \
	--user u --password-file "$1" --pid 1 --steps 1; }
expect_fail "capture: a password file others may read is refused: chmod 600" \
	"password-file .*pw: other users may read it \(mode 0644\), and it is a secret: chmod 600" \
	cap "$TMP/pw"
chmod 0600 "$TMP/pw"
chown nobody "$TMP/pw"
expect_fail "capture: a password file owned by another user is refused" \
	"password-file .*pw: it is owned by uid $(id -u nobody)" cap "$TMP/pw"
mkfifo "$TMP/pwfifo"
expect_fail "capture: a FIFO as the password file is refused at once" \
	"password-file .*pwfifo: it is a FIFO" cap "$TMP/pwfifo"
chown root "$TMP/pw"
out=$(cap "$TMP/pw" 2>&1)
if grep -q 'password-file' <<<"$out"; then
	not_ok "capture: a password file of its own, 0600, is read" "$out"
else
	ok "capture: a password file of its own, 0600, is read (then no daemon answers)"
fi

# ---- --cgroup and --retention ----
P=$(free_port)
expect_fail "--cgroup that does not exist is refused" \
	"cgroup: there is no cgroup /no-such-cgroup-$$: give one that exists" \
	timeout 10 "$CUPROBE" daemon -l "127.0.0.1:$P" --cgroup "/no-such-cgroup-$$" -o "$TMP/never"
expect_fail "--window-max-bytes 128M given over --retention 10M is still refused" \
	"window-max-bytes \(134217728\) is more than retention \(10485760\)" \
	timeout 10 "$CUPROBE" daemon -l "127.0.0.1:$P" --retention 10M --window-max-bytes 128M \
	-o "$TMP/never"
if ! cgroup_setup cuprobe-config-test; then
	not_ok "--cgroup: a cgroup of the test's own" "no writable cgroup2 mount in /proc/mounts"
	done_testing
	exit 0
fi
"${in_cg[@]}" "$W/basic" --steps --threads 1 --sleep-ms 50 --iters 100000 2>/dev/null &
IN=$!
"$W/basic" --steps --threads 1 --sleep-ms 50 --iters 100000 2>/dev/null &
OUT=$!
# $CG is the cgroup's folder on the cgroup2 mount, as mount and /proc/mounts show it.
timeout 60 "$CUPROBE" daemon -l "127.0.0.1:$P" --cgroup "$CG" -P 0 -o "$TMP/out" -v \
	>"$TMP/d.log" 2>&1 &
D=$!
if until_true 30 grep -q "sampling pid $IN " "$TMP/d.log"; then
	ok "--cgroup $CG (its folder on the cgroup2 mount) finds the process in it"
else
	not_ok "--cgroup $CG finds the process in it" "$(grep -v libbpf "$TMP/d.log" | tail -4)"
fi
expect "... and not the one outside it" sh -c "! grep -q 'sampling pid $OUT ' '$TMP/d.log'"
kill "$D" 2>/dev/null
wait "$D" 2>/dev/null
echo 'retention = 10M' >"$TMP/r.conf"
timeout 60 "$CUPROBE" daemon -c "$TMP/r.conf" -l "127.0.0.1:$P" --cgroup "/$CGNAME" -P 0 \
	-o "$TMP/out" -v >"$TMP/r.log" 2>&1 &
D=$!
if until_true 30 grep -q "sampling pid $IN " "$TMP/r.log"; then
	expect "--retention 10M alone starts, saying the window bound follows it" \
		grep -q "window-max-bytes is 10485760 bytes, as retention is: its default, 128M" \
		"$TMP/r.log"
	# The bound a daemon started with stays until a restart: a smaller retention is refused.
	echo 'retention = 5M' >"$TMP/r.conf"
	kill -HUP "$D"
	expect "a reload to a retention under the window bound it started with is refused" \
		until_true 10 grep -q "not reloaded.*less than the window-max-bytes the daemon started with (10485760)" "$TMP/r.log"
else
	not_ok "--retention 10M alone starts" "$(grep -v libbpf "$TMP/r.log" | tail -4)"
fi
kill "$D" 2>/dev/null
wait "$D" 2>/dev/null
D=
# The workloads go now, quietly: killed by the EXIT trap, bash would say so after "# done".
{ kill -KILL "$IN" "$OUT"; wait "$IN" "$OUT"; } 2>/dev/null
OUT=

done_testing
