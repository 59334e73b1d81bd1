# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""The torch step figures' training loop, for bench.py: a small MLP trained
with SGD on CPU tensors (one torch thread), unmodified as a user writes it:
every optimizer step runs inside torch's own record_function
("Optimizer.step#SGD.step"), and zero_grad inside its own, which is what
`cuprobe record --step torch` counts steps on.

    torch_loop.py --log FILE [--width N]

Trains until SIGTERM (FILE.ready appears once the first step is done), then
writes one line per step to FILE:

    START_NS WALL_NS CPU_NS PROBED

START_NS the step's start (CLOCK_MONOTONIC, as Python's time.monotonic_ns),
WALL_NS its wall time and CPU_NS its thread's CPU time, from the loop's top to
the end of opt.step(); PROBED 1 when record_function's entry carried a uprobe
at the step's end (the loop reads its own code: a uprobe is an int3 written
over the entry, so the function's first bytes in memory differ from the
file's), else 0.
"""
import ctypes
import os
import signal
import sys
import time

import torch

args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
LOG = args.get("--log") or sys.exit("torch_loop: --log FILE is required")
WIDTH = int(args.get("--width", "512"))
ENTER = ("_ZN5torch8autograd8profiler25record_function_enter_newERKNSt7__cxx1112basic_string"
         "IcSt11char_traitsIcESaIcEEERKSt8optionalIS7_E")


def entry():
    """The address of record_function's entry and its first 64 bytes in the file."""
    lib = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so")
    addr = ctypes.cast(getattr(ctypes.CDLL(lib), ENTER), ctypes.c_void_p).value
    with open("/proc/self/maps") as f:
        for line in f:
            span, _, off, _, _, *path = line.split()
            lo, hi = (int(v, 16) for v in span.split("-"))
            if lo <= addr < hi and path:
                with open(path[0], "rb") as o:
                    o.seek(addr - lo + int(off, 16))
                    return addr, o.read(64)
    sys.exit("torch_loop: record_function's entry is in no mapping of a file")


ADDR, FILE_BYTES = entry()
stop = False


def on_term(*_):
    global stop
    stop = True


signal.signal(signal.SIGTERM, on_term)
torch.manual_seed(0)
torch.set_num_threads(1)
model = torch.nn.Sequential(torch.nn.Linear(WIDTH, WIDTH), torch.nn.ReLU(),
                            torch.nn.Linear(WIDTH, WIDTH), torch.nn.ReLU(),
                            torch.nn.Linear(WIDTH, 16))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
x, y = torch.randn(64, WIDTH), torch.randn(64, 16)
steps = []
while not stop:
    t0, c0 = time.monotonic_ns(), time.thread_time_ns()
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(model(x), y)
    loss.backward()
    opt.step()
    t1, c1 = time.monotonic_ns(), time.thread_time_ns()
    steps.append((t0, t1 - t0, c1 - c0, int(ctypes.string_at(ADDR, 64) != FILE_BYTES)))
    if len(steps) == 1:
        open(LOG + ".ready", "w").close()
with open(LOG, "w") as f:
    f.writelines("%d %d %d %d\n" % s for s in steps)
