// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
//
// Runtime launches that enter the driver, next to direct driver launches.
// cudaLaunchKernel comes from libfakert.so (fakert.c says why it is a fake),
// which calls the stub libcuda's cuLaunchKernel exactly as libcudart does on a
// GPU machine. Each iteration makes two runtime launches and one direct
// driver launch, so the ground truth holds 2 * iters cudaLaunchKernel calls
// and iters cuLaunchKernel calls: the driver calls nested inside the runtime
// ones are part of those runtime launches and are not recorded again. A
// profiler that counts them twice sees 3 * iters cuLaunchKernel calls.

#include <stdint.h>
#include <stdio.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "ground_truth.h"
#include "workload.h"

// The "kernels" are host functions: only their addresses and symbols matter.
#define NAME_FIRST "nested_first(float*)"
#define NAME_SECOND "nested_second(float*, int)"

__attribute__((noinline, used)) void nested_first(float *p)
{
	asm volatile("" : : "r"(p) : "memory");
}

__attribute__((noinline, used)) void nested_second(float *p, int n)
{
	asm volatile("" : : "r"(p), "r"(n) : "memory");
}

static unsigned long long calls, failed;

static void count(int ok)
{
	calls++;
	if (!ok)
		failed++;
}

static void runtime_launch(const char *name, const void *func, dim3 grid, dim3 block,
			   size_t shmem, cudaStream_t stream, void **args)
{
	const unsigned g[3] = { grid.x, grid.y, grid.z }, b[3] = { block.x, block.y, block.z };

	gt::record(gt::launch("cudaLaunchKernel", name, func, g, b, shmem, stream));
	count(cudaLaunchKernel(func, grid, block, args, shmem, stream) == cudaSuccess);
}

static void iteration(int i)
{
	cudaStream_t stream = (cudaStream_t)(uintptr_t)0x3007;
	float *p = nullptr;
	int n = 16;
	void *args[] = { &p, &n };

	runtime_launch(NAME_FIRST, (const void *)nested_first, dim3(6, 1, 1), dim3(32, 1, 1), 0,
		       nullptr, args);
	runtime_launch(NAME_SECOND, (const void *)nested_second, dim3(7, 2, 1), dim3(64, 1, 1),
		       48, stream, args);
	{
		const unsigned g[3] = { 8, 1, 1 }, b[3] = { 128, 1, 1 };
		CUfunction fn = (CUfunction)(uintptr_t)(0x4234 + i);
		gt::record(gt::launch("cuLaunchKernel", "", fn, g, b, 16, stream));
		count(cuLaunchKernel(fn, g[0], g[1], g[2], b[0], b[1], b[2], 16, (CUstream)stream,
				     args, nullptr) == CUDA_SUCCESS);
	}
}

int main(int argc, char **argv)
{
	struct options opt = parse_options(argc, argv, 10, 1, 0);

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
	fprintf(stderr, "nested: %d iterations, %llu calls, %llu failed\n", opt.iters, calls, failed);
	return 0;
}
