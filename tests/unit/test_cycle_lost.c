// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A cycle whose trace cannot be made (user/core/cycles/cycle_write.c): it is lost and
 * nothing else is. Its launches and steps are no error, the front-end hears
 * of it once with the cause and the path, and the next cycle is written as
 * soon as its folder can be made.
 */
#include <errno.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>
#include "core/cycles/proc_cycles.h"
#include "core/session/target.h"

struct seen {
	char root[64];
	struct cycle_info cycles[4];
	char paths[4][256], failed[4][256];
	size_t ncycles;
};

static enum window_mode cycle_mode(void *ctx, const struct target *t, uint32_t k)
{
	(void)ctx;
	(void)t;
	(void)k;
	return MODE_BPF;
}

/* Under a folder that is not there until the test makes it. */
static int cycle_dir(void *ctx, const struct target *t, uint32_t k, char *buf, size_t len)
{
	struct seen *s = ctx;

	(void)t;
	snprintf(buf, len, "%s/out/run_%u", s->root, k);
	return 0;
}

static void cycle_done(void *ctx, const struct target *t, const struct cycle_info *ci)
{
	struct seen *s = ctx;
	size_t n = s->ncycles++;

	(void)t;
	assert_true(n < 4);
	s->cycles[n] = *ci;
	snprintf(s->paths[n], sizeof(s->paths[0]), "%s", ci->path ? ci->path : "");
	snprintf(s->failed[n], sizeof(s->failed[0]), "%s", ci->failed_path ? ci->failed_path : "");
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void step(struct proc_cycles *pc, const struct schedule *sched, uint32_t n)
{
	struct step_event e = {
		.type = REC_STEP, .tgid = 4242, .tid = 4242, .step = n, .ts_ns = n * 1000ull,
		.phase = schedule_action(sched, n),
	};

	assert_int_equal(proc_cycles__step(pc, &e), 0);
}

static void launch(struct proc_cycles *pc, const struct schedule *sched, uint32_t n)
{
	struct launch_event e = {
		.type = REC_LAUNCH, .api = API_cudaLaunchKernel, .tgid = 4242, .tid = 4243,
		.ts_ns = n * 1000ull + 100, .func = 0x1000, .step = n,
		.phase = schedule_action(sched, n),
	};

	assert_int_equal(proc_cycles__launch(pc, &e, "kern", false, 0), 0);
}

static void test_lost_cycle_then_written(void **state)
{
	struct seen s = { .root = "/tmp/cuprobe-test-lost.XXXXXX" };
	struct cycle_env env = {
		.host = "testhost", .probe_ns = -1, .ctx = &s, .proc = target__cycle_proc,
		.cycle_mode = cycle_mode,
		.cycle_dir = cycle_dir, .cycle_done = cycle_done,
	};
	/* Steps 0, 2 warm up; 1 and 3 are cycles 0 and 1. */
	struct schedule sched = { .warmup = 1, .active = 1, .repeat = 2 };
	struct target t = { .pid = 4242, .rank = -1, .world_size = -1 };
	struct proc_cycles *pc;
	char out[128], *why;
	json_t *root;

	(void)state;
	assert_non_null(mkdtemp(s.root));
	pc = proc_cycles__new(&env, &t, 1000, &sched, CLOCK_STEPS);
	assert_non_null(pc);
	step(pc, &sched, 1);
	for (int i = 0; i < 3; i++)
		launch(pc, &sched, 1);
	step(pc, &sched, 2);
	assert_int_equal(proc_cycles__flush(pc, UINT64_MAX), 0);
	assert_int_equal(s.ncycles, 1);
	assert_int_equal(s.cycles[0].err, -ENOENT);
	assert_int_equal(s.cycles[0].launches, 3);
	assert_string_equal(s.paths[0], "");
	assert_non_null(strstr(s.failed[0], "/out/run_0"));

	/* The folder is back: the next cycle is written, whole. */
	snprintf(out, sizeof(out), "%s/out", s.root);
	assert_int_equal(mkdir(out, 0755), 0);
	step(pc, &sched, 3);
	launch(pc, &sched, 3);
	launch(pc, &sched, 3);
	step(pc, &sched, 4);
	assert_int_equal(proc_cycles__stop(pc, 5000, NULL), 0);
	assert_int_equal(s.ncycles, 2);
	assert_int_equal(s.cycles[1].err, 0);
	assert_int_equal(s.cycles[1].launches, 2);
	root = json_load_file(s.paths[1], 0, NULL);
	assert_non_null(root);
	json_decref(root);
	/* The lost cycle left no folder behind. */
	assert_int_equal(asprintf(&why, "%s/run_0", out) > 0, 1);
	assert_int_not_equal(access(why, F_OK), 0);
	free(why);
	proc_cycles__free(pc);
	nftw(s.root, rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lost_cycle_then_written),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
