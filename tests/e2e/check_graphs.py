#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Checks a trace's graph replays against the graphs workload's ground truth.

usage: check_graphs.py TRACE GT.graphs [--unknown-ok]

--unknown-ok: a replay the workload says cannot be known (made before its
wait) may also carry its content, exactly: a daemon finds a process at its
exec, and may be there before the graph was made.

Every replay of every executable graph, in the order it was made, must carry
the content the workload says that instance ran: its nodes, its kernels by
name with their counts, its copies, sets and other nodes; a replay of an
instance the workload says cannot be known must be of unknown content
(graph content 0), and be counted so. The trace's counts must add up.
"""
import collections
import json
import sys


def content_of(g):
    kernels = collections.Counter()
    for k in g["kernel_nodes"]:
        kernels[k["kernel"]] += k["count"]
    return {"nodes": g["nodes"], "kernels": dict(kernels), "copies": g["copies"],
            "sets": g["sets"], "other": g["other"]}


def main():
    trace = json.load(open(sys.argv[1]))
    truth = json.load(open(sys.argv[2]))
    # A profiler that may have come before the graph was made: unknown, or exact.
    unknown_ok = "--unknown-ok" in sys.argv[3:]
    cp = trace["cuprobe"]
    graphs = {g["id"]: g for g in cp.get("graphs", [])}
    errors = []
    got = collections.defaultdict(list)
    for e in trace["traceEvents"]:
        if e.get("ph") != "X" or "GraphLaunch" not in e.get("name", ""):
            continue
        if e.get("cat") == "cuda_capture":
            continue
        a = e["args"]
        got[int(a["graph"], 16)].append((e["ts"], a))
    want = collections.defaultdict(list)
    # A trace of some steps holds the replays of those steps only.
    lo, hi = cp.get("steps", [0, 1 << 62])
    groups = [g for g in truth["groups"] if lo <= g["step"] <= hi]
    for grp in sorted(groups, key=lambda g: (g["instance"], g["step"])):
        exp = {k: grp[k] for k in ("nodes", "kernels", "copies", "sets", "other")}
        want[grp["exec"]] += [(grp["known"], exp, grp["instance"])] * grp["replays"]
    replays = unknown = kernels = 0
    for ex in sorted(set(got) | set(want)):
        g = [a for _, a in sorted(got[ex], key=lambda x: x[0])]
        w = want[ex]
        if len(g) != len(w):
            errors.append("exec 0x%x: %d replays in the trace, %d made" % (ex, len(g), len(w)))
            continue
        for i, (a, (known, exp, inst)) in enumerate(zip(g, w)):
            cid = a.get("graph content")
            replays += 1
            if not known and (cid == 0 or not unknown_ok):
                unknown += 1
                if cid != 0:
                    errors.append("exec 0x%x replay %d (instance %d): made before cuprobe "
                                  "attached, yet given content %s" % (ex, i, inst, cid))
                continue
            if not cid or cid not in graphs:
                errors.append("exec 0x%x replay %d (instance %d): content %r not known"
                              % (ex, i, inst, cid))
                continue
            c = content_of(graphs[cid])
            kernels += c["nodes"] and sum(c["kernels"].values())
            if c != exp:
                errors.append("exec 0x%x replay %d (instance %d): content %d is %s, ran %s"
                              % (ex, i, inst, cid, json.dumps(c), json.dumps(exp)))
            if a.get("graph nodes") != exp["nodes"] or \
               a.get("graph kernels") != sum(exp["kernels"].values()):
                errors.append("exec 0x%x replay %d: graph nodes/kernels args %r/%r"
                              % (ex, i, a.get("graph nodes"), a.get("graph kernels")))
    for key, n in (("graph_replays", replays), ("graph_unknown_replays", unknown),
                   ("graph_kernels", kernels)):
        if cp.get(key, 0) != n:
            errors.append("%s is %r, want %d" % (key, cp.get(key), n))
    for e in errors[:20]:
        print(e)
    if errors:
        sys.exit(1)
    print("%d replays of %d executable graphs checked (%d of unknown content), %d kernels"
          % (replays, len(want), unknown, kernels))


if __name__ == "__main__":
    main()
