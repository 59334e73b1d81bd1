// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The engine's API as a daemon or compare would use it, on a real CUDA
 * workload (root): a process attached with a plan that records nothing until
 * a window is asked for (session__window), time slices standing in for steps,
 * a mode per cycle and a folder per cycle from hooks, and a detach at run time.
 * Hooks and session__target see the target's public view (its pid and rank);
 * traces are named by the host the session finds, or the one a test gives.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include <cmocka.h>
#include "core/steps/step_spec.h"
#include "core/session/session.h"
#include "util/clock.h"
#include "util/log.h"

struct seen {
	char dir[PATH_MAX];
	int cycles, steps, exited;
	struct cycle_info last;
	char path[PATH_MAX];	/* the last trace's: cycle_info's is the hook's to read only */
	enum window_mode mode_of_next;
	struct session_target last_target;	/* the view the last cycle_done hook was given */
};

static int hook_dir(void *ctx, const struct session_target *t, uint32_t k, char *buf, size_t len)
{
	struct seen *s = ctx;

	(void)t;
	snprintf(buf, len, "%s/w%u", s->dir, k);
	return 0;
}

static enum window_mode hook_mode(void *ctx, const struct session_target *t, uint32_t k)
{
	struct seen *s = ctx;

	(void)t;
	(void)k;
	return s->mode_of_next;
}

static void hook_cycle(void *ctx, const struct session_target *t, const struct cycle_info *ci)
{
	struct seen *s = ctx;

	s->cycles++;
	s->last = *ci;
	s->last_target = *t;
	snprintf(s->path, sizeof(s->path), "%s", ci->path ? ci->path : "");
}

static void hook_step(void *ctx, const struct session_target *t, const struct cycle_step_info *si)
{
	struct seen *s = ctx;

	(void)t;
	(void)si;
	s->steps++;
}

static void hook_exited(void *ctx, const struct session_target *t)
{
	struct seen *s = ctx;

	(void)t;
	s->exited++;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void remove_dir(const char *dir)
{
	nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/* The test workload, launching 9 times a step (every 20 ms), and stepping; RANK=rank. */
static pid_t start_workload(int iters, int rank)
{
	char exe[PATH_MAX], iters_s[16], rank_s[16];
	pid_t pid;

	snprintf(exe, sizeof(exe), "%s/.output/workloads/basic", getenv("CUPROBE_ROOT") ?: ".");
	snprintf(iters_s, sizeof(iters_s), "%d", iters);
	snprintf(rank_s, sizeof(rank_s), "%d", rank);
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, STDERR_FILENO);
		setenv("RANK", rank_s, 1);
		execl(exe, exe, "--steps", "--threads", "1", "--sleep-ms", "20", "--iters", iters_s,
		      (char *)NULL);
		_exit(127);
	}
	return pid;
}

/* Turns the crank until cond holds or ms pass; returns whether it held. */
#define RUN_UNTIL(s, cond, ms)                                                                  \
	({                                                                                      \
		uint64_t _end = clock_mono_ns() + (uint64_t)(ms) * 1000000;                     \
		while (!(cond) && clock_mono_ns() < _end) {                                     \
			session__dispatch(s);                                                   \
			usleep(10000);                                                          \
		}                                                                               \
		(cond);                                                                         \
	})

/* host: the traces' host name, NULL for the machine's own. */
static struct session *new_session(struct seen *seen, const struct target_plan *plan,
				   const char *host)
{
	struct session_opts o = {
		.host = host, .ringbuf_bytes = 1 << 20, .modes = 1u << MODE_BPF | 1u << MODE_OFF,
		.steps = plan->step != NULL, .plan = *plan,
	};
	struct session_hooks h = {
		.ctx = seen, .cycle_dir = hook_dir, .cycle_mode = hook_mode,
		.cycle_done = hook_cycle, .step_done = hook_step, .exited = hook_exited,
	};

	snprintf(seen->dir, sizeof(seen->dir), "/tmp/cuprobe-session.XXXXXX");
	assert_non_null(mkdtemp(seen->dir));
	return session__new(&o, &h);
}

/* An idle plan records nothing; a window asked for records warmup + active steps, once. */
static void test_window_on_demand(void **state)
{
	struct step_spec step = {};
	char err[128];
	struct target_plan plan = {
		.step = &step, .mode = MODE_BPF,
		/* Nothing until a window is asked for. */
		.sched = { .skip_first = UINT32_MAX, .active = 1 },
	};
	struct seen seen = { .mode_of_next = MODE_BPF };
	struct session_target v = { .pid = -1 };
	char prefix[64];
	struct session *s;
	pid_t pid;

	(void)state;
	assert_int_equal(step_spec__parse("cuprobe_step", &step, err, sizeof(err)), 0);
	s = new_session(&seen, &plan, "test");
	assert_non_null(s);
	pid = start_workload(60, 3);
	usleep(300000);
	assert_int_equal(session__target(s, pid, NULL), -ESRCH);
	assert_int_equal(session__attach(s, pid), 0);
	/* The public view: the pid, the rank from its environment, no agent mapped. */
	assert_int_equal(session__target(s, pid, &v), 0);
	assert_int_equal(v.pid, pid);
	assert_int_equal(v.rank, 3);
	assert_false(v.agent);
	assert_true(RUN_UNTIL(s, seen.steps >= 3, 3000));
	assert_int_equal(seen.cycles, 0);
	/* The window: a warmup step, then two active ones; the daemon asks for it per call. */
	assert_int_equal(session__window(s, pid, 1, 2, MODE_BPF), 0);
	assert_int_equal(session__window(s, pid, 1, 2, MODE_BPF), -EBUSY);
	assert_true(RUN_UNTIL(s, seen.cycles == 1, 3000));
	assert_int_equal(seen.last.mode, MODE_BPF);
	assert_non_null(seen.last.path);
	assert_int_equal(seen.last.last_step - seen.last.first_step, 1);
	assert_int_equal(seen.last.launches + seen.last.drops, 18);
	assert_int_equal(seen.last_target.pid, pid);
	assert_int_equal(seen.last_target.rank, 3);
	/* The trace is named by the host the test gave. */
	snprintf(prefix, sizeof(prefix), "test_%d.", (int)pid);
	assert_non_null(strrchr(seen.path, '/'));
	assert_memory_equal(strrchr(seen.path, '/') + 1, prefix, strlen(prefix));
	/* Then nothing more until another window. */
	assert_false(RUN_UNTIL(s, seen.cycles > 1, 300));
	assert_int_equal(session__window(s, pid, 1, 1, MODE_BPF), 0);
	assert_true(RUN_UNTIL(s, seen.cycles == 2, 3000));
	assert_int_equal(seen.last.launches + seen.last.drops, 9);
	/* A detach at run time: the target goes, the process runs on. */
	assert_int_equal(session__detach(s, pid), 0);
	assert_int_equal(seen.exited, 1);
	assert_true(RUN_UNTIL(s, session__target(s, pid, NULL) == -ESRCH, 1000));
	assert_int_equal(session__detach(s, pid), -ESRCH);
	assert_int_equal(kill(pid, 0), 0);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	assert_int_equal(session__finish(s), 0);
	session__free(s);
	step_spec__free(&step);
	remove_dir(seen.dir);
}

/* No step probe: 100 ms slices stand in for steps; an OFF window writes no trace. */
static void test_time_slices_and_modes(void **state)
{
	struct target_plan plan = {
		.slice_ns = 100 * 1000000ull, .mode = MODE_BPF,
		.sched = { .wait = 1, .warmup = 1, .active = 2, .repeat = 2 },
	};
	struct seen seen = { .mode_of_next = MODE_OFF };
	char host[200] = "", prefix[256];
	struct session *s;
	pid_t pid;

	(void)state;
	s = new_session(&seen, &plan, NULL);
	assert_non_null(s);
	pid = start_workload(100, 0);
	usleep(300000);
	assert_int_equal(session__attach(s, pid), 0);
	/* The first window in MODE_OFF: told, with no trace. */
	assert_true(RUN_UNTIL(s, seen.cycles == 1, 3000));
	assert_int_equal(seen.last.mode, MODE_OFF);
	assert_null(seen.last.path);
	seen.mode_of_next = MODE_BPF;
	assert_true(RUN_UNTIL(s, seen.cycles == 2, 3000));
	assert_int_equal(seen.last.mode, MODE_BPF);
	assert_non_null(seen.last.path);
	/* Two slices of 100 ms, a launch burst of 9 every ~20 ms: tens of launches. */
	assert_true(seen.last.launches >= 45);
	assert_int_equal(access(seen.path, R_OK), 0);
	/* No host given: the session names the trace by this machine's. */
	assert_int_equal(gethostname(host, sizeof(host) - 1), 0);
	snprintf(prefix, sizeof(prefix), "%s_%d.", host, (int)pid);
	assert_non_null(strrchr(seen.path, '/'));
	assert_memory_equal(strrchr(seen.path, '/') + 1, prefix, strlen(prefix));
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	RUN_UNTIL(s, seen.exited == 1, 1000);
	session__finish(s);
	session__free(s);
	remove_dir(seen.dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_window_on_demand),
		cmocka_unit_test(test_time_slices_and_modes),
	};

	log_level = LOG_WARN;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
