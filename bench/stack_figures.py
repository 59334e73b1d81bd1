# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""--stack's figures, for bench.py.

stack_vs_nostack: what a launch costs with record --stack over without, on
launch_loop (a native program built with frame pointers): (C - A) / (B - A),
A no cuprobe, B cuprobe record, C cuprobe record --stack, ns per launch,
interleaved rounds, median of the per-round ratios.

python_stack_vs_nostack: the same for Python launching through ctypes from
20 nested frames (py_loop.py), with Debian's python3: the walk of the
interpreter's frames in BPF is in C, not in B.
"""
import os
import re
import sys

# bench.py runs as __main__: its BenchError is the one measure() catches.
b = sys.modules["__main__"] if hasattr(sys.modules["__main__"], "BenchError") else None
if b is None:
    import bench as b  # noqa: E402

PY_LOOP = os.path.join(b.ROOT, "bench", "py_loop.py")
PYTHON = "/usr/bin/python3"


def py_result(out):
    m = re.search(r"^py_loop: (.*)$", out, re.M)
    if not m:
        raise b.BenchError("py_loop printed no result: %r" % out[-300:])
    return dict(kv.split("=", 1) for kv in m.group(1).split())


def py_record(args, loop_args):
    t = b.Traces()
    try:
        out, err = b.run([b.CUPROBE, "record", "-q", "-o", t.dir] + args
                         + ["--", PYTHON, PY_LOOP] + loop_args)
        res = py_result(out)
        res.update(t.summary())
        return res
    finally:
        t.remove()


def ratio_figure(title, none, plain, stack):
    res = b.rounds([("none", none), ("plain", plain), ("stack", stack)], b.REPS + 2)
    a = [float(r["ns_per_launch"]) for r in res["none"]]
    p = [float(r["ns_per_launch"]) for r in res["plain"]]
    s = [float(r["ns_per_launch"]) for r in res["stack"]]
    ratios = [(si - ai) / (pi - ai) for ai, pi, si in zip(a, p, s) if pi > ai]
    if not ratios:
        raise b.BenchError("%s: cuprobe record cost nothing measurable" % title)
    b.say("   ns per launch, each round:")
    b.say("     A none            %s  median %.1f" % (b.fmt_list(a), b.median(a)))
    b.say("     B record          %s  median %.1f" % (b.fmt_list(p), b.median(p)))
    b.say("     C record --stack  %s  median %.1f" % (b.fmt_list(s), b.median(s)))
    b.say("   per launch: B-A %.1f ns, C-A %.1f ns; (C-A)/(B-A) per round %s"
          % (b.median(p) - b.median(a), b.median(s) - b.median(a),
             b.fmt_list(ratios, "%.2f")))
    drops = max(r["drops"] for r in res["plain"] + res["stack"])
    if drops:
        b.say("   WARNING: %d drops: a dropped launch costs less than a recorded one" % drops)
    return b.median(ratios)


def stack_vs_nostack():
    b.say("== stack_vs_nostack: per-launch cost of record --stack over record, on launch_loop")
    args = ["--launches", "100000", "--blocks", "5"]

    def none():
        return b.loop_result(b.run([b.LOOP] + args)[0])

    return ratio_figure("stack_vs_nostack", none, lambda: b.record([], args),
                        lambda: b.record(["--stack"], args))


def python_stack_vs_nostack():
    b.say("== python_stack_vs_nostack: the same for Python %s through ctypes, 20 frames deep"
          % PYTHON)
    args = ["--launches", "20000", "--depth", "20", "--blocks", "5"]

    def none():
        return py_result(b.run([PYTHON, PY_LOOP] + args)[0])

    return ratio_figure("python_stack_vs_nostack", none, lambda: py_record([], args),
                        lambda: py_record(["--stack"], args))
