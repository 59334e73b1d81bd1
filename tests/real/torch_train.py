"""A small training loop on CPU tensors, for the torch tier (torch_steps.sh).

    torch_train.py [--opt sgd|adam|both] [--accum N] [--user-range] [--loader WORKERS]
                   [--iters N] [--ddp] [--compile BACKEND] [--nest N]
                   [--profile WAIT,WARMUP,ACTIVE,REPEAT --out DIR]

Unmodified, it is what `cuprobe record --step torch` profiles. With --profile
it runs the same loop under torch.profiler with that schedule, prof.step()
right after the optimizer step, and tensorboard_trace_handler(DIR): the
oracle cuprobe's cycles are compared with.
"""
import argparse
import contextlib

import torch
from torch.autograd.profiler import record_function

ap = argparse.ArgumentParser()
ap.add_argument("--opt", default="sgd", choices=["sgd", "adam", "both"])
ap.add_argument("--accum", type=int, default=1)
ap.add_argument("--user-range", action="store_true")
ap.add_argument("--iters", type=int, default=16)
ap.add_argument("--loader", type=int, default=-1, help="batches from a DataLoader with this many workers")
ap.add_argument("--ddp", action="store_true", help="DistributedDataParallel on gloo (torchrun)")
ap.add_argument("--compile", help="torch.compile the model with this backend (inductor, aot_eager)")
ap.add_argument("--nest", type=int, default=0, help="each step inside N nested record_function ranges")
ap.add_argument("--profile")
ap.add_argument("--out")
a = ap.parse_args()

torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 8))
if a.ddp:
    torch.distributed.init_process_group("gloo")
    model = torch.nn.parallel.DistributedDataParallel(model)
layers = model.module if a.ddp else model
if a.compile:
    model = torch.compile(model, backend=a.compile)
# both: SGD on the first layer, Adam on the last, each stepped once an iteration.
first, last = list(layers[0].parameters()), list(layers[2].parameters())
opts = {"sgd": [torch.optim.SGD(model.parameters(), lr=0.01)],
        "adam": [torch.optim.Adam(model.parameters(), lr=1e-3)],
        "both": [torch.optim.SGD(first, lr=0.01), torch.optim.Adam(last, lr=1e-3)]}[a.opt]
x, y = torch.randn(32, 64), torch.randn(32, 8)
batches = None
if a.loader >= 0:
    data = torch.utils.data.TensorDataset(torch.randn(32 * a.iters, 64), torch.randn(32 * a.iters, 8))
    batches = iter(torch.utils.data.DataLoader(data, batch_size=32, num_workers=a.loader))

prof = contextlib.nullcontext()
if a.profile:
    wait, warmup, active, repeat = (int(v) for v in a.profile.split(","))
    prof = torch.profiler.profile(
        activities=[torch.profiler.ProfilerActivity.CPU],
        schedule=torch.profiler.schedule(wait=wait, warmup=warmup, active=active, repeat=repeat),
        on_trace_ready=torch.profiler.tensorboard_trace_handler(a.out))


def train_step():
    global x, y
    if batches is not None:
        x, y = next(batches)
    for opt in opts:
        opt.zero_grad()
    for _ in range(a.accum):
        loss = torch.nn.functional.mse_loss(model(x), y)
        loss.backward()
    for opt in opts:
        opt.step()


with prof as p:
    for i in range(a.iters):
        with contextlib.ExitStack() as nest:
            for _ in range(a.nest):
                nest.enter_context(record_function("nest"))
            if a.user_range:
                with record_function("train_step"):
                    train_step()
            else:
                train_step()
        if a.profile:
            p.step()
print("trained", a.iters)
if a.ddp:
    torch.distributed.destroy_process_group()
