#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Checks for tests/e2e/test_daemon.sh: the daemon's traces, its /metrics text, a
Prometheus server's HTTP API, and what the daemon process holds (fds, BPF map entries).

  check_daemon.py traces OUT [--skip DIR]           launches and windows per pid, as JSON
  check_daemon.py metrics URL                       the daemon's launches/windows per pid
  check_daemon.py prom PROMURL                      the same, from Prometheus's HTTP API
  check_daemon.py compare A.json B.json [PIDS]      equal per pid (for PIDS only, if given)
  check_daemon.py ground OUT STEPS PID:GT...         every complete window of each PID holds
                                                    STEPS times the calls of one step of its
                                                    ground truth GT (the workload's CUPROBE_GT)
  check_daemon.py holds PID                         fds and BPF map entries of the daemon
  check_daemon.py gpu OUT PID                       GPU kernels in PID's traces, and their modes
"""
import glob
import json
import os
import re
import subprocess
import sys
import urllib.parse
import urllib.request


def window_traces(out):
    """Every trace the daemon wrote: sampled windows under OUT, captures under OUT/captures."""
    return sorted(glob.glob(os.path.join(out, "run_*", "*.pt.trace.json")) +
                  glob.glob(os.path.join(out, "captures", "run_*", "*.pt.trace.json")))


def traces(out, skip=()):
    per = {}
    for path in window_traces(out):
        if os.path.dirname(path) in skip:
            continue
        with open(path) as f:
            t = json.load(f)
        c = t["cuprobe"]
        n = sum(1 for e in t["traceEvents"]
                if e.get("ph") == "X" and e.get("cat") in ("cuda_runtime", "cuda_driver"))
        if n != c["launches"]:
            sys.exit("%s: %d launch events, cuprobe.launches %d" % (path, n, c["launches"]))
        p = per.setdefault(str(c["pid"]), {"launches": 0, "windows": 0})
        p["launches"] += n
        p["windows"] += 1
    return per


SERIES = re.compile(r'^(cuprobe_launches_total|cuprobe_windows_total)\{([^}]*)\} (\S+)$')


def labels(text):
    return dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', text))


def metrics(url):
    per = {}
    with urllib.request.urlopen(url, timeout=30) as r:
        body = r.read().decode()
    for line in body.splitlines():
        m = SERIES.match(line)
        if not m:
            continue
        lab = labels(m.group(2))
        p = per.setdefault(lab["pid"], {"launches": 0, "windows": 0})
        if m.group(1) == "cuprobe_launches_total":
            p["launches"] += int(float(m.group(3)))
        elif lab["result"] in ("ok", "partial", "error"):
            p["windows"] += int(float(m.group(3)))
    return per


def prom_query(base, q):
    url = base + "/api/v1/query?" + urllib.parse.urlencode({"query": q})
    with urllib.request.urlopen(url, timeout=30) as r:
        ans = json.load(r)
    if ans.get("status") != "success":
        sys.exit("prometheus: %s: %s" % (q, ans))
    return {s["metric"].get("pid", ""): int(float(s["value"][1])) for s in ans["data"]["result"]}


def prom(base):
    per = {}
    for pid, v in prom_query(base, "sum by (pid) (cuprobe_launches_total)").items():
        per.setdefault(pid, {"launches": 0, "windows": 0})["launches"] = v
    q = 'sum by (pid) (cuprobe_windows_total{result=~"ok|partial|error"})'
    for pid, v in prom_query(base, q).items():
        per.setdefault(pid, {"launches": 0, "windows": 0})["windows"] = v
    return per


def compare(a, b, pids):
    with open(a) as f:
        x = json.load(f)
    with open(b) as f:
        y = json.load(f)
    keys = pids or sorted(set(x) | set(y))
    bad = [k for k in keys if x.get(k, {"launches": 0, "windows": 0}) !=
           y.get(k, {"launches": 0, "windows": 0})]
    if bad:
        sys.exit("differ for pids %s: %s vs %s" % (bad, {k: x.get(k) for k in bad},
                                                 {k: y.get(k) for k in bad}))
    if not any(x.get(k, {}).get("launches") for k in keys):
        sys.exit("no launches at all for %s: %s" % (keys, x))


def call_key(api, kernel, grid, block, shmem, nbytes):
    return (api, kernel or "", tuple(grid or (0, 0, 0)), tuple(block or (0, 0, 0)), shmem or 0,
            nbytes or 0)


def gt_step(gt_path):
    """The calls of one step of the workload (every step of these workloads is the same)."""
    with open(gt_path) as f:
        g = json.load(f)
    steps = {}
    for c in g["calls"]:
        k = call_key(c["api"], c["kernel"], c["grid"], c["block"], c["shmem"], c["bytes"])
        steps.setdefault(c["step"], {}).setdefault(k, 0)
        steps[c["step"]][k] += c["count"]
    first = steps[min(steps)]
    if any(v != first for v in steps.values()):
        sys.exit("%s: steps differ; this check needs identical steps" % gt_path)
    return first


def ground(out, steps, pairs):
    seen = 0
    want = {}
    for pair in pairs:
        pid, gt_path = pair.split(":", 1)
        want[pid] = {k: v * steps for k, v in gt_step(gt_path).items()}
    for path in window_traces(out):
        with open(path) as f:
            t = json.load(f)
        c = t["cuprobe"]
        pid = str(c["pid"])
        if pid not in want or c["partial"]:
            continue
        got = {}
        for e in t["traceEvents"]:
            if e.get("ph") != "X" or e.get("cat") not in ("cuda_runtime", "cuda_driver"):
                continue
            a = e.get("args", {})
            k = call_key(e["name"], a.get("kernel"), a.get("grid"), a.get("block"),
                         a.get("shared memory"), a.get("bytes"))
            got[k] = got.get(k, 0) + 1
        first, last = c["steps"]
        if last - first + 1 != steps or c["drops"] or got != want[pid]:
            sys.exit("%s: steps %s, drops %d, calls differ from %d steps of the ground truth:"
                     " got %s, want %s" % (path, c["steps"], c["drops"], steps, got, want[pid]))
        seen += 1
    if not seen:
        sys.exit("no complete window of pids %s" % sorted(want))
    print("%d complete windows, each %d steps of the ground truth" % (seen, steps))


def gpu(out, pid):
    kernels, modes = 0, set()
    for path in window_traces(out):
        with open(path) as f:
            t = json.load(f)
        if str(t["cuprobe"]["pid"]) != pid:
            continue
        modes.add("cupti" if "gpu" in t["cuprobe"] else "bpf")
        kernels += sum(1 for e in t["traceEvents"] if e.get("cat") == "kernel" and e.get("ph") == "X")
    print(json.dumps({"kernels": kernels, "modes": sorted(modes)}))


def holds(pid):
    fds = os.listdir("/proc/%s/fd" % pid)
    entries = {}
    for fd in fds:
        try:
            if os.readlink("/proc/%s/fd/%s" % (pid, fd)) != "anon_inode:bpf-map":
                continue
            info = open("/proc/%s/fdinfo/%s" % (pid, fd)).read()
        except OSError:
            continue
        m = re.search(r"map_id:\s+(\d+)", info)
        if not m:
            continue
        j = json.loads(subprocess.run(["bpftool", "-j", "map", "show", "id", m.group(1)],
                                      capture_output=True, text=True).stdout or "{}")
        name = j.get("name", "")
        if name in ("proc_conf", "proc_state", "runtime_ranges", "family"):
            d = subprocess.run(["bpftool", "-j", "map", "dump", "id", m.group(1)],
                               capture_output=True, text=True).stdout
            entries[name] = len(json.loads(d or "[]"))
    rss = 0
    with open("/proc/%s/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1])
    print(json.dumps({"fds": len(fds), "rss_kb": rss, "entries": entries}))


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "traces":
        skip = args[2:] if len(args) > 2 and args[1] == "--skip" else []
        print(json.dumps(traces(args[0], set(skip))))
    elif cmd == "metrics":
        print(json.dumps(metrics(args[0])))
    elif cmd == "prom":
        print(json.dumps(prom(args[0])))
    elif cmd == "compare":
        compare(args[0], args[1], args[2].split(",") if len(args) > 2 else [])
    elif cmd == "ground":
        ground(args[0], int(args[1]), args[2:])
    elif cmd == "gpu":
        gpu(args[0], args[1])
    elif cmd == "holds":
        holds(args[0])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
