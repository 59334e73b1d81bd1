// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
//
// Linked with -cudart static: the runtime's entry points live inside this
// executable, not in a libcudart.so, and must be found in its own symbol table.

#include <stdio.h>

#include <vector>

#include "ground_truth.h"
#include "workload.h"

// Names as a symbolizer demangles the host-stub symbols (checked with nm -C).
#define NAME_COUNT "count_kernel(int*, int)"
#define NAME_FILL "void st::fill<double>(double*, double, int)"

__global__ void count_kernel(int *p, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		atomicAdd(p, 1);
}

namespace st {
template <typename T> __global__ void fill(T *p, T v, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		p[i] = v;
}
} // namespace st

static unsigned long long calls, failed;

static void count(cudaError_t err)
{
	calls++;
	if (err != cudaSuccess)
		failed++;
}

static void iteration(double *dev, double *host, int n)
{
	size_t bytes = n * sizeof(double);
	const unsigned g1[3] = { 3, 1, 1 }, b1[3] = { 96, 1, 1 };
	const unsigned g2[3] = { 7, 2, 1 }, b2[3] = { 32, 4, 1 };

	gt::record(gt::copy("cudaMemcpyAsync", bytes, cudaMemcpyHostToDevice, nullptr));
	count(cudaMemcpyAsync(dev, host, bytes, cudaMemcpyHostToDevice, 0));
	gt::record(gt::launch("cudaLaunchKernel", NAME_COUNT, (const void *)count_kernel, g1, b1,
			      0, nullptr));
	count_kernel<<<dim3(g1[0], g1[1], g1[2]), dim3(b1[0], b1[1], b1[2])>>>((int *)dev, n);
	count(cudaGetLastError());
	gt::record(gt::launch("cudaLaunchKernel", NAME_FILL, (const void *)st::fill<double>, g2,
			      b2, 0, nullptr));
	st::fill<double><<<dim3(g2[0], g2[1], g2[2]), dim3(b2[0], b2[1], b2[2])>>>(dev, 2.0, n);
	count(cudaGetLastError());
	gt::record(gt::copy("cudaMemcpyAsync", bytes, cudaMemcpyDeviceToHost, nullptr));
	count(cudaMemcpyAsync(host, dev, bytes, cudaMemcpyDeviceToHost, 0));
}

int main(int argc, char **argv)
{
	struct options opt = parse_options(argc, argv, 10, 1, 0);
	const int n = 4096;
	std::vector<double> host(n, 1.0);
	double *dev = nullptr;

	gt::start();
	if (cudaMalloc(&dev, n * sizeof(double)) != cudaSuccess)
		dev = nullptr;
	cudaGetLastError();
	wait_then_ready(&opt);
	for (int i = 0; i < opt.iters; i++) {
		iteration(dev, host.data(), n);
		if (opt.steps) {
			cuprobe_step();
			gt::step();
		}
		if (opt.sleep_ms && i + 1 < opt.iters)
			sleep_ms(opt.sleep_ms);
	}
	cudaDeviceSynchronize();
	fprintf(stderr, "static: %d iterations, %llu calls, %llu failed\n", opt.iters, calls, failed);
	return 0;
}
