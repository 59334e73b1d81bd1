#!/usr/bin/env python3
"""A small PyTorch training loop for tests/gpu/run.sh.

A small conv net (two convolutions, an MLP head) trains on one fixed random
batch on cuda. Each loop iteration is one step: zero_grad, forward, backward,
opt.step(), then torch.cuda.synchronize(). PyTorch runs every optimizer step
inside its own record_function("Optimizer.step#SGD.step"), so cuprobe counts the
loop's steps with `--step torch` on this script unmodified: a step ends where
opt.step() returns, just before the synchronize.

Before the loop the script warms CUDA up (context, cuBLAS, cuDNN, the caching
allocator, the optimizer's momentum buffers) with a few untimed iterations that
end in a stream synchronize. Their optimizer steps call SGD.step itself, not
the wrapper that opens torch's record_function around it: so they are no steps
for `--step torch`, and the loop's iteration i is cuprobe's step i, as
prof.step() makes it torch.profiler's step i (torch.profiler starts after the
warm-up). A native step probe sees the same: the loop's iteration i ends at the
(i+1)-th cudaDeviceSynchronize.

With --profile-dir the loop runs under torch.profiler with the schedule of
--schedule and writes tensorboard_trace_handler's traces there.

It writes a JSON file (--out, or $TRAIN_OUT): versions, the per-step wall
times, and the realtime clock at each step boundary, which compare.py uses to
map cuprobe's steps onto the loop's.

Exit status: 0 done, 2 usage, 3 torch cannot be imported, 4 CUDA is not usable.
"""
import argparse
import json
import os
import sys
import time

T_START = time.perf_counter_ns()


def parse_schedule(spec):
    """'wait=5,warmup=2,active=5,repeat=2' -> dict of ints (torch's names)."""
    out = {"skip_first": 0, "repeat": 0}
    for part in spec.split(","):
        key, _, val = part.partition("=")
        if key not in ("wait", "warmup", "active", "repeat", "skip_first"):
            raise ValueError(f"unknown schedule key {key!r}")
        out[key] = int(val)
    for key in ("wait", "warmup", "active"):
        if key not in out:
            raise ValueError(f"schedule needs {key}=N")
    return out


def mapped_libs():
    """The CUDA-related shared objects mapped into this process, by path."""
    keys = ("cuda", "cupti", "cudnn", "cublas", "nvrtc", "cuprobe", "libc10", "libtorch_cuda")
    libs = set()
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split(None, 5)
                if len(parts) == 6 and parts[5].startswith("/"):
                    path = parts[5].strip()
                    if any(k in os.path.basename(path) for k in keys):
                        libs.add(path)
    except OSError:
        pass
    return sorted(libs)


def import_torch(device):
    try:
        import torch  # noqa: F401
    except Exception as e:  # ImportError, or a broken install's OSError
        print(f"train.py: cannot import torch ({type(e).__name__}: {e}): "
              f"this test needs PyTorch with CUDA in {sys.executable}", file=sys.stderr)
        sys.exit(3)
    if device == "cuda" and not torch.cuda.is_available():
        print(f"train.py: torch {torch.__version__} (CUDA {torch.version.cuda}) sees no "
              "usable CUDA device: this test needs a GPU", file=sys.stderr)
        sys.exit(4)
    return torch


def versions(torch, device="cuda"):
    props = torch.cuda.get_device_properties(0) if device == "cuda" else None
    return {
        "python": sys.version.split()[0],
        "executable": sys.executable,
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None,
        "device": props.name if props else device,
        "capability": f"{props.major}.{props.minor}" if props else None,
        "cuda_injection64_path": os.environ.get("CUDA_INJECTION64_PATH"),
        "ld_library_path": os.environ.get("LD_LIBRARY_PATH"),
    }


def build(torch, batch, device):
    nn = torch.nn
    model = nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 10),
    ).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    gen = torch.Generator(device=device).manual_seed(0)
    x = torch.randn(batch, 3, 32, 32, device=device, generator=gen)
    y = torch.randint(0, 10, (batch,), device=device, generator=gen)

    # SGD.step without torch's record_function wrapper (functools.wraps keeps it).
    bare_step = getattr(type(opt).step, "__wrapped__", None)

    def step(warmup=False):
        opt.zero_grad(set_to_none=True)
        loss = loss_fn(model(x), y)
        loss.backward()
        if warmup and bare_step is not None:
            bare_step(opt)
        else:
            opt.step()
        return loss

    return step


def check(torch, device):
    """--check: versions, the libcudart that torch uses and its synchronize symbol."""
    import ctypes
    info = versions(torch, device)
    torch.ones(1, device=device).add_(1)
    if device == "cuda":
        torch.cuda.current_stream().synchronize()
    libs = mapped_libs()
    info["mapped"] = libs
    cudart = [p for p in libs if os.path.basename(p).startswith("libcudart.so")]
    info["libcudart"] = cudart
    info["libcudart_exports_cudaDeviceSynchronize"] = None
    if cudart:
        try:
            info["libcudart_exports_cudaDeviceSynchronize"] = hasattr(
                ctypes.CDLL(cudart[0]), "cudaDeviceSynchronize")
        except OSError as e:
            info["libcudart_error"] = str(e)
    dirs = set()
    roots = [os.path.dirname(torch.__file__)]
    try:
        import nvidia  # a namespace package: the CUDA wheels
        roots += list(nvidia.__path__)
    except ImportError:
        pass
    for root in roots:
        for dirpath, _, files in os.walk(root):
            if any(f.startswith("libcupti.so") for f in files):
                dirs.add(dirpath)
    info["cupti_dirs"] = sorted(dirs)
    print(json.dumps(info, indent=1))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.environ.get("TRAIN_OUT"),
                    help="JSON file for the step times (default $TRAIN_OUT)")
    ap.add_argument("--config", default="", help="a label written into the JSON")
    ap.add_argument("--steps", type=int, default=60)
    ap.add_argument("--warmup-iters", type=int, default=5)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--profile-dir", help="run under torch.profiler, traces here")
    ap.add_argument("--schedule", default="wait=5,warmup=2,active=5,repeat=2")
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                    help="cpu: a dry run of this script without a GPU (no synchronize, "
                    "the profiler on the CPU only)")
    ap.add_argument("--ready-file",
                    help="create this file once warmed up, just before the loop")
    ap.add_argument("--check", action="store_true",
                    help="print versions and the libraries in use, then exit")
    args = ap.parse_args()
    if not args.check and not args.out:
        ap.error("--out (or $TRAIN_OUT) is required")
    try:
        sched = parse_schedule(args.schedule)
    except ValueError as e:
        ap.error(f"--schedule: {e}")

    torch = import_torch(args.device)
    cuda = args.device == "cuda"
    t_import = time.perf_counter_ns()
    if args.check:
        check(torch, args.device)
        return

    step = build(torch, args.batch, args.device)
    for _ in range(args.warmup_iters):
        step(warmup=True)
    if cuda:
        torch.cuda.current_stream().synchronize()
    synchronize = torch.cuda.synchronize if cuda else (lambda: None)
    t_ready = time.perf_counter_ns()
    if args.ready_file:
        open(args.ready_file, "w").close()

    prof = None
    if args.profile_dir:
        from torch.profiler import ProfilerActivity, profile, schedule, tensorboard_trace_handler
        prof = profile(
            activities=[ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if cuda else []),
            schedule=schedule(wait=sched["wait"], warmup=sched["warmup"],
                              active=sched["active"], repeat=sched["repeat"],
                              skip_first=sched["skip_first"]),
            on_trace_ready=tensorboard_trace_handler(args.profile_dir))
        prof.start()

    n = args.steps
    start_ns = [0] * (n + 1)   # perf_counter at each iteration's start; [n] = the loop's end
    work_ns = [0] * n          # the step and its synchronize, no profiler bookkeeping
    sync_real = [0] * n        # realtime after opt.step(), just before torch.cuda.synchronize()
    losses = []
    for i in range(n):
        start_ns[i] = time.perf_counter_ns()
        loss = step()
        sync_real[i] = time.time_ns()
        synchronize()
        work_ns[i] = time.perf_counter_ns() - start_ns[i]
        if prof is not None:
            prof.step()
        if i in (0, n - 1):
            losses.append(loss)
    start_ns[n] = time.perf_counter_ns()
    if prof is not None:
        prof.stop()
    t_end = time.perf_counter_ns()

    res = versions(torch, args.device)
    res.update({
        "config": args.config,
        "pid": os.getpid(),
        "steps": n,
        "warmup_iters": args.warmup_iters,
        "schedule": sched,
        "profiler": bool(prof),
        "iter_ns": [start_ns[i + 1] - start_ns[i] for i in range(n)],
        "work_ns": work_ns,
        "sync_enter_real_ns": sync_real,
        "import_s": (t_import - T_START) / 1e9,
        "setup_s": (t_ready - t_import) / 1e9,
        "loop_s": (start_ns[n] - start_ns[0]) / 1e9,
        "stop_s": (t_end - start_ns[n]) / 1e9,
        "loss_first_last": [float(l.item()) for l in losses],
        "mapped": mapped_libs(),
    })
    tmp = args.out + ".tmp"
    with open(tmp, "w") as f:
        json.dump(res, f, indent=1)
    os.replace(tmp, args.out)
    it = sorted(res["iter_ns"])
    print(f"train.py: {args.config or 'run'}: {n} steps, median {it[n // 2] / 1e6:.3f} ms, "
          f"import {res['import_s']:.1f} s, setup {res['setup_s']:.1f} s, "
          f"loss {res['loss_first_last']}")


if __name__ == "__main__":
    main()
