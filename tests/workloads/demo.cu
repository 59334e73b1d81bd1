// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
//
// The bundled demo (`make demo`): a small training-loop-shaped program. Each
// iteration copies a batch in, clears a buffer, runs three kernels and ends
// with cuprobe_step(), so `cuprobe record --step cuprobe_step` sees steps.

#include <stdio.h>

#include <vector>

#include "ground_truth.h"
#include "workload.h"

// Names as a symbolizer demangles the host-stub symbols (checked with nm -C).
#define NAME_INIT "init_kernel(float*, int)"
#define NAME_AXPY "void axpy<float>(float, float const*, float*, int)"
#define NAME_RELU "demo::relu(float*, int)"

static const int N = 1 << 16;
static const unsigned BLOCK = 256;
static const unsigned GRID = (N + BLOCK - 1) / BLOCK;

__global__ void init_kernel(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] = (float)(i % 7) - 3.0f;
}

template <typename T> __global__ void axpy(T a, const T *x, T *y, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		y[i] += a * x[i];
}

namespace demo {
__global__ void relu(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n && x[i] < 0.0f)
		x[i] = 0.0f;
}
} // namespace demo

static unsigned long long calls, failed;

static void count(cudaError_t err)
{
	calls++;
	if (err != cudaSuccess)
		failed++;
}

static void record_launch(const char *name, const void *func)
{
	const unsigned g[3] = { GRID, 1, 1 }, b[3] = { BLOCK, 1, 1 };

	gt::record(gt::launch("cudaLaunchKernel", name, func, g, b, 0, nullptr));
}

static void iteration(float *x, float *y, const float *batch)
{
	size_t bytes = N * sizeof(float);

	gt::record(gt::copy("cudaMemcpyAsync", bytes, cudaMemcpyHostToDevice, nullptr));
	count(cudaMemcpyAsync(x, batch, bytes, cudaMemcpyHostToDevice, 0));
	gt::record(gt::set("cudaMemsetAsync", bytes, 0, nullptr));
	count(cudaMemsetAsync(y, 0, bytes, 0));

	record_launch(NAME_INIT, (const void *)init_kernel);
	init_kernel<<<GRID, BLOCK>>>(x, N);
	count(cudaGetLastError());
	record_launch(NAME_AXPY, (const void *)axpy<float>);
	axpy<float><<<GRID, BLOCK>>>(0.5f, x, y, N);
	count(cudaGetLastError());
	record_launch(NAME_RELU, (const void *)demo::relu);
	demo::relu<<<GRID, BLOCK>>>(y, N);
	count(cudaGetLastError());
}

int main(int argc, char **argv)
{
	struct options opt = parse_options(argc, argv, 50, 1, 10);
	std::vector<float> batch(N, 1.0f);
	float *x = nullptr, *y = nullptr;

	gt::start();
	if (cudaMalloc(&x, N * sizeof(float)) != cudaSuccess)
		x = nullptr;
	if (cudaMalloc(&y, N * sizeof(float)) != cudaSuccess)
		y = nullptr;
	cudaGetLastError();
	wait_then_ready(&opt);
	for (int i = 0; i < opt.iters; i++) {
		iteration(x, y, batch.data());
		cuprobe_step();
		gt::step();
		if (opt.sleep_ms && i + 1 < opt.iters)
			sleep_ms(opt.sleep_ms);
	}
	cudaDeviceSynchronize();
	fprintf(stderr, "demo: %d steps, %llu calls, %llu failed (%s)\n", opt.iters, calls, failed,
		failed ? "no usable GPU" : "ok");
	return 0;
}
