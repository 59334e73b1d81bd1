#!/usr/bin/env python3
"""Checks a trace's captured launches (cat cuda_capture) against the capture
workload's $CUPROBE_GT.captured: the same calls, in the same captures (the
trace's capture ids, in order, are the workload's captures 1, 2, ...), and the
cuprobe object's captured count equal to them.

  check_capture.py TRACE GT.captured
Exit status 0 when it holds; otherwise what differs is printed.
"""
import collections
import json
import sys


def main():
    trace, truth = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
    evs = [e for e in trace["traceEvents"] if e.get("cat") == "cuda_capture"]
    ids = sorted({e["args"]["capture id"] for e in evs})
    number = {cid: k + 1 for k, cid in enumerate(ids)}
    got = collections.Counter()
    for e in evs:
        a = e["args"]
        got[(number[a["capture id"]], e["name"], a.get("kernel", ""),
             a.get("grid", [0])[0], int(a["stream handle"], 16), a.get("bytes", 0))] += 1
    want = collections.Counter()
    for c in truth["calls"]:
        want[(c["capture"], c["api"], c["kernel"], c["grid"], c["stream"], c["bytes"])] += c["count"]
    bad = False
    if len(ids) != truth["captures"]:
        print(f"{len(ids)} capture ids in the trace, {truth['captures']} captures made")
        bad = True
    for k in sorted(set(got) | set(want), key=str):
        if got[k] != want[k]:
            print(f"{k}: trace {got[k]}, truth {want[k]}")
            bad = True
    if trace["cuprobe"].get("captured") != sum(want.values()):
        print(f"cuprobe.captured {trace['cuprobe'].get('captured')}, truth {sum(want.values())}")
        bad = True
    if not bad:
        print(f"{sum(want.values())} captured calls in {len(ids)} captures match")
    return 1 if bad else 0


sys.exit(main())
