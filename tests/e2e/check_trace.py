#!/usr/bin/env python3
"""Checks cuprobe traces for the end-to-end tests.

  check_trace.py valid FILE...              Kineto fields and types are as REFERENCE.md says
  check_trace.py match --gt GT FILE...      launches equal the workload's ground truth, exactly,
                                            each in the step the workload made it in
                  [--steps 2,3]             ... counting only ground-truth calls of these steps
                  [--step-div N]            ... where cuprobe counts one step per N workload steps
                  [--any-step]              ... ignoring steps (no --step, or attached late)
  check_trace.py accounted --gt GT FILE     launches recorded + launches dropped = launches made,
                                            none invented or doubled, probe hits all explained
                  [--steps LO-HI]           ... for ground-truth steps LO..HI, which the trace holds
                  [--said LOG]              ... and drops, if any, were said in cuprobe's LOG
  check_trace.py field FILE KEY             prints cuprobe.KEY of a trace
Exit status 0 when the check holds; otherwise what differs is printed.
"""
import argparse
import collections
import json
import re
import sys

MEMCPY_KINDS = ["HtoH", "HtoD", "DtoH", "DtoD", "Default"]
TS_RE = re.compile(r'"(ts|dur)": (-?\d+\.\d{3})[,}]')


def load(path):
    with open(path) as f:
        text = f.read()
    return text, json.loads(text)


def check_valid(paths):
    errors = []
    for p in paths:
        text, t = load(p)
        for key in ("schemaVersion", "deviceProperties", "distributedInfo", "displayTimeUnit",
                    "baseTimeNanoseconds", "traceEvents", "traceName"):
            if key not in t:
                errors.append(f"{p}: no top-level {key}")
        if not isinstance(t.get("baseTimeNanoseconds"), int):
            errors.append(f"{p}: baseTimeNanoseconds is not an integer")
        for e in t.get("traceEvents", []):
            if "name" not in e or "ph" not in e:
                errors.append(f"{p}: event without name/ph: {e}")
            if e.get("ph") == "X":
                for key in ("cat", "pid", "tid", "ts", "dur"):
                    if key not in e:
                        errors.append(f"{p}: X event without {key}: {e}")
        # Every ts/dur is printed in microseconds with exactly three decimals.
        n_time = len(re.findall(r'"(?:ts|dur)":', text))
        if n_time != len(TS_RE.findall(text)):
            errors.append(f"{p}: some ts/dur lack three decimals")
    for e in errors[:20]:
        print(e)
    return not errors


def launch_key(e):
    a = e["args"]
    api = e["name"]
    if "kind" in a:
        return (e["tid"], api, "", tuple(), tuple(), 0, int(a["stream handle"], 16), a["bytes"], a["kind"], 0)
    if "value" in a:
        return (e["tid"], api, "", tuple(), tuple(), 0, int(a["stream handle"], 16), a["bytes"], "", a["value"])
    if "graph" in a:
        return (e["tid"], api, a["graph"], tuple(), tuple(), 0, int(a["stream handle"], 16), 0, "", 0)
    return (e["tid"], api, a["kernel"], tuple(a["grid"]), tuple(a["block"]), a["shared memory"],
            int(a["stream handle"], 16), 0, "", 0)


def gt_key(c):
    api = c["api"]
    if "MemcpyAsync" in api:
        return (c["tid"], api, "", tuple(), tuple(), 0, c["stream"], c["bytes"],
                MEMCPY_KINDS[c["kind"]], 0)
    if "MemsetAsync" in api:
        return (c["tid"], api, "", tuple(), tuple(), 0, c["stream"], c["bytes"], "", c["value"])
    if "GraphLaunch" in api:
        return (c["tid"], api, "0x%x" % c["func"], tuple(), tuple(), 0, c["stream"], 0, "", 0)
    # A launch the truth names nothing is by a handle cuprobe never saw made: a driver
    # launch keeps the handle, a runtime launch the address no object maps.
    kernel = c["kernel"] or ("0x%x" if api.startswith("cuda") else "CUfunction 0x%x") % c["func"]
    return (c["tid"], api, kernel, tuple(c["grid"]), tuple(c["block"]), c["shmem"], c["stream"],
            0, "", 0)


def check_match(paths, gt_path, steps, step_div, any_step):
    got = collections.Counter()
    for p in paths:
        _, t = load(p)
        for e in t["traceEvents"]:
            if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver"):
                step = None if any_step else e["args"]["step"]
                got[launch_key(e) + (step,)] += 1
    _, gt = load(gt_path)
    want = collections.Counter()
    for c in gt["calls"]:
        if steps is None or c.get("step") in steps:
            step = None if any_step else c["step"] // step_div
            want[gt_key(c) + (step,)] += c["count"]
    if got == want:
        print(f"{sum(got.values())} launches match")
        return True
    for k in sorted(set(got) | set(want), key=str):
        if got[k] != want[k]:
            print(f"trace {got[k]} vs truth {want[k]}: {k}")
    return False


def check_accounted(path, gt_path, steps, said):
    _, t = load(path)
    meta = t["cuprobe"]
    got = collections.Counter(launch_key(e) for e in t["traceEvents"]
                              if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver"))
    _, gt = load(gt_path)
    want = collections.Counter()
    for c in gt["calls"]:
        if steps is None or steps[0] <= c.get("step", 0) <= steps[1]:
            want[gt_key(c)] += c["count"]
    recorded, drops, made = sum(got.values()), meta["drops"], sum(want.values())
    print(f"# {recorded} recorded + {drops} dropped of {made} made")
    errors = []
    if recorded + drops != made:
        errors.append(f"{recorded} recorded + {drops} dropped != {made} made")
    if meta["launches"] != recorded:
        errors.append(f"cuprobe.launches {meta['launches']} != {recorded} events")
    errors += [f"more than made: {k}" for k in got if got[k] > want[k]]
    hits = meta.get("probe_hits")
    stale = meta.get("stale_link_hits", 0)
    if hits is not None and hits != recorded + drops + meta["nested_skipped"] + stale:
        errors.append(f"probe_hits {hits} != recorded + dropped + nested "
                      f"{meta['nested_skipped']} + stale {stale}")
    if steps is not None and meta.get("steps") != list(steps):
        errors.append(f"cuprobe.steps {meta.get('steps')} != {list(steps)}")
    if said and drops and f"lost {drops} launches" not in open(said).read():
        errors.append(f"{drops} drops not said in {said}")
    for e in errors:
        print(e)
    return not errors


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    v = sub.add_parser("valid")
    v.add_argument("files", nargs="+")
    m = sub.add_parser("match")
    m.add_argument("--gt", required=True)
    m.add_argument("--steps")
    m.add_argument("--step-div", type=int, default=1)
    m.add_argument("--any-step", action="store_true")
    m.add_argument("files", nargs="+")
    c = sub.add_parser("accounted")
    c.add_argument("--gt", required=True)
    c.add_argument("--steps")
    c.add_argument("--said")
    c.add_argument("file")
    f = sub.add_parser("field")
    f.add_argument("file")
    f.add_argument("key")
    a = ap.parse_args()
    if a.cmd == "valid":
        return 0 if check_valid(a.files) else 1
    if a.cmd == "match":
        steps = None if a.steps is None else {int(s) for s in a.steps.split(",") if s}
        return 0 if check_match(a.files, a.gt, steps, a.step_div, a.any_step) else 1
    if a.cmd == "accounted":
        steps = None if a.steps is None else tuple(int(x) for x in a.steps.split("-"))
        return 0 if check_accounted(a.file, a.gt, steps, a.said) else 1
    _, t = load(a.file)
    print(json.dumps(t["cuprobe"][a.key]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
