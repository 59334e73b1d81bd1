# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The library-map hold's figures, for bench.py.

torch_import_vs_none: `import torch` (PyPI's, in the venv that
scripts/install-real.sh --torch makes) timed inside Python, under cuprobe
record over without cuprobe, interleaved rounds, median of each.
torch_hold_max_ms: the longest hold of any of those recordings, from the
traces' holds objects (every process: python and the children it runs).
torch_holds_pct: the holds' total over the import's time, in %, median.
These three with a warm cache of launch files (CUPROBE_CACHE, filled by one
recording before the rounds: a host that profiled this program before); the
_cold ones with an empty cache for each recording (the first time).
Without torch they say "not measured".

dlopen_hold_max_ms and dlopen_hold_ms_per_dlopen: a stand-in that needs
nothing installed: a C program that dlopens 60 small objects and one with
2 x 200000 symbols, none with CUDA, under cuprobe record; the longest hold,
and the holds' total per dlopen, medians over the rounds.
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

b = sys.modules["__main__"] if hasattr(sys.modules["__main__"], "BenchError") else None
if b is None:
    import bench as b  # noqa: E402

TORCH_PYTHON = os.environ.get("BENCH_TORCH_PYTHON", "/var/cache/cuprobe/real/venv/bin/python3")
IMPORT = ("import time, sys\n"
          "t = time.monotonic()\n"
          "import torch\n"
          "sys.stderr.write('import_s %.6f\\n' % (time.monotonic() - t))\n")
NOT_INSTALLED = "not measured: torch not installed (scripts/install-real.sh --torch)"


class NotMeasured(str):
    """A figure that could not be measured here, and why (not a failure)."""


def holds_of(dirname):
    """count, total_ms, max_ms over every trace under dirname."""
    count, total, worst = 0, 0.0, 0.0
    for path in glob.glob(os.path.join(dirname, "**", "*.pt.trace.json"), recursive=True):
        with open(path) as f:
            h = json.load(f)["cuprobe"].get("holds")
        if h is None:
            raise b.BenchError("%s has no holds object: is this cuprobe too old?" % path)
        count += h["count"]
        total += h["total_ms"]
        worst = max(worst, h["max_ms"])
    return count, total, worst


def import_s(err):
    m = re.search(r"^import_s ([0-9.]+)$", err, re.M)
    if not m:
        raise b.BenchError("python printed no import time: %r" % err[-300:])
    return float(m.group(1))


def torch_present():
    if not os.access(TORCH_PYTHON, os.X_OK):
        return False
    return subprocess.run([TORCH_PYTHON, "-c", "import torch"], capture_output=True).returncode == 0


def torch_figures():
    if not torch_present():
        b.say("   " + NOT_INSTALLED)
        return (NotMeasured(NOT_INSTALLED),) * 6
    script = tempfile.NamedTemporaryFile("w", suffix=".py", dir=b.TMP, delete=False)
    script.write(IMPORT)
    script.close()
    cmd = [TORCH_PYTHON, "-W", "ignore", script.name]

    def none():
        return {"import_s": import_s(b.run(cmd)[1])}

    warm_cache = os.path.join(b.TMP, "torch-cache", "launch-files")

    def record(cache):
        t = b.Traces()
        os.environ["CUPROBE_CACHE"] = cache
        try:
            _, err = b.run([b.CUPROBE, "record", "-q", "-o", t.dir, "--"] + cmd)
            n, total, worst = holds_of(t.dir)
            return {"import_s": import_s(err), "holds": n, "total_ms": total, "max_ms": worst}
        finally:
            os.environ["CUPROBE_CACHE"] = "off"
            t.remove()

    def cold():
        d = tempfile.mkdtemp(dir=b.TMP)
        try:
            return record(os.path.join(d, "launch-files"))
        finally:
            subprocess.run(["rm", "-rf", d])

    try:
        none()  # the first import reads the files into the page cache
        record(warm_cache)  # and the first recording fills the warm cache
        res = b.rounds([("none", none), ("warm", lambda: record(warm_cache)), ("cold", cold)],
                       b.REPS)
    finally:
        os.unlink(script.name)
    a = [r["import_s"] for r in res["none"]]
    b.say("   none        import s %s" % b.fmt_list(a, "%.3f"))
    figures = []
    for name in ("warm", "cold"):
        r = res[name]
        b.say("   record %-4s import s %s holds %s total ms %s max ms %s"
              % (name, b.fmt_list([x["import_s"] for x in r], "%.3f"), [x["holds"] for x in r],
                 b.fmt_list([x["total_ms"] for x in r]), b.fmt_list([x["max_ms"] for x in r])))
        figures += [b.median([x["import_s"] for x in r]) / b.median(a),
                    max(x["max_ms"] for x in r),
                    b.median([100 * x["total_ms"] / 1000 / x["import_s"] for x in r])]
    return tuple(figures)


LOADER = r"""
#include <dlfcn.h>
#include <stdio.h>
int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!dlopen(argv[i], RTLD_NOW | RTLD_LOCAL)) {
			fprintf(stderr, "loader: %s\n", dlerror());
			return 1;
		}
	return 0;
}
"""


def build_standin(d, nlibs=60, nbig=200000):
    with open(os.path.join(d, "loader.c"), "w") as f:
        f.write(LOADER)
    with open(os.path.join(d, "tiny.c"), "w") as f:
        f.write("int tiny_fn(int x) { return x + 1; }\n")
    with open(os.path.join(d, "big.s"), "w") as f:
        f.write(".text\n")
        for i in range(nbig):
            f.write(".globl big_e%d\n.type big_e%d,@function\nbig_e%d: ret\n"
                    ".type big_l%d,@function\nbig_l%d: ret\n" % (i, i, i, i, i))
    b.run(["cc", "-O1", "-o", os.path.join(d, "loader"), os.path.join(d, "loader.c"), "-ldl"])
    b.run(["cc", "-shared", "-fPIC", "-o", os.path.join(d, "libtiny.so"), os.path.join(d, "tiny.c")])
    b.run(["cc", "-shared", "-fPIC", "-nostdlib", "-o", os.path.join(d, "libbig.so"),
           os.path.join(d, "big.s")])
    libs = []
    with open(os.path.join(d, "libtiny.so"), "rb") as f:
        tiny = f.read()
    for i in range(nlibs):
        p = os.path.join(d, "libtiny%d.so" % i)
        with open(p, "wb") as f:
            f.write(tiny)
        libs.append(p)
        if i == nlibs // 2:
            libs.append(os.path.join(d, "libbig.so"))
    return [os.path.join(d, "loader")] + libs


def dlopen_figures():
    d = tempfile.mkdtemp(prefix="cuprobe-bench-holds.", dir=b.TMP)
    try:
        cmd = build_standin(d)

        def record():
            t = b.Traces()
            try:
                b.run([b.CUPROBE, "record", "-q", "-o", t.dir, "--"] + cmd)
                return holds_of(t.dir)
            finally:
                t.remove()

        res = [record() for _ in range(b.REPS)]
    finally:
        subprocess.run(["rm", "-rf", d])
    ndl = len(cmd) - 1
    b.say("   %d dlopens: holds %s total ms %s max ms %s"
          % (ndl, [r[0] for r in res], b.fmt_list([r[1] for r in res]),
             b.fmt_list([r[2] for r in res], "%.2f")))
    return b.median([r[2] for r in res]), b.median([r[1] / ndl for r in res])
