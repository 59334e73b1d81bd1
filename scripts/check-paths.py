#!/usr/bin/env python3
"""Checks that the project's pages name only files that exist, and that the map of the
sources names every file of user/.

1. Every path under user/, bpf/, tests/ or include/ written in README.md, docs/*.md,
   man/* and the tests' READMEs (or the files given), in prose or in code, must exist. A
   `{a,b}` in a path stands for each of its choices, a `*` for any name (a glob must
   match something), and so does a word in capitals (test_NAME.sh) in a path that does
   not exist as written.
2. Every file under user/ must be named, by its path from the top, in the map of the
   sources (docs/internals.md), so that a file added or moved is mapped.

Prints one line per problem (page:line: path: why), then a count, and exits 1 when
there is a problem, 0 otherwise.
"""
import glob
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
MAP = "docs/internals.md"
# A path starts at one of these folders, not inside another path or a URL.
PATH = re.compile(r"(?<![\w./$~-])((?:user|bpf|tests|include)/[\w.{},*/-]*)")
PLACEHOLDER = re.compile(r"(?<![A-Za-z0-9])[A-Z][A-Z0-9]*(?![a-z0-9])")
# roff: \- is a hyphen, \fB \fI \fR \fP \f(CW change fonts, \& is nothing.
ROFF = [(re.compile(r"\\-"), "-"), (re.compile(r"\\f(\(..|\[[^]]*\]|.)"), ""),
        (re.compile(r"\\&"), "")]


def default_pages():
    return ["README.md"] + sorted(glob.glob("docs/*.md", root_dir=ROOT)) + \
        sorted(glob.glob("man/*", root_dir=ROOT)) + \
        sorted(glob.glob("tests/**/README.md", root_dir=ROOT, recursive=True))


def page_lines(path):
    """(line number, text) of a page, roff escapes read as the text they print."""
    roff = path.startswith(os.path.join(ROOT, "man") + os.sep)
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if roff:
                for pat, rep in ROFF:
                    line = pat.sub(rep, line)
            yield n, line


def expand_braces(path):
    """user/a_{b,c}.h -> [user/a_b.h, user/a_c.h], each brace in turn."""
    m = re.search(r"\{([^{}]*)\}", path)
    if not m:
        return [path]
    out = []
    for choice in m.group(1).split(","):
        out += expand_braces(path[:m.start()] + choice + path[m.end():])
    return out


def exists(path):
    """Whether a written path names something in the tree (a pattern: something it matches)."""
    if os.path.exists(os.path.join(ROOT, path)):
        return True
    pattern = PLACEHOLDER.sub("*", path)
    if any(c in pattern for c in "*?["):
        return bool(glob.glob(pattern, root_dir=ROOT, recursive=True))
    return False


def paths_in(line):
    for m in PATH.finditer(line):
        p = m.group(1).rstrip(".,:;'\"")
        if p.count("{") == p.count("}"):
            yield p


def missing_paths(page):
    bad = []
    rel = os.path.relpath(page, ROOT)
    for n, line in page_lines(page):
        for written in paths_in(line):
            for p in expand_braces(written):
                if not exists(p):
                    what = f"no such file or folder {p}" + (f" (from {written})" if p != written else "")
                    bad.append(f"{rel}:{n}: {written}: {what}")
    return bad


def unmapped_sources():
    """Files of user/ that the map of the sources does not name."""
    with open(os.path.join(ROOT, MAP), encoding="utf-8") as f:
        named = set(p for line in f for w in paths_in(line) for p in expand_braces(w))
    bad = []
    for dirpath, dirs, files in os.walk(os.path.join(ROOT, "user")):
        dirs.sort()
        for name in sorted(files):
            rel = os.path.relpath(os.path.join(dirpath, name), ROOT)
            if rel not in named:
                bad.append(f"{MAP}: {rel}: not in the map of the sources; add a line for it")
    return bad


def main(argv):
    pages = argv or default_pages()
    bad = []
    for page in pages:
        bad += missing_paths(os.path.join(ROOT, page))
    unmapped = unmapped_sources()
    for b in bad + unmapped:
        print(b)
    print(f"check-paths: {len(pages)} pages, missing paths: {len(bad)}, "
          f"files of user/ not in {MAP}: {len(unmapped)}")
    return 1 if bad or unmapped else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
