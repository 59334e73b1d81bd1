#!/usr/bin/env python3
"""Compares cuprobe's traces with torch.profiler's for tests/gpu/run.sh.

  compare.py report --schedule S [--a DIR] [--b DIR] [--d DIR]
                    [--steps NAME=FILE ...] [--json FILE]
  compare.py stepcheck --schedule S --trace-dir DIR [--steps-file FILE]
  compare.py parts FILE

report prints, from the Kineto JSON traces of the four configurations:
  1. GPU work per active step, (a) cuprobe --cupti against (b) torch.profiler:
     per-step counts and the most frequent names side by side, and how many
     names match; 1b. the record_function ranges (user_annotation spans) that
     begin in each active step, by name, on each side;
  2. the median GPU duration of each name, (a) against (b), in %;
  3. how well (a) joined launches to GPU records (cuprobe.gpu in each trace);
  4. step wall times from train.py's JSON files, as ratios to the baseline (c);
  5. checks, each OK or WARN.

A GPU record's step: in cuprobe's traces, the args.step of the launch with the
same args.correlation; in torch's, the ProfilerStep#N span that holds the
cuda_runtime / cuda_driver event with the same args.correlation. A record no
launch claims is placed by its start time within a span, and counted apart.

stepcheck tells run.sh whether a cuprobe step probe was hit once per loop
iteration: exit 0 if the traces hold the schedule's active steps and their
spans begin where train.py's steps do, 1 if not, 2 if there is no trace.

parts prints, from a `cuprobe report` text (FILE), its Annotations and Step
parts tables (the record_function ranges of --step torch); exit 1 when it has
neither.
"""
import argparse
import bisect
import glob
import json
import os
import re
import statistics
import sys
from collections import Counter, defaultdict

LAUNCH_CATS = ("cuda_runtime", "cuda_driver")
GPU_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
STEP_RE = re.compile(r"^ProfilerStep#(\d+)$")


# ---- the schedule, as torch.profiler.schedule computes it -------------------

def parse_schedule(spec):
    out = {"skip_first": 0, "repeat": 0}
    for part in spec.split(","):
        key, _, val = part.partition("=")
        out[key] = int(val)
    return out


def phase(s, step):
    """(phase, cycle) of a step: NONE, WARMUP or RECORD, as torch's schedule."""
    if step < s["skip_first"]:
        return "NONE", None
    step -= s["skip_first"]
    per = s["wait"] + s["warmup"] + s["active"]
    cycle = step // per
    if s["repeat"] and cycle >= s["repeat"]:
        return "NONE", None
    mod = step % per
    if mod < s["wait"]:
        return "NONE", cycle
    if mod < s["wait"] + s["warmup"]:
        return "WARMUP", cycle
    return "RECORD", cycle


def active_steps(s, nsteps):
    return [i for i in range(nsteps) if phase(s, i)[0] == "RECORD"]


# ---- traces -------------------------------------------------------------------

def trace_files(d):
    if not d or not os.path.isdir(d):
        return []
    return sorted(glob.glob(os.path.join(d, "**", "*.pt.trace.json"), recursive=True))


class Traces:
    """The events of a folder's traces that the comparison needs."""

    def __init__(self, d, kind):
        self.dir, self.kind = d, kind  # kind: "cuprobe" or "torch"
        self.files = trace_files(d)
        self.errors = []
        self.cuprobe = []               # each file's top-level "cuprobe" object
        self.spans = {}                 # step -> dict(pid, ts, dur, real_ns, partial)
        self.launches = []              # dicts: file, pid, ts, api, corr, step, kernel
        self.ops = []                   # dicts: file, cat, name, ts, dur, corr, step, how
        self.ranges = []                # record_function spans: file, name, ts, step
        for i, f in enumerate(self.files):
            try:
                with open(f) as fh:
                    doc = json.load(fh)
            except (OSError, ValueError) as e:
                self.errors.append(f"{f}: {e}")
                continue
            self._read(i, doc)
        self._assign()

    def _read(self, fi, doc):
        base = doc.get("baseTimeNanoseconds")
        if isinstance(doc.get("cuprobe"), dict):
            self.cuprobe.append(doc["cuprobe"])
        for e in doc.get("traceEvents", []):
            if e.get("ph") != "X":
                continue
            cat, name, args = e.get("cat"), e.get("name", ""), e.get("args") or {}
            ts, dur = float(e.get("ts", 0)), float(e.get("dur", 0))
            m = STEP_RE.match(name)
            # Kineto also draws user annotations on the GPU lanes (gpu_user_annotation).
            if m and cat != "gpu_user_annotation":
                step = int(args.get("step", m.group(1)))
                real = int(base + round(ts * 1000)) if isinstance(base, int) else None
                if step in self.spans:  # the first span of a step wins
                    continue
                self.spans[step] = {"pid": e.get("pid"), "ts": ts, "dur": dur, "file": fi,
                                    "real_ns": real, "partial": bool(args.get("partial"))}
            elif cat == "user_annotation":
                self.ranges.append({"file": fi, "name": name, "ts": ts, "step": None})
            elif cat in LAUNCH_CATS:
                self.launches.append({"file": fi, "pid": e.get("pid"), "ts": ts,
                                      "api": name, "corr": args.get("correlation"),
                                      "step": args.get("step"), "kernel": args.get("kernel")})
            elif cat in GPU_CATS:
                self.ops.append({"file": fi, "cat": cat, "name": name, "ts": ts, "dur": dur,
                                 "corr": args.get("correlation"), "step": None, "how": None})

    def _span_at(self, fi, ts):
        for step, sp in self.spans.items():
            if sp["file"] == fi and sp["ts"] <= ts < sp["ts"] + sp["dur"]:
                return step
        return None

    def _assign(self):
        for r in self.ranges:
            r["step"] = self._span_at(r["file"], r["ts"])
        by_corr = {(l["file"], l["corr"]): l for l in self.launches if l["corr"] is not None}
        for l in self.launches:
            if self.kind == "torch" or l["step"] is None:
                l["step"] = self._span_at(l["file"], l["ts"])
        self.launched = set()
        for op in self.ops:
            l = by_corr.get((op["file"], op["corr"]))
            if l is not None:
                self.launched.add((l["file"], l["corr"]))
                if l["step"] is not None:
                    op["step"], op["how"] = l["step"], "launch"
                    continue
            s = self._span_at(op["file"], op["ts"])
            if s is not None:
                op["step"], op["how"] = s, "time"

    def launches_with_gpu(self, step):
        return sum(1 for l in self.launches
                   if l["step"] == step and (l["file"], l["corr"]) in self.launched)

    def ranges_in(self, step):
        """{name: count} of the record_function spans that begin in the step's span."""
        return dict(Counter(r["name"] for r in self.ranges if r["step"] == step))

    def launches_in(self, step):
        return sum(1 for l in self.launches if l["step"] == step)

    def ops_in(self, step, how=None):
        return [o for o in self.ops if o["step"] == step and (how is None or o["how"] == how)]


# ---- helpers --------------------------------------------------------------------

def short(name, width=72):
    if len(name) <= width:
        return name
    tail = 22
    return name[: width - tail - 3] + "..." + name[-tail:]


def med(xs):
    return statistics.median(xs) if xs else None


def fmt(x, spec=".3f", none="-"):
    return none if x is None else format(x, spec)


def pct(a, b):
    return None if a is None or not b else (a - b) / b * 100.0


def norm(name):
    return re.sub(r"\s+", "", name)


def load_steps(pairs):
    out = {}
    for p in pairs or []:
        key, _, path = p.partition("=")
        try:
            with open(path) as f:
                out[key] = json.load(f)
        except (OSError, ValueError) as e:
            out[key] = {"error": f"{path}: {e}"}
    return out


def map_offset(tr, steps):
    """How cuprobe's step numbers relate to the loop's iterations.

    Span s of cuprobe begins where step s - 1 ended: with --step torch, where
    iteration s - 1's opt.step() returned; with a native probe on
    cudaDeviceSynchronize, at that iteration's synchronize. train.py noted the
    realtime between the two, in each iteration. The iteration j whose boundary is
    closest gives the offset s - (j + 1), 0 when a step ends once per iteration and
    never before the loop.
    """
    best = None
    for kind, key in (("opt.step() / synchronize", "sync_enter_real_ns"),):
        arr = steps.get(key) or []
        offs, res = [], []
        for s, sp in sorted(tr.spans.items()):
            if sp["real_ns"] is None or not arr or s == 0:
                continue
            k = bisect.bisect_left(arr, sp["real_ns"])
            j = min((x for x in (k - 1, k) if 0 <= x < len(arr)),
                    key=lambda x: abs(arr[x] - sp["real_ns"]))
            offs.append(s - (j + 1))
            res.append(abs(arr[j] - sp["real_ns"]))
        if offs:
            r = {"boundary": kind, "offset": Counter(offs).most_common(1)[0][0],
                 "consistent": len(set(offs)) == 1, "residual_us": med(res) / 1e3,
                 "spans": len(offs)}
            if best is None or r["residual_us"] < best["residual_us"]:
                best = r
    return best


class Out:
    def __init__(self):
        self.lines = []

    def __call__(self, s=""):
        self.lines.append(s)
        print(s)


# ---- report sections -----------------------------------------------------------

def section_counts(out, a, b, d, active, res):
    out("== 1. GPU work per active step: (a) cuprobe --cupti vs (b) torch.profiler ==")
    out("  (a) per step: launches (probed), GPU records joined by correlation / placed by")
    out("  time / none; (b) runtime+driver calls with GPU work, GPU records; (d) launches.")
    out(f"  {'STEP':>4}  {'A LAUNCH':>8} {'A GPU':>6} {'A TIME':>6} | {'B CALLS':>7} {'B GPU':>6}"
        f" {'B TIME':>6} | {'D LAUNCH':>8}  A SPAN MS  B SPAN MS")
    rows = []
    for s in active:
        ra = {"launches": a.launches_in(s), "gpu": len(a.ops_in(s, "launch")),
              "gpu_time": len(a.ops_in(s, "time"))}
        rb = {"calls": b.launches_with_gpu(s), "gpu": len(b.ops_in(s, "launch")),
              "gpu_time": len(b.ops_in(s, "time"))}
        rd = {"launches": d.launches_in(s)}
        sa, sb = a.spans.get(s), b.spans.get(s)
        rows.append({"step": s, "a": ra, "b": rb, "d": rd,
                     "a_span_ms": sa and sa["dur"] / 1e3, "b_span_ms": sb and sb["dur"] / 1e3})
        out(f"  {s:>4}  {ra['launches']:>8} {ra['gpu']:>6} {ra['gpu_time']:>6} | {rb['calls']:>7}"
            f" {rb['gpu']:>6} {rb['gpu_time']:>6} | {rd['launches']:>8}  "
            f"{fmt(sa and sa['dur'] / 1e3):>9}  {fmt(sb and sb['dur'] / 1e3):>9}")
    nospan_a = sum(1 for o in a.ops if o["step"] is None)
    nospan_b = sum(1 for o in b.ops if o["step"] is None)
    out(f"  GPU records in no step span: (a) {nospan_a}, (b) {nospan_b}")
    res["per_step"] = rows

    # Names: counts over the active steps, divided by the number of steps.
    n = len(active) or 1
    ca = Counter(o["name"] for o in a.ops if o["step"] in active)
    cb = Counter(o["name"] for o in b.ops if o["step"] in active)
    names = sorted(set(ca) | set(cb), key=lambda k: (-(max(ca[k], cb[k])), k))
    out()
    out(f"  GPU records by name, per active step (mean over {len(active)} steps); * = in both")
    out(f"  {'A/STEP':>7} {'B/STEP':>7}   NAME")
    for k in names[:25]:
        mark = "*" if ca[k] and cb[k] else " "
        out(f"  {ca[k] / n:>7.2f} {cb[k] / n:>7.2f} {mark} {short(k)}")
    if len(names) > 25:
        out(f"  ... {len(names) - 25} more names")
    both = set(ca) & set(cb)
    na = {norm(k) for k in ca}
    nb = {norm(k) for k in cb}
    same_count = sum(1 for k in both if ca[k] == cb[k])
    out(f"  names: (a) {len(ca)}, (b) {len(cb)}, in both {len(both)} exactly, "
        f"{len(na & nb)} ignoring whitespace; equal counts for {same_count} of {len(both)}")
    only_a = sorted(set(ca) - set(cb), key=lambda k: -ca[k])[:5]
    only_b = sorted(set(cb) - set(ca), key=lambda k: -cb[k])[:5]
    for tag, lst, c in (("(a) only", only_a, ca), ("(b) only", only_b, cb)):
        for k in lst:
            out(f"    {tag}: {c[k] / n:.2f}/step  {short(k, 90)}")
    res["names"] = {"a": len(ca), "b": len(cb), "both": len(both),
                    "both_ignoring_whitespace": len(na & nb), "equal_counts": same_count,
                    "a_per_step": sum(ca.values()) / n, "b_per_step": sum(cb.values()) / n,
                    "table": [{"name": k, "a": ca[k], "b": cb[k]} for k in names]}
    out()


def section_ranges(out, a, b, d, active, res):
    out("== 1b. record_function ranges per active step: (a), (d) cuprobe vs (b) torch.profiler ==")
    out("  user_annotation spans but ProfilerStep#N, by the step whose span holds their start;")
    out("  counts per step, in the order of the active steps")
    names = sorted({r["name"] for tr in (a, b, d) for r in tr.ranges if r["step"] in active})
    rows = []
    for name in names:
        per = {k: [tr.ranges_in(s).get(name, 0) for s in active]
               for k, tr in (("a", a), ("b", b), ("d", d))}
        rows.append(dict(name=name, **per))
        out(f"  {short(name, 60):<60}  (a) {per['a']}  (b) {per['b']}  (d) {per['d']}")
    if not names:
        out("  none in any active step")
    res["ranges"] = rows
    res["ranges_match"] = bool(rows) and all(r["a"] == r["b"] == r["d"] for r in rows)
    out()


def section_durations(out, a, b, active, res):
    out("== 2. Median GPU duration per name, (a) vs (b) ==")
    da, db = defaultdict(list), defaultdict(list)
    for o in a.ops:
        if o["step"] in active:
            da[o["name"]].append(o["dur"])
    for o in b.ops:
        if o["step"] in active:
            db[o["name"]].append(o["dur"])
    common = sorted(set(da) & set(db), key=lambda k: -sum(db[k]))
    out(f"  {'N A':>5} {'N B':>5} {'A US':>9} {'B US':>9} {'DIFF %':>8}   NAME (by (b)'s total time)")
    rows, diffs, wa, wb = [], [], 0.0, 0.0
    for k in common:
        ma, mb = med(da[k]), med(db[k])
        dp = pct(ma, mb)
        rows.append({"name": k, "n_a": len(da[k]), "n_b": len(db[k]), "median_us_a": ma,
                     "median_us_b": mb, "diff_pct": dp})
        if dp is not None:
            diffs.append(dp)
        wa += ma * len(db[k])
        wb += mb * len(db[k])
    for r in rows[:20]:
        out(f"  {r['n_a']:>5} {r['n_b']:>5} {r['median_us_a']:>9.3f} {r['median_us_b']:>9.3f} "
            f"{fmt(r['diff_pct'], '+.1f'):>8}   {short(r['name'], 64)}")
    if len(rows) > 20:
        out(f"  ... {len(rows) - 20} more names")
    per_step = lambda tr: med([sum(o["dur"] for o in tr.ops if o["step"] == s) for s in active
                               if any(o["step"] == s for o in tr.ops)])
    ta, tb = per_step(a), per_step(b)
    summ = {"names": len(rows), "median_diff_pct": med(diffs),
            "median_abs_diff_pct": med([abs(x) for x in diffs]),
            "weighted_diff_pct": pct(wa, wb) if rows else None,
            "gpu_us_per_step_a": ta, "gpu_us_per_step_b": tb,
            "gpu_time_per_step_diff_pct": pct(ta, tb)}
    out(f"  over {len(rows)} names: median diff {fmt(summ['median_diff_pct'], '+.1f')} %, "
        f"median |diff| {fmt(summ['median_abs_diff_pct'], '.1f')} %, weighted by (b)'s counts "
        f"{fmt(summ['weighted_diff_pct'], '+.1f')} %")
    out(f"  GPU time per active step (median of sums): (a) {fmt(ta)} us, (b) {fmt(tb)} us, "
        f"diff {fmt(summ['gpu_time_per_step_diff_pct'], '+.1f')} %")
    res["durations"] = {"summary": summ, "table": rows}
    out()


def section_join(out, a, d, res):
    out("== 3. cuprobe's join of launches and GPU records, (a); and (d) without --cupti ==")
    keys = ("joined_launches", "launches_without_gpu", "launches_without_api_record",
            "gpu_without_launch", "clock_faults", "cupti_dropped", "missing_at_timeout",
            "gpu_records")
    tot = Counter()
    out(f"  {'CYCLE':>5} {'STEPS':>7} {'LAUNCH':>7} {'JOINED':>7} {'NO GPU':>6} {'NO API':>6}"
        f" {'GPU ONLY':>8} {'CLOCK F':>7} {'DROPPED':>7} {'MISSING':>7} {'DROPS':>5}"
        f" {'LATE':>4} {'PART':>4} {'CUPTI MS':>8} {'PROBE %':>7}")
    cycles = []
    for c in sorted(a.cuprobe, key=lambda c: c.get("cycle", 0)):
        g = c.get("gpu") or {}
        for k in keys:
            tot[k] += g.get(k, 0)
        tot["launches"] += c.get("launches", 0)
        tot["drops"] = max(tot["drops"], c.get("drops", 0))
        tot["late"] += c.get("late_launches", 0)
        tot["cupti_ns"] += c.get("cupti_overhead_ns", 0) or 0
        steps = c.get("steps")
        cycles.append(c)
        out(f"  {c.get('cycle', '?'):>5} {('%d-%d' % tuple(steps)) if steps else '-':>7}"
            f" {c.get('launches', 0):>7} {g.get('joined_launches', '-'):>7}"
            f" {g.get('launches_without_gpu', '-'):>6} {g.get('launches_without_api_record', '-'):>6}"
            f" {g.get('gpu_without_launch', '-'):>8} {g.get('clock_faults', '-'):>7}"
            f" {g.get('cupti_dropped', '-'):>7} {g.get('missing_at_timeout', '-'):>7}"
            f" {c.get('drops', 0):>5} {c.get('late_launches', 0):>4}"
            f" {'yes' if c.get('partial') else 'no':>4}"
            f" {fmt((c.get('cupti_overhead_ns') or 0) / 1e6):>8}"
            f" {fmt(100 * c['probe_cost_share'] if 'probe_cost_share' in c else None, '.2f'):>7}")
    rate = tot["joined_launches"] / tot["launches"] if tot["launches"] else None
    out(f"  join rate (a): {tot['joined_launches']}/{tot['launches']} = "
        f"{fmt(rate and rate * 100, '.2f')} %; clock faults {tot['clock_faults']}, CUPTI dropped "
        f"{tot['cupti_dropped']}, missing at timeout {tot['missing_at_timeout']}, ring drops "
        f"{tot['drops']}, late {tot['late']}")
    if not a.cuprobe:
        out("  (a): no cuprobe trace")
    res["join"] = {"rate": rate, **{k: tot[k] for k in keys}, "launches": tot["launches"],
                   "drops": tot["drops"], "late": tot["late"], "cupti_overhead_ns": tot["cupti_ns"],
                   "cycles": cycles}
    dl = []
    for c in sorted(d.cuprobe, key=lambda c: c.get("cycle", 0)):
        steps = c.get("steps")
        dl.append(c)
        out(f"  (d) cycle {c.get('cycle')}: steps {steps}, {c.get('launches')} launches, drops "
            f"{c.get('drops')}, partial {c.get('partial')}, probe {c.get('probe_hits')} hits x "
            f"{c.get('probe_ns_per_hit')} ns = {fmt(100 * c.get('probe_cost_share', 0), '.3f')} %")
    if not d.cuprobe:
        out("  (d): no cuprobe trace")
    res["d_cycles"] = dl
    out()


def step_stats(steps, idx):
    it = steps.get("iter_ns") or []
    pick = lambda ii: [it[i] / 1e6 for i in ii if 0 <= i < len(it)]
    return {k: med(pick(v)) for k, v in idx.items()}


def section_times(out, steps, sched, offsets, res):
    out("== 4. Step wall times (train.py, perf_counter around each iteration), ratio to (c) ==")
    base = steps.get("c") or {}
    n = len(base.get("iter_ns") or [])
    if not n:
        out("  no baseline (c): no ratios")
        n = max((len(s.get("iter_ns") or []) for s in steps.values()), default=0)
    labels = {"c": "(c) no profiler", "c2": "(c2) no profiler, again", "b": "(b) torch.profiler",
              "a": "(a) cuprobe --cupti", "d": "(d) cuprobe"}

    def windows(off):
        # cuprobe's step s is iteration s - off: its windows lie off iterations earlier.
        ph = {i: phase(sched, i + off)[0] for i in range(n)}
        return {"active": [i for i in range(n) if ph[i] == "RECORD"],
                "warmup": [i for i in range(n) if ph[i] == "WARMUP"],
                "outside": [i for i in range(n) if ph[i] == "NONE"],
                "all": list(range(n))}

    bstats = step_stats(base, windows(0)) if base else {}
    out(f"  {'CONFIG':<26} {'ACTIVE MS':>9} {'WARMUP MS':>9} {'OUTSIDE MS':>10} {'ALL MS':>8}"
        f" {'X ACTIVE':>8} {'X WARMUP':>8} {'X OUTSIDE':>9} {'X ALL':>7}")
    rows = {}
    for key in ("c", "b", "a", "d", "c2"):
        s = steps.get(key)
        if not s:
            continue
        if "error" in s:
            out(f"  {labels[key]:<26} {s['error']}")
            continue
        st = step_stats(s, windows(offsets.get(key) or 0))
        ratio = {k: (st[k] / bstats[k] if st.get(k) and bstats.get(k) else None) for k in st}
        rows[key] = {"median_ms": st, "ratio_to_c": ratio, "import_s": s.get("import_s"),
                     "setup_s": s.get("setup_s"), "loop_s": s.get("loop_s")}
        out(f"  {labels[key]:<26} {fmt(st['active']):>9} {fmt(st['warmup']):>9}"
            f" {fmt(st['outside']):>10} {fmt(st['all']):>8} {fmt(ratio['active']):>8}"
            f" {fmt(ratio['warmup']):>8} {fmt(ratio['outside']):>9} {fmt(ratio['all']):>7}")
    out("  startup (import torch, CUDA setup + 5 warm-up iterations), loop and stop, s:")
    for key, r in rows.items():
        s = steps[key]
        out(f"    {key:<3} import {fmt(r['import_s'], '.2f')}, setup {fmt(r['setup_s'], '.2f')}, "
            f"loop {fmt(r['loop_s'], '.3f')}, stop {fmt(s.get('stop_s'), '.3f')}; "
            f"torch {s.get('torch')} CUDA {s.get('torch_cuda')} cuDNN {s.get('cudnn')} "
            f"on {s.get('device')}")
    sa = steps.get("a") or {}
    if sa.get("mapped") is not None:
        libs = sa["mapped"]
        agent = [x for x in libs if "libcuprobe-agent" in x]
        cupti = [x for x in libs if "libcupti" in x]
        out(f"  (a) agent mapped: {agent or 'NO'}; libcupti: {cupti or 'none'}; "
            f"CUDA_INJECTION64_PATH={sa.get('cuda_injection64_path')}")
        res["a_libs"] = {"agent": agent, "cupti": cupti}
    res["times"] = rows
    out()


def section_mapping(out, a, d, steps, res):
    out("== Step alignment: cuprobe's ProfilerStep spans against train.py's iterations ==")
    offs = {}
    for key, tr in (("a", a), ("d", d)):
        s = steps.get(key) or {}
        m = map_offset(tr, s) if s and "error" not in s else None
        res.setdefault("mapping", {})[key] = m
        if not m:
            out(f"  ({key}) no spans or no step times to map")
            continue
        offs[key] = m["offset"]
        it = s.get("iter_ns") or []
        ratios = [sp["dur"] * 1e3 / it[st - m["offset"]] for st, sp in tr.spans.items()
                  if not sp["partial"] and 0 <= st - m["offset"] < len(it) and st > 0]
        m["span_to_iter_median"] = med(ratios)
        out(f"  ({key}) boundary {m['boundary']}: offset {m['offset']}"
            f"{'' if m['consistent'] else ' (NOT consistent across spans)'}, median residual "
            f"{m['residual_us']:.1f} us over {m['spans']} spans; span/iteration time "
            f"{fmt(m['span_to_iter_median'])}")
    out()
    return offs


def section_checks(out, a, b, d, active, res, steps):
    out("== 5. Checks ==")
    checks = []

    def check(ok, what):
        checks.append({"ok": bool(ok), "what": what})
        out(f"  {'OK  ' if ok else 'WARN'} {what}")

    sched_steps = sorted(set(active))
    for key, tr in (("a", a), ("d", d)):
        got = sorted(s for s in tr.spans)
        check(got == sched_steps, f"({key}) ProfilerStep spans are the schedule's active steps "
              f"{sched_steps[:1]}..{sched_steps[-1:]}: got {got}")
        per = [tr.launches_in(s) for s in sched_steps]
        check(per and min(per) > 0 and len(set(per)) == 1,
              f"({key}) every active step has the same non-zero launch count: {per}")
        check(all(not c.get("partial") for c in tr.cuprobe) and tr.cuprobe,
              f"({key}) no partial cycle ({len(tr.cuprobe)} cycle files)")
        m = (res.get("mapping") or {}).get(key)
        check(m and m["offset"] == 0 and m["consistent"],
              f"({key}) cuprobe step k is loop iteration k (offset {m and m['offset']})")
    la = [a.launches_in(s) for s in sched_steps]
    ld = [d.launches_in(s) for s in sched_steps]
    check(la == ld and any(la), f"(a) and (d) count the same launches per step: {la} vs {ld}")
    check(res.get("ranges_match"), "(a), (b) and (d) have the same record_function ranges in "
          f"each active step: {len(res.get('ranges') or [])} names")
    ka = [len(a.ops_in(s)) for s in sched_steps]
    kb = [len(b.ops_in(s)) for s in sched_steps]
    check(ka == kb and any(kb), f"(a) and (b) have the same GPU records per step: {ka} vs {kb}")
    al = res.get("a_libs")
    check(al and al["agent"], f"(a) the training process loaded libcuprobe-agent.so: "
          f"{al and al['agent']}")
    j = res.get("join", {})
    check(j.get("rate") is not None and j["rate"] >= 0.99,
          f"(a) join rate >= 99 %: {fmt(j.get('rate') and j['rate'] * 100, '.2f')} %")
    check(j.get("launches") and j.get("clock_faults", 1) == 0 and j.get("cupti_dropped", 1) == 0 and
          j.get("missing_at_timeout", 1) == 0 and j.get("drops", 1) == 0,
          "(a) no clock fault, CUPTI drop, missing record or ring drop")
    nm = res.get("names", {})
    check(nm.get("b") and nm.get("both") == nm.get("b") == nm.get("a"),
          f"kernel names: all match ({nm.get('both')} of (a) {nm.get('a')}, (b) {nm.get('b')})")
    dsum = res.get("durations", {}).get("summary", {})
    mad = dsum.get("median_abs_diff_pct")
    check(mad is not None and mad <= 10, f"median |GPU duration diff| (a) vs (b) <= 10 %: "
          f"{fmt(mad, '.1f')} %")
    t = res.get("times", {})
    for key in ("a", "d"):
        r = (t.get(key) or {}).get("ratio_to_c", {}).get("outside")
        check(r is not None and r <= 1.10, f"({key}) steps outside the windows cost <= 1.10x "
              f"of (c): {fmt(r)}")
    res["checks"] = checks
    out(f"  {sum(c['ok'] for c in checks)} OK, {sum(not c['ok'] for c in checks)} WARN")


def report(args):
    sched = parse_schedule(args.schedule)
    steps = load_steps(args.steps)
    nsteps = max((len(s.get("iter_ns") or []) for s in steps.values()), default=0) or args.nsteps
    active = active_steps(sched, nsteps)
    a, b, d = Traces(args.a, "cuprobe"), Traces(args.b, "torch"), Traces(args.d, "cuprobe")
    out, res = Out(), {"schedule": sched, "active_steps": active}
    out(f"schedule {args.schedule}: active steps {active}")
    for key, tr in (("a", a), ("b", b), ("d", d)):
        out(f"({key}) {tr.dir or '-'}: {len(tr.files)} trace files, {len(tr.launches)} "
            f"launch/API events, {len(tr.ops)} GPU records, spans {sorted(tr.spans)}")
        for e in tr.errors:
            out(f"  unreadable: {e}")
        res[f"{key}_files"] = tr.files
    out()
    offsets = section_mapping(out, a, d, steps, res)
    section_counts(out, a, b, d, active, res)
    section_ranges(out, a, b, d, active, res)
    section_durations(out, a, b, active, res)
    section_join(out, a, d, res)
    section_times(out, steps, sched, offsets, res)
    section_checks(out, a, b, d, active, res, steps)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1, default=str)
    return 0


def stepcheck(args):
    sched = parse_schedule(args.schedule)
    tr = Traces(args.trace_dir, "cuprobe")
    if not tr.files:
        print(f"stepcheck: no trace under {args.trace_dir}")
        return 2
    steps = {}
    if args.steps_file:
        try:
            with open(args.steps_file) as f:
                steps = json.load(f)
        except (OSError, ValueError) as e:
            print(f"stepcheck: no step times ({e}): checking the spans only")
    n = len(steps.get("iter_ns") or []) or args.nsteps
    want = active_steps(sched, n)
    got = sorted(tr.spans)
    m = map_offset(tr, steps) if steps else None
    per = [tr.launches_in(s) for s in want]
    print(f"stepcheck: spans {got}, expected {want}; launches per step {per}; mapping {m}")
    if got != want:
        print("stepcheck: the spans are not the schedule's active steps")
        return 1
    if m is not None and (m["offset"] != 0 or not m["consistent"]):
        print(f"stepcheck: cuprobe's step k is loop iteration k - {m['offset']}: the step probe "
              "is hit outside the loop or more than once per iteration")
        return 1
    return 0


PARTS = ("Annotations (record_function ranges)", "Step parts (record_function ranges)")


def parts(args):
    """The report's Annotations and Step parts tables, each up to the blank line after it."""
    try:
        with open(args.file) as f:
            lines = f.read().splitlines()
    except OSError as e:
        print(f"parts: {e}")
        return 1
    found, keep = 0, False
    for line in lines:
        if line in PARTS:
            found, keep = found + 1, True
        elif not line.strip():
            keep = False
        if keep:
            print(line)
    if not found:
        print(f"parts: no {' or '.join(PARTS)} table in {args.file}: were the steps "
              "counted by --step torch?")
        return 1
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("report")
    r.add_argument("--schedule", required=True)
    r.add_argument("--a", help="cuprobe record --cupti output folder")
    r.add_argument("--b", help="torch.profiler's tensorboard_trace_handler folder")
    r.add_argument("--d", help="cuprobe record (no --cupti) output folder")
    r.add_argument("--steps", action="append", metavar="NAME=FILE",
                   help="train.py's JSON for configuration NAME (a, b, c, c2, d)")
    r.add_argument("--nsteps", type=int, default=60, help="loop steps when no JSON says")
    r.add_argument("--json", help="write the figures here as JSON")
    s = sub.add_parser("stepcheck")
    s.add_argument("--schedule", required=True)
    s.add_argument("--trace-dir", required=True)
    s.add_argument("--steps-file")
    s.add_argument("--nsteps", type=int, default=60)
    p = sub.add_parser("parts")
    p.add_argument("file", help="the text of cuprobe report")
    args = ap.parse_args()
    return {"report": report, "stepcheck": stepcheck, "parts": parts}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
