// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
//
// Runtime launches entering NVIDIA's real driver, next to direct driver
// launches: cudaLaunchKernel comes from librealrt.so (realrt.c), which takes
// the driver's cuLaunchKernel from cuGetProcAddress_v2 as libcudart does; the
// direct launches use the driver's export (REAL_LIBCUDA names the driver).
// Each iteration makes two runtime launches of two kernels and one direct
// driver launch; every call returns CUDA_ERROR_NOT_INITIALIZED (no cuInit)
// after the probes fired. The driver calls inside the runtime ones are part
// of those launches: the ground truth holds them once, as cudaLaunchKernel.

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "ground_truth.h"
#include "workload.h"

#define NAME_FIRST "real_first(float*)"
#define NAME_SECOND "real_second(float*, int)"

__attribute__((noinline, used)) void real_first(float *p)
{
	asm volatile("" : : "r"(p) : "memory");
}

__attribute__((noinline, used)) void real_second(float *p, int n)
{
	asm volatile("" : : "r"(p), "r"(n) : "memory");
}

static decltype(cuLaunchKernel) *drv_launch;
static unsigned long long calls, failed;

static void runtime_launch(const char *name, const void *func, dim3 grid, dim3 block,
			   size_t shmem, cudaStream_t stream, void **args)
{
	const unsigned g[3] = { grid.x, grid.y, grid.z }, b[3] = { block.x, block.y, block.z };

	gt::record(gt::launch("cudaLaunchKernel", name, func, g, b, shmem, stream));
	calls++;
	failed += cudaLaunchKernel(func, grid, block, args, shmem, stream) != cudaErrorInitializationError;
}

static void iteration(int i)
{
	cudaStream_t stream = (cudaStream_t)(uintptr_t)0x3007;
	float *p = nullptr;
	int n = 16;
	void *args[] = { &p, &n };

	runtime_launch(NAME_FIRST, (const void *)real_first, dim3(6, 1, 1), dim3(32, 1, 1), 0,
		       nullptr, args);
	runtime_launch(NAME_SECOND, (const void *)real_second, dim3(7, 2, 1), dim3(64, 1, 1), 48,
		       stream, args);
	{
		const unsigned g[3] = { 8, 1, 1 }, b[3] = { 128, 1, 1 };
		CUfunction fn = (CUfunction)(uintptr_t)(0x4234 + (i & 7));
		gt::record(gt::launch("cuLaunchKernel", "", fn, g, b, 16, stream));
		calls++;
		failed += drv_launch(fn, g[0], g[1], g[2], b[0], b[1], b[2], 16, (CUstream)stream,
				     args, nullptr) != CUDA_ERROR_NOT_INITIALIZED;
	}
}

int main(int argc, char **argv)
{
	struct options opt = parse_options(argc, argv, 10, 1, 0);
	const char *path = getenv("REAL_LIBCUDA");
	void *h = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : nullptr;

	drv_launch = h ? (decltype(drv_launch))dlsym(h, "cuLaunchKernel") : nullptr;
	if (!drv_launch) {
		fprintf(stderr, "real_nested: no cuLaunchKernel in %s (set REAL_LIBCUDA)\n",
			path ? path : "(unset)");
		return 1;
	}
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
	fprintf(stderr, "real_nested: %d iterations, %llu calls, %llu failed otherwise than "
		"expected\n", opt.iters, calls, failed);
	return 0;
}
