// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
//
// graph_loop: the program of bench.py's graph_replay_vs_launch. On the
// stand-in runtime and driver (tests/workloads/fakecudart.c, fakecuda.c;
// RUNPATH $ORIGIN/../workloads/fakecuda), where a graph launch and a kernel
// launch each cost a few ns, it either replays a graph captured from --nodes
// launches (cudaGraphLaunch, which enters cuGraphLaunch) or launches one
// kernel (cudaLaunchKernel, which enters cuLaunchKernel), in a timed loop.
//
//   graph_loop --graph|--launch [OPTIONS]
//   --calls N       calls per timed block (default 20000)
//   --blocks N      timed blocks; the median block is reported (default 5)
//   --nodes N       launches the graph is captured from (default 100)
//   --warmup-ms N   before timing: 2000 calls, N ms of sleep (for a profiler
//                   to settle: it reads symbols as the program starts), 2000
//                   calls more (default 600)
//
// Prints one line on stdout: "graph_loop: key=value ...", calls being every
// call of the mode made (warmup included) and probed whether the runtime's
// and the driver's entry point of the mode carry a uprobe's int3 (x86 0xcc).

#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <vector>

#include <cuda_runtime_api.h>

__global__ void graph_bench_kernel(int n)
{
	if (n < 0)
		asm volatile("trap;");
}

struct options {
	bool graph = false, launch = false;
	long calls = 20000;
	int blocks = 5;
	int nodes = 100;
	long warmup_ms = 600;
};

static cudaKernel_t kernel;
static cudaStream_t stream;
static cudaGraphExec_t exec;
static long made;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void die(const char *what)
{
	fprintf(stderr, "graph_loop: %s failed\n", what);
	exit(1);
}

static cudaError_t launch_once(void)
{
	int n = 1;
	void *args[] = { &n };

	return cudaLaunchKernel((const void *)kernel, dim3(1), dim3(32), args, 0, stream);
}

// The graph: --nodes launches captured from the stream.
static void capture(int nodes)
{
	cudaGraph_t g;

	if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal) != cudaSuccess)
		die("cudaStreamBeginCapture");
	for (int i = 0; i < nodes; i++)
		if (launch_once() != cudaSuccess)
			die("a captured cudaLaunchKernel");
	if (cudaStreamEndCapture(stream, &g) != cudaSuccess)
		die("cudaStreamEndCapture");
	if (cudaGraphInstantiate(&exec, g, 0) != cudaSuccess)
		die("cudaGraphInstantiate");
	size_t n = 0;
	if (cudaGraphGetNodes(g, nullptr, &n) != cudaSuccess || n != (size_t)nodes)
		die("the captured graph's node count");
}

static void calls(const options &o, long n)
{
	for (long i = 0; i < n; i++) {
		cudaError_t err = o.graph ? cudaGraphLaunch(exec, stream) : launch_once();

		if (err != cudaSuccess)
			die(o.graph ? "cudaGraphLaunch" : "cudaLaunchKernel");
	}
	made += n;
}

// Whether the mode's runtime and driver entry points begin with an int3.
static void probed(const options &o, char out[3])
{
	const char *names[2][2] = {
		{ "libfakecudart.so", o.graph ? "cudaGraphLaunch" : "cudaLaunchKernel" },
		{ "libcuda.so.1", o.graph ? "cuGraphLaunch" : "cuLaunchKernel" },
	};

	for (int i = 0; i < 2; i++) {
		void *h = dlopen(names[i][0], RTLD_NOW | RTLD_NOLOAD);
		void *p = h ? dlsym(h, names[i][1]) : nullptr;

		out[i] = p && *(const volatile unsigned char *)p == 0xcc ? '1' : '0';
	}
	out[2] = '\0';
}

static void usage_exit(const char *what)
{
	fprintf(stderr, "graph_loop: %s\nusage: graph_loop --graph|--launch [--calls N] "
			"[--blocks N] [--nodes N] [--warmup-ms N]\n",
		what);
	exit(2);
}

static long parse_count(const char *opt, const char *arg)
{
	char *end;
	long v;

	if (!arg)
		usage_exit("missing value");
	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || *end || v < 0) {
		fprintf(stderr, "graph_loop: bad value for %s: '%s'\n", opt, arg);
		exit(2);
	}
	return v;
}

static options parse_options(int argc, char **argv)
{
	options o;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : nullptr;

		if (!strcmp(a, "--graph") || !strcmp(a, "--launch")) {
			(a[2] == 'g' ? o.graph : o.launch) = true;
			continue;
		}
		if (!strcmp(a, "--calls"))
			o.calls = parse_count(a, v);
		else if (!strcmp(a, "--blocks"))
			o.blocks = (int)parse_count(a, v);
		else if (!strcmp(a, "--nodes"))
			o.nodes = (int)parse_count(a, v);
		else if (!strcmp(a, "--warmup-ms"))
			o.warmup_ms = parse_count(a, v);
		else
			usage_exit("unknown or incomplete option");
		i++;
	}
	if (o.graph == o.launch)
		usage_exit("give one of --graph and --launch");
	if (o.blocks < 1 || o.calls < 1 || o.nodes < 1)
		usage_exit("--calls, --blocks and --nodes must be at least 1");
	return o;
}

int main(int argc, char **argv)
{
	options o = parse_options(argc, argv);
	std::vector<double> ns;
	struct timespec pause = { o.warmup_ms / 1000, (o.warmup_ms % 1000) * 1000000L };
	char probes[3];

	if (cudaStreamCreate(&stream) != cudaSuccess)
		die("cudaStreamCreate");
	if (cudaGetKernel(&kernel, (const void *)graph_bench_kernel) != cudaSuccess)
		die("cudaGetKernel");
	if (o.graph)
		capture(o.nodes);
	calls(o, 2000);
	while (nanosleep(&pause, &pause) && errno == EINTR)
		;
	calls(o, 2000);
	for (int b = 0; b < o.blocks; b++) {
		uint64_t t0 = now_ns();

		calls(o, o.calls);
		ns.push_back((double)(now_ns() - t0) / (double)o.calls);
	}
	std::sort(ns.begin(), ns.end());
	probed(o, probes);
	printf("graph_loop: mode=%s nodes=%d calls=%ld ns_per_call=%.1f probed=%s\n",
	       o.graph ? "graph" : "launch", o.graph ? o.nodes : 0, made, ns[ns.size() / 2], probes);
	return 0;
}
