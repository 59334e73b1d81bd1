#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Checks of cuprobe report on the graph replays of tests/e2e/fixtures/graphs.pt.trace.json.

  check_report_graphs.py text OUT ERR     the Graphs line, the Kernels table, the warning
  check_report_graphs.py json OUT         the graphs object and the kernels rows
  check_report_graphs.py csv OUT          the kernel, graph_kernel and summary rows
  check_report_graphs.py folded OUT ERR   each replay's kernels under its stack
  check_report_graphs.py svg SVG          the flame graph weighs the same
  check_report_graphs.py truth TRACE      the expected counts, worked out from the trace itself

The fixture: process 4242 launches gemm twice and copies once; content 1
(gemm x3, relu x1, a copy) is replayed three times, content 2 (relu x2,
softmax x5, a set) twice, the second time from another stack (eval.py,
without the graph launch's own frame), and one replay is of unknown content.
Exits 0 when the check holds, else prints why and exits 1.
"""
import csv
import io
import json
import sys
import xml.dom.minidom

GEMM, RELU, SOFTMAX = "gemm_kernel(float*)", "relu_kernel(float*)", "softmax_kernel(float*, int)"
# name: (launches, from graphs), in report order; 9 launches and 26 kernels of replays.
KERNELS = [(GEMM, 11, 9), (SOFTMAX, 10, 10), (RELU, 7, 7), ("graph 0xa1", 3, 0),
           ("graph 0xb2", 2, 0), ("Memcpy HtoD", 1, 0), ("graph 0xc3", 1, 0)]
TOTAL = 35
GRAPHS = {"replays": 6, "unknown_replays": 1, "contents": 2, "kernels": 26, "copies": 3,
          "sets": 2, "gpu_kernels": None, "mismatches": None}
TRAIN = "train.py(10): <module>;train.py(20): step"
FOLDED = {
    "eval.py(5): run;cudaGraphLaunch;" + RELU: 2,
    "eval.py(5): run;cudaGraphLaunch;" + SOFTMAX: 5,
    TRAIN + ";cudaGraphLaunch;[graph of unknown content]": 1,
    TRAIN + ";cudaGraphLaunch;" + GEMM: 9,
    TRAIN + ";cudaGraphLaunch;" + RELU: 5,
    TRAIN + ";cudaGraphLaunch;" + SOFTMAX: 5,
    TRAIN + ";cudaLaunchKernel;" + GEMM: 2,
    TRAIN + ";cudaMemcpyAsync;cudaMemcpyAsync": 1,
}
UNKNOWN_WARNING = ("warning: 1 graph replay ran graphs of unknown content (made before "
                   "cuprobe attached")


def fail(msg):
    print(msg)
    sys.exit(1)


def want(cond, msg):
    if not cond:
        fail(msg)


def text(out_path, err_path):
    out, err = open(out_path).read(), open(err_path).read()
    line = ("Graphs     5 replays of 2 graphs ran 26 kernels, 3 copies, 2 sets; 1 replay of a "
            "graph of unknown content\n")
    want(line in out, "no Graphs line %r in:\n%s" % (line, out))
    table = out.split("\nKernels\n", 1)[1].split("\n\n", 1)[0].splitlines()
    want(table[0].split() == ["LAUNCHES", "SHARE", "LAUNCHES/S", "FROM", "GRAPHS", "KERNEL"],
         "Kernels heading %r" % table[0])
    for row, (name, n, g) in zip(table[1:], KERNELS):
        cells = row.split(None, 4)
        got = (cells[4], int(cells[0]), cells[1], int(cells[3]))
        exp = (name, n, "%.2f%%" % (100.0 * n / TOTAL), g)
        want(got == exp, "Kernels row %s, want %s" % (got, exp))
    want(len(table) == 1 + len(KERNELS), "Kernels has %d rows" % (len(table) - 1))
    want("FROM GRAPHS" not in out.split("\nAPIs\n", 1)[1], "a graph column outside Kernels")
    want(UNKNOWN_WARNING in err, "no warning of unknown content: %s" % err)


def json_report(out_path):
    r = json.load(open(out_path))
    want(r["launches"] == 9 and r["malformed_events"] == 0,
         "launches %s, malformed %s" % (r["launches"], r["malformed_events"]))
    want(r["graphs"] == GRAPHS, "graphs %s, want %s" % (r["graphs"], GRAPHS))
    got = [(k["name"], k["launches"], k["from_graphs"]) for k in r["kernels"]]
    want(got == KERNELS, "kernels %s, want %s" % (got, KERNELS))
    for k in r["kernels"]:
        want(abs(k["share_pct"] - 100.0 * k["launches"] / TOTAL) < 1e-9, "share of %s" % k)
    apis = [(a["name"], a["calls"]) for a in r["apis"]]
    want(apis == [("cudaGraphLaunch", 6), ("cudaLaunchKernel", 2), ("cudaMemcpyAsync", 1)],
         "apis %s" % apis)


def csv_report(out_path):
    rows = list(csv.reader(io.StringIO(open(out_path).read())))
    want(all(len(r) == 26 for r in rows), "rows of other than 26 columns")
    kern = [(r[1], int(r[4])) for r in rows if r[0] == "kernel"]
    want(kern == [(n, c) for n, c, _ in KERNELS], "kernel rows %s" % kern)
    graph = [(r[1], int(r[4]), r[5]) for r in rows if r[0] == "graph_kernel"]
    exp = [(n, g, "%.3f" % (100.0 * g / TOTAL)) for n, _, g in KERNELS if g]
    want(graph == exp, "graph_kernel rows %s, want %s" % (graph, exp))
    summary = {r[1]: int(r[4]) for r in rows if r[0] == "summary"}
    exp = {"graph_replays": 6, "graph_unknown_replays": 1, "graph_contents": 2,
           "graph_kernels": 26, "graph_copies": 3, "graph_sets": 2}
    want(summary == exp, "summary rows %s, want %s" % (summary, exp))


def folded(out_path, err_path):
    got = {}
    for line in open(out_path):
        stack, _, n = line.rstrip("\n").rpartition(" ")
        want(stack not in got, "stack twice: %s" % stack)
        got[stack] = int(n)
    want(got == FOLDED, "folded %s, want %s" % (got, FOLDED))
    want("[graph of unknown content]" in open(err_path).read(), "no warning of unknown content")


def svg(path):
    titles = [t.firstChild.data for t in xml.dom.minidom.parse(path).getElementsByTagName("title")]
    total = sum(FOLDED.values())
    want(titles and titles[0].startswith("all (%d " % total), "root %s, want %d" % (titles[:1], total))
    want(any(t.startswith(GEMM + " (9 launches") for t in titles), "no gemm frame of 9 launches")


def truth(trace_path):
    """The expected counts again, from the trace's events and its graphs list."""
    d = json.load(open(trace_path))
    graphs = {g["id"]: g for g in d["cuprobe"]["graphs"]}
    kernels, ran, replays, unknown = {}, {}, 0, 0
    for e in d["traceEvents"]:
        if e.get("cat") not in ("cuda_runtime", "cuda_driver"):
            continue
        a = e["args"]
        name = a.get("kernel") or ("graph " + a["graph"] if "graph" in a else
                                   "Memcpy " + a["kind"])
        kernels[name] = kernels.get(name, 0) + 1
        if "graph content" not in a:
            continue
        replays += 1
        g = graphs.get(a["graph content"])
        if g is None:
            unknown += 1
            continue
        for k in g["kernel_nodes"]:
            kernels[k["kernel"]] = kernels.get(k["kernel"], 0) + k["count"]
            ran[k["kernel"]] = ran.get(k["kernel"], 0) + k["count"]
    exp = {n: (c, g) for n, c, g in KERNELS}
    got = {n: (c, ran.get(n, 0)) for n, c in kernels.items()}
    want(got == exp, "the trace gives %s, the checks want %s" % (got, exp))
    want((replays, unknown, sum(ran.values())) == (6, 1, 26), "replays %d, unknown %d" % (replays, unknown))
    m = d["cuprobe"]
    want((m["graph_replays"], m["graph_unknown_replays"], m["graph_kernels"]) == (6, 1, 26),
         "the trace's own counts disagree")


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    checks = {"text": text, "json": json_report, "csv": csv_report, "folded": folded,
              "svg": svg, "truth": truth}
    if cmd not in checks:
        fail("unknown check %s" % cmd)
    checks[cmd](*args)


main()
