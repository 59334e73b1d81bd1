# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Python's side of the python_stack figure: cudaLaunchKernel of the real
libcudart through ctypes, --launches times from --depth nested Python
frames, timed in blocks; prints one line as launch_loop does:

    py_loop: launches=N depth=D ns_per_launch=X

(the median of --blocks blocks). Without a driver every call fails after
the uprobe fired, which is what is measured.
"""
import ctypes
import statistics
import sys
import time

args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
LAUNCHES = int(args.get("--launches", "20000"))
DEPTH = int(args.get("--depth", "20"))
BLOCKS = int(args.get("--blocks", "5"))

rt = ctypes.CDLL("/usr/local/cuda/lib64/libcudart.so.13")
launch = rt.cudaLaunchKernel
launch.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_uint64,
                   ctypes.c_uint32, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
G, B = 1 | (1 << 32), 32 | (1 << 32)


def block(n):
    t0 = time.perf_counter_ns()
    for _ in range(n):
        launch(0x1234, G, 1, B, 1, None, 0, None)
    return time.perf_counter_ns() - t0


def nest(d, n):
    return nest(d - 1, n) if d > 1 else block(n)


per = LAUNCHES // BLOCKS
times = [nest(DEPTH, per) / per for _ in range(BLOCKS)]
print("py_loop: launches=%d depth=%d ns_per_launch=%.1f" % (per * BLOCKS, DEPTH,
                                                           statistics.median(times)))
