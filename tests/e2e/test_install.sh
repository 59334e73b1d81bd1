#!/usr/bin/env bash
# make install DESTDIR= PREFIX=: the binary, the agent and the man pages land
# where they should, the installed cuprobe finds the installed agent, and
# every man page renders without warnings and names every option of --help.
source "$(dirname "$0")/lib.sh"
unset CUPROBE_AGENT

DEST=$TMP/root
PREFIX=/usr
I=$DEST$PREFIX
# Not the make that runs the tests: its jobserver and flags are not ours.
if out=$(env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -C "$ROOT" --no-print-directory -s \
	install DESTDIR="$DEST" PREFIX="$PREFIX" 2>&1); then
	ok "make install DESTDIR= PREFIX=/usr"
else
	not_ok "make install DESTDIR= PREFIX=/usr" "$(echo "$out" | tail -3 | tr '\n' ' ')"
fi

[ -x "$I/bin/cuprobe" ] && ok "installed: bin/cuprobe, executable" ||
	not_ok "installed: bin/cuprobe, executable" "$(ls -l "$I/bin" 2>&1)"
[ -f "$I/lib/cuprobe/libcuprobe-agent.so" ] && ok "installed: lib/cuprobe/libcuprobe-agent.so" ||
	not_ok "installed: lib/cuprobe/libcuprobe-agent.so" "$(ls -l "$I/lib/cuprobe" 2>&1)"
pages=0 missing=""
for m in "$ROOT"/man/*.1; do
	pages=$((pages + 1))
	cmp -s "$m" "$I/share/man/man1/$(basename "$m")" || missing="$missing $(basename "$m")"
done
[ $pages -ge 3 ] && [ -z "$missing" ] && ok "installed: $pages man pages in share/man/man1" ||
	not_ok "installed: man pages in share/man/man1" "$pages in man/, missing or different:$missing"
# The daemon's: its unit (with this PREFIX's path), its config, the examples.
expect "installed: the daemon's unit runs this prefix's cuprobe" \
	grep -q "^ExecStart=$PREFIX/bin/cuprobe daemon --config /etc/cuprobe/daemon.conf" \
	"$I/lib/systemd/system/cuprobe-daemon.service"
expect "installed: the daemon's config" cmp "$ROOT/deploy/daemon.conf" "$DEST/etc/cuprobe/daemon.conf"
expect "installed: the daemon's examples" test -f "$I/share/cuprobe/examples/daemonset.yaml" -a \
	-f "$I/share/cuprobe/examples/prometheus.yml"
left=$(find "$DEST" -type f | grep -vE "^$I/(bin/cuprobe|lib/cuprobe/libcuprobe-agent.so|share/man/man1/[a-z-]+\.1)$" |
	grep -vE "^($I/lib/systemd/system/cuprobe-daemon.service|$DEST/etc/cuprobe/daemon.conf|$I/share/cuprobe/examples/[a-z.]+)$")
[ -z "$left" ] && ok "installed: nothing else" || not_ok "installed: nothing else" "$left"

# The installed cuprobe finds the installed agent (../lib/cuprobe/ from its binary) ...
out=$("$I/bin/cuprobe" record --cupti -q -o "$TMP/out" -- true 2>&1); rc=$?
if [ $rc -eq 0 ] && ! grep -q 'libcuprobe-agent.so is not' <<<"$out"; then
	ok "installed cuprobe finds the installed agent (--cupti -- true)"
else
	not_ok "installed cuprobe finds the installed agent (--cupti -- true)" "rc $rc: $out"
fi
# ... and that was the one it found: a copy of the binary alone finds none.
mkdir -p "$TMP/alone/bin"
cp "$I/bin/cuprobe" "$TMP/alone/bin/cuprobe"
expect_fail "a cuprobe with no agent beside it says so" "libcuprobe-agent.so is not next to cuprobe" \
	"$TMP/alone/bin/cuprobe" record --cupti -q -o "$TMP/out2" -- true

# Each page renders without a warning.
if command -v groff >/dev/null; then
	render() { groff -man -Tutf8 -ww -z "$1" 2>&1; }
elif command -v mandoc >/dev/null; then
	render() { mandoc -T lint -W warning "$1" 2>&1; }
else
	render() { echo "neither groff nor mandoc is installed (scripts/install-deps.sh installs groff-base)"; }
fi
for m in "$I"/share/man/man1/*.1; do
	out=$(render "$m")
	[ -z "$out" ] && ok "$(basename "$m") renders without warnings" ||
		not_ok "$(basename "$m") renders without warnings" "$(echo "$out" | head -3 | tr '\n' ' ')"
	missing=""
	for s in NAME SYNOPSIS DESCRIPTION OPTIONS EXAMPLES "EXIT STATUS" FILES "SEE ALSO"; do
		grep -qE "^\.SH \"?$s\"?\$" "$m" || missing="$missing '$s'"
	done
	[ -z "$missing" ] && ok "$(basename "$m") has the sections perf's pages have" ||
		not_ok "$(basename "$m") has the sections perf's pages have" "missing:$missing"
done

# Every option of a command's --help is in its man page.
for cmd in record report compare daemon capture; do
	page=$I/share/man/man1/cuprobe-$cmd.1
	opts=$("$I/bin/cuprobe" $cmd --help | grep -oE '(^|[ ,\[])--?[a-z][a-z-]*' | tr -d ' ,[' | sort -u)
	missing=""
	for o in $opts; do
		grep -qF -- "$(sed 's/-/\\-/g' <<<"$o")" "$page" || missing="$missing $o"
	done
	[ -n "$opts" ] && [ -z "$missing" ] && ok "cuprobe-$cmd.1 names every option of $cmd --help" ||
		not_ok "cuprobe-$cmd.1 names every option of $cmd --help" "missing:$missing"
done

done_testing
