#!/bin/sh
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
# gen-version.sh VERSION OUT: writes OUT, a header with cuprobe's version and
# the git revision of the tree it is built from, only when either changed (so
# that main.o is rebuilt after a commit, and not at every make). Outside a git
# checkout of cuprobe (a tarball, or a tarball unpacked inside another
# repository) the revision is "" unless GIT_REV= names it.
set -eu
version=$1 out=$2
top=$(cd "$(dirname "$0")/.." && pwd)
rev=${GIT_REV-}
if [ -z "$rev" ] && [ "$(git -C "$top" rev-parse --show-toplevel 2>/dev/null)" = "$top" ]; then
	rev=$(git -C "$top" describe --always --dirty --abbrev=12 2>/dev/null || true)
fi
new=$(printf '#define CUPROBE_VERSION "%s"\n#define CUPROBE_GIT_REV "%s"\n' "$version" "$rev")
if [ ! -f "$out" ] || [ "$(cat "$out")" != "$new" ]; then
	printf '%s\n' "$new" > "$out"
fi
