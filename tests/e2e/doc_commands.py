#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The cuprobe command lines that README.md, docs/*.md, the man pages and each
command's --help show as examples, one per line: "WHERE<TAB>COMMAND", WHERE
naming the first place that shows it. A command is a line of a code block
(```) or an .EX/.nf block, or of --help's Examples, that begins with
"cuprobe " (after a "$ " prompt and "sudo "), with its continuation lines
joined and its trailing "# comment" left out; in a block with "$ " prompts,
only the prompted lines are commands (the rest is output). A usage line
(with a placeholder: [OPTIONS], COMMAND, PID, FILE, ...) is no example."""
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PLACEHOLDER = re.compile(r"\[|\bCOMMAND\b|\bPID\b|\bFILE\b|\bPATH\b|\bADDR\b|\bDIR\b|"
                         r"\bJOB\b|\bN\b|\bOPTIONS\b|\.\.\.")


def man_text(line):
    """A man page line as it reads: escapes undone."""
    return line.replace("\\-", "-").replace("\\e", "\\").replace("\\(aq", "'")


def blocks(path):
    """The lines of each code block of a page."""
    is_man = not path.endswith(".md")
    block, inside = [], False
    for n, line in enumerate(open(path, encoding="utf-8"), 1):
        line = line.rstrip("\n")
        if not is_man and line.strip().startswith("```"):
            if inside:
                yield block
            block, inside = [], not inside
        elif is_man and line.startswith((".EX", ".nf")):
            block, inside = [], True
        elif is_man and line.startswith((".EE", ".fi")):
            if inside:
                yield block
            inside = False
        elif inside:
            block.append((n, man_text(line) if is_man else line))


def help_blocks(cuprobe):
    """Each command's --help Examples section, as one block."""
    for cmd in ("record", "report", "compare", "daemon", "capture"):
        out = subprocess.run([cuprobe, cmd, "--help"], capture_output=True, text=True).stdout
        lines = out.split("\n")
        start = next((i for i, l in enumerate(lines) if l.lower().startswith("examples")), None)
        if start is None:
            continue
        block = []
        for i in range(start + 1, len(lines)):
            if lines[i] and not lines[i].startswith(" "):
                break
            block.append((i + 1, lines[i]))
        yield f"cuprobe {cmd} --help", block


def commands(block):
    """The example commands of a block: (line, command)."""
    prompted = any(l.lstrip().startswith("$ ") for _, l in block)
    i = 0
    while i < len(block):
        n, line = block[i]
        i += 1
        text = line.strip()
        if prompted:
            if not text.startswith("$ "):
                continue
            text = text[2:]
        if text.startswith("sudo "):
            text = text[5:]
        if not text.startswith("cuprobe "):
            continue
        while text.endswith("\\") and i < len(block):
            text = text[:-1].rstrip() + " " + block[i][1].strip()
            i += 1
        text = re.sub(r"\s+#\s.*$", "", text)
        # --help's Examples put a description after two spaces or more.
        text = re.split(r"\s{2,}", text)[0].strip()
        if PLACEHOLDER.search(text):
            continue
        yield n, text


def main():
    cuprobe = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "cuprobe")
    pages = ["README.md"] + sorted(glob.glob("docs/*.md", root_dir=ROOT)) + \
        sorted(glob.glob("man/*.1", root_dir=ROOT))
    seen = set()
    sources = [(p, b) for p in pages for b in blocks(os.path.join(ROOT, p))]
    sources += list(help_blocks(cuprobe))
    for where, block in sources:
        for n, cmd in commands(block):
            if cmd not in seen:
                seen.add(cmd)
                print(f"{where}:{n}\t{cmd}")


if __name__ == "__main__":
    main()
