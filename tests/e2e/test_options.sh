#!/usr/bin/env bash
# Each command's options are written once (a table in the code), and its
# --help, its man page and its doc name the same ones: every long option of
# --help is in the man page's OPTIONS and the doc's Options table, and every
# option there is in --help, with the same short code. The daemon's config
# example uses only its options' names. No root needed.
. "$(dirname "$0")/lib.sh"

# The long options of --help's option list, one per line, sorted.
help_longs() {
	"$CUPROBE" "$1" --help | sed -nE 's/^  (-[a-zA-Z], |    )--([a-z][a-z-]*).*/\2/p' | sort -u
}
# "X name" for each "-X, --name" of --help's option list.
help_pairs() {
	"$CUPROBE" "$1" --help | sed -nE 's/^  -([a-zA-Z]), --([a-z][a-z-]*).*/\1 \2/p' | sort -u
}
# The tag lines (after .TP) of a man page's OPTIONS section, with \- as -.
man_tags() {
	awk '/^\.SH/ { on = ($0 ~ /^\.SH "?OPTIONS"?$/) } on && tag { print } { tag = ($0 == ".TP") }' \
		"$1" | sed 's/\\-/-/g'
}
man_longs() { man_tags "$1" | grep -oE -- '--[a-z][a-z-]*' | sed 's/^--//' | sort -u; }
man_pairs() {
	man_tags "$1" | grep -oE -- '-[a-zA-Z] ", " --[a-z][a-z-]*' |
		sed -E 's/^-(.) ", " --(.*)/\1 \2/' | sort -u
}
# The first cells of the rows of a doc's "## Options" table.
doc_cells() {
	awk '/^## / { on = ($0 == "## Options") } on && /^\| `/' "$1" | sed -E 's/^\| (([^|\\]|\\.)*) \|.*/\1/'
}
doc_longs() { doc_cells "$1" | grep -oE -- '--[a-z][a-z-]*' | sed 's/^--//' | sort -u; }
doc_pairs() {
	doc_cells "$1" | grep -oE -- '-[a-zA-Z], --[a-z][a-z-]*' | sed -E 's/^-(.), --(.*)/\1 \2/' |
		sort -u
}

# same NAME HELP OTHER WHERE: ok when the two sorted lists are equal, else what each lacks.
same() {
	local diff
	diff=$(comm -3 <(echo "$2" | grep .) <(echo "$3" | grep .) |
		awk -v where="$4" '{ print /^\t/ ? " only in " where ":" $0 : " only in --help: " $0 }' |
		tr '\n\t' '; ')
	[ -n "$2" ] && [ -z "$diff" ] && ok "$1" || not_ok "$1" "${diff:-nothing found}"
}

for cmd in record compare report daemon capture; do
	longs=$(help_longs $cmd)
	pairs=$(help_pairs $cmd)
	page=$ROOT/man/cuprobe-$cmd.1
	same "$cmd: the man page's OPTIONS name --help's long options" "$longs" \
		"$(man_longs "$page")" "${page#$ROOT/}"
	same "$cmd: the man page gives each option --help's short code" "$pairs" \
		"$(man_pairs "$page")" "${page#$ROOT/}"
	doc=$ROOT/docs/$cmd.md
	[ -f "$doc" ] || continue
	same "$cmd: docs/$cmd.md's Options table names --help's long options" "$longs" \
		"$(doc_longs "$doc")" "docs/$cmd.md"
	same "$cmd: docs/$cmd.md gives each option --help's short code" "$pairs" \
		"$(doc_pairs "$doc")" "docs/$cmd.md"
done

# One short code means one thing in every command. capture's --steps is the
# window-steps of the one window it asks the daemon for: -n in both.
clash=$(for cmd in record compare report daemon capture; do help_pairs $cmd; done |
	sed 's/^n steps$/n window-steps/' | sort -u |
	awk '{ n[$1]++; names[$1] = names[$1] " " $2 } END { for (c in n) if (n[c] > 1) print "-" c ":" names[c] }')
[ -z "$clash" ] && ok "a short code is the same long option in every command" ||
	not_ok "a short code is the same long option in every command" "$clash"

# compare = record's shared options and its own: the shared ones read the same.
shared=$(comm -12 <(help_longs record) <(help_longs compare))
for o in output pid children step step-every duration cupti-wait stack ringbuf-size quiet verbose help; do
	grep -qx -- "$o" <<<"$shared" || missing_shared="${missing_shared:-} $o"
done
[ -z "${missing_shared:-}" ] && ok "compare has record's shared options" ||
	not_ok "compare has record's shared options" "missing:$missing_shared"
# An option's --help entry: its line and the indented lines that go on from it.
line_of() {
	"$CUPROBE" "$1" --help | awk -v re="^  (-., |    )--$2( |\$)" \
		'$0 ~ re { on = 1; print; next } on && /^                          / { print; next } { on = 0 }'
}
differ=""
for o in $shared; do
	[ "$(line_of record "$o")" = "$(line_of compare "$o")" ] || differ="$differ $o"
done
[ -z "$differ" ] && ok "a shared option's --help line is the same in record and compare" ||
	not_ok "a shared option's --help line is the same in record and compare" "differ:$differ"

# The daemon's config keys are its long options (deploy/daemon.conf, comments too).
keys=$(sed -nE 's/^#? *([a-z][a-z-]*) *=.*/\1/p' "$ROOT/deploy/daemon.conf" | sort -u)
unknown=$(comm -23 <(echo "$keys") <(help_longs daemon))
[ -n "$keys" ] && [ -z "$unknown" ] && ok "deploy/daemon.conf's keys are daemon options" ||
	not_ok "deploy/daemon.conf's keys are daemon options" "unknown: $unknown"
# The file's parser is the command line's: a bad value is refused by its setting's name.
printf 'window-steps = banana\n' >"$TMP/bad.conf"
expect_fail "a config key's bad value is refused by its setting's name" \
	"bad.conf:1: window-steps: 'banana' is not a whole number" "$CUPROBE" daemon -c "$TMP/bad.conf"

# --help stays within 80 columns and exits 0; a usage error is one line and exits 2.
for cmd in record compare report daemon capture; do
	wide=$("$CUPROBE" $cmd --help | awk 'length > 80' | head -2)
	[ -z "$wide" ] && ok "$cmd --help: within 80 columns" || not_ok "$cmd --help: within 80 columns" "$wide"
	out=$("$CUPROBE" $cmd --no-such-option 2>&1 >/dev/null); rc=$?
	[ $rc -eq 2 ] && [ "$(wc -l <<<"$out")" = 1 ] &&
		grep -qE "^cuprobe $cmd: unknown option --no-such-option \(see cuprobe $cmd --help\)$" <<<"$out" &&
		ok "$cmd: an unknown option is one line naming it, exit 2" ||
		not_ok "$cmd: an unknown option is one line naming it, exit 2" "rc $rc: $out"
done

# A bad value's message gives one example, not the option's and its parser's both.
while read -r args; do
	out=$("$CUPROBE" $args 2>&1 >/dev/null)
	n=$(grep -o "e\.g\." <<<"$out" | wc -l)
	[ "$n" -le 1 ] && ok "$args: at most one example" ||
		not_ok "$args: at most one example" "$out"
done <<'ARGS'
record --step f --schedule wait=1 -- true
record --ringbuf-size x -- true
record --duration x -- true
compare --slice x -- true
daemon --retention 1
daemon --listen foo
capture --timeout x --pid 1 --steps 1
ARGS

# --version and version print the Makefile's VERSION and, built in a git checkout, the
# revision built from; --help ends with the same line.
version=$(sed -n 's/^VERSION *:= *//p' "$ROOT/Makefile")
want="^cuprobe ${version//./\\.}"
[ "$(git -C "$ROOT" rev-parse --show-toplevel 2>/dev/null)" = "$ROOT" ] && want="$want \\(git [0-9a-f]{7,}(-dirty)?\\)"
for args in --version version; do
	out=$("$CUPROBE" $args 2>&1); rc=$?
	[ $rc -eq 0 ] && grep -qE "$want\$" <<<"$out" && [ "$(wc -l <<<"$out")" = 1 ] &&
		ok "cuprobe $args: the version and revision" ||
		not_ok "cuprobe $args: the version and revision" "rc $rc: $out"
done
out=$("$CUPROBE" --help | tail -1)
grep -qE "$want\$" <<<"$out" && ok "--help ends with the version" ||
	not_ok "--help ends with the version" "$out"

# The pages name only paths that exist, and docs/internals.md's map names every
# file of user/ (scripts/check-paths.py): each problem is a line of its own.
if paths=$(python3 "$ROOT/scripts/check-paths.py" 2>&1); then
	ok "the pages name only paths that exist, and the map every file of user/"
else
	sed -n 's/^/# /p' <<<"$paths"
	not_ok "the pages name only paths that exist, and the map every file of user/" \
		"$(grep -v '^check-paths:' <<<"$paths" | tr '\n' ';')"
fi

# The rooms of user/ include one another one way, and no file of user/ is over
# 900 lines (scripts/check-layers.py): each problem is a line of its own, its
# numbers read as N.
# KNOWN LEFTOVERS, one a line: delete each line with the change that ends it.
layers_known=(
)
layers=$(python3 "$ROOT/scripts/check-layers.py" 2>&1)
got=$(grep -v '^check-layers:' <<<"$layers" | sed -E 's/:[0-9]+: /:N: /; s/: [0-9]+ lines,/: N lines,/' |
	sort)
want=$(printf '%s\n' "${layers_known[@]}" | grep . | sort)
if [ "$got" = "$want" ]; then
	ok "the rooms include only rooms below them, and no file is over 900 lines (known: ${#layers_known[@]})"
else
	sed -n 's/^/# /p' <<<"$layers"
	not_ok "the rooms include only rooms below them, and no file is over 900 lines" \
		"new: $(comm -13 <(echo "$want") <(echo "$got") | tr '\n' ';') gone (delete its line in layers_known): $(comm -23 <(echo "$want") <(echo "$got") | tr '\n' ';')"
fi
done_testing
