#!/usr/bin/env python3
"""What profiling adds to a step, two ways, side by side (tests/gpu/README.md):

- cuprobe compare's figures (compare.json): off, bpf and cupti windows interleaved
  in one process, each mode's median step time over off's with a bootstrap 95 % CI;
- torch.profiler's own inflation, measured the way one must without compare: its
  run (b) against the baseline run (c), the median of (b)'s active steps over the
  median of (c)'s same steps, with a bootstrap CI of the same kind; and cuprobe
  record's runs (d, a) against (c) the same way, for the same loop.

  inflation.py --compare DIR/compare.json --schedule SCHED \\
      --steps c=c.steps.json --steps b=b.steps.json [--steps d=... --steps a=...] \\
      [--json OUT.json]
"""
import argparse
import json
import random
import statistics
import sys

ITERS = 2000


def phase_active(s, i):
    """torch.profiler.schedule: is step i an active (RECORD) step."""
    if i < s["skip_first"]:
        return False
    i -= s["skip_first"]
    per = s["wait"] + s["warmup"] + s["active"]
    if s["repeat"] and i // per >= s["repeat"]:
        return False
    return i % per >= s["wait"] + s["warmup"]


def parse_schedule(text):
    s = {"skip_first": 0, "wait": 0, "warmup": 0, "active": 1, "repeat": 0}
    for part in text.split(","):
        k, v = part.split("=")
        s[k] = int(v)
    return s


def median_ratio(base, other, seed=1):
    """median(other) / median(base), its bootstrap 95 % interval, and the added ns."""
    rnd = random.Random(seed)
    ratios, diffs = [], []
    for _ in range(ITERS):
        a = statistics.median(rnd.choices(base, k=len(base)))
        b = statistics.median(rnd.choices(other, k=len(other)))
        ratios.append(b / a)
        diffs.append(b - a)
    ratios.sort()
    diffs.sort()
    lo, hi = int(0.025 * (ITERS - 1)), int(0.975 * (ITERS - 1))
    mb, ma = statistics.median(other), statistics.median(base)
    return {"ratio": mb / ma, "ci95": [ratios[lo], ratios[hi]], "added_ns": mb - ma,
            "added_ci95": [diffs[lo], diffs[hi]], "n_base": len(base), "n": len(other)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--compare", required=True)
    ap.add_argument("--schedule", required=True)
    ap.add_argument("--steps", action="append", default=[])
    ap.add_argument("--json")
    a = ap.parse_args()
    sched = parse_schedule(a.schedule)
    steps = {}
    for kv in a.steps:
        k, path = kv.split("=", 1)
        try:
            steps[k] = json.load(open(path))["iter_ns"]
        except (OSError, ValueError, KeyError) as e:
            print(f"inflation.py: {k}: cannot read {path}: {e}")
    out = {"compare": {}, "separate_runs": {}, "notes": []}
    try:
        cmp = json.load(open(a.compare))
    except (OSError, ValueError) as e:
        cmp = None
        out["notes"].append(f"no compare.json ({e})")

    print("== What profiling adds to a step: cuprobe compare (one run) beside separate runs ==")
    print(f"{'WHAT':44} {'RATIO':>7} {'95% CI':>17} {'ADDED_US':>9} {'STEPS':>7}")
    if cmp:
        for r in cmp["results"]:
            q, d = r["ratio_to_off"], r["added_ns_per_step"]
            out["compare"][r["mode"]] = {
                "ratio": q and q["value"], "ci95": q and [q["ci95_low"], q["ci95_high"]],
                "added_ns": d and d["value"], "steps": r["steps"],
                "probe_cost_ns_per_step": r["probe_cost_ns_per_step"],
                "cupti_overhead_ns_per_step": r["cupti_overhead_ns_per_step"],
                "explained": r["explained"]}
            if r["mode"] == "off" or not q:
                continue
            ci = f"[{q['ci95_low']:.3f}, {q['ci95_high']:.3f}]" if q["ci95_low"] else "-"
            print(f"{'compare: ' + r['mode'] + ' windows / off windows':44} {q['value']:7.3f} "
                  f"{ci:>17} {d['value'] / 1e3:9.1f} {r['steps']:7d}")
        for n in cmp["notes"]:
            out["notes"].append("compare: " + n)
    base = steps.get("c")
    labels = {"b": "torch.profiler run (b) / baseline run (c)",
              "d": "cuprobe record run (d) / baseline run (c)",
              "a": "cuprobe record --cupti (a) / baseline (c)"}
    for k in ("b", "d", "a"):
        if k not in steps or not base:
            continue
        idx = [i for i in range(min(len(base), len(steps[k]))) if phase_active(sched, i)]
        if len(idx) < 2:
            out["notes"].append(f"{k}: too few active steps")
            continue
        r = median_ratio([base[i] for i in idx], [steps[k][i] for i in idx])
        out["separate_runs"][k] = r
        ci = f"[{r['ci95'][0]:.3f}, {r['ci95'][1]:.3f}]"
        print(f"{labels[k]:44} {r['ratio']:7.3f} {ci:>17} {r['added_ns'] / 1e3:9.1f} {r['n']:7d}")
    if "c2" in steps and base:
        r = median_ratio(base, steps["c2"])
        out["separate_runs"]["c2"] = r
        print(f"{'baseline again (c2) / baseline (c): noise':44} {r['ratio']:7.3f} "
              f"{'[%.3f, %.3f]' % tuple(r['ci95']):>17} {r['added_ns'] / 1e3:9.1f} {r['n']:7d}")
    for n in out["notes"]:
        print("note:", n)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0 if cmp else 1


if __name__ == "__main__":
    sys.exit(main())
