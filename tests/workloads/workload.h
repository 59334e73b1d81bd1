/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What every workload program shares: its options, the files that let a test
 * attach before the first launch, and the step symbol.
 *
 *   --iters N        iterations (per thread)
 *   --threads N      launching threads, where the workload has several
 *   --sleep-ms N     sleep between iterations
 *   --wait-file P    after setup, poll until P exists before the first launch
 *   --ready-file P   create P right before the first launch
 *   --steps          call cuprobe_step() at the end of every iteration
 *   --stop-file P    (basic) end, and write the ground truth, once P exists: at a step
 *                    boundary with --steps, all threads together
 *
 * Include it once per program: it defines cuprobe_step().
 */
#ifndef CUPROBE_WORKLOAD_H
#define CUPROBE_WORKLOAD_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct options {
	int iters;
	int threads;
	int sleep_ms;
	const char *wait_file;
	const char *ready_file;
	bool steps;
	const char *stop_file;
};

/*
 * The step boundary that `cuprobe record --step cuprobe_step` probes. It must
 * stay a real function with its own symbol: noinline keeps the calls, the asm
 * barrier keeps the compiler from treating it as free of side effects, and
 * `used` keeps the symbol even if no call remains. Clobbering a callee-saved
 * register gives it a prologue: at -O1 an empty function is a bare `ret`,
 * which a uprobe must single-step, while a leading push is emulated.
 */
#if defined(__x86_64__)
#define STEP_CLOBBER "rbx"
#elif defined(__aarch64__)
#define STEP_CLOBBER "x19"
#endif

/*
 * The same boundary as a USDT probe with a semaphore, for
 * `--step usdt:EXE:cuprobe_wl:step`: the site costs a test of the semaphore
 * until a tracer attaches, which raises it.
 */
#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>
extern "C" {
__attribute__((used, section(".probes"))) unsigned short cuprobe_wl_step_semaphore;
}

extern "C" __attribute__((noinline, used)) void cuprobe_step(void)
{
	asm volatile("" ::: "memory", STEP_CLOBBER);
	if (cuprobe_wl_step_semaphore)
		STAP_PROBE(cuprobe_wl, step);
}

static void usage_exit(const char *prog, const char *what)
{
	fprintf(stderr, "%s: %s\nusage: %s [--iters N] [--threads N] [--sleep-ms N] "
			"[--wait-file PATH] [--ready-file PATH] [--steps]\n",
		prog, what, prog);
	exit(2);
}

static int parse_count(const char *prog, const char *opt, const char *arg)
{
	char *end;
	long v;

	if (!arg)
		usage_exit(prog, "missing value");
	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || *end || v < 0 || v > 1000000) {
		fprintf(stderr, "%s: bad value for %s: '%s'\n", prog, opt, arg);
		exit(2);
	}
	return (int)v;
}

static struct options parse_options(int argc, char **argv, int iters, int threads, int sleep_ms)
{
	struct options o = { iters, threads, sleep_ms, NULL, NULL, false, NULL };

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(a, "--iters"))
			o.iters = parse_count(argv[0], a, next), i++;
		else if (!strcmp(a, "--threads"))
			o.threads = parse_count(argv[0], a, next), i++;
		else if (!strcmp(a, "--sleep-ms"))
			o.sleep_ms = parse_count(argv[0], a, next), i++;
		else if (!strcmp(a, "--wait-file") && next)
			o.wait_file = next, i++;
		else if (!strcmp(a, "--ready-file") && next)
			o.ready_file = next, i++;
		else if (!strcmp(a, "--steps"))
			o.steps = true;
		else if (!strcmp(a, "--stop-file") && next)
			o.stop_file = next, i++;
		else
			usage_exit(argv[0], "unknown or incomplete option");
	}
	if (o.threads < 1)
		o.threads = 1;
	return o;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	while (ms > 0 && nanosleep(&ts, &ts) && errno == EINTR)
		;
}

/* Called once, after setup: wait for the test, then tell it launching starts. */
static void wait_then_ready(const struct options *o)
{
	if (o->wait_file) {
		while (access(o->wait_file, F_OK))
			sleep_ms(5);
	}
	if (o->ready_file) {
		int fd = open(o->ready_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

		if (fd < 0) {
			fprintf(stderr, "cannot create %s: %s\n", o->ready_file, strerror(errno));
			exit(1);
		}
		close(fd);
	}
}

#endif /* CUPROBE_WORKLOAD_H */
