#!/usr/bin/env python3
"""Makes inputs for compare.py without a GPU (tests/gpu/selftest.sh).

  fixtures.py CUPROBE_DIR KINETO_REF OUT_DIR [--gpu-scale X] [--offset K]

From a cuprobe --cupti recording (made with the CUPTI simulator) it writes:
  OUT_DIR/b/<host>_<pid>.<n>.pt.trace.json  one torch.profiler-like trace per
      cycle, laid out as KINETO_REF (a Kineto trace) is: ProfilerStep#N spans with
      no args.step, cuda_runtime events with torch's own correlation ids, kernels
      named as in cuprobe's trace and GPU durations times --gpu-scale, flows, and
      API calls that made no GPU work;
  OUT_DIR/a/run_K/...  cuprobe's traces again, with the record_function spans
      that `--step torch` writes (user_annotation: an optimizer's zero_grad and
      step in each ProfilerStep span), which the torch-like traces have too;
  OUT_DIR/{a,b,c,c2,d}.steps.json  train.py-like step times, whose boundaries
      (sync_enter_real_ns) fall where cuprobe's spans begin, moved by --offset
      steps (0: cuprobe's step k is iteration k).
"""
import argparse
import glob
import json
import os

SPAN_CATS = ("user_annotation",)


def load(path):
    with open(path) as f:
        return json.load(f)


def ranges(step, pid):
    """The record_function spans of a training step, inside its ProfilerStep span."""
    return [{"ph": "X", "cat": "user_annotation", "name": name, "pid": pid, "tid": step["tid"],
             "ts": round(step["ts"] + at * step["dur"], 3), "dur": round(0.05 * step["dur"], 3),
             "args": {}}
            for name, at in (("Optimizer.zero_grad#SGD.zero_grad", 0.05),
                             ("Optimizer.step#SGD.step", 0.9))]


def with_ranges(cp):
    """cuprobe's trace with each step's record_function spans, as --step torch writes them."""
    out = dict(cp)
    out["traceEvents"] = list(cp["traceEvents"])
    for e in cp["traceEvents"]:
        if e.get("ph") == "X" and e["name"].startswith("ProfilerStep#"):
            out["traceEvents"] += ranges(e, cp["cuprobe"]["pid"])
    return out


def torch_like(cp, ref, scale, corr0):
    """One torch.profiler-like trace from one cuprobe trace."""
    ev_in = cp["traceEvents"]
    base = cp["baseTimeNanoseconds"]
    out = {k: ref[k] for k in ("schemaVersion", "deviceProperties", "distributedInfo",
                               "displayTimeUnit")}
    out["baseTimeNanoseconds"] = base
    pid = cp["cuprobe"]["pid"]
    gpu_by_corr = {}
    for e in ev_in:
        if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            gpu_by_corr.setdefault(e["args"]["correlation"], []).append(e)
    events, ext, corr = [], 1, corr0
    for e in ev_in:
        if e.get("ph") != "X":
            continue
        if e["name"].startswith("ProfilerStep#"):
            events.append({"ph": "X", "cat": "user_annotation", "name": e["name"], "pid": pid,
                           "tid": e["tid"], "ts": e["ts"], "dur": e["dur"],
                           "args": {"External id": ext}})
            events += ranges(e, pid)
            ext += 1
            continue
        if e.get("cat") not in ("cuda_runtime", "cuda_driver"):
            continue
        gpu = gpu_by_corr.get(e["args"]["correlation"], [])
        corr += 1
        # torch records API calls that make no GPU work too: they must not count.
        events.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamIsCapturing",
                       "pid": pid, "tid": e["tid"], "ts": e["ts"], "dur": 0.5,
                       "args": {"External id": ext, "cbid": 317, "correlation": corr}})
        corr += 1
        events.append({"ph": "X", "cat": "cpu_op", "name": "aten::fake", "pid": pid,
                       "tid": e["tid"], "ts": e["ts"], "dur": 3.0, "args": {"External id": ext}})
        events.append({"ph": "X", "cat": e["cat"], "name": e["name"], "pid": pid, "tid": e["tid"],
                       "ts": e["ts"] + 0.25, "dur": 2.0,
                       "args": {"External id": ext, "cbid": e["args"]["cbid"], "correlation": corr}})
        if gpu:
            events.append({"ph": "s", "id": corr, "pid": pid, "tid": e["tid"], "ts": e["ts"] + 0.25,
                           "cat": "ac2g", "name": "ac2g"})
        for g in gpu:
            args = dict(g["args"])
            args.update({"External id": ext, "correlation": corr})
            events.append({"ph": "X", "cat": g["cat"], "name": g["name"], "pid": g["pid"],
                           "tid": g["tid"], "ts": g["ts"], "dur": round(g["dur"] * scale, 3),
                           "args": args})
            events.append({"ph": "f", "id": corr, "pid": g["pid"], "tid": g["tid"], "ts": g["ts"],
                           "cat": "ac2g", "name": "ac2g", "bp": "e"})
        ext += 1
    events += [e for e in ref["traceEvents"] if e.get("ph") == "M"]
    out["traceEvents"] = events
    out["traceName"] = "fixture"
    return out, corr


def steps_json(spans, n, offset, iter_ms, config):
    """train.py's JSON, with boundaries where cuprobe's spans begin (real ns)."""
    known = sorted(spans.items())
    (s0, r0), (s1, r1) = known[0], known[-1]
    per = (r1 - r0) / (s1 - s0) if s1 != s0 else iter_ms * 1e6
    # Span s begins at iteration (s - 1 - offset)'s synchronize.
    sync = [int(r0 + (j + 1 + offset - s0) * per) for j in range(n)]
    for s, r in known:
        j = s - 1 - offset
        if 0 <= j < n:
            sync[j] = r - 2000
    return {"config": config, "steps": n, "iter_ns": [int(iter_ms * 1e6)] * n,
            "work_ns": [int(iter_ms * 1e6)] * n, "sync_enter_real_ns": sync, "import_s": 1.0, "setup_s": 2.0,
            "loop_s": n * iter_ms / 1e3, "stop_s": 0.0, "torch": "fixture", "torch_cuda": "-",
            "cudnn": None, "device": "none"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cuprobe_dir")
    ap.add_argument("kineto_ref")
    ap.add_argument("out_dir")
    ap.add_argument("--gpu-scale", type=float, default=1.05)
    ap.add_argument("--offset", type=int, default=0)
    ap.add_argument("--steps", type=int, default=12)
    args = ap.parse_args()
    ref = load(args.kineto_ref)
    os.makedirs(os.path.join(args.out_dir, "b"), exist_ok=True)
    spans, corr = {}, 100
    files = sorted(glob.glob(os.path.join(args.cuprobe_dir, "run_*", "*.pt.trace.json")))
    if not files:
        raise SystemExit(f"fixtures.py: no cuprobe trace under {args.cuprobe_dir}")
    for i, f in enumerate(files):
        cp = load(f)
        tl, corr = torch_like(cp, ref, args.gpu_scale, corr)
        with open(os.path.join(args.out_dir, "b", f"fixture_1.{i}.pt.trace.json"), "w") as fh:
            json.dump(tl, fh, indent=1)
        run = os.path.join(args.out_dir, "a", os.path.basename(os.path.dirname(f)))
        os.makedirs(run, exist_ok=True)
        with open(os.path.join(run, os.path.basename(f)), "w") as fh:
            json.dump(with_ranges(cp), fh)
        for e in cp["traceEvents"]:
            if e.get("ph") == "X" and e["name"].startswith("ProfilerStep#"):
                spans[e["args"]["step"]] = cp["baseTimeNanoseconds"] + round(e["ts"] * 1000)
    for cfg, ms in (("c", 30.0), ("c2", 30.3), ("a", 31.5), ("b", 36.0), ("d", 30.6)):
        with open(os.path.join(args.out_dir, f"{cfg}.steps.json"), "w") as fh:
            json.dump(steps_json(spans, args.steps, args.offset, ms, cfg), fh)
    print(f"fixtures.py: {len(files)} torch-like traces, steps JSONs in {args.out_dir}")


if __name__ == "__main__":
    main()
