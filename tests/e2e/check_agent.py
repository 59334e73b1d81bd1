#!/usr/bin/env python3
"""Checks what agent_harness decoded from the agent (JSON lines) for test_agent.sh.

  check_agent.py match --gt GT RECORDS [--subset] [--skew] [--graph-nodes N]
      API and GPU records equal the workload's ground truth, joined by
      correlation id: per thread, API, kernel name (demangled), grid, block,
      shared memory; copies by bytes and kind, sets by bytes and value; a
      graph launch has N kernels. --subset: records are a part of the ground
      truth (a window that closed early). --skew: GPU records start before
      their API call (the simulator's clock fault) instead of after it.
  check_agent.py window RECORDS --reasons disable,exit
      the window protocol: one STARTED or ERROR, then FLUSHED with the given
      reasons in order, each FLUSHED counting the records since the previous
      one; every kernel name is sent earlier in its window; times lie between
      the harness's spawn and end; nothing follows the last FLUSHED.
  check_agent.py disable RECORDS
      GPU records came only after the harness detached enable, and none
      came after the window's FLUSHED.
  check_agent.py error RECORDS --code N --stage N [--message REGEX]
  check_agent.py dropped RECORDS --reason N --equals N|STATS:KEY
  check_agent.py count RECORDS TYPE [--equals N]     prints (or checks) a count
  check_agent.py stats STATS EXPR...                 EXPR: key=N, key>N or key<N
Exit status 0 when the check holds; otherwise what differs is printed.
"""
import argparse
import collections
import json
import re
import sys

RUNTIME_CBIDS = {
    211: "cudaLaunchKernel", 214: "cudaLaunchKernel_ptsz",
    269: "cudaLaunchCooperativeKernel", 270: "cudaLaunchCooperativeKernel_ptsz",
    430: "cudaLaunchKernelExC", 431: "cudaLaunchKernelExC_ptsz",
    41: "cudaMemcpyAsync", 225: "cudaMemcpyAsync_ptsz",
    51: "cudaMemsetAsync", 235: "cudaMemsetAsync_ptsz",
    311: "cudaGraphLaunch", 312: "cudaGraphLaunch_ptsz",
}
DRIVER_CBIDS = {
    307: "cuLaunchKernel", 442: "cuLaunchKernel_ptsz",
    652: "cuLaunchKernelEx", 653: "cuLaunchKernelEx_ptsz",
    514: "cuGraphLaunch", 515: "cuGraphLaunch_ptsz",
}
GRAPH_APIS = {"cudaGraphLaunch", "cudaGraphLaunch_ptsz", "cuGraphLaunch", "cuGraphLaunch_ptsz"}
COPY_APIS = {"cudaMemcpyAsync", "cudaMemcpyAsync_ptsz"}
SET_APIS = {"cudaMemsetAsync", "cudaMemsetAsync_ptsz"}
DRIVER_KERNEL_APIS = {"cuLaunchKernel", "cuLaunchKernel_ptsz", "cuLaunchKernelEx",
                      "cuLaunchKernelEx_ptsz"}
# CUpti_ActivityMemcpyKind -> cudaMemcpyKind
COPY_KIND = {9: 0, 1: 1, 2: 2, 8: 3}
MARKERS = {"started", "flushed"}
RECORD_TYPES = {"api", "kernel", "memcpy", "memset", "overhead", "dropped", "string", "error",
                "unknown"}


def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def api_name(r):
    table = DRIVER_CBIDS if r["domain"] == 1 else RUNTIME_CBIDS
    return table.get(r["cbid"], f"cbid{r['cbid']}")


def fail(errors):
    for e in errors[:30]:
        print(e)
    if len(errors) > 30:
        print(f"... {len(errors) - 30} more")
    return 1 if errors else 0


def harness_ts(recs, event):
    for r in recs:
        if r["t"] == "harness" and r["event"] == event:
            return r["ts"]
    return None


def expected(gt, nodes):
    """Multisets of what the ground truth says CUPTI should have seen."""
    api, kern, graph, copy, sets = (collections.Counter() for _ in range(5))
    for c in gt["calls"]:
        n, a, tid = c["count"], c["api"], c["tid"]
        api[(tid, a)] += n
        if a in GRAPH_APIS:
            graph[(tid, a)] += n * nodes
        elif a in COPY_APIS:
            copy[(tid, a, c["bytes"], c["kind"])] += n
        elif a in SET_APIS:
            sets[(tid, a, c["bytes"], c["value"])] += n
        else:
            name = f"sim_cufunction_{c['func']:#x}" if a in DRIVER_KERNEL_APIS else c["kernel"]
            kern[(tid, a, name, tuple(c["grid"]), tuple(c["block"]), c["shmem"])] += n
    return api, kern, graph, copy, sets


def observed(recs, errors, skew):
    apis = {}
    for r in recs:
        if r["t"] == "api":
            if r["corr"] in apis:
                errors.append(f"correlation {r['corr']} on two API records")
            apis[r["corr"]] = r
    api, kern, graph, copy, sets = (collections.Counter() for _ in range(5))
    nodes = collections.Counter()
    for r in apis.values():
        api[(r["tid"], api_name(r))] += 1
        if r["start"] > r["end"]:
            errors.append(f"API record ends before it starts: {r}")
    for r in recs:
        if r["t"] not in ("kernel", "memcpy", "memset"):
            continue
        a = apis.get(r["corr"])
        if a is None:
            errors.append(f"{r['t']} record without its API record: correlation {r['corr']}")
            continue
        if skew and not r["start"] < a["start"]:
            errors.append(f"skewed {r['t']} starts after its API call: {r['start']} >= {a['start']}")
        if not skew and r["start"] < a["end"]:
            errors.append(f"{r['t']} starts before its API call ends (clock fault): corr {r['corr']}")
        tid, name = a["tid"], api_name(a)
        if r["t"] == "memcpy":
            copy[(tid, name, r["bytes"], COPY_KIND.get(r["copy_kind"], -1))] += 1
        elif r["t"] == "memset":
            sets[(tid, name, r["bytes"], r["value"])] += 1
        elif r["graph_id"]:
            graph[(tid, name)] += 1
            nodes[r["corr"]] += 1
        else:
            kern[(tid, name, r["demangled"], tuple(r["grid"]), tuple(r["block"]),
                  r["dyn_shmem"])] += 1
    return (api, kern, graph, copy, sets), nodes


def compare(what, want, got, subset, errors):
    for k in sorted(set(want) | set(got), key=str):
        w, g = want.get(k, 0), got.get(k, 0)
        if (subset and g > w) or (not subset and g != w):
            errors.append(f"{what} {k}: ground truth {w}, agent {g}")


def cmd_match(a):
    recs, gt = load(a.records), json.load(open(a.gt))
    errors = []
    want = expected(gt, a.graph_nodes)
    got, nodes = observed(recs, errors, a.skew)
    for what, w, g in zip(("api", "kernel", "graph kernel", "memcpy", "memset"), want, got):
        compare(what, w, g, a.subset, errors)
    for corr, n in nodes.items():
        if n != a.graph_nodes:
            errors.append(f"graph launch {corr}: {n} kernels, not {a.graph_nodes}")
    if not a.subset and sum(got[0].values()) == 0:
        errors.append("no API records at all")
    return fail(errors)


def cmd_window(a):
    recs = load(a.records)
    errors = []
    lo, hi = harness_ts(recs, "spawn"), harness_ts(recs, "end")
    reasons = {"disable": 1, "exit": 2}
    want = [reasons[x] for x in a.reasons.split(",") if x]
    got, count, names, opened, after_last = [], 0, set(), 0, 0
    for r in recs:
        t = r["t"]
        if t in ("harness", "exit"):
            continue
        after_last += 1
        if t in ("started", "error") and (t == "started" or r["stage"] <= 5):
            opened += 1
        if t == "flushed":
            got.append(r["reason"])
            if r["records"] != count:
                errors.append(f"window {r['window']}: FLUSHED says {r['records']} records, "
                              f"{count} came")
            count, names, after_last = 0, set(), 0
            continue
        if t in MARKERS:
            continue
        count += 1
        if t == "string" and r["offset"] + r["len"] == r["total"]:
            names.add(r["id"])
        if t == "kernel" and r["name_id"] and r["name_id"] not in names:
            errors.append(f"kernel name {r['name_id']} used before its string in the window")
        for key in ("start", "end"):
            if key in r and lo and hi and r[key] and not lo <= r[key] <= hi:
                errors.append(f"{t} {key} {r[key]} is outside the run [{lo}, {hi}]: "
                              "not CLOCK_MONOTONIC")
                break
    if got != want:
        errors.append(f"FLUSHED reasons {got}, expected {want}")
    if opened != len(want):
        errors.append(f"{opened} windows opened (STARTED or ERROR), expected {len(want)}")
    if after_last:
        errors.append(f"{after_last} records after the last FLUSHED")
    return fail(errors)


def cmd_disable(a):
    recs = load(a.records)
    errors, state = [], "before"
    for r in recs:
        if r["t"] == "harness" and r["event"] == "disable":
            state = "window"
        elif r["t"] == "flushed" and state == "window":
            state = "after"
        elif r["t"] in ("kernel", "memcpy", "memset") and state == "before":
            errors.append(f"{r['t']} record before the window closed (late records expected)")
        elif r["t"] in ("api", "kernel", "memcpy", "memset") and state == "after":
            errors.append(f"{r['t']} record after the FLUSHED marker")
    if state != "after":
        errors.append(f"the window never closed (state {state})")
    return fail(errors)


def cmd_error(a):
    recs = load(a.records)
    errs = [r for r in recs if r["t"] == "error"]
    for r in errs:
        if r["code"] == a.code and r["stage"] == a.stage and \
           (not a.message or re.search(a.message, r["message"])):
            return 0
    print(f"no error record with code {a.code}, stage {a.stage}: {errs}")
    return 1


def read_stats(path):
    out = {}
    with open(path) as f:
        for line in f:
            k, v = line.split("\t")
            out[k] = int(v)
    return out


def cmd_dropped(a):
    recs = load(a.records)
    total = sum(r["count"] for r in recs if r["t"] == "dropped" and r["reason"] == a.reason)
    if a.equals.startswith("STATS:"):
        path, key = a.equals[6:].rsplit(":", 1)
        want = read_stats(path)[key]
    else:
        want = int(a.equals)
    if total != want or not want:
        print(f"dropped records of reason {a.reason}: agent says {total}, expected {want} (> 0)")
        return 1
    return 0


def cmd_count(a):
    n = sum(1 for r in load(a.records) if r["t"] == a.type)
    if a.equals is None:
        print(n)
        return 0
    if n != a.equals:
        print(f"{n} {a.type} records, expected {a.equals}")
        return 1
    return 0


def cmd_stats(a):
    stats = read_stats(a.stats)
    errors = []
    for e in a.exprs:
        m = re.fullmatch(r"(\w+)([=<>])(\d+)", e)
        if not m or m.group(1) not in stats:
            errors.append(f"bad expression or unknown key: {e}")
            continue
        v, op, n = stats[m.group(1)], m.group(2), int(m.group(3))
        if not {"=": v == n, "<": v < n, ">": v > n}[op]:
            errors.append(f"{m.group(1)} is {v}, expected {op}{n}")
    return fail(errors)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("match")
    m.add_argument("--gt", required=True)
    m.add_argument("--subset", action="store_true")
    m.add_argument("--skew", action="store_true")
    m.add_argument("--graph-nodes", type=int, default=2)
    m.add_argument("records")
    w = sub.add_parser("window")
    w.add_argument("--reasons", required=True)
    w.add_argument("records")
    d = sub.add_parser("disable")
    d.add_argument("records")
    e = sub.add_parser("error")
    e.add_argument("--code", type=int, required=True)
    e.add_argument("--stage", type=int, required=True)
    e.add_argument("--message")
    e.add_argument("records")
    r = sub.add_parser("dropped")
    r.add_argument("--reason", type=int, required=True)
    r.add_argument("--equals", required=True)
    r.add_argument("records")
    c = sub.add_parser("count")
    c.add_argument("--equals", type=int)
    c.add_argument("records")
    c.add_argument("type")
    s = sub.add_parser("stats")
    s.add_argument("stats")
    s.add_argument("exprs", nargs="+")
    a = p.parse_args()
    return {"match": cmd_match, "window": cmd_window, "disable": cmd_disable, "error": cmd_error,
            "dropped": cmd_dropped, "count": cmd_count, "stats": cmd_stats}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
