#!/usr/bin/env python3
"""Loads a folder of cuprobe traces in Holistic Trace Analysis (HTA 0.5.0) and checks
that HTA sees in them what the files hold. Run with the python of the venv that
scripts/install-real.sh makes (REAL_HTA_PY).

  check_hta.py DIR --ranks N           HTA finds N ranks, the files' ranks; for each rank
                                       it parsed every CPU launch (cuda_runtime, cuda_driver)
               [--gpu]                 ... and the files have GPU work (--cupti): HTA's events,
                                       kernel breakdown and temporal breakdown hold every
                                       kernel, copy and set, by name and count, and HTA joins
                                       every launch that has GPU work to it
Exit status 0 when all holds; otherwise what differs is printed.

HTA rounds ns timestamps to whole microseconds (start up, end down): a span of the
file loses less than 2 us in HTA, which bounds the duration checks. With
HTA_DISABLE_NS_ROUNDING=1 in the environment HTA keeps them, and the checks are exact.
"""
import argparse
import collections
import glob
import json
import logging
import os
import sys
import warnings

LAUNCH_CATS = ("cuda_runtime", "cuda_driver")
# What HTA's rounding may take off one span, in us (1e-6: the decimals' own error).
SLACK = 1e-6 if os.environ.get("HTA_DISABLE_NS_ROUNDING") == "1" else 2 + 1e-6
GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")


def expected(path):
    """What one trace file holds, counted from its JSON, independently of HTA."""
    with open(path) as f:
        t = json.load(f)
    ev = [e for e in t["traceEvents"] if e.get("ph") == "X"]
    gpu = [e for e in ev if e["cat"] in GPU_CATS]
    launches = [e for e in ev if e["cat"] in LAUNCH_CATS]
    gpu_corr = {e["args"]["correlation"] for e in gpu}
    return {
        "path": path,
        "rank": t["distributedInfo"]["rank"],
        "launches": len(launches),
        "launches_with_gpu": sum(1 for e in launches if e["args"]["correlation"] in gpu_corr),
        "kernels": collections.Counter(e["name"] for e in gpu if e["cat"] == "kernel"),
        # Kernels, copies and sets: HTA's breakdowns take all GPU work.
        "gpu": collections.Counter(e["name"] for e in gpu),
        "gpu_events": gpu,
        "steps": sorted(int(e["name"].split("#")[1]) for e in ev
                        if e["cat"] == "user_annotation" and e["name"].startswith("ProfilerStep#")),
    }


def gpu_durations(exp):
    d = collections.defaultdict(float)
    for e in exp["gpu_events"]:
        d[e["name"]] += e["dur"]
    return d


def load_hta(folder):
    # HTA logs every file it parses as a warning, and pandas warns about HTA's own
    # dtype handling: neither says anything about the trace.
    logging.getLogger("hta").setLevel(logging.ERROR)
    warnings.simplefilter("ignore", FutureWarning)
    from hta.trace_analysis import TraceAnalysis
    # Every step, the last one too: HTA drops the last step's events by default (a
    # torch.profiler trace's last step is often cut short), and these counts are of
    # the whole file.
    return TraceAnalysis(trace_dir=folder, include_last_profiler_step=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("dir")
    ap.add_argument("--ranks", type=int, required=True)
    ap.add_argument("--gpu", action="store_true")
    a = ap.parse_args()

    files = sorted(glob.glob(os.path.join(a.dir, "*.pt.trace.json")))
    exp = [expected(p) for p in files]
    errors = []
    by_rank = {}
    for e in exp:
        if e["rank"] in by_rank:
            errors.append(f"rank {e['rank']} in both {by_rank[e['rank']]['path']} and {e['path']}")
        by_rank[e["rank"]] = e
    if len(files) != a.ranks or len(by_rank) != a.ranks:
        errors.append(f"{len(files)} files with {len(by_rank)} ranks in {a.dir}, "
                      f"expected {a.ranks} (test setup)")

    ta = load_hta(a.dir)
    t = ta.t
    hta_ranks = sorted(t.traces.keys())
    if hta_ranks != sorted(by_rank) or len(hta_ranks) != a.ranks:
        errors.append(f"HTA sees ranks {hta_ranks}, the files have {sorted(by_rank)}, "
                      f"expected {a.ranks}")
    sym = t.symbol_table.get_sym_id_map()
    names = t.symbol_table.get_sym_table()
    launch_ids = [sym[c] for c in LAUNCH_CATS if c in sym]
    kernel_id = sym.get("kernel")

    print(f"# HTA: ranks {hta_ranks}")
    for rank in hta_ranks:
        e = by_rank.get(rank)
        if e is None:
            continue
        df = t.get_trace(rank)
        cpu = df[df["cat"].isin(launch_ids)]
        print(f"# rank {rank}: {len(cpu)} launches in HTA, {e['launches']} in "
              f"{os.path.basename(e['path'])}; steps {e['steps']}")
        if len(cpu) != e["launches"]:
            errors.append(f"rank {rank}: HTA parsed {len(cpu)} CPU launches, the file has "
                          f"{e['launches']}")
        # A launch's stream is "stream handle": in HTA it must stay a CPU event.
        if (cpu["stream"] != -1).any():
            errors.append(f"rank {rank}: HTA took {(cpu['stream'] != -1).sum()} launches "
                          "for GPU events (a stream arg)")
        if not a.gpu:
            if e["gpu"]:
                errors.append(f"rank {rank}: the file has GPU work, but no --gpu (test setup)")
            continue
        if not e["kernels"]:
            errors.append(f"rank {rank}: --gpu, but the file has no kernel (test setup)")

        kernels = collections.Counter(names[n] for n in df[df["cat"] == kernel_id]["name"])
        if kernels != e["kernels"]:
            errors.append(f"rank {rank}: HTA's kernels {dict(kernels)} != the file's "
                          f"{dict(e['kernels'])}")
        # HTA joins a launch to its GPU work by correlation (index_correlation).
        joined = int((cpu["index_correlation"] > 0).sum())
        if joined != e["launches_with_gpu"]:
            errors.append(f"rank {rank}: HTA joined {joined} launches to GPU work, the file "
                          f"has {e['launches_with_gpu']} with GPU work")

    if a.gpu and not errors:
        errors += check_breakdowns(ta, by_rank)
    for m in errors[:20]:
        print(m)
    return 0 if not errors else 1


def check_breakdowns(ta, by_rank):
    errors = []
    # Every kernel by name, none folded into "Others".
    _, km = ta.get_gpu_kernel_breakdown(visualize=False, duration_ratio=1.0, num_kernels=1 << 20,
                                        include_memory_kernels=True)
    for rank, e in by_rank.items():
        rows = km[km["rank"] == rank]
        got = dict(zip(rows["name"], rows["sum (us)"]))
        want = gpu_durations(e)
        if set(got) != set(want):
            errors.append(f"rank {rank}: kernel breakdown names {sorted(got)} != the file's "
                          f"{sorted(want)}")
            continue
        # Each event loses less than 2 us to HTA's rounding, never gains.
        for n, d in want.items():
            if not d - SLACK * e["gpu"][n] <= got[n] <= d + 1e-6:
                errors.append(f"rank {rank}: {n}: {got[n]} us in HTA's breakdown, "
                              f"{d:.3f} us in {e['gpu'][n]} events of the file")
    tb = ta.get_temporal_breakdown(visualize=False)
    if sorted(tb["rank"]) != sorted(by_rank):
        errors.append(f"temporal breakdown ranks {sorted(tb['rank'])} != {sorted(by_rank)}")
    for _, row in tb.iterrows():
        e = by_rank.get(row["rank"])
        if e is None:
            continue
        g = e["gpu_events"]
        span = max(x["ts"] + x["dur"] for x in g) - min(x["ts"] for x in g)
        kt = row["kernel_time(us)"]
        print(f"# rank {int(row['rank'])}: temporal breakdown: kernel time {kt} us, the file's GPU "
              f"span {span:.3f} us, compute {row['compute_time(us)']} us")
        if not span - SLACK <= kt <= span + 1e-6:
            errors.append(f"rank {int(row['rank'])}: kernel time {kt} us, the file's GPU "
                          f"work spans {span:.3f} us")
        if not 0 < row["compute_time(us)"] <= kt:
            errors.append(f"rank {int(row['rank'])}: compute time {row['compute_time(us)']} us "
                          f"outside (0, {kt}]")
    return errors


if __name__ == "__main__":
    sys.exit(main())
