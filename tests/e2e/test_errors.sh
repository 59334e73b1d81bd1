#!/usr/bin/env bash
# Bad input: one clear line naming the problem and the fix, a non-zero exit,
# and nothing half-written in the output folder.
source "$(dirname "$0")/lib.sh"

# nothing_written NAME DIR: no run folder and no temporary file was left.
nothing_written() {
	local left
	left=$(find "$2" -name 'run_*' -o -name '*.tmp' 2>/dev/null)
	[ -z "$left" ] && ok "$1: nothing written" || not_ok "$1: nothing written" "$left"
}

out=$TMP/out
expect_fail "no such PID" "no process with PID 999999.*ps -p" "$CUPROBE" record -o "$out" -p 999999
nothing_written "no such PID" "$out"

expect_fail "unknown option" "unknown option --frobnicate" "$CUPROBE" record --frobnicate -- true
expect_fail "missing option value" "missing value for" "$CUPROBE" record -o
expect_fail "nothing to record" "give -p PID or -- COMMAND" "$CUPROBE" record -o "$out"
expect_fail "both -p and a command" "use one of them" "$CUPROBE" record -p 1 -- true
expect_fail "bad PID list" "not a process id" "$CUPROBE" record -p 12,abc
expect_fail "bad duration" "duration" "$CUPROBE" record --duration -3 -- true
expect_fail "bad ring size" "power of two" "$CUPROBE" record --ringbuf-size 3000 -- true
expect_fail "unknown command" "unknown command 'rekord'" "$CUPROBE" rekord
# Every command is named where the commands are listed: the unknown-command
# message, --help and help (on stdout, exit 0) and no arguments (on stderr, exit 2).
cmds="record report compare daemon capture help"
unknown=$("$CUPROBE" rekord 2>&1)
helped=$("$CUPROBE" --help 2>/dev/null)
help_rc=$?
help_cmd=$("$CUPROBE" help 2>/dev/null)
help_cmd_rc=$?
bare=$("$CUPROBE" 2>&1 >/dev/null)
bare_rc=$?
for c in $cmds; do
	grep -qE "use (.*(, | or ))?$c(,| or | \()" <<<"$unknown" && ok "unknown command: lists $c" ||
		not_ok "unknown command: lists $c" "$unknown"
	grep -qE "^  $c +[a-z]" <<<"$helped" && ok "--help: lists $c" || not_ok "--help: lists $c" "$helped"
	grep -qE "^  $c +[a-z]" <<<"$bare" && ok "no arguments: lists $c" ||
		not_ok "no arguments: lists $c" "$bare"
done
[ $help_rc -eq 0 ] && [ $help_cmd_rc -eq 0 ] && [ $bare_rc -eq 2 ] &&
	ok "--help and help exit 0, no arguments exits 2" ||
	not_ok "--help and help exit 0, no arguments exits 2" \
		"--help $help_rc, help $help_cmd_rc, none $bare_rc"
[ -n "$helped" ] && [ "$help_cmd" = "$helped" ] && ok "help prints what --help prints" ||
	not_ok "help prints what --help prints" "$help_cmd"
# The one table: each command --help lists is in the unknown-command message,
# in order, and in cuprobe.1's COMMANDS; the message names the fix.
listed=$(sed -nE 's/^  ([a-z]+) +[a-z(].*/\1/p' <<<"$helped")
in_msg=$(sed -nE 's/.*: use (.*) \(cuprobe --help\)$/\1/p' <<<"$unknown" | sed 's/, / /g; s/ or / /')
[ -n "$listed" ] && [ "$(echo $listed)" = "$in_msg" ] &&
	ok "unknown command: names every command of --help, then cuprobe --help" ||
	not_ok "unknown command: names every command of --help, then cuprobe --help" \
		"--help [$(echo $listed)], message [$unknown]"
man_cmds=$(awk '/^\.SH/ { on = ($0 == ".SH COMMANDS") } on && tag { print $2 } { tag = ($0 == ".TP") }' \
	"$ROOT/man/cuprobe.1")
[ -n "$listed" ] && [ "$(echo $listed)" = "$(echo $man_cmds)" ] &&
	ok "cuprobe.1's COMMANDS are --help's, in order" ||
	not_ok "cuprobe.1's COMMANDS are --help's, in order" "--help [$(echo $listed)], man [$(echo $man_cmds)]"
expect_fail "a command's name is whole: no prefix" "unknown command 'rec': use record," "$CUPROBE" rec
"$CUPROBE" rec >/dev/null 2>&1
rc=$?
[ $rc -eq 2 ] && ok "an unknown command exits 2" || not_ok "an unknown command exits 2" "exit $rc"
[ "$("$CUPROBE" help record 2>&1)" = "$("$CUPROBE" record --help 2>&1)" ] &&
	ok "help record prints record --help" || not_ok "help record prints record --help" \
	"$("$CUPROBE" help record 2>&1 | head -2)"
expect_fail "help of an unknown command" "unknown command 'rekord': use record, .*\(cuprobe --help\)" \
	"$CUPROBE" help rekord

expect_fail "command not found" "cannot execute no-such-command-xyz.*PATH" \
	"$CUPROBE" record -o "$out" -- no-such-command-xyz
printf 'not a program\n' > "$TMP/notexec"
chmod 644 "$TMP/notexec"
expect_fail "command not executable" "cannot execute .*notexec: Permission denied" \
	"$CUPROBE" record -o "$out" -- "$TMP/notexec"
mkdir -p "$TMP/adir"
expect_fail "command is a folder" "cannot execute .*adir" "$CUPROBE" record -o "$out" -- "$TMP/adir"
nothing_written "bad commands" "$out"

# The output folder is checked before anything is attached.
touch "$TMP/afile"
expect_fail "output is a file" "output folder .*afile: Not a directory; choose another with -o" \
	"$CUPROBE" record -o "$TMP/afile" -- true
mkdir -p "$TMP/ro"
mount -t tmpfs -o ro none "$TMP/ro" 2>/dev/null && {
	expect_fail "read-only output folder" "cannot write in output folder .*Read-only" \
		"$CUPROBE" record -o "$TMP/ro" -- true
	umount "$TMP/ro"
}

# Not root: an unprivileged user is told to use root or CAP_BPF + CAP_PERFMON.
cp "$CUPROBE" "$TMP/cuprobe-copy" && chmod 755 "$TMP" "$TMP/cuprobe-copy"
expect_fail "not root" "run as root.*CAP_BPF and CAP_PERFMON" \
	setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all \
	"$TMP/cuprobe-copy" record -o /tmp -- true

# Traces are private (0600 in 0700 run folders): another user is told why, and the fix.
"$CUPROBE" record -q -o "$TMP/priv" -- true >/dev/null 2>&1
chmod 755 "$TMP/priv"
ptrace=$(ls "$TMP"/priv/run_0/*.pt.trace.json 2>/dev/null | head -1)
[ "$(stat -c %a "$ptrace" 2>/dev/null) $(stat -c %a "$TMP/priv/run_0" 2>/dev/null)" = "600 700" ] &&
	ok "record: a trace 0600 in a 0700 run folder" ||
	not_ok "record: a trace 0600 in a 0700 run folder" "$(ls -la "$TMP/priv/run_0" 2>&1)"
expect_fail "report of another user's trace: why, and the fix" \
	"Permission denied: traces are private to the user who recorded them.*sudo cuprobe report" \
	setpriv --reuid=65534 --regid=65534 --clear-groups "$TMP/cuprobe-copy" report "$ptrace"
chmod 755 "$TMP/priv/run_0"
expect_fail "report of another user's trace in an open folder: the same" \
	"unable to open .*Permission denied: traces are private" \
	setpriv --reuid=65534 --regid=65534 --clear-groups "$TMP/cuprobe-copy" report "$ptrace"

# No BTF: hidden in a private mount namespace.
expect_fail "no BTF" "no BTF.*CONFIG_DEBUG_INFO_BTF" \
	unshare -m sh -c "mount -t tmpfs none /sys/kernel/btf && exec '$CUPROBE' record -o '$out' -- true"

# A process that has exited by the time cuprobe attaches (a zombie keeps its PID).
sh -c 'true & echo $! > '"$TMP"'/zpid; exec sleep 5' &
holder=$!
wait_for "$TMP/zpid"
for _ in $(seq 100); do
	grep -qs 'State:.*Z' "/proc/$(cat "$TMP/zpid")/status" && break
	sleep 0.05
done
# The zombie may be reaped while cuprobe starts: then it is simply gone.
expect_fail "target exited during attach" \
	"process $(cat "$TMP/zpid") exited while cuprobe attached|no process with PID $(cat "$TMP/zpid")" \
	"$CUPROBE" record -o "$out" -p "$(cat "$TMP/zpid")"
kill $holder 2>/dev/null
nothing_written "target exited during attach" "$out"
# PIDs that name no process cuprobe can record, said before anything is made.
expect_fail "-p a kernel thread" "PID 2 \(kthreadd\) is a kernel thread.*give the PID of a CUDA process" \
	"$CUPROBE" record -o "$TMP/new/kthread" -p 2
sleep 5 &
tmain=$!
python3 -c 'import threading, time, os; t = threading.Thread(target=time.sleep, args=(5,)); t.start(); open(os.sys.argv[1], "w").write(str(t.native_id)); t.join()' "$TMP/tid" &
tproc=$!
wait_for "$TMP/tid"
expect_fail "-p a thread" "PID $(cat "$TMP/tid") \(python3\) is a thread of process $tproc: give -p $tproc" \
	"$CUPROBE" record -o "$TMP/new/thread" -p "$(cat "$TMP/tid")"
kill $tmain $tproc 2>/dev/null
expect_fail "-p cuprobe itself" "is cuprobe itself" sh -c "exec '$CUPROBE' record -o '$TMP/new/self' -p \$\$"
expect_fail "--schedule with a key twice" "wait is given twice: give each key once" \
	"$CUPROBE" record --step cuprobe_step --schedule wait=1,warmup=1,active=1,wait=2 -- true
[ ! -e "$TMP/new" ] && ok "a failed start makes no output folder" ||
	not_ok "a failed start makes no output folder" "$(find "$TMP/new")"
# A start that fails after the folder was made takes away what it made.
expect_fail "no such PID with a new folder" "no process with PID" "$CUPROBE" record -o "$TMP/new2/a/b" -p 999999
[ ! -e "$TMP/new2" ] && ok "a failed start leaves no empty output folder" ||
	not_ok "a failed start leaves no empty output folder" "$(find "$TMP/new2")"
expect_fail "command not found, new folder" "cannot execute" "$CUPROBE" record -o "$TMP/new3/x" -- no-such-command-xyz
[ ! -e "$TMP/new3" ] && ok "a command that cannot start leaves no output folder" ||
	not_ok "a command that cannot start leaves no output folder" "$(find "$TMP/new3")"

# A full disk: the lost cycles are said, the command's status comes through,
# completed traces stay whole, nothing half-written (test_write_fail.sh has more).
mkdir -p "$TMP/small"
if mount -t tmpfs -o size=40k none "$TMP/small"; then
	"$CUPROBE" record -q -o "$TMP/small" --step cuprobe_step --schedule wait=0,warmup=1,active=1 \
		-- "$W/basic" --steps --iters 20 --threads 4 --sleep-ms 20 >"$TMP/small.log" 2>&1
	rc=$?
	bad=""
	for f in "$TMP"/small/run_*/*.json; do
		python3 -m json.tool "$f" >/dev/null 2>&1 || bad="$bad $f"
	done
	leftovers=$(find "$TMP/small" -name '*.tmp' -o -type d -empty -name 'run_*')
	[ $rc -eq 0 ] && grep -qE "cycle [0-9]+ is lost: .*No space left on device" "$TMP/small.log" &&
		grep -qE "[0-9]+ cycles? lost, with [0-9]+ launches" "$TMP/small.log" &&
		[ -z "$bad" ] && [ -z "$leftovers" ] &&
		[ -n "$(ls "$TMP"/small/run_0/*.json 2>/dev/null)" ] &&
		ok "full disk: said, the command's status, completed traces whole, nothing half-written" ||
		not_ok "full disk: said, the command's status, completed traces whole, nothing half-written" \
			"rc $rc bad [$bad] leftovers [$leftovers]: $(tail -2 "$TMP/small.log")"
	umount "$TMP/small"
else
	not_ok "full disk" "cannot mount a small tmpfs"
fi
done_testing
