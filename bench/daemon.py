#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""cuprobe daemon's figures (run by bench/run.sh after bench.py, as root).

4 launch_loop processes launch about 100k launches/s in total (25k/s each: 40 us of
busy host work after each launch), each stepping every 2,500 launches, in a cgroup of
the bench's own that the daemon is limited to. The daemon samples them every
BENCH_DAEMON_INTERVAL seconds (default 5) with windows of 5 steps and a 1% budget, for
BENCH_DAEMON_SECONDS (default 30). Figures:

    bench: daemon_cpu_pct <value> (goal <= 2)        the daemon's CPU time over wall time
    bench: daemon_budget_max_pct <value> (goal <= 1)  the highest cuprobe_overhead_ratio
    bench: daemon_windows <value> (goal >= 1)         ok windows of the 4 processes
"""
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CUPROBE = os.environ.get("BENCH_CUPROBE") or os.path.join(ROOT, "cuprobe")
LOOP = os.path.join(ROOT, ".output", "bench", "launch_loop")
SECONDS = float(os.environ.get("BENCH_DAEMON_SECONDS", "30"))
INTERVAL = os.environ.get("BENCH_DAEMON_INTERVAL", "5")
BUDGET = 1.0


def say(msg=""):
    print(msg, flush=True)


def cgroup2():
    with open("/proc/mounts") as f:
        for line in f:
            p = line.split()
            if p[2] == "cgroup2":
                return p[1]
    return None


def cpu_s(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def scrape(port):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=30) as r:
        return r.read().decode()


def measure(cg, name, tmp):
    port = free_port()
    log = open(os.path.join(tmp, "daemon.log"), "w")
    d = subprocess.Popen([CUPROBE, "daemon", "-q", "-l", "127.0.0.1:%d" % port,
                          "-o", os.path.join(tmp, "out"), "-i", INTERVAL, "-n", "5",
                          "--warmup", "2", "-b", str(BUDGET), "--cgroup", "/" + name,
                          "--step", "launch_loop=cuprobe_step"], stdout=log, stderr=log)
    loops = []
    try:
        for _ in range(200):
            try:
                scrape(port)
                break
            except OSError:
                time.sleep(0.1)
        for _ in range(4):
            loops.append(subprocess.Popen(
                ["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', cg, LOOP,
                 "--until-sigterm", "--launches", "2500", "--work-ns", "40000"],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        time.sleep(3)
        t0, c0 = time.time(), cpu_s(d.pid)
        time.sleep(SECONDS)
        t1, c1 = time.time(), cpu_s(d.pid)
        text = scrape(port)
    finally:
        for p in loops:
            p.terminate()
        for p in loops:
            p.wait()
        d.terminate()
        d.wait()
        log.close()
    ratios = [float(v) for v in re.findall(r'^cuprobe_overhead_ratio\{[^}]*\} (\S+)$', text, re.M)]
    windows = sum(int(v) for v in re.findall(
        r'^cuprobe_windows_total\{[^}]*result="ok"\} (\S+)$', text, re.M))
    launches = sum(int(v) for v in re.findall(r'^cuprobe_launches_total\{[^}]*\} (\S+)$', text, re.M))
    say("daemon: %.1f s, daemon CPU %.2f s; %d ok windows, %d launches counted; overhead "
        "ratios %s" % (t1 - t0, c1 - c0, windows, launches, ["%.5f" % r for r in ratios]))
    return 100 * (c1 - c0) / (t1 - t0), 100 * max(ratios or [0]), windows


def main():
    if os.geteuid() != 0:
        sys.exit("bench: the daemon loads BPF programs: run make bench as root")
    if not os.access(LOOP, os.X_OK):
        sys.exit("bench: %s is missing: run make bench" % LOOP)
    root = cgroup2()
    name = "cuprobe-bench-%d" % os.getpid()
    tmp = tempfile.mkdtemp(prefix="cuprobe-bench-daemon.", dir="/tmp")
    cg = os.path.join(root, name) if root else None
    vals = None
    try:
        if not cg:
            raise OSError("no cgroup2 mount")
        os.mkdir(cg)
        vals = measure(cg, name, tmp)
    except (OSError, subprocess.SubprocessError) as e:
        say("   ERROR: %s" % e)
    finally:
        if cg and os.path.isdir(cg):
            time.sleep(0.2)
            try:
                os.rmdir(cg)
            except OSError:
                pass
        shutil.rmtree(tmp, ignore_errors=True)
    goals = [("daemon_cpu_pct", "%.2f", "<=", 2.0), ("daemon_budget_max_pct", "%.3f", "<=", BUDGET),
             ("daemon_windows", "%.0f", ">=", 1)]
    missed = 0
    for i, (n, f, op, target) in enumerate(goals):
        if vals is None:
            say("bench: %s failed (goal %s %g)" % (n, op, target))
            missed += 1
            continue
        v = vals[i]
        missed += not (v <= target if op == "<=" else v >= target)
        say("bench: %s %s (goal %s %g)" % (n, f % v, op, target))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
