# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Launches through the real libcudart from named Python functions, for --stack.

<module> -> main -> train_step -> Model.forward -> launch_leaf -> cudaLaunchKernel
(through ctypes), LAUNCHES times. Without a driver the call fails after the
uprobe fired. Prints the ground truth on stderr as one JSON line: the Python
frames root first, each as torch.profiler names it, "file(line): function",
with the line of the call each frame was making. Lingers --linger seconds
before exiting, so that its code objects can still be read when the
launches are named; --wait-file PATH waits for PATH to exist before launching.
With --unique N it launches once from each of N functions of its own instead
(unique_0 .. unique_<N-1>, 1 ms apart): N stacks, each seen once. With
--redefine N it compiles f_0 .. f_<N-1> at the same place (<redef>, line 1),
one after the other, each freed before the next is made (so that the next
often takes its code object's address), and each launches once. --pause S
sleeps S seconds before launching; --kill ends the process with SIGKILL
right after its launches (the ground truth printed first).
"""
import ctypes
import gc
import json
import os
import signal
import sys
import time

LAUNCHES = 5
CUDART = "/usr/local/cuda/lib64/libcudart.so.13"

rt = ctypes.CDLL(CUDART)
# cudaLaunchKernel(func, dim3 grid, dim3 block, args, shmem, stream): each dim3 in two registers.
rt.cudaLaunchKernel.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32,
                                ctypes.c_uint64, ctypes.c_uint32, ctypes.c_void_p,
                                ctypes.c_size_t, ctypes.c_void_p]
rt.cudaLaunchKernel.restype = ctypes.c_int


def launch_leaf(i):
    return rt.cudaLaunchKernel(0x1234, 1 | (1 << 32), 1, 32 | (1 << 32), 1, None, 0, None)  # site:launch_leaf


class Model:
    def forward(self, n):
        for i in range(n):
            launch_leaf(i)  # site:model_forward


def train_step():
    Model().forward(LAUNCHES)  # site:train_step


def sites():
    """The line of each marked call, read from this file."""
    lines = {}
    with open(__file__) as f:
        for no, text in enumerate(f, 1):
            if "# site:" in text and "def sites" not in text and '"# site:"' not in text:
                lines[text.rsplit("# site:", 1)[1].strip()] = no
    return lines


def option(name, default):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv else default


def unique(n):
    """n launches from n functions of their own (unique_0 .. unique_<n-1>), 1 ms apart."""
    src = "".join("def unique_%d():\n    launch_leaf(%d)\n" % (i, i) for i in range(n))
    scope = {"launch_leaf": launch_leaf}
    exec(compile(src, "<unique>", "exec"), scope)
    for i in range(n):
        scope["unique_%d" % i]()
        time.sleep(0.001)


def redefine(n):
    """f_0 .. f_<n-1>, each made where the last was, launching once; how many took a freed one's address."""
    scope = {"launch_leaf": launch_leaf}
    seen, reused = set(), 0
    for i in range(n):
        exec(compile("def f_%d():\n    return launch_leaf(%d)\n" % (i, i), "<redef>", "exec"), scope)
        fn = scope.pop("f_%d" % i)
        fn()
        reused += id(fn.__code__) in seen
        seen.add(id(fn.__code__))
        del fn
        gc.collect()
    return reused


def main():
    linger = float(option("--linger", "0"))
    time.sleep(float(option("--pause", "0")))
    if "--redefine" in sys.argv:
        n = int(option("--redefine", "0"))
        reused = redefine(n)
        print(json.dumps({"redefined": ["f_%d" % i for i in range(n)], "file": "<redef>", "line": 2,
                          "reused": reused}), file=sys.stderr, flush=True)
        time.sleep(linger)
        return
    if "--unique" in sys.argv:
        unique(int(option("--unique", "0")))
        print(json.dumps({"unique": int(option("--unique", "0"))}), file=sys.stderr)
        time.sleep(linger)
        return
    wait_file = option("--wait-file", None)
    # -p tests: wait (polling, 5 ms) until the file exists, as the C workloads do.
    while wait_file and not os.path.exists(wait_file):
        time.sleep(0.005)
    train_step()  # site:main
    s = sites()
    # A method is its co_qualname where the version has one (3.11+), else its co_name.
    code = Model.forward.__code__
    shown = {"model_forward": getattr(code, "co_qualname", code.co_name)}
    frames = ["%s(%d): %s" % (__file__, s[n], shown.get(n, n))
              for n in ("<module>", "main", "train_step", "model_forward", "launch_leaf")]
    print(json.dumps({"python": frames, "count": LAUNCHES, "version": "%d.%d" % sys.version_info[:2]}),
          file=sys.stderr, flush=True)
    if "--kill" in sys.argv:
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(linger)


main()  # site:<module>
