# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""CUDA graph figures, for bench.py.

graph_replay_vs_launch: what cuprobe record adds to one replay of a 100-node
graph (captured from 100 launches) over what it adds to one cudaLaunchKernel,
both on the stand-in runtime and driver (bench/graph_loop.cu), measured in
the same run: (Gr - Gn) / (Lr - Ln), G the replay loop, L the launch loop,
r under cuprobe record, n alone, ns per call, interleaved rounds, median of
the per-round ratios. A replay is one call however many nodes it has: what
cuprobe learns of its content it learns at capture and instantiation, so its
cost per replay should be that of a launch.
"""
import os
import re
import sys

# bench.py runs as __main__: its BenchError is the one measure() catches.
b = sys.modules["__main__"] if hasattr(sys.modules["__main__"], "BenchError") else None
if b is None:
    import bench as b  # noqa: E402

GRAPH_LOOP = os.path.join(b.TOOLS, "graph_loop")
NODES = 100
ARGS = ["--calls", "20000", "--blocks", "5", "--nodes", str(NODES), "--warmup-ms", "600"]


def loop_result(out):
    m = re.search(r"^graph_loop: (.*)$", out, re.M)
    if not m:
        raise b.BenchError("graph_loop printed no result: %r" % out[-300:])
    return dict(kv.split("=", 1) for kv in m.group(1).split())


def trace_graph_counts(t):
    """The graph counts of the cuprobe object of each trace of t, summed (absent: None)."""
    keys = ("graph_replays", "graph_unknown_replays", "graph_kernels")
    got = {}
    for top, _, names in os.walk(t.dir):
        for n in names:
            if not n.endswith(".pt.trace.json"):
                continue
            with open(os.path.join(top, n), "rb") as f:
                f.seek(0, os.SEEK_END)
                f.seek(max(0, f.tell() - 65536))
                tail = f.read().decode("utf-8", "replace")
            i = tail.rfind('"cuprobe": {')
            for k in keys:
                m = re.search(r'"%s": (\d+)' % k, tail[i:]) if i >= 0 else None
                if m:
                    got[k] = got.get(k, 0) + int(m.group(1))
    return got or None


def alone(mode):
    def fn():
        r = loop_result(b.run([GRAPH_LOOP, "--" + mode] + ARGS)[0])
        if r["probed"] != "00":
            raise b.BenchError("graph_loop --%s alone: probed=%s" % (mode, r["probed"]))
        return r
    return fn


def recorded(mode):
    """graph_loop under cuprobe record: every call recorded, every replay's content known."""
    def fn():
        t = b.Traces()
        try:
            out, _ = b.run([b.CUPROBE, "record", "-q", "-o", t.dir, "--", GRAPH_LOOP,
                            "--" + mode] + ARGS)
            r = loop_result(out)
            r.update(t.summary())
            calls = int(r["calls"])
            if r["launches"] + r["drops"] < calls:
                raise b.BenchError("cuprobe recorded %d of graph_loop's %d calls"
                                   % (r["launches"], calls))
            g = trace_graph_counts(t)
            r["graph"] = g
            if mode == "graph" and g and (g.get("graph_replays") != calls
                                          or g.get("graph_unknown_replays")
                                          or g.get("graph_kernels") != calls * NODES):
                raise b.BenchError("the traces say %s of %d replays of %d nodes each"
                                   % (g, calls, NODES))
            return r
        finally:
            t.remove()
    return fn


def graph_replay_vs_launch():
    b.say("== graph_replay_vs_launch: cost per replay of a %d-node graph (captured from %d"
          % (NODES, NODES))
    b.say("   launches) under cuprobe record, over that of one cudaLaunchKernel under cuprobe")
    b.say("   record, both on the stand-in runtime and driver (bench/graph_loop.cu), each over")
    b.say("   the same loop alone; after 600 ms of warmup in which cuprobe settles")
    res = b.rounds([("graph alone", alone("graph")), ("graph record", recorded("graph")),
                    ("launch alone", alone("launch")), ("launch record", recorded("launch"))],
                   b.REPS + 2)
    gn, gr, ln, lr = ([float(r["ns_per_call"]) for r in res[k]]
                      for k in ("graph alone", "graph record", "launch alone", "launch record"))
    ratios = [(gri - gni) / (lri - lni) for gni, gri, lni, lri in zip(gn, gr, ln, lr)
              if lri > lni]
    if not ratios:
        raise b.BenchError("cuprobe record added nothing measurable to a launch")
    b.say("   ns per call, median of 5 blocks of 20k calls, each round:")
    b.say("     Gn replay alone    %s  median %.1f" % (b.fmt_list(gn), b.median(gn)))
    b.say("     Gr replay, record  %s  median %.1f" % (b.fmt_list(gr), b.median(gr)))
    b.say("     Ln launch alone    %s  median %.1f" % (b.fmt_list(ln), b.median(ln)))
    b.say("     Lr launch, record  %s  median %.1f" % (b.fmt_list(lr), b.median(lr)))
    b.say("   added per replay Gr-Gn %.1f ns, per launch Lr-Ln %.1f ns; (Gr-Gn)/(Lr-Ln) per"
          % (b.median(gr) - b.median(gn), b.median(lr) - b.median(ln)))
    b.say("   round %s; Gr/Lr %.2f" % (b.fmt_list(ratios, "%.2f"), b.median(gr) / b.median(lr)))
    probed = {k: sorted({r["probed"] for r in res[k]}) for k in ("graph record", "launch record")}
    b.say("   entry points probed (runtime, driver): replay %s, launch %s"
          % (",".join(probed["graph record"]), ",".join(probed["launch record"])))
    g = res["graph record"][0]["graph"]
    b.say("   the replays' traces: %s" % (g if g else "no graph counts (a cuprobe before graphs)"))
    drops = max(r["drops"] for r in res["graph record"] + res["launch record"])
    if drops:
        b.say("   WARNING: %d drops make cuprobe's cost look smaller than it is" % drops)
    return b.median(ratios)
