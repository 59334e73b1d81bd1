// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
//
// libkernlib.so: a library with its own kernels that dlopen_main loads late,
// the way PyTorch's CUDA libraries arrive after a process has started. It
// links libcudart.so.13 itself, so that libcudart is mapped only by dlopen.
// It records the ground truth of its own calls.

#include <stdint.h>
#include <unistd.h>

#include <vector>

#include "ground_truth.h"

// Names as a symbolizer demangles the host-stub symbols (checked with nm -C).
#define NAME_FILL "void kl::fill<float>(float*, float, int)"
#define NAME_SUM "kl::sum(float const*, float*, int)"

namespace kl {
template <typename T> __global__ void fill(T *p, T v, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		p[i] = v;
}

__global__ void sum(const float *x, float *out, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		atomicAdd(out, x[i]);
}
} // namespace kl

static void count(cudaError_t err, unsigned long long *failed)
{
	if (err != cudaSuccess)
		(*failed)++;
}

static void iteration(float *dev, const float *host, int n, unsigned long long *failed)
{
	const unsigned g1[3] = { 5, 1, 1 }, b1[3] = { 128, 1, 1 };
	const unsigned g2[3] = { 9, 1, 1 }, b2[3] = { 64, 1, 1 };
	size_t bytes = n * sizeof(float);

	gt::record(gt::copy("cudaMemcpyAsync", bytes, cudaMemcpyHostToDevice, nullptr));
	count(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, 0), failed);
	gt::record(gt::launch("cudaLaunchKernel", NAME_FILL, (const void *)kl::fill<float>, g1, b1,
			      0, nullptr));
	kl::fill<float><<<g1[0], b1[0]>>>(dev, 1.5f, n);
	count(cudaGetLastError(), failed);
	gt::record(gt::launch("cudaLaunchKernel", NAME_SUM, (const void *)kl::sum, g2, b2,
			      sizeof(float) * 4, nullptr));
	kl::sum<<<g2[0], b2[0], sizeof(float) * 4>>>(dev, dev + n, n);
	count(cudaGetLastError(), failed);
}

// The library's own step boundary, for `--step libkernlib.so:kernlib_step`: a
// step symbol in a library the process loads late. A callee-saved clobber
// gives it a leading push (see cuprobe_step in workload.h).
extern "C" __attribute__((noinline, used, visibility("default"))) void kernlib_step(void)
{
	asm volatile("" ::: "memory", "rbx");
}

// Runs ITERS iterations of one copy and two launches, calling STEP (when not
// NULL) after each. Returns the number of calls made; *FAILED counts those
// that returned an error.
extern "C" __attribute__((visibility("default"))) int
kernlib_run(int iters, int sleep_ms, void (*step)(void), unsigned long long *failed)
{
	const int n = 512;
	std::vector<float> host(n, 2.0f);
	float *dev = nullptr;

	gt::start();
	*failed = 0;
	if (cudaMalloc(&dev, (n + 1) * sizeof(float)) != cudaSuccess)
		dev = nullptr;
	cudaGetLastError();
	for (int i = 0; i < iters; i++) {
		iteration(dev, host.data(), n, failed);
		if (step) {
			kernlib_step();
			step();
			gt::step();
		}
		if (sleep_ms && i + 1 < iters)
			usleep(sleep_ms * 1000);
	}
	cudaDeviceSynchronize();
	return iters * 3;
}
