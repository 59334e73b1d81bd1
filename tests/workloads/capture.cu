// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * capture: launches, copies and sets made into captured streams, beside
 * ordinary ones (README.md). Built with -cudart none on the stand-in runtime
 * (fakecudart.c), which has stream capture with the real signatures: the
 * real libcudart fails stream creation without a device.
 *
 * The ground truth ($CUPROBE_GT) holds only the calls that ran; the
 * captured ones go to $CUPROBE_GT.captured, each with the workload's own
 * number of its capture (1, 2, ... in the order the captures began).
 */
#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <tuple>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "ground_truth.h"
#include "captured_gt.h"
#include "workload.h"

namespace cap {
__global__ void k_a(float *x) { (void)x; }
__global__ void k_b(float *x, int n) { (void)x, (void)n; }
__global__ void k_c(int *x) { (void)x; }
} // namespace cap

struct kernel {
	cudaKernel_t h;
	const char *name;
};

static kernel ka, kb, kc;
static int failed;

/* Captured calls: (capture, api, kernel, grid.x, stream, bytes) -> count. */
static std::mutex cap_mu;
static captured_map captured_calls;
static std::atomic<unsigned> captures{ 0 };

static void note(unsigned capture, const gt::Call &c)
{
	if (!capture) {
		gt::record(c);
		return;
	}
	std::lock_guard<std::mutex> lock(cap_mu);
	captured_add(captured_calls, capture, c);
}

/* A launch of k with grid.x = g into stream s, noted as run (capture 0) or captured. */
static void launch(const kernel &k, unsigned g, cudaStream_t s, unsigned capture)
{
	const unsigned grid[3] = { g, 1, 1 }, block[3] = { 32, 1, 1 };
	void *params[] = { nullptr, nullptr };

	note(capture, gt::launch("cudaLaunchKernel", k.name, k.h, grid, block, 0, s));
	failed += cudaLaunchKernel((const void *)k.h, dim3(g), dim3(32), params, 0, s) !=
		  cudaSuccess;
}

static void set(size_t bytes, cudaStream_t s, unsigned capture)
{
	note(capture, gt::set("cudaMemsetAsync", bytes, 7, s));
	failed += cudaMemsetAsync(nullptr, 7, bytes, s) != cudaSuccess;
}

static void copy(size_t bytes, cudaStream_t s, unsigned capture)
{
	note(capture, gt::copy("cudaMemcpyAsync", bytes, cudaMemcpyHostToDevice, s));
	failed += cudaMemcpyAsync(nullptr, nullptr, bytes, cudaMemcpyHostToDevice, s) !=
		  cudaSuccess;
}

static unsigned begin(cudaStream_t s, cudaStreamCaptureMode mode)
{
	if (cudaStreamBeginCapture(s, mode) != cudaSuccess) {
		failed++;
		return 0;
	}
	return ++captures;
}

static void end(cudaStream_t s)
{
	cudaGraph_t g;

	failed += cudaStreamEndCapture(s, &g) != cudaSuccess;
}

/* Global mode, forked to s2 and joined back through events: every call a capture. */
static void fork_join(cudaStream_t s1, cudaStream_t s2, cudaEvent_t e1, cudaEvent_t e2)
{
	unsigned c = begin(s1, cudaStreamCaptureModeGlobal);

	launch(ka, 2, s1, c);
	failed += cudaEventRecord(e1, s1) != cudaSuccess;
	failed += cudaStreamWaitEvent(s2, e1, 0) != cudaSuccess;
	launch(kb, 3, s2, c);
	copy(4096, s2, c);
	failed += cudaEventRecord(e2, s2) != cudaSuccess;
	failed += cudaStreamWaitEvent(s1, e2, 0) != cudaSuccess;
	launch(ka, 4, s1, c);
	set(1024, s1, c);
	end(s1);
	/* s2 left the capture with its end: this one runs. */
	launch(kb, 5, s2, 0);
}

/*
 * Thread-local mode on another thread's default stream, while this thread
 * launches into its own default stream and the legacy stream: those run.
 */
static void thread_local_capture()
{
	std::atomic<int> stage{ 0 };
	std::thread t([&] {
		cudaStreamCaptureMode mode = cudaStreamCaptureModeThreadLocal;

		failed += cudaThreadExchangeStreamCaptureMode(&mode) != cudaSuccess;
		unsigned c = begin(cudaStreamPerThread, cudaStreamCaptureModeThreadLocal);
		stage = 1;
		while (stage != 2)
			std::this_thread::yield();
		launch(kc, 6, cudaStreamPerThread, c);
		set(2048, cudaStreamPerThread, c);
		end(cudaStreamPerThread);
		failed += cudaThreadExchangeStreamCaptureMode(&mode) != cudaSuccess;
	});
	while (stage != 1)
		std::this_thread::yield();
	launch(kc, 7, cudaStreamPerThread, 0);
	launch(kc, 8, nullptr, 0);
	stage = 2;
	t.join();
}

/* Relaxed mode on s2 while s1 runs; then a begin on the legacy stream, which fails. */
static void relaxed_and_legacy(cudaStream_t s1, cudaStream_t s2)
{
	unsigned c = begin(s2, cudaStreamCaptureModeRelaxed);

	launch(ka, 9, s1, 0);
	launch(kb, 10, s2, c);
	end(s2);
	if (cudaStreamBeginCapture(nullptr, cudaStreamCaptureModeGlobal) == cudaSuccess)
		failed += 100; /* the stand-in must refuse it, as CUDA does */
	launch(ka, 11, nullptr, 0);
}

static void write_captured()
{
	const char *gt_path = getenv("CUPROBE_GT");

	if (gt_path && *gt_path)
		write_captured_gt(gt_path, captures.load(), captured_calls);
}

int main(int argc, char **argv)
{
	struct options opt = parse_options(argc, argv, 5, 1, 0);
	cudaStream_t s1, s2;
	cudaEvent_t e1, e2;

	gt::start();
	if (cudaStreamCreate(&s1) != cudaSuccess || cudaStreamCreate(&s2) != cudaSuccess ||
	    cudaEventCreate(&e1) != cudaSuccess || cudaEventCreate(&e2) != cudaSuccess) {
		fprintf(stderr, "capture: the stand-in runtime failed its setup\n");
		return 1;
	}
	wait_then_ready(&opt);
	/* After the wait: under -p, cuprobe sees the handles made, and names their launches. */
	failed += cudaGetKernel(&ka.h, (const void *)cap::k_a) != cudaSuccess;
	failed += cudaGetKernel(&kb.h, (const void *)cap::k_b) != cudaSuccess;
	failed += cudaGetKernel(&kc.h, (const void *)cap::k_c) != cudaSuccess;
	ka.name = "cap::k_a(float*)";
	kb.name = "cap::k_b(float*, int)";
	kc.name = "cap::k_c(int*)";
	for (int i = 0; i < opt.iters; i++) {
		launch(ka, 1, s1, 0);
		set(512, s1, 0);
		fork_join(s1, s2, e1, e2);
		thread_local_capture();
		relaxed_and_legacy(s1, s2);
		if (opt.steps) {
			cuprobe_step();
			gt::step();
		}
		if (opt.sleep_ms && i + 1 < opt.iters)
			sleep_ms(opt.sleep_ms);
	}
	write_captured();
	fprintf(stderr, "capture: %d iterations, %u captures, %d failed calls\n", opt.iters,
		captures.load(), failed);
	return failed != 0;
}
