# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""A target that plants traps for a profiler that opens its mapped files by name.

  hostile_target.py MODE DIR READY GO LAUNCHES

Run as an unprivileged user in DIR, a folder of its own. It maps a file of DIR
with PROT_EXEC, deletes it, and plants at its "PATH (deleted)" name, the name
/proc/PID/maps then shows:

  fifo        a FIFO, then loads the real libcudart (a plain open() of the
              FIFO blocks forever)
  link-fifo   a symlink to a FIFO of DIR
  link-shadow a symlink to /etc/shadow
  swap        a regular file: another copy of libcudart (another inode)

In every mode but fifo the mapped file is a copy of libcudart that the target
loads (dlopen) and launches through: a profiler that reads or probes the
planted file instead misses those launches. It creates READY once the trap is
set, waits for GO to exist, makes LAUNCHES cudaLaunchKernel calls (without a
driver each fails after the uprobe fired), and sleeps until killed.
"""
import ctypes
import mmap
import os
import shutil
import sys
import time

CUDART = "/usr/local/cuda/lib64/libcudart.so.13"


def plant(mode, name, d):
    if mode == "fifo" or mode == "link-fifo":
        fifo = name if mode == "fifo" else os.path.join(d, "fifo")
        os.mkfifo(fifo)
        if mode == "link-fifo":
            os.symlink(fifo, name)
    elif mode == "link-shadow":
        os.symlink("/etc/shadow", name)
    elif mode == "swap":
        shutil.copyfile(CUDART, name)
    else:
        sys.exit("unknown mode " + mode)


def main():
    mode, d, ready, go, launches = sys.argv[1:6]
    mapped = os.path.join(d, "libcudart.so.13" if mode != "fifo" else "decoy.so")
    shutil.copyfile(CUDART, mapped)
    if mode == "fifo":
        with open(mapped, "rb") as f:
            keep = mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ | mmap.PROT_EXEC)
        rt = None
    else:
        rt = ctypes.CDLL(mapped)
        keep = None
    os.unlink(mapped)
    plant(mode, mapped + " (deleted)", d)
    if mode == "fifo":
        rt = ctypes.CDLL(CUDART)
    rt.cudaLaunchKernel.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32,
                                    ctypes.c_uint64, ctypes.c_uint32, ctypes.c_void_p,
                                    ctypes.c_size_t, ctypes.c_void_p]
    open(ready, "w").close()
    while not os.path.exists(go):
        time.sleep(0.005)
    for _ in range(int(launches)):
        rt.cudaLaunchKernel(0x1234, 1 | (1 << 32), 1, 32 | (1 << 32), 1, None, 0, None)
    while keep is not None or rt is not None:
        time.sleep(1)


main()
