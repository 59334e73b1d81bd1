#!/usr/bin/env python3
"""cuprobe report on a large trace in torch.profiler's layout (test_report_large.sh).

Writes a trace of about SIZE_MB into a folder, as torch.profiler does (one
line, or indented), with a few hundred distinct kernel, operator and API
names, escapes and nested args; computes what the report must say from the
events as they are written; runs cuprobe report --format json on it and
prints TAP lines: the numbers match, and the peak RSS of cuprobe stays under
a bound far below the file's size.

    report_large.py CUPROBE DIR SIZE_MB RSS_MB [--indent] [--cut]

--cut writes the trace cut short in the middle of an event instead and
checks the error: the file and the byte where it ends, and exit status 1.
"""
import json
import math
import os
import resource
import subprocess
import sys


def ok(name, good, why=""):
    print(("ok - %s" % name) if good else ("not ok - %s: %s" % (name, why)), flush=True)


KERNELS = ['void at::native::elementwise_kernel<128, 4, \\"op%d\\">(int, \\u00e9\\\\%d)' % (i, i)
           for i in range(300)]
OPS = ["aten::op_%d" % i for i in range(200)]
APIS = ["cudaLaunchKernel", "cudaMemcpyAsync", "cudaStreamSynchronize", "cuLaunchKernel"]


def decoded(s):
    return json.loads('"%s"' % s)


def us_to_ns(us):
    ns = us * 1000.0
    return int(math.floor(ns + 0.5)) if ns > 0 else 0


class Expect:
    def __init__(self):
        self.kernels, self.apis, self.threads, self.gpu = {}, {}, {}, {}
        self.launches = 0
        self.first = self.last = None

    def span(self, ts, dur):
        end = ts + dur
        self.first = ts if self.first is None else min(self.first, ts)
        self.last = end if self.last is None else max(self.last, end)


def events(n, ex):
    """n events as JSON texts; ex gets what the report must count."""
    corr = 0
    for i in range(n):
        ts_ns = 1_000_000 + i * 1500
        ts = float("%d.%03d" % divmod(ts_ns, 1000))
        kind = i % 10
        pid, tid = 4000 + i % 3, 5000 + i % 7
        if kind < 6:
            # CPU ops and Python functions: spans with nested args, counted for the time span only.
            op = OPS[i % len(OPS)]
            text = ('{"ph":"X","cat":"cpu_op","name":"%s","pid":%d,"tid":%d,"ts":%s,"dur":1.250,'
                    '"args":{"External id":%d,"Input Dims":[[%d,3],[],[1,[2,[3]]]],'
                    '"Input type":["float","","Scalar"],"Concrete Inputs":["","\\"]}{[\\\\",""],'
                    '"Ev Idx":%d}}' % (op, pid, tid, "%.3f" % ts, i, i % 17, i))
            ex.span(ts, 1.25)
        elif kind < 8:
            corr += 1
            api = APIS[i % len(APIS)]
            kernel = KERNELS[(i * 7) % len(KERNELS)]
            with_kernel = api.endswith("LaunchKernel") and i % 4
            args = '{"cbid":211,"correlation":%d,%s"stream":7}' % (
                corr, ('"kernel":"%s",' % kernel) if with_kernel else "")
            text = ('{"ph":"X","cat":"cuda_runtime","name":"%s","pid":%d,"tid":%d,"ts":%s,'
                    '"dur":3.000,"args":%s}' % (api, pid, tid, "%.3f" % ts, args))
            if with_kernel:
                key = decoded(kernel)
            elif "Memcpy" in api:
                key = "Memcpy"
            else:
                key = "[%s]" % api
            ex.kernels[key] = ex.kernels.get(key, 0) + 1
            ex.apis[api] = ex.apis.get(api, 0) + 1
            ex.threads[(pid, tid)] = ex.threads.get((pid, tid), 0) + 1
            ex.launches += 1
            ex.span(ts, 3.0)
        elif kind < 9:
            name = KERNELS[(i * 11) % len(KERNELS)]
            dur_ns = 2000 + i % 977
            dur = float("%d.%03d" % divmod(dur_ns, 1000))
            text = ('{"ph":"X","cat":"kernel","name":"%s","pid":0,"tid":7,"ts":%s,"dur":%s,'
                    '"args":{"device":0,"stream":7,"correlation":%d,"grid":[128,1,1],'
                    '"block":[256,1,1]}}' % (name, "%.3f" % (ts + 1), "%.3f" % dur, corr))
            g = ex.gpu.setdefault(decoded(name), [0, 0])
            g[0] += 1
            g[1] += us_to_ns(dur)
            ex.span(ts + 1, dur)
        else:
            # Flow events, as Kineto links launches to kernels.
            text = '{"ph":"s","id":%d,"pid":%d,"tid":%d,"ts":%s,"cat":"ac2g","name":"ac2g"}' % (
                i, pid, tid, "%.3f" % ts)
            ex.span(ts, 0.0)
        yield text


def write_trace(path, size, indent, cut):
    """Writes about size bytes of trace; the expected report, and where a cut file ends."""
    ex = Expect()
    head = {"schemaVersion": 1,
            "deviceProperties": [{"id": 0, "name": "NVIDIA H200", "totalGlobalMem": 150754820096}],
            "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1}}
    tail = {"displayTimeUnit": "ms", "baseTimeNanoseconds": 1743465600000000000,
            "traceName": "host.pt.trace.json"}
    n = size // 220
    sep, nl = (",\n  ", "\n  ") if indent else (",", "")
    with open(path, "w") as f:
        f.write(json.dumps(head, indent=indent)[:-1].rstrip() + ',%s"traceEvents":[' % nl)
        chunk = []
        for i, ev in enumerate(events(n, ex)):
            if indent and i % 2:
                ev = json.dumps(json.loads(ev), indent=1)  # spread over lines, as indent does
            chunk.append(ev)
            if len(chunk) < 4096:
                continue
            f.write((sep if i >= 4096 else nl) + sep.join(chunk))
            chunk = []
            if cut and f.tell() > size // 2:
                f.write(sep + ev[: len(ev) // 2])
                return ex, f.tell()
        f.write((sep if n > 4096 else nl) + sep.join(chunk) if chunk else "")
        f.write(nl + "]," + json.dumps(tail, indent=indent)[1:])
    return ex, None


def check(report, ex):
    kernels = {k["name"]: k["launches"] for k in report["kernels"]}
    apis = {a["name"]: a["calls"] for a in report["apis"]}
    threads = {(t["pid"], t["tid"]): t["launches"] for t in report["threads"]}
    gpu = {g["name"]: [g["count"], g["total_ns"]] for g in report["gpu_kernels"]}
    wall = us_to_ns(ex.last - ex.first)
    return [("launches", report["launches"], ex.launches),
            ("kernels", kernels, ex.kernels), ("apis", apis, ex.apis),
            ("threads", threads, ex.threads), ("gpu kernels", gpu, ex.gpu),
            ("wall_ns", report["wall_ns"], wall), ("malformed", report["malformed_events"], 0),
            ("processes", report["processes"], 3)]


def main():
    cuprobe, folder, size_mb, rss_mb = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    indent = 1 if "--indent" in sys.argv else None
    cut = "--cut" in sys.argv
    what = "%s%s trace" % ("indented" if indent else "one-line", ", cut short," if cut else "")
    path = os.path.join(folder, "big.pt.trace.json")
    ex, cut_at = write_trace(path, size_mb << 20, indent, cut)
    size = os.path.getsize(path)
    run = subprocess.run([cuprobe, "report", "--format", "json", path], capture_output=True)
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss >> 10
    os.unlink(path)
    ok("%s of %d MB: peak RSS %d MB under %d MB" % (what, size >> 20, rss, rss_mb), rss < rss_mb,
       "the report took %d MB" % rss)
    if cut:
        err = run.stderr.decode(errors="replace")
        want = "%s: not valid JSON at line" % path
        good = run.returncode == 1 and want in err and ", byte %d (" % cut_at in err
        ok("%s: exit 1, the error names the file and byte %d" % (what, cut_at), good,
           "exit %d: %s" % (run.returncode, err.strip()))
        return
    if run.returncode:
        ok("%s: cuprobe report" % what, False, run.stderr.decode(errors="replace").strip())
        return
    for name, got, want in check(json.loads(run.stdout), ex):
        ok("%s: %s as counted from the events" % (what, name), got == want,
           "got %s, want %s" % (str(got)[:300], str(want)[:300]))


if __name__ == "__main__":
    main()
