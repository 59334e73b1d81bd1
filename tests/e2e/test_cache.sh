#!/usr/bin/env bash
# The host's cache of launch files by program (CUPROBE_CACHE): the first
# record of a program remembers the files it had launch probes in; the next
# records of that program, with record -- and with -p, probe them before the
# process maps them, so its dlopen's hold attaches nothing; another program
# is not probed on them; a file replaced since is not probed ahead and is
# remembered anew; a cache another user may write is not read, and cuprobe
# says so and records all the same.
source "$(dirname "$0")/lib.sh"

C=$TMP/c/launch-files
export CUPROBE_CACHE=$C

# run NAME ARGS...: record -v -- dlopen_main, its log in $TMP/NAME.log, its ground truth and trace.
run() {
	local name=$1
	shift
	CUPROBE_GT=$TMP/$name.gt.json "$CUPROBE" record -v -o "$TMP/$name" "$@" -- "$W/dlopen_main" --iters 10 \
		>"$TMP/$name.log" 2>&1
}
matches() { $CHECK match --gt "$TMP/$1.gt.json" "$(trace_in "$TMP/$1/run_0")" >/dev/null 2>&1; }
# The holds of a dlopen that attached a launch probe (-v: "N objects, M probed", M > 0).
probing_holds() { grep -cE 'held [0-9.]+ ms for .*[0-9]+ objects?, [1-9][0-9]* probed' "$TMP/$1.log"; }

run first
rc=$?
[ $rc = 0 ] && matches first && ok "cache: the first record exits 0 with every launch" ||
	not_ok "cache: the first record exits 0 with every launch" "rc $rc: $(tail -3 "$TMP/first.log")"
! grep -q "before it is mapped" "$TMP/first.log" && [ "$(probing_holds first)" -ge 1 ] &&
	ok "cache: with none yet, the dlopen's hold attaches the probes" ||
	not_ok "cache: with none yet, the dlopen's hold attaches the probes" "$(grep -E 'held|before it' "$TMP/first.log" | head -5)"
mode=$(stat -c '%a %U' "$C" 2>/dev/null) dmode=$(stat -c '%a' "$TMP/c" 2>/dev/null)
[ "$mode" = "600 root" ] && [ "$dmode" = 700 ] && ok "cache: written root's only (file 600, folder 700)" ||
	not_ok "cache: written root's only (file 600, folder 700)" "file '$mode', folder '$dmode'"
grep -qE "^1 [0-9]+ [0-9]+ [0-9]+ [0-9]+ $W/dlopen_main /.*/libcudart\.so\.13$" "$C" &&
	ok "cache: names the program and the runtime it had launch probes in" ||
	not_ok "cache: names the program and the runtime it had launch probes in" "$(cat "$C" 2>&1)"

run second
rc=$?
[ $rc = 0 ] && matches second && ok "cache: the next record exits 0 with every launch" ||
	not_ok "cache: the next record exits 0 with every launch" "rc $rc: $(tail -3 "$TMP/second.log")"
grep -q "libcudart.so.13 probed before it is mapped" "$TMP/second.log" &&
	ok "cache: the next record probes the runtime before the process maps it (-v)" ||
	not_ok "cache: the next record probes the runtime before the process maps it (-v)" "$(grep -E 'cache|before it' "$TMP/second.log" | head -5)"
n=$(probing_holds second)
[ "$n" = 0 ] && ok "cache: the next record's dlopen hold attaches nothing" ||
	not_ok "cache: the next record's dlopen hold attaches nothing" "$n: $(grep held "$TMP/second.log" | head -5)"

# -p on a process started without cuprobe, before its dlopen.
CUPROBE_GT=$TMP/p.gt.json "$W/dlopen_main" --iters 10 --wait-file "$TMP/go" 2>/dev/null &
wl=$!
"$CUPROBE" record -v -p $wl -o "$TMP/p" >"$TMP/p.log" 2>&1 &
rec=$!
until_true 20 grep -q "recording pid $wl" "$TMP/p.log"
until_true 20 grep -q "pid $wl: .*probed before it is mapped" "$TMP/p.log"
touch "$TMP/go"
wait $wl
wait $rec
rc=$?
[ $rc = 0 ] && matches p && grep -q "pid $wl: .*libcudart.so.13 probed before it is mapped" "$TMP/p.log" &&
	[ "$(probing_holds p)" = 0 ] &&
	ok "cache: -p probes the program's runtime ahead, its dlopen attaches nothing, every launch" ||
	not_ok "cache: -p probes the program's runtime ahead, its dlopen attaches nothing, every launch" "rc $rc: $(grep -E "before it|held|pid $wl" "$TMP/p.log" | head -6)"

# Another program is not probed on dlopen_main's files; it is remembered beside it.
CUPROBE_GT=$TMP/b.gt.json "$CUPROBE" record -v -o "$TMP/b" -- "$W/basic" --threads 1 --iters 5 >"$TMP/b.log" 2>&1
! grep -q "before it is mapped" "$TMP/b.log" && grep -q " $W/basic /" "$C" && grep -q " $W/dlopen_main /" "$C" &&
	ok "cache: another program is not probed ahead on them, and is remembered beside" ||
	not_ok "cache: another program is not probed ahead on them, and is remembered beside" "$(grep 'before it' "$TMP/b.log" | head -2); $(cut -c1-160 "$C")"

# A file replaced since (another inode at the path): not probed ahead, said why, remembered anew.
ino=$(stat -L -c %i "$(awk -v p="$W/dlopen_main" '$6 == p { print $7 }' "$C")")
awk -v p="$W/dlopen_main" '$6 == p { $5 = $5 + 1000000 } { print }' "$C" >"$C.new" && chmod 600 "$C.new" && mv "$C.new" "$C"
run swapped
rc=$?
[ $rc = 0 ] && matches swapped && ! grep -q "before it is mapped" "$TMP/swapped.log" &&
	grep -q "libcudart.so.13: it is another file than the one mapped (inode)" "$TMP/swapped.log" &&
	ok "cache: a file replaced since is not probed ahead, and -v says why" ||
	not_ok "cache: a file replaced since is not probed ahead, and -v says why" "rc $rc: $(grep -E 'before it|not reading' "$TMP/swapped.log" | head -4)"
[ "$(awk -v p="$W/dlopen_main" '$6 == p { print $5 }' "$C")" = "$ino" ] &&
	ok "cache: the replaced file's entry is the file there now" ||
	not_ok "cache: the replaced file's entry is the file there now" "want inode $ino: $(cut -c1-160 "$C")"

# A file of another user than the process's, remembered for its program (as a
# user's own copy of the runtime would be, from another user's process): not read.
cp /usr/local/cuda/lib64/libcudart.so.13 "$TMP/libtheirs.so" && chown nobody "$TMP/libtheirs.so"
line=$(awk -v p="$W/dlopen_main" '$6 == p { print $1, $2, $3 }' "$C" | head -1)
echo "$line $(stat -c '%d %i' "$TMP/libtheirs.so") $W/dlopen_main $TMP/libtheirs.so" >>"$C"
run others
rc=$?
[ $rc = 0 ] && matches others && ! grep -q "libtheirs.so probed before" "$TMP/others.log" &&
	grep -q "not probing .*libtheirs.so ahead: the file is another user's" "$TMP/others.log" &&
	grep -q "libcudart.so.13 probed before it is mapped" "$TMP/others.log" &&
	ok "cache: another user's file remembered for the program is not read for a root process" ||
	not_ok "cache: another user's file remembered for the program is not read for a root process" "rc $rc: $(grep -E 'libtheirs|before it' "$TMP/others.log" | head -4)"

# A cache another user may write: not read, said with the fix; recorded all the same.
chmod 664 "$C"
run open
rc=$?
[ $rc = 0 ] && matches open && ! grep -q "before it is mapped" "$TMP/open.log" &&
	grep -q "warning: the cache $C may be written by another user: not used; .*chmod go-w.*CUPROBE_CACHE=off" "$TMP/open.log" &&
	ok "cache: a cache others may write is not read, said with the fix, every launch recorded" ||
	not_ok "cache: a cache others may write is not read, said with the fix, every launch recorded" "rc $rc: $(grep -E 'cache|before it' "$TMP/open.log" | head -4)"
# A folder another user owns: neither read nor written, and the record is whole.
mkdir -p "$TMP/theirs"
chown nobody "$TMP/theirs" 2>/dev/null
CUPROBE_CACHE=$TMP/theirs/launch-files run theirs
rc=$?
[ $rc = 0 ] && matches theirs && [ ! -e "$TMP/theirs/launch-files" ] &&
	grep -q "the cache's folder $TMP/theirs is another user's: not used" "$TMP/theirs.log" &&
	[ "$(grep -c "warning: .*cache" "$TMP/theirs.log")" = 1 ] &&
	! grep -q "CUPROBE_CACHE=off.*CUPROBE_CACHE=off" "$TMP/theirs.log" &&
	ok "cache: in a folder another user owns, none is written; said once; every launch recorded" ||
	not_ok "cache: in a folder another user owns, none is written; said once; every launch recorded" "rc $rc: $(grep -iE 'cache' "$TMP/theirs.log" | head -4); $(ls -la "$TMP/theirs")"
# Off: nothing read or written.
CUPROBE_CACHE=off run off
rc=$?
[ $rc = 0 ] && matches off && ! grep -qE "before it is mapped|cache $TMP|launch-files" "$TMP/off.log" &&
	ok "cache: CUPROBE_CACHE=off reads and writes none" ||
	not_ok "cache: CUPROBE_CACHE=off reads and writes none" "rc $rc: $(grep -E 'cache|before it' "$TMP/off.log" | head -3)"
done_testing
