#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The daemon's graph metrics of one pid against the traces it wrote.

usage: check_graph_metrics.py OUT_DIR METRICS_FILE PID

Over every trace of PID under OUT_DIR: the replays of known and of unknown
content, and each known replay's kernels by name (its content in the trace's
graphs list), must equal cuprobe_graph_replays_total{content} and
cuprobe_graph_kernels_total{kernel,api} summed over their labels; there must
be replays of known content at all.
"""
import collections
import glob
import json
import re
import sys


def traces(out, pid):
    for f in glob.glob(out + "/run_*/*.pt.trace.json"):
        try:
            t = json.load(open(f))
        except (OSError, ValueError):
            continue
        c = t.get("cuprobe") if isinstance(t, dict) else None
        if c and c.get("pid") == pid:
            yield t


def main():
    out, mfile, pid = sys.argv[1], sys.argv[2], int(sys.argv[3])
    known = unknown = 0
    kernels = collections.Counter()
    n = 0
    for t in traces(out, pid):
        n += 1
        graphs = {g["id"]: g for g in t["cuprobe"].get("graphs", [])}
        for e in t["traceEvents"]:
            a = e.get("args", {})
            if e.get("ph") != "X" or "graph content" not in a:
                continue
            g = graphs.get(a["graph content"])
            if not g:
                unknown += 1
                continue
            known += 1
            for k in g["kernel_nodes"]:
                kernels[(k["kernel"], e["name"])] += k["count"]
    got = collections.Counter()
    replays = collections.Counter()
    lab = re.compile(r'(\w+)="((?:[^"\\]|\\.)*)"')
    for line in open(mfile):
        m = re.match(r'(cuprobe_graph_(?:kernels|replays)_total)\{(.*)\} (\S+)$', line)
        if not m:
            continue
        labels = dict(lab.findall(m.group(2)))
        if labels.get("pid") != str(pid):
            continue
        v = int(float(m.group(3)))
        if m.group(1) == "cuprobe_graph_replays_total":
            replays[labels["content"]] += v
        else:
            got[(labels["kernel"], labels["api"])] += v
    errors = []
    if not n or not known:
        errors.append("%d traces of pid %d, %d replays of known content" % (n, pid, known))
    if replays["known"] != known or replays["unknown"] != unknown:
        errors.append("replays: traces known %d unknown %d, /metrics %s" % (known, unknown, dict(replays)))
    if got != kernels:
        errors.append("graph kernels: traces %s, /metrics %s" % (dict(kernels), dict(got)))
    if errors:
        sys.exit("\n".join(errors))
    print("pid %d: %d traces, %d replays (%d unknown), %d graph kernels" %
          (pid, n, known + unknown, unknown, sum(kernels.values())))


if __name__ == "__main__":
    main()
