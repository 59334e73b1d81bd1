#!/usr/bin/env python3
"""Checks the relative links of the project's Markdown pages.

Every [text](target) outside code in README.md, docs/*.md and tests/**/README.md (or the
files given) must name a file or folder that exists, and a #fragment must name a
heading of the page it points to, as GitHub makes anchors from headings. Prints one
line per broken link and exits 1 when there is one, 0 otherwise.
"""
import glob
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
LINK = re.compile(r"!?\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
FENCE = re.compile(r"^\s*(```|~~~)")


def prose_lines(path):
    """(line number, text) of each line outside fenced code, inline code removed."""
    fenced = False
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if FENCE.match(line):
                fenced = not fenced
                continue
            if not fenced:
                yield n, re.sub(r"`[^`]*`", "``", line)


def slug(heading):
    """GitHub's anchor for a heading: lower case, punctuation but - and _ dropped."""
    text = re.sub(r"`", "", heading.strip()).lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    seen, out = {}, set()
    fenced = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if FENCE.match(line):
                fenced = not fenced
                continue
            m = None if fenced else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if not m:
                continue
            s = slug(m.group(1))
            k = seen.get(s, 0)
            seen[s] = k + 1
            out.add(s if k == 0 else f"{s}-{k}")
    return out


def check(path):
    bad = []
    for n, line in prose_lines(path):
        for target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):
                continue  # http:, https:, mailto:
            file, _, frag = target.partition("#")
            dest = os.path.normpath(os.path.join(os.path.dirname(path), file)) if file else path
            where = f"{os.path.relpath(path, ROOT)}:{n}: {target}"
            if not os.path.exists(dest):
                bad.append(f"{where}: no such file {os.path.relpath(dest, ROOT)}")
            elif frag and dest.endswith(".md") and frag not in anchors(dest):
                bad.append(f"{where}: no heading #{frag} in {os.path.relpath(dest, ROOT)}")
    return bad


def main(argv):
    files = argv or ["README.md"] + sorted(glob.glob("docs/*.md")) + \
        sorted(glob.glob("tests/**/README.md", recursive=True))
    bad, links = [], 0
    for f in files:
        path = os.path.join(ROOT, f)
        bad += check(path)
        links += sum(len(LINK.findall(line)) for _, line in prose_lines(path))
    for b in bad:
        print(b)
    print(f"check-links: {len(files)} pages, {links} links, {len(bad)} broken")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
