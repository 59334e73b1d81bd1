// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * How fast the trace writer formats launch events: writes N launches (a mix
 * of kernels, copies, sets and graph launches, as a training step makes them)
 * into one trace under DIR and prints launch events per CPU-second, best of R
 * rounds: per second of user CPU (the formatting) and of user and system CPU
 * (with the writes into the file). The loader has to keep up with millions
 * of launches a second, so this is the writer's budget.
 *
 *   trace_write [DIR [N [ROUNDS [MIX]]]]   defaults: /dev/shm, 1000000, 5, train
 *
 * MIX train: PyTorch-like kernel names (one of 250 bytes), copies, sets and
 * graphs; MIX short: cudaLaunchKernel of "bench_kernel(int)" only, as
 * bench/launch_loop makes them (loader_events_per_s).
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include "cuda/launch_api.h"
#include "trace/writer.h"

struct cpu {
	double user_s, total_s;
};

static struct cpu cpu_now(void)
{
	struct rusage ru;
	struct cpu c;

	getrusage(RUSAGE_SELF, &ru);
	c.user_s = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
	c.total_s = c.user_s + (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	return c;
}

static const char *const kernels[] = {
	"void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor<float, "
	"float, float, at::native::binary_internal::MulFunctor<float> >, "
	"at::detail::Array<char*, 2> >(int, at::native::AUnaryFunctor<float, float, float, "
	"at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 2>)",
	"ampere_sgemm_128x64_nn",
	"void ns::scale<float>(float*, int)",
};

static bool short_mix;

/* The i-th launch of the mix: 8 kernels in 10, then a copy and a set or a graph. */
static void make_launch(unsigned long i, struct launch_event *e, const char **kernel)
{
	static const unsigned int apis[10] = {
		API_cudaLaunchKernel, API_cudaLaunchKernel, API_cuLaunchKernel,
		API_cudaLaunchKernel, API_cudaLaunchKernelExC, API_cudaLaunchKernel,
		API_cudaLaunchKernel, API_cudaLaunchKernel, API_cudaMemcpyAsync,
		API_cudaMemsetAsync,
	};

	e->type = REC_LAUNCH;
	e->api = i % 20 == 19 ? API_cudaGraphLaunch : apis[i % 10];
	e->tgid = 4242;
	e->tid = 4243 + (unsigned int)(i % 4);
	e->ts_ns = 5000000000ull + i * 1733;
	e->func = 0x7f0012340000ull + (i % 64) * 0x40;
	e->stream = 0x55d0c0de0000ull + (i % 3);
	e->shmem = (i % 7) * 1024;
	e->bytes = 1ull << (i % 24);
	e->grid[0] = (unsigned int)(i % 4096) + 1;
	e->grid[1] = e->grid[2] = 1;
	e->block[0] = 256;
	e->block[1] = e->block[2] = 1;
	e->kind = (unsigned int)(i % 4);
	e->step = (unsigned int)(i / 10000);
	*kernel = kernels[i % 3];
	if (short_mix) {
		e->api = API_cudaLaunchKernel;
		*kernel = "bench_kernel(int)";
	}
}

/* Launch events per second of user CPU and of all CPU, in one round. */
static struct cpu round_rate(const char *dir, unsigned long n)
{
	const struct trace_meta meta = {
		.pid = 4242, .host = "bench", .command = "train", .rank = 0, .world_size = 1,
		.start_mono = 5000000000ull,
	};
	const struct trace_summary sum = { .end_mono = 6000000000ull, .launches = n };
	struct launch_event e = {};
	const char *kernel;
	struct trace *t = trace__open(dir, &meta);
	struct cpu t0, t1, rate;

	if (!t) {
		perror("trace_write: cannot open a trace");
		exit(1);
	}
	t0 = cpu_now();
	for (unsigned long i = 0; i < n; i++) {
		make_launch(i, &e, &kernel);
		trace__launch(t, &e, kernel, i + 1, NULL);
	}
	t1 = cpu_now();
	if (trace__close(t, &sum)) {
		perror("trace_write: cannot close the trace");
		exit(1);
	}
	remove(trace__path(t));
	trace__free(t);
	rate.user_s = (double)n / (t1.user_s - t0.user_s);
	rate.total_s = (double)n / (t1.total_s - t0.total_s);
	return rate;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "/dev/shm";
	unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 10) : 1000000;
	int rounds = argc > 3 ? atoi(argv[3]) : 5;

	short_mix = argc > 4 && !strcmp(argv[4], "short");
	struct cpu best = { 0, 0 };

	for (int r = 0; r < rounds; r++) {
		struct cpu rate = round_rate(dir, n);

		printf("round %d: %.0f launch events/s of user CPU, %.0f of all CPU\n", r,
		       rate.user_s, rate.total_s);
		if (rate.user_s > best.user_s)
			best.user_s = rate.user_s;
		if (rate.total_s > best.total_s)
			best.total_s = rate.total_s;
	}
	printf("trace_write: %.0f launch events per user CPU-second, %.0f per CPU-second with the "
	       "writes (best of %d rounds of %lu, %s mix)\n",
	       best.user_s, best.total_s, rounds, n, short_mix ? "short" : "train");
	return 0;
}
