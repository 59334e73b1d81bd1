// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
//
// launch_loop: the launching program bench/run.sh measures. It calls the
// real libcudart's cudaLaunchKernel on a trivial kernel; without a driver
// each call fails in about 15 ns, after the uprobe on its entry has fired.
//
//   launch_loop [OPTIONS]
//   --launches N    launches per thread (tight mode), or per step (--steps)
//   --threads N     launching threads, tight mode only (default 1)
//   --blocks N      tight mode: thread 0 times N equal blocks of its
//                   launches and reports the median block (default 5)
//   --steps N       step mode: N steps of --launches launches, each step
//                   ended by cuprobe_step(); the median step is reported
//   --until-sigterm step mode without a count: steps until SIGTERM
//   --work-ns N     host work after each launch, as busy time (default 0)
//   --step-us N     watch mode: launch without pause and call cuprobe_step()
//                   every N us, --steps times; log step calls and the times
//                   the launch probes appear and disappear
//   --log FILE      step mode: "start_ns step_ns state" per step, state
//                   being what was attached as it began (1: the step probe,
//                   2: launch probes); watch mode: step calls, probe changes
//   --wait-probes   before the first timed launch, wait (up to 30 s) until
//                   the launch probes are in, then 200 ms more: for a
//                   loader attaching with -p
//   --children N    children mode: --rounds rounds of N children forked at
//                   once, each making --launches launches and exiting, the
//                   next round when all have (a DataLoader's workers, an
//                   epoch each); reports when the last one was reaped
//   --rounds N      children mode: the rounds (default 3)
//
// A uprobe is an int3 written over the first byte of the probed function in
// this process's copy of the code, so the program sees its own probes: it
// reads the first byte of each runtime launch entry point. This is what the
// watch mode times, and what the other modes report as probed=0|1.
//
// Prints one line on stdout: "launch_loop: key=value ...".

#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <vector>

// The step boundary `cuprobe record --step cuprobe_step` probes: a real
// function with a leading push (clobbering a callee-saved register forces a
// prologue), so its uprobe is emulated rather than single-stepped.
extern "C" __attribute__((noinline, used)) void cuprobe_step(void)
{
	asm volatile("" ::: "memory", "rbx");
}

__global__ void bench_kernel(int n)
{
	if (n < 0)
		asm volatile("trap;");
}

struct options {
	long launches = 100000;
	int threads = 1;
	int blocks = 5;
	long steps = 0;
	long work_ns = 0;
	long step_us = 0;
	const char *log = nullptr;
	bool wait_probes = false;
	bool until_sigterm = false;
	long children = 0;
	long rounds = 3;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static cudaError_t launch_once(void)
{
	int n = 1;
	void *args[] = { &n };

	return cudaLaunchKernel((const void *)bench_kernel, dim3(1), dim3(32), args, 0, nullptr);
}

// Host work that a real launch would cost, as busy time on this CPU.
static void busy(long ns)
{
	uint64_t end;

	if (ns <= 0)
		return;
	end = now_ns() + (uint64_t)ns;
	while (now_ns() < end)
		;
}

// The runtime's launch entry points, as cuprobe probes them.
static const char *const entry_names[] = {
	"cudaLaunchKernel",	   "cudaLaunchKernel_ptsz",	       "cudaLaunchKernelExC",
	"cudaLaunchKernelExC_ptsz", "cudaLaunchCooperativeKernel", "cudaLaunchCooperativeKernel_ptsz",
	"cudaGraphLaunch",	   "cudaGraphLaunch_ptsz",	       "cudaMemcpyAsync",
	"cudaMemcpyAsync_ptsz",	   "cudaMemsetAsync",		       "cudaMemsetAsync_ptsz",
};
static const volatile unsigned char *entries[sizeof(entry_names) / sizeof(entry_names[0])];
static size_t nentries;

static void find_entries(void)
{
	void *h = dlopen("libcudart.so.13", RTLD_NOW | RTLD_NOLOAD);

	if (!h) {
		fprintf(stderr, "launch_loop: libcudart.so.13 is not loaded: %s\n", dlerror());
		exit(1);
	}
	for (const char *name : entry_names) {
		void *p = dlsym(h, name);

		if (p)
			entries[nentries++] = (const volatile unsigned char *)p;
	}
}

// Whether any launch entry point carries a uprobe's int3 (x86's 0xcc).
static bool probed(void)
{
	for (size_t i = 0; i < nentries; i++)
		if (*entries[i] == 0xcc)
			return true;
	return false;
}

static void usage_exit(const char *what)
{
	fprintf(stderr,
		"launch_loop: %s\nusage: launch_loop [--launches N] [--threads N] [--blocks N] "
		"[--steps N] [--until-sigterm] [--work-ns N] [--step-us N] [--log FILE] "
		"[--wait-probes] [--children N] [--rounds N]\n",
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
		fprintf(stderr, "launch_loop: bad value for %s: '%s'\n", opt, arg);
		exit(2);
	}
	return v;
}

static struct options parse_options(int argc, char **argv)
{
	struct options o;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : nullptr;

		if (!strcmp(a, "--wait-probes")) {
			o.wait_probes = true;
			continue;
		}
		if (!strcmp(a, "--until-sigterm")) {
			o.until_sigterm = true;
			continue;
		}
		if (!v)
			usage_exit("unknown or incomplete option");
		if (!strcmp(a, "--launches"))
			o.launches = parse_count(a, v);
		else if (!strcmp(a, "--threads"))
			o.threads = (int)parse_count(a, v);
		else if (!strcmp(a, "--blocks"))
			o.blocks = (int)parse_count(a, v);
		else if (!strcmp(a, "--steps"))
			o.steps = parse_count(a, v);
		else if (!strcmp(a, "--work-ns"))
			o.work_ns = parse_count(a, v);
		else if (!strcmp(a, "--step-us"))
			o.step_us = parse_count(a, v);
		else if (!strcmp(a, "--log"))
			o.log = v;
		else if (!strcmp(a, "--children"))
			o.children = parse_count(a, v);
		else if (!strcmp(a, "--rounds"))
			o.rounds = parse_count(a, v);
		else
			usage_exit("unknown or incomplete option");
		i++;
	}
	if (o.threads < 1 || o.blocks < 1)
		usage_exit("--threads and --blocks must be at least 1");
	return o;
}

static void wait_for_probes(const struct options *o)
{
	struct timespec ms = { 0, 1000000 };

	for (int i = 0; o->wait_probes && !probed(); i++) {
		if (i == 30000) {
			fprintf(stderr, "launch_loop: no launch probe appeared in 30 s\n");
			exit(1);
		}
		nanosleep(&ms, nullptr);
	}
	/* The loader attaches its other probes right after: let it finish. */
	if (o->wait_probes) {
		struct timespec settle = { 0, 200000000 };

		nanosleep(&settle, nullptr);
	}
}

static FILE *open_log(const struct options *o)
{
	FILE *f = o->log ? fopen(o->log, "w") : nullptr;

	if (o->log && !f) {
		fprintf(stderr, "launch_loop: cannot create %s: %s\n", o->log, strerror(errno));
		exit(1);
	}
	return f;
}

static double median(std::vector<double> v)
{
	size_t n = v.size();

	if (!n)
		return 0;
	std::sort(v.begin(), v.end());
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Tight mode: every thread launches as fast as it can.
struct worker {
	const struct options *o;
	pthread_barrier_t *go;
	bool timed;
	std::vector<double> block_ns;	// per launch, for each block
};

static void *run_worker(void *arg)
{
	struct worker *w = (struct worker *)arg;
	long per_block = w->o->launches / w->o->blocks;

	pthread_barrier_wait(w->go);
	for (int b = 0; b < w->o->blocks; b++) {
		long n = b + 1 < w->o->blocks ? per_block : w->o->launches - per_block * b;
		uint64_t t0 = now_ns();

		for (long i = 0; i < n; i++) {
			launch_once();
			busy(w->o->work_ns);
		}
		if (w->timed && n)
			w->block_ns.push_back((double)(now_ns() - t0) / (double)n);
	}
	return nullptr;
}

static int tight(const struct options *o)
{
	std::vector<struct worker> workers(o->threads);
	std::vector<pthread_t> ids(o->threads);
	pthread_barrier_t go;
	bool before, after;
	uint64_t t0, t1;

	pthread_barrier_init(&go, nullptr, o->threads + 1);
	for (int t = 0; t < o->threads; t++) {
		workers[t] = { o, &go, t == 0, {} };
		if (pthread_create(&ids[t], nullptr, run_worker, &workers[t])) {
			fprintf(stderr, "launch_loop: cannot create thread %d\n", t);
			return 1;
		}
	}
	wait_for_probes(o);
	before = probed();
	t0 = now_ns();
	pthread_barrier_wait(&go);
	for (int t = 0; t < o->threads; t++)
		pthread_join(ids[t], nullptr);
	t1 = now_ns();
	after = probed();
	printf("launch_loop: mode=tight threads=%d launches=%ld ns_per_launch=%.1f "
	       "launches_per_s=%.0f probed=%d%d\n",
	       o->threads, o->launches * o->threads, median(workers[0].block_ns),
	       (double)o->launches * o->threads * 1e9 / (double)(t1 - t0), before, after);
	return 0;
}

// Step mode: a training loop whose steps are a fixed number of launches.
static volatile sig_atomic_t stop;

static void on_sigterm(int sig)
{
	(void)sig;
	stop = 1;
}

// What is attached as a step begins: 1 the step probe, 2 launch probes.
static int probe_state(void)
{
	return (*(const volatile unsigned char *)cuprobe_step == 0xcc) | probed() << 1;
}

struct step_rec {
	uint64_t start, ns;
	int state;
};

static int steps(const struct options *o)
{
	std::vector<struct step_rec> recs;
	std::vector<double> step_ns;
	struct sigaction sa = {};
	FILE *log = open_log(o);
	bool before;

	sa.sa_handler = on_sigterm;
	sigaction(SIGTERM, &sa, nullptr);
	recs.reserve(o->steps ? o->steps : 1 << 16);
	wait_for_probes(o);
	before = probed();
	for (long s = 0; o->steps ? s < o->steps : !stop; s++) {
		uint64_t t0 = now_ns();
		int state = probe_state();

		for (long i = 0; i < o->launches; i++) {
			launch_once();
			busy(o->work_ns);
		}
		cuprobe_step();
		recs.push_back({ t0, now_ns() - t0, state });
	}
	/* The first tenth settles caches and the loader; the rest is measured. */
	for (size_t s = recs.size() / 10; s < recs.size(); s++)
		step_ns.push_back((double)recs[s].ns);
	for (size_t s = 0; log && s < recs.size(); s++)
		fprintf(log, "%lu %lu %d\n", (unsigned long)recs[s].start, (unsigned long)recs[s].ns,
			recs[s].state);
	if (log)
		fclose(log);
	printf("launch_loop: mode=steps steps=%zu launches_per_step=%ld work_ns=%ld "
	       "median_step_ns=%.0f probed=%d%d\n",
	       recs.size(), o->launches, o->work_ns, median(step_ns), before, probed());
	return 0;
}

// Watch mode: steps by the clock, and when the launch probes come and go.
static int watch(const struct options *o)
{
	std::vector<uint64_t> calls, changes;
	std::vector<bool> states;
	uint64_t period = (uint64_t)o->step_us * 1000, next, t;
	FILE *log = open_log(o);
	bool state;

	calls.reserve(o->steps);
	wait_for_probes(o);
	state = probed();
	next = now_ns() + period;
	while ((long)calls.size() < o->steps) {
		launch_once();
		if (probed() != state) {
			state = !state;
			changes.push_back(now_ns());
			states.push_back(state);
		}
		t = now_ns();
		if (t >= next) {
			calls.push_back(t);
			cuprobe_step();
			next = t + period;
		}
	}
	for (size_t i = 0; log && i < calls.size(); i++)
		fprintf(log, "step %zu %lu\n", i + 1, (unsigned long)calls[i]);
	for (size_t i = 0; log && i < changes.size(); i++)
		fprintf(log, "probes %s %lu\n", states[i] ? "on" : "off", (unsigned long)changes[i]);
	if (log)
		fclose(log);
	printf("launch_loop: mode=watch steps=%ld step_us=%ld changes=%zu\n", o->steps,
	       o->step_us, changes.size());
	return 0;
}

// Children mode: rounds of short-lived children, each probed as a target of its own.
static int children(const struct options *o)
{
	uint64_t t0 = now_ns();

	for (long r = 0; r < o->rounds; r++) {
		for (long c = 0; c < o->children; c++) {
			pid_t pid = fork();

			if (pid < 0) {
				fprintf(stderr, "launch_loop: fork: %s\n", strerror(errno));
				return 1;
			}
			if (!pid) {
				for (long i = 0; i < o->launches; i++) {
					launch_once();
					busy(o->work_ns);
				}
				_exit(0);
			}
		}
		for (long c = 0; c < o->children; c++) {
			int status;

			if (wait(&status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status)) {
				fprintf(stderr, "launch_loop: a child failed\n");
				return 1;
			}
		}
	}
	uint64_t t1 = now_ns();

	printf("launch_loop: mode=children children=%ld rounds=%ld run_ns=%lu end_ns=%lu\n",
	       o->children, o->rounds, (unsigned long)(t1 - t0), (unsigned long)t1);
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	struct options o = parse_options(argc, argv);

	// The first call fails initialising the runtime: keep that out of the timing.
	launch_once();
	find_entries();
	if (o.children)
		return children(&o);
	if (o.step_us)
		return watch(&o);
	if (o.steps || o.until_sigterm)
		return steps(&o);
	return tight(&o);
}
