# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
"""Per-launch CPU cost of a real PyTorch loop: N in-place adds on a small CUDA tensor
(each one runtime launch that enters the driver), timed on the CPU side, the queue
drained every 1000. Prints one JSON object: launches, ns_per_launch (median of rounds).

  python3 launch_cost.py [--launches N] [--rounds R] [--ready-file F]
"""
import argparse, json, statistics, sys, time

ap = argparse.ArgumentParser()
ap.add_argument("--launches", type=int, default=20000)
ap.add_argument("--rounds", type=int, default=5)
ap.add_argument("--warm", type=int, default=3000)
a = ap.parse_args()
try:
    import torch
except ImportError:
    sys.exit(3)
if not torch.cuda.is_available():
    sys.exit(4)
x = torch.zeros(16, device="cuda")
for _ in range(a.warm):  # the one-trap switch wants 1000 quiet nested launches
    x.add_(1)
torch.cuda.synchronize()
per = []
for _ in range(a.rounds):
    t0 = time.perf_counter_ns()
    for i in range(a.launches):
        x.add_(1)
        if i % 1000 == 999:
            torch.cuda.synchronize()
    torch.cuda.synchronize()
    per.append((time.perf_counter_ns() - t0) / a.launches)
print(json.dumps({"launches": a.launches * a.rounds + a.warm, "ns_per_launch": statistics.median(per),
                  "rounds": per}))
