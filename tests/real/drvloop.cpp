// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
//
// Launches through the real driver's exports: it dlopens libcuda.so.1 (the
// real one, found through LD_LIBRARY_PATH) and calls cuLaunchKernel,
// cuLaunchKernel_ptsz and cuLaunchKernelEx with known grids, blocks, shared
// memory and streams. Without cuInit each returns CUDA_ERROR_NOT_INITIALIZED
// (3), after the uprobe on its entry fired. Every call is written to the
// ground truth ($CUPROBE_GT, ground_truth.h), and a call that does not
// return 3 makes the exit status 1.
//
//   drvloop [workload options]    --iters N (default 20), --wait-file, --ready-file, --steps
//   drvloop --time N              only N cuLaunchKernel calls, timed: prints "ns/call X"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ground_truth.h"
#include "workload.h"

// cuda.h's CUlaunchConfig (CUDA 12.0+), so that the program needs no toolkit.
struct launch_config {
	unsigned int grid[3], block[3], shmem;
	void *stream;
	void *attrs;
	unsigned int n_attrs;
};

typedef int (*launch_fn)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			 unsigned, void *, void **, void **);
typedef int (*launch_ex_fn)(const launch_config *, void *, void **, void **);

static launch_fn launch, launch_ptsz;
static launch_ex_fn launch_ex;
static unsigned long long calls, wrong;

static void result(int res)
{
	calls++;
	if (res != 3) {
		if (!wrong)
			fprintf(stderr, "drvloop: a launch returned %d, not 3 (NOT_INITIALIZED)\n", res);
		wrong++;
	}
}

static void plain(const char *api, launch_fn fn, uintptr_t func, const unsigned g[3],
		  const unsigned b[3], unsigned shmem, uintptr_t stream)
{
	void *args[] = { nullptr };

	gt::record(gt::launch(api, "", (const void *)func, g, b, shmem, (const void *)stream));
	result(fn((void *)func, g[0], g[1], g[2], b[0], b[1], b[2], shmem, (void *)stream, args,
		  nullptr));
}

static void iteration(int i)
{
	const unsigned g1[3] = { 3, 2, 1 }, b1[3] = { 128, 1, 1 };
	const unsigned g2[3] = { 5, 4, 3 }, b2[3] = { 16, 8, 2 };
	const unsigned g3[3] = { 65535, 1, 7 }, b3[3] = { 1024, 1, 1 };

	plain("cuLaunchKernel", launch, 0x51000 + i, g1, b1, 0, 0);
	plain("cuLaunchKernel", launch, 0x52000, g2, b2, 4096, 0x7001);
	plain("cuLaunchKernel_ptsz", launch_ptsz, 0x53000, g1, b2, 96, 0x7002);
	{
		launch_config cfg = { { g3[0], g3[1], g3[2] }, { b3[0], b3[1], b3[2] }, 49152,
				      (void *)(uintptr_t)0x7003, nullptr, 0 };
		void *args[] = { nullptr };

		gt::record(gt::launch("cuLaunchKernelEx", "", (const void *)(uintptr_t)0x54000, g3,
				      b3, 49152, cfg.stream));
		result(launch_ex(&cfg, (void *)(uintptr_t)0x54000, args, nullptr));
	}
}

static double now_ns()
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!lib) {
		fprintf(stderr, "drvloop: no libcuda.so.1: %s (LD_LIBRARY_PATH names the real one)\n",
			dlerror());
		return 2;
	}
	launch = (launch_fn)dlsym(lib, "cuLaunchKernel");
	launch_ptsz = (launch_fn)dlsym(lib, "cuLaunchKernel_ptsz");
	launch_ex = (launch_ex_fn)dlsym(lib, "cuLaunchKernelEx");
	if (!launch || !launch_ptsz || !launch_ex) {
		fprintf(stderr, "drvloop: libcuda.so.1 lacks a cuLaunchKernel export\n");
		return 2;
	}
	if (argc == 3 && !strcmp(argv[1], "--time")) {
		const unsigned g[3] = { 1, 1, 1 }, b[3] = { 32, 1, 1 };
		long n = atol(argv[2]);
		void *args[] = { nullptr };
		double t0 = now_ns();

		for (long i = 0; i < n; i++)
			result(launch((void *)0x51000, g[0], g[1], g[2], b[0], b[1], b[2], 0, nullptr,
				      args, nullptr));
		printf("ns/call %.0f\n", (now_ns() - t0) / (n > 0 ? n : 1));
		return wrong ? 1 : 0;
	}

	struct options opt = parse_options(argc, argv, 20, 1, 0);

	gt::start();
	wait_then_ready(&opt);
	for (int i = 0; i < opt.iters; i++) {
		iteration(i);
		if (opt.steps) {
			cuprobe_step();
			gt::step();
		}
		if (opt.sleep_ms && i + 1 < opt.iters)
			sleep_ms(opt.sleep_ms);
	}
	fprintf(stderr, "drvloop: %d iterations, %llu calls, %llu not 3\n", opt.iters, calls, wrong);
	return wrong ? 1 : 0;
}
