// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
//
// Launches through NVIDIA's real libcuda (no GPU: REAL_LIBCUDA names the file,
// scripts/install-real.sh fetches it). cuInit is never called, so each call
// returns CUDA_ERROR_NOT_INITIALIZED after the entry thunk ran, where the
// probes are; the ground truth records the arguments they must read. Every
// call must fail that way: anything else means the driver was not the one
// expected, and the program exits 1. Each iteration: cuLaunchKernel,
// cuLaunchKernel_ptsz, cuLaunchKernelEx and cuGraphLaunch, every argument distinct.
//
//   real_driver [workload options]   --iters N (default 10), --wait-file, --sleep-ms, ...
//   real_driver --time N             only N cuLaunchKernel calls, timed: "ns/call X"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda.h>

#include "ground_truth.h"
#include "workload.h"

static decltype(cuLaunchKernel) *launch, *launch_ptsz;
static decltype(cuLaunchKernelEx) *launch_ex;
static decltype(cuGraphLaunch) *graph;
static unsigned long long calls, unexpected;

static void count(CUresult res)
{
	calls++;
	if (res != CUDA_ERROR_NOT_INITIALIZED)
		unexpected++;
}

static int load(void)
{
	const char *path = getenv("REAL_LIBCUDA");
	void *h;

	if (!path) {
		fprintf(stderr, "real_driver: set REAL_LIBCUDA to the real libcuda.so.1\n");
		return -1;
	}
	h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "real_driver: %s\n", dlerror());
		return -1;
	}
	launch = (decltype(launch))dlsym(h, "cuLaunchKernel");
	launch_ptsz = (decltype(launch_ptsz))dlsym(h, "cuLaunchKernel_ptsz");
	launch_ex = (decltype(launch_ex))dlsym(h, "cuLaunchKernelEx");
	graph = (decltype(graph))dlsym(h, "cuGraphLaunch");
	if (!launch || !launch_ptsz || !launch_ex || !graph) {
		fprintf(stderr, "real_driver: %s lacks the launch entry points\n", path);
		return -1;
	}
	return 0;
}

// Every argument register and stack slot differs, and each call is unique.
static void iteration(int i)
{
	CUfunction fn = (CUfunction)(uintptr_t)(0xf0000 + i);
	CUstream stream = (CUstream)(uintptr_t)(0x5000 + i);
	void *params[] = { nullptr };
	{
		const unsigned g[3] = { 7, 3, 2 }, b[3] = { 128, 2, 1 };
		gt::record(gt::launch("cuLaunchKernel", "", fn, g, b, 4096 + i, stream));
		count(launch(fn, g[0], g[1], g[2], b[0], b[1], b[2], 4096 + i, stream, params,
			     nullptr));
	}
	{
		const unsigned g[3] = { 65535, 1, 7 }, b[3] = { 1024, 1, 1 };
		gt::record(gt::launch("cuLaunchKernel_ptsz", "", fn, g, b, 96, stream));
		count(launch_ptsz(fn, g[0], g[1], g[2], b[0], b[1], b[2], 96, stream, params,
				  nullptr));
	}
	{
		const unsigned g[3] = { 11, 1, 5 }, b[3] = { 64, 4, 2 };
		CUlaunchConfig cfg = {};
		cfg.gridDimX = g[0], cfg.gridDimY = g[1], cfg.gridDimZ = g[2];
		cfg.blockDimX = b[0], cfg.blockDimY = b[1], cfg.blockDimZ = b[2];
		cfg.sharedMemBytes = 512 + i;
		cfg.hStream = stream;
		gt::record(gt::launch("cuLaunchKernelEx", "", fn, g, b, 512 + i, stream));
		count(launch_ex(&cfg, fn, params, nullptr));
	}
	CUgraphExec exec = (CUgraphExec)(uintptr_t)(0xe0000 + i);
	gt::record(gt::graph("cuGraphLaunch", exec, stream));
	count(graph(exec, stream));
}

static double now_ns()
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

// --time N: only N cuLaunchKernel calls, no ground truth; prints "ns/call X" on stdout.
static int timed(long n)
{
	const unsigned g[3] = { 1, 1, 1 }, b[3] = { 32, 1, 1 };
	CUfunction fn = (CUfunction)(uintptr_t)0xf0000;
	void *params[] = { nullptr };
	double t0 = now_ns();

	for (long i = 0; i < n; i++)
		count(launch(fn, g[0], g[1], g[2], b[0], b[1], b[2], 0, nullptr, params, nullptr));
	printf("ns/call %.0f\n", (now_ns() - t0) / (n > 0 ? n : 1));
	return unexpected ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (load())
		return 1;
	if (argc == 3 && !strcmp(argv[1], "--time"))
		return timed(atol(argv[2]));

	struct options opt = parse_options(argc, argv, 10, 1, 0);

	gt::start();
	wait_then_ready(&opt);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < opt.iters; i++) {
		iteration(i);
		if (opt.sleep_ms && i + 1 < opt.iters)
			sleep_ms(opt.sleep_ms);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	fprintf(stderr, "real_driver: %d iterations, %llu calls, %llu not CUDA_ERROR_NOT_INITIALIZED\n",
		opt.iters, calls, unexpected);
	// With the ground truth's own cost; sleeps (--sleep-ms) make it meaningless.
	fprintf(stderr, "real_driver: %.0f ns a call\n",
		((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / (double)calls);
	return unexpected ? 1 : 0;
}
