// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
//
// Driver API launches, legacy and per-thread-stream (_ptsz) entry points, with
// made-up CUfunction, stream and graph handles that the ground truth records.
// It links the toolkit's stub libcuda.so.1 (found through the rpath), whose
// functions return CUDA_ERROR_STUB_LIBRARY after the uprobe fired. cuInit is
// never called, so even a real driver would refuse every call before it looked
// at a handle.

#include <stdint.h>
#include <stdio.h>

#include <cuda.h>

#include "ground_truth.h"
#include "workload.h"

// Both flavours in one program: cuda.h declares the _ptsz names only when the
// whole file is built per-thread, so they are declared here from the others.
extern "C" {
decltype(cuLaunchKernel) cuLaunchKernel_ptsz;
decltype(cuLaunchKernelEx) cuLaunchKernelEx_ptsz;
decltype(cuGraphLaunch) cuGraphLaunch_ptsz;
}

typedef decltype(cuLaunchKernel) *launch_fn;
typedef decltype(cuLaunchKernelEx) *launch_ex_fn;
typedef decltype(cuGraphLaunch) *graph_fn;

struct flavour {
	const char *suffix;
	launch_fn launch;
	launch_ex_fn launch_ex;
	graph_fn graph;
	uintptr_t base;    // handles of this flavour start here
};

static const struct flavour FLAVOURS[] = {
	{ "", cuLaunchKernel, cuLaunchKernelEx, cuGraphLaunch, 0x1000 },
	{ "_ptsz", cuLaunchKernel_ptsz, cuLaunchKernelEx_ptsz, cuGraphLaunch_ptsz, 0x2000 },
};

static unsigned long long calls, failed;

static void count(CUresult res)
{
	calls++;
	if (res != CUDA_SUCCESS)
		failed++;
}

static std::string api(const char *name, const struct flavour *f)
{
	return std::string(name) + f->suffix;
}

// Iteration I uses function handles base + 0x234 + I, so each call is unique.
static void iteration(const struct flavour *f, int i)
{
	CUfunction fn = (CUfunction)(f->base + 0x234 + i);
	CUfunction fn_ex = (CUfunction)(f->base + 0x634 + i);
	CUgraphExec exec = (CUgraphExec)(f->base + 0xa34 + i);
	CUstream stream = (CUstream)(f->base + 0x7);
	void *params[] = { nullptr };
	{
		const unsigned g[3] = { 2, 3, 4 }, b[3] = { 32, 4, 1 };
		gt::record(gt::launch(api("cuLaunchKernel", f).c_str(), "", fn, g, b, 128, stream));
		count(f->launch(fn, g[0], g[1], g[2], b[0], b[1], b[2], 128, stream, params,
				nullptr));
	}
	{
		const unsigned g[3] = { 5, 1, 1 }, b[3] = { 64, 2, 1 };
		CUlaunchConfig cfg = {};
		cfg.gridDimX = g[0], cfg.gridDimY = g[1], cfg.gridDimZ = g[2];
		cfg.blockDimX = b[0], cfg.blockDimY = b[1], cfg.blockDimZ = b[2];
		cfg.sharedMemBytes = 256;
		cfg.hStream = stream;
		gt::record(gt::launch(api("cuLaunchKernelEx", f).c_str(), "", fn_ex, g, b, 256,
				      stream));
		count(f->launch_ex(&cfg, fn_ex, params, nullptr));
	}
	gt::record(gt::graph(api("cuGraphLaunch", f).c_str(), exec, stream));
	count(f->graph(exec, stream));
}

int main(int argc, char **argv)
{
	struct options opt = parse_options(argc, argv, 10, 1, 0);

	gt::start();
	wait_then_ready(&opt);
	for (int i = 0; i < opt.iters; i++) {
		for (const struct flavour &f : FLAVOURS)
			iteration(&f, i);
		if (opt.steps) {
			cuprobe_step();
			gt::step();
		}
		if (opt.sleep_ms && i + 1 < opt.iters)
			sleep_ms(opt.sleep_ms);
	}
	fprintf(stderr, "driver: %d iterations, %llu calls, %llu failed\n", opt.iters, calls, failed);
	return 0;
}
