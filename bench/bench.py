#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""cuprobe's benchmarks. Each figure is a ratio against a baseline measured
in the same run (or, where its goal is one, a time, a rate or a count), the
runs of each configuration interleaved (A B A B ...) and the median taken
over the repetitions.

Run by bench/run.sh (make bench), as root. Prints the raw numbers of each
figure, then ends with one line per figure:

    bench: <name> <value> (goal <op> <target>)

Environment: BENCH_REPS scales the repetitions (default 5), BENCH_TMP is
where traces go while a run lasts (default /dev/shm), BENCH_RSS_EVENTS is
the larger event count of rss_growth (default 10000000), BENCH_ONLY picks
measurements by name (probe_vs_empty_uprobe, driver_probe_vs_empty_uprobe,
nested_launch_vs_empty_uprobe, vs_bpftrace_driver, vs_bpftrace_runtime, steps, detach_ms,
children_end_ms, trace_write_events_per_s, first_step_complete, latency_vs_entry,
stack_vs_nostack, python_stack_vs_nostack, torch, torch_steps, dlopen_holds,
graph_replay_vs_launch, ...), and
BENCH_CUPROBE names another cuprobe binary to measure (default ./cuprobe).
BENCH_TORCH_PYTHON is the Python whose torch the torch figures import and
train with (default /var/cache/cuprobe/real/venv/bin/python3).
"""

import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CUPROBE = os.environ.get("BENCH_CUPROBE") or os.path.join(ROOT, "cuprobe")
TOOLS = os.path.join(ROOT, ".output", "bench")
LOOP = os.path.join(TOOLS, "launch_loop")
EMPTY = os.path.join(TOOLS, "empty_uprobe")
TRACE_WRITE = os.path.join(TOOLS, "trace_write")
REAL_LOOP = os.path.join(TOOLS, "real_loop")
REAL_RT = os.path.join(TOOLS, "libreal_rt.so")
REAL_DIR = os.environ.get("CUPROBE_REAL", "/var/cache/cuprobe/real")

REPS = max(3, int(os.environ.get("BENCH_REPS", "5")))
TMP = os.environ.get("BENCH_TMP") or ("/dev/shm" if os.path.isdir("/dev/shm") else "/tmp")
RSS_EVENTS = int(os.environ.get("BENCH_RSS_EVENTS", "10000000"))


class BenchError(Exception):
    pass


def say(msg=""):
    print(msg, flush=True)


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def run(cmd, check=True):
    """Runs cmd; returns (stdout, stderr)."""
    p = subprocess.run(cmd, capture_output=True, text=True)
    if check and p.returncode != 0:
        raise BenchError("%s exited %d: %s" % (" ".join(cmd), p.returncode,
                                                (p.stderr or p.stdout).strip()[-500:]))
    return p.stdout, p.stderr


def loop_result(out):
    """The key=value pairs of launch_loop's line."""
    m = re.search(r"^launch_loop: (.*)$", out, re.M)
    if not m:
        raise BenchError("launch_loop printed no result: %r" % out[-300:])
    return dict(kv.split("=", 1) for kv in m.group(1).split())


def expect_probed(res, want, what):
    if res["probed"] != want:
        raise BenchError("%s: launch probes %s, expected %s (probed=%s)"
                         % (what, "present" if "1" in res["probed"] else "absent",
                            "present" if "1" in want else "absent", res["probed"]))


class Traces:
    """A fresh output folder for one recording, and what its traces say."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="cuprobe-bench.", dir=TMP)

    def summary(self):
        launches = drops = files = 0
        for top, _, names in os.walk(self.dir):
            for n in names:
                if not n.endswith(".pt.trace.json"):
                    continue
                files += 1
                with open(os.path.join(top, n), "rb") as f:
                    f.seek(0, os.SEEK_END)
                    f.seek(max(0, f.tell() - 4096))
                    tail = f.read().decode("utf-8", "replace")
                m = re.search(r'"cuprobe": \{.*"launches": (\d+).*"drops": (\d+)', tail)
                if not m:
                    raise BenchError("no cuprobe summary at the end of %s" % n)
                launches += int(m.group(1))
                drops = max(drops, int(m.group(2)))  # the session's count, in every file
        return {"files": files, "launches": launches, "drops": drops}

    def per_file(self):
        """Launches of each trace file, in the order of their run folders."""
        out = []
        for top, _, names in sorted(os.walk(self.dir)):
            for n in sorted(names):
                if not n.endswith(".pt.trace.json"):
                    continue
                with open(os.path.join(top, n), "rb") as f:
                    f.seek(0, os.SEEK_END)
                    f.seek(max(0, f.tell() - 4096))
                    tail = f.read().decode("utf-8", "replace")
                m = re.search(r'"cuprobe": \{.*"launches": (\d+)', tail)
                if not m:
                    raise BenchError("no cuprobe summary at the end of %s" % n)
                out.append(int(m.group(1)))
        return out

    def remove(self):
        shutil.rmtree(self.dir, ignore_errors=True)


class Turns:
    """One loop process measured in turns: windows of no cuprobe (a sleep) and
    windows of cuprobe record -p on it, each noted with its kind, round and
    span, for the loop's own step log to be cut by."""

    def __init__(self, pid, step):
        self.pid, self.step = pid, step
        self.windows = []    # (kind, round, start_ns, end_ns)

    def window(self, kind, r, fn):
        t0 = time.monotonic_ns()
        fn()
        self.windows.append((kind, r, t0, time.monotonic_ns()))

    def none(self, kind, r, seconds):
        self.window(kind, r, lambda: time.sleep(seconds))

    def record(self, kind, r, seconds, args):
        """record -p for seconds with args; returns the trace files it wrote."""
        files = []

        def session():
            out = Traces()
            try:
                run([CUPROBE, "record", "-q", "-o", out.dir, "-p", str(self.pid), "--step",
                     self.step, "--duration", "%g" % seconds] + args)
                files.append(out.summary()["files"])
            finally:
                out.remove()
        self.window(kind, r, session)
        return files[0]


def record(args, loop_args):
    """cuprobe record ARGS -- launch_loop LOOP_ARGS: launch_loop's result and the traces'."""
    t = Traces()
    try:
        out, err = run([CUPROBE, "record", "-q", "-o", t.dir] + args + ["--", LOOP] + loop_args)
        res = loop_result(out)
        res.update(t.summary())
        res["stderr"] = err
        return res
    finally:
        t.remove()


def record_pid(loop_args, cuprobe_args=(), quiet=True):
    """launch_loop started alone, cuprobe attached with -p: cuprobe's own rusage."""
    t = Traces()
    loop = subprocess.Popen([LOOP, "--wait-probes"] + loop_args, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(0.1)
        cp = subprocess.Popen([CUPROBE, "record"] + (["-q"] if quiet else [])
                              + ["-o", t.dir, "-p", str(loop.pid)]
                              + list(cuprobe_args), stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, text=True)
        # wait4, not Popen.wait: the rusage is cuprobe's own, its target not being its child.
        ended = None
        while loop.poll() is None and not ended:
            pid, status, ru = os.wait4(cp.pid, os.WNOHANG)
            ended = (status, ru) if pid else None
            time.sleep(0.02)
        if ended and loop.poll() is None:
            raise BenchError("cuprobe -p ended before its target: %s" % cp.stderr.read().strip())
        out, lerr = loop.communicate(timeout=600)
        if loop.returncode:
            raise BenchError("launch_loop exited %d: %s" % (loop.returncode, lerr.strip()))
        if not ended:
            _, status, ru = os.wait4(cp.pid, 0)
            ended = (status, ru)
        status, ru = ended
        cp.returncode = os.waitstatus_to_exitcode(status)
        err = cp.stderr.read()
        if cp.returncode:
            raise BenchError("cuprobe -p exited %d: %s" % (cp.returncode, err.strip()[-500:]))
        res = loop_result(out)
        res.update(t.summary())
        res["cpu_s"] = ru.ru_utime + ru.ru_stime
        res["user_s"], res["sys_s"] = ru.ru_utime, ru.ru_stime
        res["maxrss_kb"] = ru.ru_maxrss
        res["stderr"] = err
        return res
    finally:
        if loop.poll() is None:
            loop.kill()
            loop.wait()
        t.remove()


def rounds(configs, n):
    """Runs each config once per round, the order rotating from round to round."""
    out = {name: [] for name, _ in configs}
    for r in range(n):
        k = r % len(configs)
        for name, fn in configs[k:] + configs[:k]:
            out[name].append(fn())
    return out


def millions(n):
    return "%g M" % (n / 1e6)


def fmt_list(xs, f="%.1f"):
    return "[" + ", ".join(f % x for x in xs) + "]"


# --- probe_vs_empty_uprobe -------------------------------------------------

def probe_vs_empty():
    say("== probe_vs_empty_uprobe: cost per launch of cuprobe's launch probe (ACTIVE) over an")
    say("   empty BPF uprobe program, on libcudart.so.13's cudaLaunchKernel")
    args = ["--launches", "100000", "--blocks", "5"]

    def none():
        r = loop_result(run([LOOP] + args)[0])
        expect_probed(r, "00", "no probe")
        return r

    def cuprobe():
        r = record([], args)
        expect_probed(r, "11", "cuprobe record")
        return r

    def empty():
        r = loop_result(run([EMPTY, "--", LOOP] + args)[0])
        expect_probed(r, "11", "empty uprobe")
        return r

    res = rounds([("none", none), ("cuprobe", cuprobe), ("empty", empty)], REPS + 2)
    a = [float(r["ns_per_launch"]) for r in res["none"]]
    b = [float(r["ns_per_launch"]) for r in res["cuprobe"]]
    c = [float(r["ns_per_launch"]) for r in res["empty"]]
    ratios = [(bi - ai) / (ci - ai) for ai, bi, ci in zip(a, b, c)]
    drops = max(r["drops"] for r in res["cuprobe"])
    launches = res["cuprobe"][0]["launches"]
    say("   ns per launch, median of 5 blocks of 20k launches, each round:")
    say("     A none          %s  median %.1f" % (fmt_list(a), median(a)))
    say("     B cuprobe       %s  median %.1f" % (fmt_list(b), median(b)))
    say("     C empty uprobe  %s  median %.1f" % (fmt_list(c), median(c)))
    say("   probe cost B-A: %.1f ns; empty uprobe C-A: %.1f ns (medians)"
        % (median(b) - median(a), median(c) - median(a)))
    say("   (B-A)/(C-A) per round %s; cuprobe recorded %d launches per run, max drops %d"
        % (fmt_list(ratios, "%.3f"), launches, drops))
    if drops:
        say("   WARNING: drops in B make its probe cheaper than it is")
    return median(ratios)


# --- the real driver: driver_probe_vs_empty_uprobe, nested_launch_vs_empty_uprobe, vs_bpftrace

def real_libcuda():
    """NVIDIA's libcuda: REAL_LIBCUDA where set (a GPU machine's own driver: tests/gpu/run.sh),
    else as scripts/install-real.sh unpacks it (Debian's libcuda1)."""
    if os.environ.get("REAL_LIBCUDA"):
        if not os.path.isfile(os.environ["REAL_LIBCUDA"]):
            raise BenchError("REAL_LIBCUDA=%s is not a file" % os.environ["REAL_LIBCUDA"])
        return os.environ["REAL_LIBCUDA"]
    base = os.path.join(REAL_DIR, "libcuda1", "usr", "lib")
    for d, _, files in os.walk(base):
        for f in sorted(files):
            if re.match(r"libcuda\.so\.\d+\.\d+", f):
                return os.path.join(d, f)
    raise BenchError("no real libcuda under %s: run scripts/install-real.sh" % base)


def added_cost(loop, probed, base, what):
    """(probed - none) / (base - none) per round, for one loop command; prints the rounds."""
    def none():
        return loop_result(run(loop)[0])

    res = rounds([("none", none), ("probed", probed), ("base", base)], REPS + 2)
    a = [float(r["ns_per_launch"]) for r in res["none"]]
    b = [float(r["ns_per_launch"]) for r in res["probed"]]
    c = [float(r["ns_per_launch"]) for r in res["base"]]
    ratios = [(bi - ai) / (ci - ai) for ai, bi, ci in zip(a, b, c)]
    say("   ns per launch, median of 5 blocks, each round:")
    say("     A none          %s  median %.1f" % (fmt_list(a), median(a)))
    say("     B cuprobe       %s  median %.1f" % (fmt_list(b), median(b)))
    say("     C %-13s %s  median %.1f" % (what, fmt_list(c), median(c)))
    say("   (B-A)/(C-A) per round %s" % fmt_list(ratios, "%.3f"))
    return median(ratios)


def cuprobe_on(loop):
    def probed():
        t = Traces()
        try:
            out, err = run([CUPROBE, "record", "-q", "-o", t.dir, "--"] + loop)
            r = loop_result(out)
            r.update(t.summary())
            if r["launches"] < 100000:
                raise BenchError("cuprobe recorded %d launches of 100000" % r["launches"])
            return r
        finally:
            t.remove()
    return probed


def real_env():
    os.environ["REAL_LIBCUDA"] = real_libcuda()
    return os.environ["REAL_LIBCUDA"]


def driver_probe_vs_empty():
    lib = real_env()
    say("== driver_probe_vs_empty_uprobe: cost per launch of cuprobe's probe on the real")
    say("   cuLaunchKernel (%s) over an empty uprobe where cuprobe places its own" % lib)
    say("   (empty_uprobe --place: the je at +10 on the 535 driver, emulated)")
    say("   after 600 ms of untimed launches: cuprobe's loader reads libcuda's symbols as")
    say("   the loop starts, which on a small machine takes the loop's CPU")
    loop = [REAL_LOOP, "--launches", "100000", "--warmup-ms", "600"]
    return added_cost(loop, cuprobe_on(loop), lambda: loop_result(run(
        [EMPTY, "--lib", lib, "--func", "cuLaunchKernel", "--place", "--"] + loop)[0]),
        "empty uprobe")


def nested_vs_empty():
    real_env()
    say("== nested_launch_vs_empty_uprobe: a runtime launch (a stand-in runtime that takes")
    say("   cuLaunchKernel from cuGetProcAddress, as libcudart does) entering the real driver;")
    say("   cuprobe over an empty uprobe on the runtime's entry (a push, emulated)")
    say("   after 1 s of untimed launches, in which cuprobe learns the host stub and")
    say("   leaves out the runtime's probe (one trap per launch)")
    loop = [REAL_LOOP, "--nested", "--launches", "100000", "--warmup-ms", "1000"]
    return added_cost(loop, cuprobe_on(loop), lambda: loop_result(run(
        [EMPTY, "--lib", REAL_RT, "--func", "cudaLaunchKernel", "--"] + loop)[0]),
        "empty uprobe")


def bpftrace_count(lib, func, loop):
    def base():
        out, _ = run(["bpftrace", "-e", "uprobe:%s:%s { @n = count(); }" % (lib, func),
                      "-c", " ".join(loop)])
        return loop_result(out)
    return base


def vs_bpftrace_driver():
    lib = real_env()
    say("== vs_bpftrace_driver: cuprobe's added cost per launch over bpftrace's count() on")
    say("   the real cuLaunchKernel, as bpftrace places it (its entry)")
    loop = [REAL_LOOP, "--launches", "100000", "--warmup-ms", "600"]
    return added_cost(loop, cuprobe_on(loop), bpftrace_count(lib, "cuLaunchKernel", loop),
                      "bpftrace")


def vs_bpftrace_runtime():
    cudart = os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "lib64",
                          "libcudart.so.13")
    say("== vs_bpftrace_runtime: the same on libcudart.so.13's cudaLaunchKernel (launch_loop)")
    loop = [LOOP, "--launches", "100000", "--blocks", "5"]
    return added_cost(loop, cuprobe_on(loop),
                      bpftrace_count(os.path.realpath(cudart), "cudaLaunchKernel", loop),
                      "bpftrace")


# --- wait_step_vs_none, active_step_vs_none --------------------------------

def step_figures():
    say("== wait_step_vs_none, active_step_vs_none: one training loop of 1000 launches per")
    say("   step, each followed by 2 us of host work (what a real launch costs the CPU; here a")
    say("   launch fails in ~15 ns), recorded in turns by cuprobe -p: none, WAIT (--schedule")
    say("   wait=100000,...), none, ACTIVE (--step alone); a step counts for the phase whose")
    say("   probes it saw at both ends (the loop reads its own code); median step per turn")
    t = Traces()
    log = os.path.join(t.dir, "steps.log")
    loop = subprocess.Popen([LOOP, "--until-sigterm", "--launches", "1000", "--work-ns", "2000",
                             "--log", log], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    turns = Turns(loop.pid, "cuprobe_step")
    try:
        time.sleep(0.5)
        for r in range(REPS + 2):
            turns.none("none", r, 0.6)
            turns.record("wait", r, 1.5, ["--schedule", "wait=100000,warmup=1,active=1"])
            turns.none("none", r, 0.6)
            turns.record("active", r, 1.5, [])
        loop.send_signal(15)
        out, err = loop.communicate(timeout=60)
        if loop.returncode:
            raise BenchError("launch_loop exited %d: %s" % (loop.returncode, err.strip()))
        steps = []
        with open(log) as f:
            for line in f:
                start, ns, state = line.split()
                steps.append((int(start), int(ns), int(state)))
    finally:
        if loop.poll() is None:
            loop.kill()
            loop.wait()
        t.remove()
    # What each phase leaves attached: 1 the step probe, 2 launch probes.
    want = {"none": 0, "wait": 1, "active": 3}
    per = {}    # (kind, round) -> step ms
    for k in range(len(steps) - 1):
        start, ns, state = steps[k]
        for kind, r, w0, w1 in turns.windows:
            if w0 <= start < w1 and state == want[kind] == steps[k + 1][2]:
                per.setdefault((kind, r), []).append(ns / 1e6)
    rounds_ = sorted({r for _, r in per})
    n = [median(per.get(("none", r), [])) for r in rounds_]
    w = [median(per.get(("wait", r), [])) for r in rounds_]
    a = [median(per.get(("active", r), [])) for r in rounds_]
    counts = {kind: sum(len(v) for (k, _), v in per.items() if k == kind) for kind in want}
    wr = [wi / ni for wi, ni in zip(w, n)]
    ar = [ai / ni for ai, ni in zip(a, n)]
    say("   steps counted: %s" % ", ".join("%s %d" % kv for kv in counts.items()))
    say("   median step ms, each turn:")
    say("     none    %s  median %.4f" % (fmt_list(n, "%.4f"), median(n)))
    say("     WAIT    %s  median %.4f" % (fmt_list(w, "%.4f"), median(w)))
    say("     ACTIVE  %s  median %.4f" % (fmt_list(a, "%.4f"), median(a)))
    say("   WAIT/none per turn %s; extra per step %.2f us"
        % (fmt_list(wr, "%.4f"), (median(w) - median(n)) * 1e3))
    say("   ACTIVE/none per turn %s; extra per launch %.0f ns"
        % (fmt_list(ar, "%.3f"), (median(a) - median(n)) * 1e6 / 1000))
    if min(counts.values()) < 50 * len(rounds_):
        raise BenchError("too few steps in some phase: %s" % counts)
    return median(wr), median(ar)


# --- detach_ms -------------------------------------------------------------

def detach():
    # Steps of 20 ms: attaching the 12 runtime entry points takes 5-12 ms here, and
    # the launches of an active step that begins before that are missed.
    wait, period_us, cycles = 5, 20000, 6
    n = wait + 2
    say("== detach_ms: from the step call that closes a window to the moment no launch entry")
    say("   point of the target carries a uprobe (the target reads its own code: a uprobe is an")
    say("   int3 written over the entry); steps every %d us while launching without pause,"
        % period_us)
    say("   --schedule wait=%d,warmup=1,active=1, %d cycles per run, %d runs" % (wait, cycles, 2))
    detach_ms, attach_ms, odd = [], [], 0
    for _ in range(2):
        t = Traces()
        log = os.path.join(t.dir, "watch.log")
        try:
            run([CUPROBE, "record", "-q", "-o", t.dir, "--step", "cuprobe_step", "--schedule",
                 "wait=%d,warmup=1,active=1" % wait, "--", LOOP, "--step-us", str(period_us),
                 "--steps", str(cycles * n + 1), "--log", log])
            calls, changes = [], []
            with open(log) as f:
                for line in f:
                    kind, a, b = line.split()
                    if kind == "step":
                        calls.append((int(a), int(b)))
                    else:
                        changes.append((a, int(b)))
        finally:
            t.remove()
        for state, ts in changes:
            # Call j begins step j: step `wait` of a cycle is its warmup (attach), and the
            # call that begins the next cycle's step 0 closes the window (detach).
            if state != "off":
                # An attach may begin steps before warmup (early attach): the nearest
                # warmup call, the time signed (negative: in before warmup began).
                warm = [c for c in calls if c[0] % n == wait]
                if not warm:
                    odd += 1
                    continue
                near = min(warm, key=lambda c: abs(ts - c[1]))
                attach_ms.append((ts - near[1]) / 1e6)
                continue
            before = [c for c in calls if c[1] <= ts and c[0] % n == 0]
            if not before:
                odd += 1
                continue
            detach_ms.append((ts - before[-1][1]) / 1e6)
    if not detach_ms:
        raise BenchError("detach_ms: the launch probes were never seen to go")
    say("   detach ms per window %s" % fmt_list(sorted(detach_ms), "%.2f"))
    say("   detach ms: median %.2f, max %.2f (%d windows)"
        % (median(detach_ms), max(detach_ms), len(detach_ms)))
    if attach_ms:
        say("   launch probes in, ms from the call that begins warmup (negative: before it) %s"
            % fmt_list(sorted(attach_ms), "%.2f"))
        say("   median %.2f, max %.2f; %d of %d after the active step began (%.0f ms steps)"
            % (median(attach_ms), max(attach_ms), sum(x > period_us / 1e3 for x in attach_ms),
               len(attach_ms), period_us / 1e3))
    if odd:
        say("   %d probe changes did not follow a warmup or closing step call" % odd)
    return median(detach_ms)


# --- children_end_ms -------------------------------------------------------

def children_end():
    kids, nrounds, launches, work_ns = 4, 3, 1000, 100000
    say("== children_end_ms: from a command's end to cuprobe record's, the command having run")
    say("   %d rounds of %d children at once (a DataLoader's workers, an epoch each), each"
        % (nrounds, kids))
    say("   recorded for its %d launches over %d ms, then exiting: their links to close"
        % (launches, launches * work_ns // 1000000))
    ends, launched = [], []
    args = ["--children", str(kids), "--rounds", str(nrounds), "--launches", str(launches),
            "--work-ns", str(work_ns)]
    for _ in range(REPS):
        t = Traces()
        try:
            out, _ = run([CUPROBE, "record", "-q", "-o", t.dir, "--", LOOP] + args)
            end = time.monotonic_ns()  # CLOCK_MONOTONIC, as launch_loop's end_ns
            res = loop_result(out)
            ends.append((end - int(res["end_ns"])) / 1e6)
            launched.append(t.summary()["launches"])
        finally:
            t.remove()
    # A forked child runs at once, its parent's code: what it launches before its own
    # probes are in is not recorded (docs/record.md), so the counts are only said.
    say("   launches recorded %s of %d made in each run" % (launched, kids * nrounds * launches))
    say("   ms after the command's end %s" % fmt_list(ends, "%.0f"))
    return median(ends)


# --- loader_events_per_s, rss_growth, drops --------------------------------

def loader_rate():
    say("== loader_events_per_s: launch events cuprobe turns into trace files per CPU-second")
    say("   (user+sys of cuprobe alone, attached with -p); 4 threads launching without pause;")
    say("   (events_big - events_small) / (cpu_big - cpu_small), so start-up cancels")
    small = ["--threads", "4", "--launches", "2500", "--blocks", "1"]
    big = ["--threads", "4", "--launches", "250000", "--blocks", "1"]
    res = rounds([("small", lambda: record_pid(small)), ("big", lambda: record_pid(big))], REPS)
    rates = [(b["launches"] - s["launches"]) / (b["cpu_s"] - s["cpu_s"])
             for s, b in zip(res["small"], res["big"])]
    for name in ("small", "big"):
        rs = res[name]
        say("   %-5s events %s cpu_s %s (user %s sys %s) drops %s"
            % (name, [r["launches"] for r in rs], fmt_list([r["cpu_s"] for r in rs], "%.3f"),
               fmt_list([r["user_s"] for r in rs], "%.2f"),
               fmt_list([r["sys_s"] for r in rs], "%.2f"), [r["drops"] for r in rs]))
    say("   producers' launch rate (big) %s per s"
        % [int(float(r["launches_per_s"])) for r in res["big"]])
    say("   events per CPU-second per round %s" % [int(x) for x in rates])
    return median(rates)


def trace_write_rate():
    say("== trace_write_events_per_s: launch events the trace writer formats and writes")
    say("   per CPU-second (bench/trace_write.c: 1M launches of a training mix a round)")
    out, _ = run([TRACE_WRITE, TMP, "1000000", str(2 * REPS)])
    for line in out.splitlines():
        say("   " + line)
    m = re.search(r"(\d+) launch events per user CPU-second, (\d+) per CPU-second", out)
    if not m:
        raise BenchError("trace_write printed no rate: %s" % out.strip()[-200:])
    return float(m.group(2))


def drops():
    say("== drops: four threads launching without pause, default ring buffer (16M),")
    say("   4 x 1M launches, cuprobe attached with -p (its own CPU time measured)")

    def once():
        return record_pid(["--threads", "4", "--launches", "1000000", "--blocks", "1"])

    res = [once() for _ in range(3)]
    say("   producers' rate, launches/s %s" % [int(float(r["launches_per_s"])) for r in res])
    say("   events recorded %s, dropped %s (%s of all)"
        % ([r["launches"] for r in res], [r["drops"] for r in res],
           ", ".join("%.0f%%" % (100.0 * r["drops"] / (r["drops"] + r["launches"]))
                     for r in res)))
    say("   loader's rate, events placed per CPU-second of cuprobe %s (cpu_s %s)"
        % ([int(r["launches"] / r["cpu_s"]) if r["cpu_s"] else 0 for r in res],
           fmt_list([r["cpu_s"] for r in res], "%.2f")))
    return median([r["drops"] for r in res])


def drops_small_start():
    start = os.environ.get("BENCH_SMALL_RING", "64K")
    say("== drops_small_start: the same four threads, the ring starting at %s" % start)
    say("   (--ringbuf-size %s, BENCH_SMALL_RING): it grows with the rate; launches lost" % start)
    say("   before it grew are drops")

    def once():
        return record_pid(["--threads", "4", "--launches", "1000000", "--blocks", "1"],
                          ["--ringbuf-size", start], quiet=False)

    res = [once() for _ in range(3)]
    say("   producers' rate, launches/s %s" % [int(float(r["launches_per_s"])) for r in res])
    say("   events recorded %s, dropped %s" % ([r["launches"] for r in res],
                                             [r["drops"] for r in res]))
    for r in res:
        grew = re.findall(r"the events ring grew from (\S+) to (\S+): it was (\d+)% full, "
                          r"with launches coming at ([\d.]+) M/s", r["stderr"])
        end = re.search(r"the events ring ended at (\S+)", r["stderr"])
        say("   growths %s; final size %s"
            % (", ".join("%s->%s (%s%% full, %s M/s)" % g for g in grew) or "none",
               end.group(1) if end else start))
    return median([r["drops"] for r in res])


# --- first_step_complete ---------------------------------------------------

def first_step():
    per_step, cycles, runs = 500, 6, max(2, REPS // 2)
    say("== first_step_complete: share of cycles whose first active step has every launch;")
    say("   steps of ~5 ms (%d launches, 10 us of host work each), --schedule" % per_step)
    say("   wait=5,warmup=1,active=1,repeat=%d, %d runs: the warmup step is shorter than the"
        % (cycles, runs))
    say("   attach, which then has to begin before it")
    got = []
    for _ in range(runs):
        t = Traces()
        try:
            out, _ = run([CUPROBE, "record", "-q", "-o", t.dir, "--step", "cuprobe_step",
                          "--schedule", "wait=5,warmup=1,active=1,repeat=%d" % cycles, "--",
                          LOOP, "--steps", str(7 * cycles + 2), "--launches", str(per_step),
                          "--work-ns", "10000"])
            res = loop_result(out)
            got += t.per_file()
            say("   run: median step %.2f ms, launches per cycle %s"
                % (float(res["median_step_ns"]) / 1e6, t.per_file()))
        finally:
            t.remove()
    if len(got) < cycles * runs:
        raise BenchError("first_step_complete: %d cycles written of %d" % (len(got), cycles * runs))
    return sum(1 for n in got if n == per_step) / float(len(got))


# --- latency_vs_entry ------------------------------------------------------

def latency_vs_entry():
    say("== latency_vs_entry: cost per launch of --latency (entry and return probes) over")
    say("   that of the entry probe alone, both over no cuprobe")
    args = ["--launches", "100000", "--blocks", "5"]

    def none():
        return loop_result(run([LOOP] + args)[0])

    res = rounds([("none", none), ("entry", lambda: record([], args)),
                  ("latency", lambda: record(["--latency"], args))], REPS)
    a = [float(r["ns_per_launch"]) for r in res["none"]]
    b = [float(r["ns_per_launch"]) for r in res["entry"]]
    c = [float(r["ns_per_launch"]) for r in res["latency"]]
    ratios = [(ci - ai) / (bi - ai) for ai, bi, ci in zip(a, b, c)]
    say("     none     %s  median %.1f" % (fmt_list(a), median(a)))
    say("     entry    %s  median %.1f" % (fmt_list(b), median(b)))
    say("     latency  %s  median %.1f" % (fmt_list(c), median(c)))
    say("   (latency-none)/(entry-none) per round %s" % fmt_list(ratios, "%.2f"))
    return median(ratios)


def rss_growth():
    big = RSS_EVENTS
    small = big // 10
    say("== rss_growth: cuprobe's peak RSS (VmHWM, from wait4) at %s events over %s events;"
        % (millions(big), millions(small)))
    say("   one thread launching with 1.5 us of host work per launch, so the loader keeps up")

    def one(n):
        return lambda: record_pid(["--launches", str(n), "--work-ns", "1500", "--blocks", "1"])

    res = rounds([("small", one(small)), ("big", one(big))], 2)
    for name in ("small", "big"):
        rs = res[name]
        say("   %-5s events %s drops %s VmHWM kB %s cpu_s %s"
            % (name, [r["launches"] for r in rs], [r["drops"] for r in rs],
               [r["maxrss_kb"] for r in rs], fmt_list([r["cpu_s"] for r in rs], "%.2f")))
    return (median([r["maxrss_kb"] for r in res["big"]]) /
            median([r["maxrss_kb"] for r in res["small"]]))


# --- main ------------------------------------------------------------------

FIGURES = [
    # name, value format, goal: operator and target (None: reported only)
    ("probe_vs_empty_uprobe", "%.2f", "<=", "1.10"),
    ("driver_probe_vs_empty_uprobe", "%.2f", "<=", "1.10"),
    ("nested_launch_vs_empty_uprobe", "%.2f", "<=", "1.10"),
    ("vs_bpftrace_driver", "%.2f", "<=", "1.0"),
    ("vs_bpftrace_runtime", "%.2f", "<=", "1.0"),
    ("wait_step_vs_none", "%.3f", "<=", "1.01"),
    ("active_step_vs_none", "%.2f", None, None),
    ("detach_ms", "%.1f", "<=", "50"),
    ("children_end_ms", "%.0f", "<=", "1000"),
    ("loader_events_per_s", "%.0f", ">=", "1000000"),
    ("trace_write_events_per_s", "%.0f", ">=", "2000000"),
    ("drops", "%.0f", "==", "0"),
    ("drops_small_start", "%.0f", "==", "0"),
    ("rss_growth", "%.2f", "<=", "1.2"),
    ("first_step_complete", "%.2f", "==", "1.0"),
    ("latency_vs_entry", "%.2f", "<", "2.0"),
    ("stack_vs_nostack", "%.2f", "<=", "1.5"),
    ("python_stack_vs_nostack", "%.2f", None, None),
    ("torch_import_vs_none", "%.2f", "<=", "1.10"),
    ("torch_hold_max_ms", "%.1f", "<=", "20"),
    ("torch_holds_pct", "%.1f", "<=", "5"),
    ("torch_import_vs_none_cold", "%.2f", "<=", "1.10"),
    ("torch_hold_max_ms_cold", "%.1f", "<=", "20"),
    ("torch_holds_pct_cold", "%.1f", "<=", "5"),
    ("torch_step_wait_vs_none", "%.3f", "<=", "1.01"),
    ("torch_annotations_vs_wait", "%.3f", None, None),
    ("dlopen_hold_max_ms", "%.2f", "<=", "20"),
    ("dlopen_hold_ms_per_dlopen", "%.2f", None, None),
    ("graph_replay_vs_launch", "%.2f", "<=", "1.10"),
]


def met(value, op, target):
    target = float(target)
    return {"<=": value <= target, ">=": value >= target, "==": value == target,
            "<": value < target}[op]


def main():
    if os.geteuid() != 0:
        sys.exit("bench: cuprobe loads BPF programs: run make bench as root")
    for f in (CUPROBE, LOOP, EMPTY, TRACE_WRITE, REAL_LOOP, REAL_RT,
              os.path.join(TOOLS, "graph_loop")):
        if not os.access(f, os.X_OK):
            sys.exit("bench: %s is missing: run make bench" % f)
    say("bench: %s, %d CPUs, kernel %s; traces in %s; %d repetitions"
        % (cpu_model(), os.cpu_count(), os.uname().release, TMP, REPS))
    start = time.time()
    values = {}
    missed_names = []

    only = [n for n in os.environ.get("BENCH_ONLY", "").split(",") if n]
    # No cache of launch files but the torch figures' own (hold_figures.py).
    os.environ["CUPROBE_CACHE"] = "off"

    not_run = set()

    def measure(name, fn):
        if only and name not in only:
            not_run.add(name)
            return
        t0 = time.time()
        try:
            values[name] = fn()
        except BenchError as e:
            say("   ERROR: %s" % e)
            values[name] = None
        say("   (%.0f s)" % (time.time() - t0))
        say()

    measure("probe_vs_empty_uprobe", probe_vs_empty)
    measure("driver_probe_vs_empty_uprobe", driver_probe_vs_empty)
    measure("nested_launch_vs_empty_uprobe", nested_vs_empty)
    measure("vs_bpftrace_driver", vs_bpftrace_driver)
    measure("vs_bpftrace_runtime", vs_bpftrace_runtime)
    measure("steps", step_figures)
    if values.get("steps"):
        values["wait_step_vs_none"], values["active_step_vs_none"] = values["steps"]
    measure("detach_ms", detach)
    measure("children_end_ms", children_end)
    measure("loader_events_per_s", loader_rate)
    measure("trace_write_events_per_s", trace_write_rate)
    measure("drops", drops)
    measure("drops_small_start", drops_small_start)
    measure("rss_growth", rss_growth)
    measure("first_step_complete", first_step)
    measure("latency_vs_entry", latency_vs_entry)
    import stack_figures  # noqa: E402 (it imports this module)
    measure("stack_vs_nostack", stack_figures.stack_vs_nostack)
    measure("python_stack_vs_nostack", stack_figures.python_stack_vs_nostack)
    import hold_figures  # noqa: E402 (it imports this module)
    measure("torch", hold_figures.torch_figures)
    if values.get("torch"):
        (values["torch_import_vs_none"], values["torch_hold_max_ms"],
         values["torch_holds_pct"], values["torch_import_vs_none_cold"],
         values["torch_hold_max_ms_cold"], values["torch_holds_pct_cold"]) = values["torch"]
    import torch_step_figures  # noqa: E402 (it imports this module)
    measure("torch_steps", torch_step_figures.torch_step_figures)
    if values.get("torch_steps"):
        values["torch_step_wait_vs_none"], values["torch_annotations_vs_wait"] = \
            values["torch_steps"]
    measure("dlopen_holds", hold_figures.dlopen_figures)
    if values.get("dlopen_holds"):
        values["dlopen_hold_max_ms"], values["dlopen_hold_ms_per_dlopen"] = values["dlopen_holds"]
    import graph_figures  # noqa: E402 (it imports this module)
    measure("graph_replay_vs_launch", graph_figures.graph_replay_vs_launch)

    # The figures one measurement gives together (BENCH_ONLY names the measurement).
    part_of = {"wait_step_vs_none": "steps", "active_step_vs_none": "steps",
               "torch_import_vs_none": "torch", "torch_hold_max_ms": "torch",
               "torch_holds_pct": "torch", "torch_import_vs_none_cold": "torch",
               "torch_hold_max_ms_cold": "torch", "torch_holds_pct_cold": "torch",
               "torch_step_wait_vs_none": "torch_steps",
               "torch_annotations_vs_wait": "torch_steps",
               "dlopen_hold_max_ms": "dlopen_holds",
               "dlopen_hold_ms_per_dlopen": "dlopen_holds"}
    missed = failed = 0
    lines = []
    for name, f, op, target in FIGURES:
        if part_of.get(name, name) in not_run:
            continue
        v = values.get(name)
        goal = "goal report" if op is None else "goal %s %s" % (op, target)
        if v is None:
            failed += 1
            lines.append("bench: %s failed (%s)" % (name, goal))
            continue
        if isinstance(v, str):
            lines.append("bench: %s %s (%s)" % (name, v, goal))
            continue
        if op is not None and not met(v, op, target):
            missed += 1
            missed_names.append(name)
        lines.append("bench: %s %s (%s)" % (name, f % v, goal))
    say("bench: %d figures in %.0f s; %d goals missed%s; %d figures failed"
        % (len(lines), time.time() - start, missed,
           " (%s)" % ", ".join(missed_names) if missed_names else "", failed))
    for line in lines:
        say(line)
    return 1 if failed else 0


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


if __name__ == "__main__":
    sys.exit(main())
