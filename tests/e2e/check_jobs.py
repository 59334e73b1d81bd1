#!/usr/bin/env python3
"""Checks of the daemon's job API for test_daemon_jobs.sh: each subcommand exits 0 or says why.

  ranks URL JOB PIDS MIN       /targets?job=JOB lists exactly PIDS, each past step MIN
  max_step URL JOB             the highest step of the job's ranks
  target URL JOB PID KEY=VALUE...   fields of one target (values as JSON)
  capture FILE JOB PIDS RANKS WORLD S N    every rank ok, steps S..S+N-1 (S '-': any N), distributedInfo
  missed FILE PIDS             every rank missed, with its step, no trace
"""
import json
import sys
import urllib.parse
import urllib.request


def targets(url, job):
    q = "?job=" + urllib.parse.quote(job) if job else ""
    with urllib.request.urlopen(url + "/targets" + q, timeout=10) as r:
        return json.load(r)["targets"]


def pids_of(s):
    return sorted(int(p) for p in s.split(","))


def ranks(url, job, pids, least):
    t = targets(url, job)
    if sorted(x["pid"] for x in t) != pids_of(pids) or not all(x["step"] > int(least) for x in t):
        sys.exit("targets of %s: %s; all: %s" % (job, t, [(x["pid"], x["job"], x["step"]) for x in targets(url, "")]))


def max_step(url, job):
    print(max(x["step"] for x in targets(url, job)))


def target(url, job, pid, *kvs):
    t = {x["pid"]: x for x in targets(url, job)}.get(int(pid))
    if t is None:
        sys.exit("no target %s in %s" % (pid, job))
    for kv in kvs:
        k, v = kv.split("=", 1)
        want = json.loads(v)
        if want == ">0":
            ok = t[k] > 0
        else:
            ok = t[k] == want
        if not ok:
            sys.exit("%s: %s is %r, want %r (%s)" % (pid, k, t[k], want, t))


def capture(path, job, pids, rank_list, world, s, n):
    c = json.load(open(path))
    n = int(n)
    want = dict(zip(pids_of(pids), [int(r) for r in rank_list.split(",")]))
    r = {x["pid"]: x for x in c["ranks"]}
    if c["job"] != job or sorted(r) != sorted(want):
        sys.exit("answer %s" % c)
    for pid, x in r.items():
        steps = [x["first_step"], x["last_step"]]
        if x["result"] != "ok" or not x["trace"]:
            sys.exit("pid %d: %s" % (pid, x))
        if s != "-" and steps != [int(s), int(s) + n - 1]:
            sys.exit("pid %d: steps %s, want %s..%d" % (pid, steps, s, int(s) + n - 1))
        if steps[1] - steps[0] != n - 1:
            sys.exit("pid %d: steps %s" % (pid, steps))
        t = json.load(open(x["trace"]))
        d = t["distributedInfo"]
        if d["rank"] != want[pid] or d["world_size"] != int(world) or t["cuprobe"]["steps"] != steps:
            sys.exit("pid %d: distributedInfo %s, steps %s" % (pid, d, t["cuprobe"]["steps"]))
    print("%d ranks, steps %s" % (len(r), [(x["first_step"], x["last_step"]) for x in r.values()]))


def missed(path, pids):
    c = json.load(open(path))
    if sorted(x["pid"] for x in c["ranks"]) != pids_of(pids):
        sys.exit("answer %s" % c)
    for x in c["ranks"]:
        if x["result"] != "missed" or "it is at step" not in x["why"] or x["trace"]:
            sys.exit("answer %s" % c)


if __name__ == "__main__":
    cmds = {"ranks": ranks, "max_step": max_step, "target": target, "capture": capture,
            "missed": missed}
    cmds[sys.argv[1]](*sys.argv[2:])
