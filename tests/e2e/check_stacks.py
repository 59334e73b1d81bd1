#!/usr/bin/env python3
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Checks of record --stack and report --format folded / --flamegraph against ground truth.

  check_stacks.py native TRUTH FOLDED        named chains, inlined frame, counts
  check_stacks.py stripped FOLDED TRACE N    no chain names, addresses counted
  check_stacks.py python TRUTH FOLDED        Python frames, files, lines, merged
  check_stacks.py redefined TRUTH FOLDED     f_0..f_N made at one place: each stack its own name
  check_stacks.py trace TRACE N              spans and launches linked, counts
  check_stacks.py svg SVG TOTAL NAME COUNT   well-formed, totals, one frame's count
  check_stacks.py gpu FOLDED TRACE           --weight gpu: each kernel's GPU ns, from the trace
Exits 0 when the check holds, else prints why and exits 1.
"""
import json
import re
import sys
import xml.dom.minidom


def fail(msg):
    print(msg)
    sys.exit(1)


def folded(path):
    lines = {}
    for line in open(path):
        stack, _, count = line.rstrip("\n").rpartition(" ")
        if not stack or not count.isdigit():
            fail("bad folded line: %r" % line)
        if stack in lines:
            fail("stack twice: %r" % stack)
        lines[stack] = int(count)
    return lines


def fn_of(frame):
    """The function a native frame names: 'fn (file:line)' or 'fn(args) (file:line)'."""
    return re.split(r"[ (]", frame, 1)[0]


def native(truth_path, folded_path):
    truth = json.loads(open(truth_path).read().strip().splitlines()[-1])
    lines = folded(folded_path)
    for chain in truth["chains"]:
        found = [(s, n) for s, n in lines.items() if s.split(";")[-1] == chain["kernel"]]
        if len(found) != 1:
            fail("kernel %s: %d stacks, want 1: %s" % (chain["kernel"], len(found), list(lines)))
        stack, n = found[0]
        if n != chain["count"]:
            fail("%s: %d launches, want %d" % (chain["kernel"], n, chain["count"]))
        fns = [fn_of(f) for f in stack.split(";")]
        # The chain's functions, in order, root first (others may sit between).
        at = 0
        for want in chain["frames"]:
            if want not in fns[at:]:
                fail("%s: %s not after %s in %s" % (chain["kernel"], want, fns[:at], fns))
            at = fns.index(want, at) + 1
        if fns[-2] != "cudaLaunchKernel":
            fail("%s: the API is not the innermost frame: %s" % (chain["kernel"], fns))
        if chain["frames"][-1] == "chain_a_inline":
            inl = [f for f in stack.split(";") if f.startswith("chain_a_inline ")]
            if not inl or not inl[0].endswith("[inlined]") or "stacks.cu:" not in inl[0]:
                fail("inlined frame not named with its line: %s" % inl)


def stripped(folded_path, trace_path, n):
    lines = folded(folded_path)
    text = " ".join(lines)
    if "chain_" in text:
        fail("a stripped program's functions were named: %s" % text)
    if sum(lines.values()) != n:
        fail("%d launches, want %d" % (sum(lines.values()), n))
    for s in lines:
        if not re.search(r"stacks_stripped\+0x[0-9a-f]+", s):
            fail("no address of the stripped program in %s" % s)
    st = json.load(open(trace_path))["cuprobe"]["stacks"]
    # Each launch passes at least two of its functions (outer, inner/middle, main or thread_b).
    if st["unsymbolized_frames"] < 2 * n:
        fail("unsymbolized_frames %d, want at least %d" % (st["unsymbolized_frames"], 2 * n))


def python(truth_path, folded_path):
    truth = json.loads(open(truth_path).read().strip().splitlines()[-1])
    lines = folded(folded_path)
    py = [(s, n) for s, n in lines.items() if "launch_leaf" in s]
    if len(py) != 1:
        fail("%d stacks through launch_leaf, want 1: %s" % (len(py), list(lines)))
    stack, n = py[0]
    if n != truth["count"]:
        fail("%d launches, want %d" % (n, truth["count"]))
    frames = stack.split(";")
    pyf = [f for f in frames if ".py(" in f]
    if pyf != truth["python"]:
        fail("Python %s frames %s, want %s" % (truth["version"], pyf, truth["python"]))
    # Merged: Python frames above the native ones, the API innermost.
    if frames[: len(pyf)] != pyf or frames[-2] != "cudaLaunchKernel":
        fail("not merged root-first with the API innermost: %s" % frames)


def redefined(truth_path, folded_path):
    """Each version of a function made where the last was freed names its own launch."""
    truth = json.loads(open(truth_path).read().strip().splitlines()[-1])
    lines = folded(folded_path)
    if truth["reused"] < 1:
        fail("no version took a freed one's address: the case is not exercised")
    for name in truth["redefined"]:
        frame = "%s(%d): %s" % (truth["file"], truth["line"], name)
        found = [(s, n) for s, n in lines.items() if frame in s.split(";")]
        if len(found) != 1 or found[0][1] != 1:
            fail("%s: %s, want one stack of one launch: %s" % (frame, found, list(lines)))
    unnamed = [s for s in lines if "<python frame" in s]
    if unnamed:
        fail("unnamed Python frames: %s" % unnamed)


def trace(trace_path, n):
    d = json.load(open(trace_path))
    ev = d["traceEvents"]
    spans = {e["args"]["Python id"]: e for e in ev if e.get("cat") == "python_function"}
    launches = [e for e in ev if e.get("cat") in ("cuda_runtime", "cuda_driver")]
    if len(launches) != n:
        fail("%d launches, want %d" % (len(launches), n))
    for e in spans.values():
        p = e["args"].get("Python parent id")
        if p is not None and p not in spans:
            fail("span %s names a parent %s that is not there" % (e["name"], p))
        if e["tid"] != e["args"]["Python thread"]:
            fail("span on tid %s says thread %s" % (e["tid"], e["args"]["Python thread"]))
    for l in launches:
        p = l["args"].get("Python parent id")
        if p not in spans:
            fail("launch without its innermost frame: %s" % l["args"])
        s = spans[p]
        if s["tid"] != l["tid"] or not (s["ts"] <= l["ts"] <= s["ts"] + s["dur"] + 0.001):
            fail("launch at %s outside its frame %s [%s, +%s]" % (l["ts"], s["name"], s["ts"], s["dur"]))
    st = d["cuprobe"]["stacks"]
    if st["taken"] != n or st["lost"] != 0:
        fail("stacks %s, want %d taken, none lost" % (st, n))


def svg(path, total, name, count):
    doc = xml.dom.minidom.parse(path)
    titles = [t.firstChild.data for t in doc.getElementsByTagName("title")]
    if not titles or not titles[0].startswith("all (%d " % total):
        fail("root frame %s, want %d" % (titles[:1], total))
    hits = [t for t in titles if t.startswith(name) and " (%d launches" % count in t]
    if not hits:
        fail("no frame %s with %d launches: %s" % (name, count, titles))


def gpu(folded_path, trace_path):
    """Each leaf's weight is the GPU ns of the work its launches made (by correlation)."""
    ev = json.load(open(trace_path))["traceEvents"]
    ns = {}
    for e in ev:
        if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset"):
            c = e["args"]["correlation"]
            ns[c] = ns.get(c, 0) + int(e["dur"] * 1000 + 0.5)
    want = {}
    for e in ev:
        if e.get("cat") in ("cuda_runtime", "cuda_driver") and e["args"]["correlation"] in ns:
            k = e["args"].get("kernel", e["name"])
            want[k] = want.get(k, 0) + ns[e["args"]["correlation"]]
    got = {}
    for s, n in folded(folded_path).items():
        leaf = s.split(";")[-1]
        got[leaf] = got.get(leaf, 0) + n
    if not want or got != want:
        fail("GPU ns per kernel %s, want %s" % (got, want))


def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    if cmd == "native":
        native(*args)
    elif cmd == "stripped":
        stripped(args[0], args[1], int(args[2]))
    elif cmd == "python":
        python(*args)
    elif cmd == "redefined":
        redefined(*args)
    elif cmd == "trace":
        trace(args[0], int(args[1]))
    elif cmd == "gpu":
        gpu(*args)
    elif cmd == "svg":
        svg(args[0], int(args[1]), args[2], int(args[3]))
    else:
        fail("unknown check %s" % cmd)


main()
