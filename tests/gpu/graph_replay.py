# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""torch.cuda.graph replays, for run.sh's stage (g), and the check of their traces.

  python3 graph_replay.py [--replays N] [--out FILE]
      captures one forward pass of a small MLP (three matmuls, each followed by a
      ReLU, no grad) with torch.cuda.graph, after three warmup passes on a side stream
      as torch's docs ask, then replays it N times (default 50). Each replay is one
      step, as train.py makes them: g.replay(), torch.cuda.synchronize()
      (cudaDeviceSynchronize) and os.getppid(), so that either of run.sh's step
      probes is hit once per replay. Writes a JSON object of what it did to FILE.
      Exit 3: no torch; 4: no usable CUDA device.

  python3 graph_replay.py check --trace-dir DIR --replays N [--cupti] [--kernels-from DIR2]
      checks the traces cuprobe wrote of such a run, recorded in one cycle (--step
      alone), and prints one line per check, "[g] ok: ..." or "[g] FAILED: ...":
      - at least N graph launches, every one of known content ("graph content" not 0),
        with "graph kernels" above 0, and the cuprobe object's graph_replays,
        graph_unknown_replays and graph_kernels saying the same;
      - with --cupti, for every replay, "graph kernels" equal to the CUPTI kernel
        records whose correlation id is the replay's, and graph_gpu_kernels and
        graph_mismatches saying the same;
      - with --kernels-from DIR2 (the --cupti run's traces), whether every replay's
        expansion is the kernels CUPTI saw a replay run there: a note, not a check, as
        two processes may be given other kernels.
      Exit 0 when every check holds.
"""
import argparse
import glob
import json
import os
import sys
import time

GRAPH_LAUNCHES = ("cudaGraphLaunch", "cudaGraphLaunch_ptsz", "cuGraphLaunch",
                  "cuGraphLaunch_ptsz")


def run(args):
    try:
        import torch
    except ImportError:
        return 3
    if not torch.cuda.is_available():
        return 4
    dev = torch.device("cuda")
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(512, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
        torch.nn.Linear(1024, 512), torch.nn.ReLU()).to(dev)
    x = torch.randn(64, 512, device=dev)
    t0 = time.perf_counter_ns()
    with torch.no_grad():
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(3):
                model(x)
        torch.cuda.current_stream().wait_stream(side)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            y = model(x)
    torch.cuda.synchronize()
    t1 = time.perf_counter_ns()
    per = []
    for _ in range(args.replays):
        r0 = time.perf_counter_ns()
        g.replay()
        torch.cuda.synchronize()
        per.append(time.perf_counter_ns() - r0)
        os.getppid()
    facts = {"torch": torch.__version__, "device": torch.cuda.get_device_name(dev),
             "replays": args.replays, "capture_ms": (t1 - t0) / 1e6,
             "replay_us_median": sorted(per)[len(per) // 2] / 1e3 if per else None,
             "output_sum": float(y.sum())}
    print("graph_replay.py: %d replays of a captured 3-layer MLP forward (torch %s, %s)"
          % (args.replays, facts["torch"], facts["device"]))
    if args.out:
        with open(args.out, "w") as f:
            json.dump(facts, f)
    return 0


class Checks:
    def __init__(self):
        self.bad = 0

    def __call__(self, ok, what):
        print("[g] %s: %s" % ("ok" if ok else "FAILED", what))
        self.bad += not ok


def load(trace_dir):
    files = sorted(glob.glob(os.path.join(trace_dir, "run_*", "*.pt.trace.json")))
    return files, [json.load(open(f)) for f in files]


def graph_launches(traces):
    """(trace index, event) of every graph launch."""
    return [(i, e) for i, t in enumerate(traces) for e in t["traceEvents"]
            if e.get("name") in GRAPH_LAUNCHES and e.get("cat") in ("cuda_runtime", "cuda_driver")]


def cupti_kernels(traces, replays):
    """CUPTI's kernel records of each replay, by its correlation id (None: not joined)."""
    n = {}
    for i, t in enumerate(traces):
        for e in t["traceEvents"]:
            if e.get("cat") == "kernel" and "correlation" in e.get("args", {}):
                key = (i, e["args"]["correlation"])
                n[key] = n.get(key, 0) + 1
    return [n.get((i, r["args"]["correlation"]), 0) if "correlation" in r["args"] else None
            for i, r in replays]


def check_cupti(ok, traces, replays):
    gpu = cupti_kernels(traces, replays)
    ok(None not in gpu, "every replay joined to its CUPTI API record (%d not)" % gpu.count(None))
    wrong = [(r["args"].get("graph kernels"), k) for (_, r), k in zip(replays, gpu)
             if r["args"].get("graph kernels") != k]
    eg = ", e.g. (expansion, CUPTI) %s" % (wrong[:3],) if wrong else ""
    ok(not wrong, "every replay's graph kernels equal CUPTI's kernel records of its correlation "
       "id (%d differ%s)" % (len(wrong), eg))
    obj = [t["cuprobe"] for t in traces]
    got = (sum(o.get("graph_gpu_kernels", -1) for o in obj),
           sum(o.get("graph_mismatches", -1) for o in obj))
    want = (sum(k or 0 for k in gpu), len(wrong))
    ok(got == want, "graph_gpu_kernels, graph_mismatches %s, the replays say %s" % (got, want))
    print("[g] CUPTI kernels per replay: %s" % sorted(set(gpu), key=str))


def check_known(ok, traces, replays, want):
    ok(len(replays) >= want, "%d graph launches in the traces (the program replayed %d)"
       % (len(replays), want))
    unknown = [r for _, r in replays if not r["args"].get("graph content")]
    empty = [r for _, r in replays if not r["args"].get("graph kernels")]
    ok(not unknown, "every replay of known content (%d of unknown)" % len(unknown))
    ok(not empty, "every replay with graph kernels > 0 (%d without)" % len(empty))
    obj = [t["cuprobe"] for t in traces]
    kernels = sum(r["args"].get("graph kernels", 0) for _, r in replays
                  if r["args"].get("graph content"))
    got = tuple(sum(o.get(k, -1) for o in obj)
                for k in ("graph_replays", "graph_unknown_replays", "graph_kernels"))
    ok(got == (len(replays), len(unknown), kernels),
       "graph_replays, graph_unknown_replays, graph_kernels %s, the events say %s"
       % (got, (len(replays), len(unknown), kernels)))
    print("[g] graph kernels per replay: %s; graph nodes: %s"
          % (sorted({r["args"].get("graph kernels") for _, r in replays}, key=str),
             sorted({r["args"].get("graph nodes") for _, r in replays}, key=str)))


def check(args):
    ok = Checks()
    files, traces = load(args.trace_dir)
    ok(bool(files), "%d trace files in %s" % (len(files), args.trace_dir))
    replays = graph_launches(traces)
    check_known(ok, traces, replays, args.replays)
    if args.cupti:
        check_cupti(ok, traces, replays)
    if args.kernels_from:
        other = load(args.kernels_from)[1]
        theirs = sorted(set(cupti_kernels(other, graph_launches(other))), key=str)
        ours = sorted({r["args"].get("graph kernels") for _, r in replays}, key=str)
        print("[g] note: expansions %s here, CUPTI's kernels per replay %s in %s%s"
              % (ours, theirs, args.kernels_from, "" if ours == theirs else ": they differ"))
    return 1 if ok.bad else 0


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "check":
        ap = argparse.ArgumentParser(prog="graph_replay.py check")
        ap.add_argument("--trace-dir", required=True)
        ap.add_argument("--replays", type=int, required=True)
        ap.add_argument("--cupti", action="store_true")
        ap.add_argument("--kernels-from")
        return check(ap.parse_args(sys.argv[2:]))
    ap = argparse.ArgumentParser(prog="graph_replay.py")
    ap.add_argument("--replays", type=int, default=50)
    ap.add_argument("--out")
    return run(ap.parse_args())


if __name__ == "__main__":
    sys.exit(main())
