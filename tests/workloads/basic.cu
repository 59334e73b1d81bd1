// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
//
// Every runtime launch entry point cuprobe probes, from several threads.
// Thread t (0-based) uses grid.x = t + 1 everywhere, and byte counts and
// memset values that depend on t, so a test can tell the threads apart.
// Built twice: basic (legacy default stream) and basic_ptsz
// (--default-stream per-thread), whose calls enter the *_ptsz entry points.
//
// Without a driver every call fails after entering libcudart; the calls are
// made and recorded all the same. Streams and graphs that cannot be created
// get recognizable stand-in handles (0x5000 + t, 0x6000 + t), which is what
// is then passed and recorded.

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <atomic>
#include <vector>

#include "ground_truth.h"
#include "workload.h"

#ifdef __CUDART_API_PER_THREAD_DEFAULT_STREAM
#define API(name) name "_ptsz"
#define PROG "basic_ptsz"
#else
#define API(name) name
#define PROG "basic"
#endif

// Not cudaGraphLaunch_ptsz, even per-thread: CUDA 13's
// cuda_device_runtime_api.h defines cudaGraphLaunch_ptsz as a static inline
// that calls cudaGraphLaunch (stream 0 becoming cudaStreamPerThread), and in
// nvcc's host pass that definition wins over libcudart's export.
#define API_GRAPH "cudaGraphLaunch"

// Names as a symbolizer demangles the host-stub symbols (checked with nm -C).
#define NAME_PLAIN "plain_kernel(float*, int)"
#define NAME_SCALE_F "void ns::scale<float>(float*, int)"
#define NAME_SCALE_I "void ns::scale<int>(int*, int)"
#define NAME_SHARED "shared_kernel(float*, int)"
#define NAME_EX "ex_kernel(float*, int)"
#define NAME_COOP "coop_kernel(float*, int)"

__global__ void plain_kernel(float *p, int n)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < (unsigned)n)
		p[i] += 1.0f;
}

namespace ns {
template <typename T> __global__ void scale(T *p, int n)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < (unsigned)n)
		p[i] *= 2;
}
} // namespace ns

__global__ void shared_kernel(float *p, int n)
{
	extern __shared__ float tile[];
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;

	tile[threadIdx.x % 64] = i < (unsigned)n ? p[i] : 0.0f;
	__syncthreads();
	if (i < (unsigned)n)
		p[i] = tile[threadIdx.x % 64];
}

__global__ void ex_kernel(float *p, int n)
{
	unsigned i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < (unsigned)n)
		p[i] -= 1.0f;
}

__global__ void coop_kernel(float *p, int n)
{
	if (blockIdx.x == 0 && threadIdx.x == 0 && n > 0)
		p[0] = 0.0f;
}

struct worker {
	int index;
	const struct options *opt;
	pthread_barrier_t *start;     // all workers and main: setup done, then go
	pthread_barrier_t *step;      // workers only: one iteration done
	uint64_t calls;
	uint64_t failed;
};

// Per-thread state; handles that cannot be created become stand-ins.
struct setup {
	float *dev;
	int n;
	std::vector<char> host;
	cudaStream_t stream;
	cudaGraphExec_t graph;
};

static const size_t PAD_BYTES = 64 * 1024;

static void setup_thread(int t, struct setup *s)
{
	size_t bytes = 4096 * (size_t)(t + 1) + PAD_BYTES;
	cudaGraph_t g = nullptr;

	s->n = (int)(bytes / sizeof(float));
	s->host.assign(bytes, 1);
	if (cudaMalloc(&s->dev, bytes) != cudaSuccess)
		s->dev = nullptr;
	if (cudaStreamCreate(&s->stream) != cudaSuccess)
		s->stream = (cudaStream_t)(uintptr_t)(0x5000 + t);
	if (cudaGraphCreate(&g, 0) != cudaSuccess ||
	    cudaGraphInstantiate(&s->graph, g, 0) != cudaSuccess)
		s->graph = (cudaGraphExec_t)(uintptr_t)(0x6000 + t);
	cudaGetLastError();
}

static void count(struct worker *w, cudaError_t err)
{
	w->calls++;
	if (err != cudaSuccess)
		w->failed++;
}

static void launch_all(struct worker *w, struct setup *s)
{
	const int t = w->index;
	const unsigned x = (unsigned)t + 1;
	cudaStream_t st = s->stream;
	float *p = s->dev;
	int n = s->n;

	{	// (a) a plain kernel on the default stream
		const unsigned g[3] = { x, 1, 1 }, b[3] = { 32, 1, 1 };
		gt::record(gt::launch(API("cudaLaunchKernel"), NAME_PLAIN, (const void *)plain_kernel,
				      g, b, 0, nullptr));
		plain_kernel<<<dim3(g[0], g[1], g[2]), dim3(b[0], b[1], b[2])>>>(p, n);
		count(w, cudaGetLastError());
	}
	{	// (b) one template kernel in a namespace, two instantiations
		const unsigned g[3] = { x, 2, 1 }, b[3] = { 64, 1, 1 };
		gt::record(gt::launch(API("cudaLaunchKernel"), NAME_SCALE_F,
				      (const void *)ns::scale<float>, g, b, 0, nullptr));
		ns::scale<float><<<dim3(g[0], g[1], g[2]), dim3(b[0], b[1], b[2])>>>(p, n);
		count(w, cudaGetLastError());
	}
	{
		const unsigned g[3] = { x, 3, 1 }, b[3] = { 16, 2, 1 };
		gt::record(gt::launch(API("cudaLaunchKernel"), NAME_SCALE_I,
				      (const void *)ns::scale<int>, g, b, 0, nullptr));
		ns::scale<int><<<dim3(g[0], g[1], g[2]), dim3(b[0], b[1], b[2])>>>((int *)p, n);
		count(w, cudaGetLastError());
	}
	{	// (c) dynamic shared memory on a created stream
		const unsigned g[3] = { x, 1, 2 }, b[3] = { 128, 1, 1 };
		size_t shmem = 256 * (size_t)x;
		gt::record(gt::launch(API("cudaLaunchKernel"), NAME_SHARED,
				      (const void *)shared_kernel, g, b, shmem, st));
		shared_kernel<<<dim3(g[0], g[1], g[2]), dim3(b[0], b[1], b[2]), shmem, st>>>(p, n);
		count(w, cudaGetLastError());
	}
	{	// (d) cudaLaunchKernelEx, which enters cudaLaunchKernelExC
		const unsigned g[3] = { x, 4, 1 }, b[3] = { 8, 8, 1 };
		cudaLaunchConfig_t cfg = {};
		cfg.gridDim = dim3(g[0], g[1], g[2]);
		cfg.blockDim = dim3(b[0], b[1], b[2]);
		cfg.dynamicSmemBytes = 512;
		cfg.stream = st;
		gt::record(gt::launch(API("cudaLaunchKernelExC"), NAME_EX, (const void *)ex_kernel,
				      g, b, 512, st));
		count(w, cudaLaunchKernelEx(&cfg, ex_kernel, p, n));
	}
	{	// (e) a cooperative launch
		const unsigned g[3] = { x, 5, 1 }, b[3] = { 32, 2, 1 };
		void *args[] = { &p, &n };
		gt::record(gt::launch(API("cudaLaunchCooperativeKernel"), NAME_COOP,
				      (const void *)coop_kernel, g, b, 64, st));
		count(w, cudaLaunchCooperativeKernel((const void *)coop_kernel,
						     dim3(g[0], g[1], g[2]), dim3(b[0], b[1], b[2]),
						     args, 64, st));
	}
	{	// (f) host to device copy
		size_t bytes = 4096 * (size_t)x;
		gt::record(gt::copy(API("cudaMemcpyAsync"), bytes, cudaMemcpyHostToDevice, st));
		count(w, cudaMemcpyAsync(p, s->host.data(), bytes, cudaMemcpyHostToDevice, st));
	}
	{	// (g) memset
		size_t bytes = 1024 * (size_t)x;
		int value = (0x20 + t) & 0xff;
		gt::record(gt::set(API("cudaMemsetAsync"), bytes, value, st));
		count(w, cudaMemsetAsync(p, value, bytes, st));
	}
	{	// (h) a graph launch
		gt::record(gt::graph(API_GRAPH, s->graph, st));
		count(w, cudaGraphLaunch(s->graph, st));
	}
}

// --stop-file seen: every thread ends after the iteration it is in.
static volatile bool stopping;

// With --steps the threads move in lockstep, so that step k holds exactly
// iteration k of every thread: all finish, thread 0 steps (and looks for the
// stop file), all continue, or all end together.
static void end_iteration(struct worker *w)
{
	if (!w->opt->steps) {
		if (w->opt->stop_file && !access(w->opt->stop_file, F_OK))
			stopping = true;
		return;
	}
	pthread_barrier_wait(w->step);
	if (w->index == 0) {
		cuprobe_step();
		gt::step();
		if (w->opt->stop_file && !access(w->opt->stop_file, F_OK))
			stopping = true;
	}
	pthread_barrier_wait(w->step);
}

static void *run_worker(void *arg)
{
	struct worker *w = (struct worker *)arg;
	struct setup s;

	setup_thread(w->index, &s);
	pthread_barrier_wait(w->start);
	pthread_barrier_wait(w->start);
	for (int i = 0; i < w->opt->iters && !stopping; i++) {
		launch_all(w, &s);
		end_iteration(w);
		if (w->opt->sleep_ms && i + 1 < w->opt->iters && !stopping)
			sleep_ms(w->opt->sleep_ms);
	}
	return nullptr;
}

int main(int argc, char **argv)
{
	struct options opt = parse_options(argc, argv, 10, 4, 0);
	std::vector<struct worker> workers(opt.threads);
	std::vector<pthread_t> ids(opt.threads);
	pthread_barrier_t start, step;
	uint64_t calls = 0, failed = 0;

	gt::start();
	pthread_barrier_init(&start, nullptr, opt.threads + 1);
	pthread_barrier_init(&step, nullptr, opt.threads);
	for (int t = 0; t < opt.threads; t++) {
		workers[t] = { t, &opt, &start, &step, 0, 0 };
		if (pthread_create(&ids[t], nullptr, run_worker, &workers[t])) {
			fprintf(stderr, PROG ": cannot create thread %d\n", t);
			return 1;
		}
	}
	pthread_barrier_wait(&start);
	wait_then_ready(&opt);
	pthread_barrier_wait(&start);
	for (int t = 0; t < opt.threads; t++) {
		pthread_join(ids[t], nullptr);
		calls += workers[t].calls;
		failed += workers[t].failed;
	}
	fprintf(stderr, PROG ": %d threads x %d iterations: %llu calls, %llu failed\n",
		opt.threads, opt.iters, (unsigned long long)calls, (unsigned long long)failed);
	return 0;
}
