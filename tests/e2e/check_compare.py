#!/usr/bin/env python3
# Checks of `cuprobe compare`'s output for tests/e2e/test_compare.sh.
#   check_compare.py json FILE KEY=VALUE...   figures against expected values (below)
#   check_compare.py dom FILE MODE...          the page Chromium parsed (--dump-dom)
#   check_compare.py png FILE MODE...          a screenshot: each mode's colour is drawn
# Prints what is wrong and exits 1; exits 0 when all holds.
import json
import struct
import sys
import zlib
from html.parser import HTMLParser

COLOURS = {"off": (0x1f, 0x77, 0xb4), "bpf": (0xff, 0x7f, 0x0e),
           "cupti": (0xd6, 0x27, 0x28), "latency": (0x2c, 0xa0, 0x2c)}
# Launches per step of `basic --threads 1 --steps`, one of each of its 9 calls
# (tests/workloads/README.md), and the kernels among them.
BASIC_PER_STEP = 9
BASIC_KERNELS = ["plain_kernel(float*, int)", "void ns::scale<float>(float*, int)",
                 "void ns::scale<int>(int*, int)", "shared_kernel(float*, int)",
                 "ex_kernel(float*, int)", "coop_kernel(float*, int)"]


def check_json(path, args):
    d = json.load(open(path))
    want = dict(a.split("=", 1) for a in args)
    bad = []
    res = {r["mode"]: r for r in d["results"]}
    modes = want["modes"].split(",")
    rounds, spm = int(want["rounds"]), int(want["steps"])
    order = []
    for r in range(rounds):
        order += modes if r % 2 == 0 else modes[::-1]
    if d["order"] != order:
        bad.append(f"order {d['order']}, want {order}")
    if d["modes"] != modes:
        bad.append(f"modes {d['modes']}")
    # The windows came in the rotation's order, each in its mode's folder.
    seen = {}
    for w in sorted(d["windows"], key=lambda w: w["window"]):
        if w["mode"] != order[w["window"]]:
            bad.append(f"window {w['window']} in mode {w['mode']}, want {order[w['window']]}")
        j = seen.get(w["mode"], 0)
        seen[w["mode"]] = j + 1
        if w["mode"] == "off":
            if w["trace"] is not None:
                bad.append("an off window wrote a trace")
        elif not w["trace"] or f"/{w['mode']}/run_{j}/" not in w["trace"]:
            bad.append(f"window {w['window']}'s trace {w['trace']} not in {w['mode']}/run_{j}/")
        elif want.get("exact") == "1":
            t = json.load(open(w["trace"]))
            n = sum(1 for e in t["traceEvents"] if e.get("cat") in ("cuda_runtime", "cuda_driver"))
            if n != BASIC_PER_STEP * spm:
                bad.append(f"trace {w['trace']} has {n} launches, want {BASIC_PER_STEP * spm}")
    # The measured steps of the timeline follow the rotation too.
    steps = [s for s in sorted(d["timeline"], key=lambda s: s["start_ns"]) if s["mode"]]
    runs = []
    for s in steps:
        if not runs or runs[-1][0] != s["window"]:
            runs.append((s["window"], s["mode"], []))
        runs[-1][2].append(s)
    for w, m, ss in runs:
        if m != order[w]:
            bad.append(f"steps of window {w} timed as {m}, want {order[w]}")
    if want.get("exact") == "1":
        if len(d["windows"]) != len(order):
            bad.append(f"{len(d['windows'])} windows, want {len(order)}")
        for m in modes:
            r = res[m]
            if r["steps"] != rounds * spm:
                bad.append(f"{m}: {r['steps']} steps measured, want {rounds * spm}")
            if m == "off":
                if r["launches"] is not None:
                    bad.append("off counted launches")
                continue
            want_l = BASIC_PER_STEP * spm * rounds
            if r["launches"] != want_l or r["drops"] != 0:
                bad.append(f"{m}: {r['launches']} launches + {r['drops']} drops, want {want_l}")
            if r["launches_per_step"] != BASIC_PER_STEP:
                bad.append(f"{m}: {r['launches_per_step']} launches per step")
            if r["probe_cost_ns_per_step"] is None or r["probe_cost_ns_per_step"] <= 0:
                bad.append(f"{m}: no probe cost")
            if "off" in modes and (r["ratio_to_off"] is None or r["ratio_to_off"]["ci95_low"] is None):
                bad.append(f"{m}: no ratio to off with an interval")
            elif "off" in modes:
                q = r["ratio_to_off"]
                if not q["ci95_low"] <= q["value"] <= q["ci95_high"]:
                    bad.append(f"{m}: ratio {q} outside its interval")
            for k in BASIC_KERNELS:
                row = [x for x in d["kernels"] if x["name"] == k]
                if not row or row[0]["launches"].get(m) != spm * rounds:
                    bad.append(f"{m}: kernel {k}: {row and row[0]['launches']}, want {spm * rounds}")
        if "off" in res:
            o = res["off"]
            if o["step_ns"] is None or not o["step_ns"]["p25"] <= o["step_ns"]["median"] <= o["step_ns"]["p95"]:
                bad.append(f"off: step_ns {o['step_ns']}")
    if "cupti" in want:
        c = res.get("cupti")
        usable = want["cupti"] == "1"
        if not c or c["cupti_usable"] != usable:
            bad.append(f"cupti_usable {c and c['cupti_usable']}, want {usable}")
        if usable:
            for k in BASIC_KERNELS:
                row = [x for x in d["kernels"] if x["name"] == k]
                if not row or row[0]["gpu_count"] != spm * rounds or row[0]["gpu_ns"] <= 0:
                    bad.append(f"cupti: GPU time of {k}: {row}")
            if c["cupti_overhead_ns_per_step"] is None:
                bad.append("cupti: no CUPTI overhead figure")
    if want.get("latency") == "1":
        apis = {a["name"]: a for a in res["latency"]["apis"]}
        la = apis.get("cudaLaunchKernel")
        if not la or la["calls"] != 4 * spm * rounds or not la["latency_ns"] or la["latency_ns"]["median"] <= 0:
            bad.append(f"latency: cudaLaunchKernel {la}")
        if any(a["latency_ns"] for a in res["bpf"]["apis"]):
            bad.append("bpf windows gave API latencies")
    for k in ("complete", "clock"):
        if k in want and str(d[k]).lower() != want[k]:
            bad.append(f"{k} {d[k]}, want {want[k]}")
    for pat in want.get("notes", "").split("|"):
        if pat and not any(pat in n for n in d["notes"]):
            bad.append(f"no note says '{pat}': {d['notes']}")
    if want.get("nonotes") == "1" and d["notes"]:
        bad.append(f"notes: {d['notes']}")
    return bad


class Dom(HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.fills, self.notes, self.svgs = set(), [], 0, 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        if tag == "svg":
            self.svgs += 1
        if tag == "rect" and "fill" in a:
            self.fills.append(a["fill"].lower())
        if tag == "script" or (tag == "link" and "href" in a) or (a.get("src", "").startswith("http")):
            self.fills.append("EXTERNAL:" + tag)


def check_dom(path, modes):
    p = Dom()
    p.feed(open(path).read())
    bad = []
    for i in ("box", "timeline", "costs") + (("apis",) if "latency" in modes else ()):
        if i not in p.ids:
            bad.append(f"no #{i}")
    for m in modes:
        if "#%02x%02x%02x" % COLOURS[m] not in p.fills:
            bad.append(f"no box of {m}'s colour")
    if any(f.startswith("EXTERNAL") for f in p.fills):
        bad.append("the page loads something: it must stand alone")
    return bad


def read_png(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    while pos < len(data):
        n, typ = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if typ == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
        elif typ == b"IDAT":
            idat += body
        pos += 12 + n
    assert depth == 8 and ctype in (2, 6), f"PNG depth {depth} type {ctype}"
    bpp = 3 if ctype == 2 else 4
    raw, stride = zlib.decompress(idat), w * bpp
    rows, prev, i = [], bytearray(stride), 0
    for _ in range(h):
        f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, bpp, rows


def check_png(path, modes):
    w, h, bpp, rows = read_png(path)
    counts = dict.fromkeys(modes, 0)
    for row in rows:
        for x in range(0, w * bpp, bpp):
            px = (row[x], row[x + 1], row[x + 2])
            for m in modes:
                if all(abs(px[k] - COLOURS[m][k]) <= 6 for k in range(3)):
                    counts[m] += 1
    # A box of each mode is tens of pixels wide and tall: far more than a legend swatch.
    return [f"{m}: {n} pixels of its colour drawn" for m, n in counts.items() if n < 800]


def main():
    kind, path, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
    bad = {"json": check_json, "dom": check_dom, "png": check_png}[kind](path, rest)
    if bad:
        print("\n".join(bad[:8]))
        sys.exit(1)


if __name__ == "__main__":
    main()
