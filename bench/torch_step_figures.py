# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""--step torch's figures, for bench.py, on a real PyTorch training loop
(torch_loop.py: an MLP trained with SGD on CPU tensors, one torch thread,
~2.5 ms a step here), with the torch of BENCH_TORCH_PYTHON.

One loop runs throughout; cuprobe record -p attaches to it for windows, in
turns: none, WAIT (--step torch --schedule wait=1000000,warmup=1,active=1:
the range probes in, comparing names and keeping depths; the window never
comes), none, ACTIVE (--step torch alone: every step active, each
record_function range a user_annotation span; no launches on CPU tensors).
A step counts for its window when the loop saw the probes in (or out) as the
window wants them, from SETTLE_S after the window's first such step: the
steady state, without cuprobe's own start (the attach, the walk of
libtorch_cpu.so's .symtab on the other CPU, which on a VM whose two CPUs
share a core slows the loop for a few hundred ms) or the end of the session
before, which a window of a few seconds would otherwise carry.

torch_step_wait_vs_none: the WAIT window's median step time over the mean of
the none windows' on either side of it (which cancels a load that drifts),
the median of the rounds' ratios.
torch_annotations_vs_wait: the ACTIVE window's over the same round's WAIT
window's, each first taken over its none windows in the same way.
Each step's thread CPU time is given beside, the same way: on a shared
machine it leaves out the time the loop waited for a CPU.
"""
import os
import subprocess
import sys
import time

b = sys.modules["__main__"] if hasattr(sys.modules["__main__"], "BenchError") else None
if b is None:
    import bench as b  # noqa: E402
import hold_figures  # noqa: E402 (TORCH_PYTHON, torch_present)

TORCH_LOOP = os.path.join(b.ROOT, "bench", "torch_loop.py")
WINDOW_S = 4.0
SETTLE_S = 1.0


def torch_step_figures():
    if not hold_figures.torch_present():
        b.say("   " + hold_figures.NOT_INSTALLED)
        return (hold_figures.NotMeasured(hold_figures.NOT_INSTALLED),) * 2
    b.say("== torch_step_wait_vs_none, torch_annotations_vs_wait: one PyTorch training loop")
    b.say("   (bench/torch_loop.py: SGD on CPU tensors, one torch thread) recorded in turns by")
    b.say("   cuprobe record -p for %.0f s: none, WAIT (--step torch --schedule" % WINDOW_S)
    b.say("   wait=1000000,...), none, ACTIVE (--step torch alone: each record_function range")
    b.say("   a user_annotation span); median step time per window, the steps the loop saw")
    b.say("   the range probes in (WAIT, ACTIVE) or out (none)")
    t = b.Traces()
    log = os.path.join(t.dir, "steps.log")
    loop = subprocess.Popen([hold_figures.TORCH_PYTHON, "-W", "ignore", TORCH_LOOP, "--log", log],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    turns = b.Turns(loop.pid, "torch")

    def session(kind, r, args):
        files = turns.record(kind, r, WINDOW_S + 1, args)
        if bool(args) == bool(files):
            raise b.BenchError("record --step torch %s wrote %d trace files"
                               % (" ".join(args), files))

    try:
        end = time.monotonic() + 120    # import torch, the first step
        while not os.path.exists(log + ".ready"):
            if loop.poll() is not None or time.monotonic() > end:
                raise b.BenchError("torch_loop made no step: %s" % (
                    "exit %d" % loop.returncode if loop.poll() is not None else "in 120 s"))
            time.sleep(0.1)
        time.sleep(1)   # its first steps
        for r in range(b.REPS + 2):
            turns.none("none", r, WINDOW_S)
            session("wait", r, ["--schedule", "wait=1000000,warmup=1,active=1"])
            turns.none("none", r + 0.5, WINDOW_S)
            session("active", r, [])
        turns.none("none", b.REPS + 2, WINDOW_S)
        loop.send_signal(15)
        _, err = loop.communicate(timeout=60)
        if loop.returncode:
            raise b.BenchError("torch_loop exited %d: %s" % (loop.returncode, err.strip()[-300:]))
        with open(log) as f:
            steps = [tuple(int(v) for v in line.split()) for line in f]
    finally:
        if loop.poll() is None:
            loop.kill()
            loop.wait()
        t.remove()
    want = {"none": 0, "wait": 1, "active": 1}
    wall, cpu = {}, {}    # (kind, round) -> step ms; none's rounds r and r + 0.5
    for kind, r, w0, w1 in turns.windows:
        mine = [st for st in steps if w0 <= st[0] < w1 and st[3] == want[kind]]
        settled = mine[0][0] + SETTLE_S * 1e9 if mine else w1
        for start, ns, cns, _ in mine:
            if start >= settled:
                wall.setdefault((kind, r), []).append(ns / 1e6)
                cpu.setdefault((kind, r), []).append(cns / 1e6)
    counts = {k: sum(len(v) for (kk, _), v in wall.items() if kk == k) for k in want}
    rounds_ = sorted({r for k, r in wall if k != "none"})
    b.say("   steps counted: %s" % ", ".join("%s %d" % kv for kv in counts.items()))
    if min(counts.values()) < 100 * len(rounds_):
        raise b.BenchError("too few steps in some phase: %s" % counts)
    figures = []
    for what, per in (("wall", wall), ("thread CPU", cpu)):
        def med(k, r):
            return b.median(per.get((k, r), []))

        # The none windows on either side: N(r) WAIT(r) N(r+.5) ACTIVE(r) N(r+1).
        # A round some window of which counted no step (nan) is left out.
        rounds_ = [r for r in rounds_ if all(per.get(key) for key in (
            ("none", r), ("none", r + 0.5), ("none", r + 1), ("wait", r), ("active", r)))]
        if not rounds_:
            raise b.BenchError("no round counted steps in each of its windows: %s" % counts)
        n = [med("none", r) for r in rounds_]
        nw = [(med("none", r) + med("none", r + 0.5)) / 2 for r in rounds_]
        na = [(med("none", r + 0.5) + med("none", r + 1)) / 2 for r in rounds_]
        w, a = ([med(k, r) for r in rounds_] for k in ("wait", "active"))
        wr = [wi / ni for wi, ni in zip(w, nw)]
        ar = [(ai / ni) / (wi / mi) for ai, ni, wi, mi in zip(a, na, w, nw)]
        b.say("   median step ms (%s time), each round:" % what)
        b.say("     none    %s  median %.4f (the first of each round)"
              % (b.fmt_list(n, "%.4f"), b.median(n)))
        b.say("     WAIT    %s  median %.4f" % (b.fmt_list(w, "%.4f"), b.median(w)))
        b.say("     ACTIVE  %s  median %.4f" % (b.fmt_list(a, "%.4f"), b.median(a)))
        b.say("   WAIT/none per round %s: median %.4f, extra per step %.1f us"
              % (b.fmt_list(wr, "%.4f"), b.median(wr), (b.median(w) - b.median(nw)) * 1e3))
        b.say("   ACTIVE/WAIT per round %s: median %.4f, extra per step %.1f us"
              % (b.fmt_list(ar, "%.4f"), b.median(ar), (b.median(a) - b.median(w)) * 1e3))
        figures.append((b.median(wr), b.median(ar)))
    return figures[0]
