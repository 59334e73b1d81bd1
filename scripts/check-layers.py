#!/usr/bin/env python3
"""Checks that the rooms of user/ include one another one way only, and that no source
file of user/ is over 900 lines.

The rooms stand on floors, lowest first (docs/internals.md, "The floors"):

  util, cuda            one of each: logging, options, parsing, JSON, hash table, vector;
                        what cuprobe knows of CUDA's launch APIs (names, CUPTI ids)
  trace, agent          the trace file: its keys, its writer, a capture's result per rank;
                        the agent (a library of its own)
  core/proc, core/schedule, core/graphs
                        the engine's ground: a process's maps, symbols, stacks and ELF
                        files; the schedule itself (pure); CUDA graphs as they are built
  core/steps, core/gpu  where steps come from (each kind found in a process's files); the
                        GPU side (the agent's records, the join, the injection)
  core/probes, core/cycles
                        the probes, attached per process; what a cycle holds and when it
                        is written
  core/session          a session's life: its targets, rings, holds and windows
  core/loop             the one command loop, below every front-end that runs it
  report                cuprobe report's readers, model and formats
  compare               cuprobe compare's model, which reads traces with report's reader
  daemon                cuprobe daemon's service
  cmd                   the front-ends, one file per command

A file may include its own room's headers and those of rooms on lower floors; an include
of a room on a higher floor, or of another room on the same floor, is a problem. What a
lower room needs from above it takes as a callback or a value. Headers outside user/
(include/, the system's) are not rooms and may be included by any.

1. Every #include "..." of a .c or .h under user/ names its own room or a lower one.
2. No .c or .h under user/ is over MAX_LINES lines.

Prints one line per problem (file:line: why), then a count, and exits 1 when there is a
problem, 0 otherwise.
"""
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
USER = os.path.join(ROOT, "user")
MAX_LINES = 900

# Lowest first; rooms on one floor may not include each other.
FLOORS = [
    ["util", "cuda"],
    ["trace", "agent"],
    ["core/proc", "core/schedule", "core/graphs"],
    ["core/steps", "core/gpu"],
    ["core/probes", "core/cycles"],
    ["core/session"],
    ["core/loop"],
    ["report"],
    ["compare"],
    ["daemon"],
    ["cmd"],
]
FLOOR = {room: n for n, rooms in enumerate(FLOORS) for room in rooms}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def room(rel):
    """The room of a path under user/: its first folder, and under core/ its second."""
    parts = rel.split("/")
    return "/".join(parts[:2]) if parts[0] == "core" and len(parts) > 2 else parts[0]


def resolve(src_dir, name):
    """The path under user/ that #include "name" names, or None for a header outside it."""
    for base in (src_dir, USER):
        path = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(path) and path.startswith(USER + os.sep):
            return os.path.relpath(path, USER)
    return None


def include_problems(rel, lines):
    bad = []
    mine = room(rel)
    if mine not in FLOOR:
        return [f"user/{rel}: the room {mine}/ is not in {os.path.basename(__file__)}'s FLOORS"]
    src_dir = os.path.dirname(os.path.join(USER, rel))
    for n, line in enumerate(lines, 1):
        m = INCLUDE.match(line)
        target = m and resolve(src_dir, m.group(1))
        if not target or room(target) == mine:
            continue
        theirs = room(target)
        if theirs not in FLOOR:
            bad.append(f"user/{rel}:{n}: includes {target}, of a room not in FLOORS")
        elif FLOOR[theirs] > FLOOR[mine]:
            bad.append(f"user/{rel}:{n}: includes {target}: {theirs}/ is above {mine}/")
        elif FLOOR[theirs] == FLOOR[mine]:
            bad.append(f"user/{rel}:{n}: includes {target}: {theirs}/ is beside {mine}/")
    return bad


def sources():
    for dirpath, dirs, files in os.walk(USER):
        dirs.sort()
        for name in sorted(files):
            if name.endswith((".c", ".h")):
                yield os.path.relpath(os.path.join(dirpath, name), USER)


def main():
    ups, big = [], []
    for rel in sources():
        with open(os.path.join(USER, rel), encoding="utf-8") as f:
            lines = f.read().splitlines()
        ups += include_problems(rel, lines)
        if len(lines) > MAX_LINES:
            big.append(f"user/{rel}: {len(lines)} lines, over {MAX_LINES}: split it by concept")
    for b in ups + big:
        print(b)
    print(f"check-layers: includes that reach up or aside: {len(ups)}, "
          f"files over {MAX_LINES} lines: {len(big)}")
    return 1 if ups or big else 0


if __name__ == "__main__":
    sys.exit(main())
