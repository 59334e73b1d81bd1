#!/usr/bin/env python3
"""Loads a folder of cuprobe traces with TensorBoard's PyTorch profiler plugin
(torch-tb-profiler 0.4.3): its RunLoader, which parses each file in a process of
its own and builds the views that the web page shows. Run with REAL_HTA_PY.

  check_tb_plugin.py DIR      a worker per file (the plugin names it from the file
                              name: <host>_<pid>), each with its profile; the kernel
                              view lists every kernel by name and call count, the
                              overview every ProfilerStep of the file, the operator
                              view parses (empty: cuprobe writes no operator)
Exit status 0 when all holds; otherwise what differs is printed.

The plugin knows CPU-side CUDA calls only by the category "Runtime", from Kineto
before PyTorch 2: the cuda_runtime and cuda_driver calls of cuprobe's traces (and
of torch.profiler's since then) are not in its views, so nothing here counts them.
"""
import collections
import glob
import logging
import os
import re
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_hta import expected  # noqa: E402

# <host>_<pid>.<epoch_ns>.pt.trace.json: the worker is <host>_<pid>, the span the ns.
FILE_RE = re.compile(r"^(.+)\.(\d+)\.pt\.trace\.json$")


def main():
    folder = sys.argv[1]
    # pandas warns about the plugin's own dtype handling, in the processes the
    # loader starts too (they read the environment).
    os.environ["PYTHONWARNINGS"] = "ignore::FutureWarning"
    warnings.simplefilter("ignore", FutureWarning)
    from torch_tb_profiler import io
    from torch_tb_profiler.profiler import RunLoader
    logging.getLogger("torch_tb_profiler").setLevel(logging.ERROR)

    errors = []
    want = {}
    for p in sorted(glob.glob(os.path.join(folder, "*.pt.trace.json"))):
        m = FILE_RE.match(os.path.basename(p))
        if not m:
            errors.append(f"{p}: not named <host>_<pid>.<ns>.pt.trace.json")
            continue
        want[m.group(1)] = expected(p)
    if not want:
        errors.append(f"no trace in {folder} (test setup)")

    with io.Cache() as cache:
        run = RunLoader(os.path.basename(folder), folder, cache).load()
    # (Run.workers fails on a run without a profile: the keys are (worker, span).)
    workers = sorted({w for w, _ in run.profiles})
    if workers != sorted(want):
        errors.append(f"the plugin's workers {workers} != the files' {sorted(want)}")
    for w, e in sorted(want.items()):
        # The loader logs a file it failed to parse and leaves its profile out.
        profiles = [p for (pw, _), p in run.profiles.items() if pw == w]
        if len(profiles) != 1 or profiles[0] is None:
            errors.append(f"{w}: {len(profiles)} profiles, {profiles}: the plugin failed "
                          "to parse the file (its warning is above)")
            continue
        prof = profiles[0]
        views = [v.name for v in prof.views]
        kt = prof.kernel_table
        kernels = collections.Counter()
        if kt is not None:
            for row in kt["data"]["rows"]:
                kernels[row[0]] += row[2]
        steps = [] if prof.overview is None else [r[0] for r in prof.overview["steps"]["rows"]]
        print(f"# {w}: views {views}; {sum(kernels.values())} kernels, steps {steps}")
        if kernels != e["kernels"]:
            errors.append(f"{w}: the plugin's kernels {dict(kernels)} != the file's "
                          f"{dict(e['kernels'])}")
        if prof.has_kernel != bool(e["kernels"]) or ("kernel" in views) != bool(e["kernels"]):
            errors.append(f"{w}: has_kernel {prof.has_kernel}, views {views}, the file has "
                          f"{sum(e['kernels'].values())} kernels")
        gpu_other = sum(n for k, n in e["gpu"].items() if k not in e["kernels"])
        if prof.has_memcpy_or_memset != (gpu_other > 0):
            errors.append(f"{w}: has_memcpy_or_memset {prof.has_memcpy_or_memset}, the file has "
                          f"{gpu_other} copies and sets")
        # Without ProfilerStep the plugin makes one step of its own, named 0.
        if e["steps"] and steps != [str(s) for s in e["steps"]]:
            errors.append(f"{w}: the plugin's steps {steps} != the file's {e['steps']}")
        if "operator" not in views or prof.operation_table_by_name["data"] != []:
            errors.append(f"{w}: operator view {views}: "
                          f"{str(prof.operation_table_by_name)[:200]}")
    for m in errors[:20]:
        print(m)
    return 0 if not errors else 1


if __name__ == "__main__":
    sys.exit(main())
