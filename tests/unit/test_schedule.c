// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The schedule (include/schedule.h, the one definition the BPF step probe and
 * the loader share) against torch.profiler.schedule's algorithm as
 * REFERENCE.md gives it, written again here the way torch writes it: signed
 * steps and true (floating-point) division.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "core/schedule/schedule_parse.h"
#include "core/steps/step_find.h"
#include "core/steps/step_slices.h"
#include "core/steps/step_source.h"
#include "core/steps/step_spec.h"
#include "core/steps/step_torch.h"
#include "schedule.h"
#include "step.h"

static int torch_action(int skip_first, int skip_first_wait, int wait, int warmup, int active,
			int repeat, int step)
{
	int num_steps, mod_step;

	if (step < skip_first)
		return PHASE_NONE;
	step -= skip_first;
	if (skip_first_wait != 0)
		step += wait;
	num_steps = wait + warmup + active;
	if (repeat > 0 && (double)step / num_steps >= repeat)
		return PHASE_NONE;
	mod_step = step % num_steps;
	if (mod_step < wait)
		return PHASE_NONE;
	if (mod_step < wait + warmup)
		return PHASE_WARMUP;
	return mod_step < num_steps - 1 ? PHASE_RECORD : PHASE_RECORD_AND_SAVE;
}

/* Every schedule of a grid of small values (and a wait longer than a cycle of the others). */
#define GRID_N (4 * 2 * 5 * 3 * 3 * 4)

static void schedule_grid(struct schedule *out)
{
	static const unsigned int skips[] = { 0, 1, 3, 7 }, waits[] = { 0, 1, 2, 5, 40 },
				  warmups[] = { 0, 1, 3 }, actives[] = { 1, 2, 4 },
				  repeats[] = { 0, 1, 2, 3 };
	size_t n = 0;

	for (size_t a = 0; a < 4; a++)
	for (unsigned int sfw = 0; sfw <= 1; sfw++)
	for (size_t b = 0; b < 5; b++)
	for (size_t c = 0; c < 3; c++)
	for (size_t d = 0; d < 3; d++)
	for (size_t e = 0; e < 4; e++)
		out[n++] = (struct schedule){
			.skip_first = skips[a], .skip_first_wait = sfw, .wait = waits[b],
			.warmup = warmups[c], .active = actives[d], .repeat = repeats[e],
		};
	assert_int_equal(n, GRID_N);
}

#define SCHED_FMT "skip_first=%u skip_first_wait=%u wait=%u warmup=%u active=%u repeat=%u"
#define SCHED_ARGS(s) (s)->skip_first, (s)->skip_first_wait, (s)->wait, (s)->warmup, \
		      (s)->active, (s)->repeat

static void test_action_matches_torch_table(void **state)
{
	static struct schedule grid[GRID_N];
	int compared = 0;

	(void)state;
	schedule_grid(grid);
	for (size_t g = 0; g < GRID_N; g++) {
		const struct schedule *s = &grid[g];

		for (int step = 0; step <= 60; step++) {
			int want = torch_action((int)s->skip_first, (int)s->skip_first_wait,
						(int)s->wait, (int)s->warmup, (int)s->active,
						(int)s->repeat, step);

			if ((int)schedule_action(s, step) != want)
				fail_msg(SCHED_FMT " step %d: got %u, torch %d", SCHED_ARGS(s), step,
					 schedule_action(s, step), want);
			compared++;
		}
	}
	assert_int_equal(compared, GRID_N * 61);
}

/* schedule_to_window: the steps to the next step in a window, found by walking schedule_action. */
static void test_to_window_matches_walk(void **state)
{
	static struct schedule grid[GRID_N];
	const unsigned int horizon = 400;
	int compared = 0, none = 0, ahead = 0;

	(void)state;
	schedule_grid(grid);
	for (size_t g = 0; g < GRID_N; g++) {
		const struct schedule *s = &grid[g];

		for (unsigned int step = 0; step <= 120; step++) {
			unsigned long long want = ~0ull, got = schedule_to_window(s, step);

			for (unsigned int k = 0; k < horizon; k++)
				if (schedule_action(s, step + k) != PHASE_NONE) {
					want = k;
					break;
				}
			if (got != want)
				fail_msg(SCHED_FMT " step %u: %llu steps to a window, the walk says %llu",
					 SCHED_ARGS(s), step, got, want);
			none += want == ~0ull;
			ahead += want && want != ~0ull;
			compared++;
		}
	}
	assert_int_equal(compared, GRID_N * 121);
	/* Each answer was met: in a window, one ahead, and none (repeat done). */
	assert_int_equal(none, 104697);
	assert_int_equal(ahead, 37650);
	/* The loader's idle schedule (session_end_window) is far from any window. */
	struct schedule idle = { .skip_first = UINT32_MAX, .active = 1 };

	assert_true(schedule_to_window(&idle, 1000000) > 1000000000ull);
	assert_true(schedule_to_window(&(struct schedule){ 0 }, 5) == ~0ull);
}

/* REFERENCE.md's example, spelled out. */
static void test_reference_example(void **state)
{
	struct schedule s = { .wait = 1, .warmup = 1, .active = 2, .repeat = 2 };
	static const unsigned int want[] = {
		PHASE_NONE, PHASE_WARMUP, PHASE_RECORD, PHASE_RECORD_AND_SAVE,
		PHASE_NONE, PHASE_WARMUP, PHASE_RECORD, PHASE_RECORD_AND_SAVE,
		PHASE_NONE, PHASE_NONE, PHASE_NONE,
	};

	(void)state;
	for (unsigned int step = 0; step < sizeof(want) / sizeof(want[0]); step++)
		assert_int_equal(schedule_action(&s, step), want[step]);
	assert_int_equal(schedule_cycle(&s, 2), 0);
	assert_int_equal(schedule_cycle(&s, 3), 0);
	assert_int_equal(schedule_cycle(&s, 6), 1);
	assert_int_equal(schedule_cycle(&s, 7), 1);
}

/* Each recorded step's cycle is the count of RECORD_AND_SAVE steps before it. */
static void test_cycle_counts_saves(void **state)
{
	struct schedule s = { .skip_first = 2, .skip_first_wait = 1, .wait = 3, .warmup = 1,
			      .active = 2, .repeat = 0 };
	unsigned int saves = 0;

	(void)state;
	for (unsigned int step = 0; step < 200; step++) {
		unsigned int a = schedule_action(&s, step);

		if (phase_records(a))
			assert_int_equal(schedule_cycle(&s, step), saves);
		saves += a == PHASE_RECORD_AND_SAVE;
	}
	assert_true(saves > 20);
}

/* Without --schedule the loader uses one endless window: every step records, in cycle 0. */
static void test_no_schedule_records_everything(void **state)
{
	struct schedule s = { .active = UINT32_MAX };

	(void)state;
	for (unsigned int step = 0; step < 100000; step += 997) {
		assert_int_equal(schedule_action(&s, step), PHASE_RECORD);
		assert_int_equal(schedule_cycle(&s, step), 0);
	}
}

static void test_parse_full_and_defaults(void **state)
{
	struct schedule s;
	char err[256];

	(void)state;
	assert_int_equal(schedule_parse("skip_first=10,skip_first_wait=1,wait=5,warmup=1,"
					 "active=3,repeat=2", &s, err, sizeof(err)), 0);
	assert_int_equal(s.skip_first, 10);
	assert_int_equal(s.skip_first_wait, 1);
	assert_int_equal(s.wait, 5);
	assert_int_equal(s.warmup, 1);
	assert_int_equal(s.active, 3);
	assert_int_equal(s.repeat, 2);
	assert_int_equal(schedule_parse("active=2,warmup=0,wait=0", &s, err, sizeof(err)), 0);
	assert_int_equal(s.repeat, 0);
	assert_int_equal(s.skip_first, 0);
	assert_int_equal(s.active, 2);
}

static void expect_parse_error(const char *spec, const char *words)
{
	struct schedule s;
	char err[256] = "";

	assert_int_equal(schedule_parse(spec, &s, err, sizeof(err)), -EINVAL);
	if (!strstr(err, words))
		fail_msg("'%s': expected '%s' in '%s'", spec, words, err);
}

static void test_parse_errors(void **state)
{
	(void)state;
	expect_parse_error("wait=1,warmup=1,active=0", "active must be > 0");
	expect_parse_error("wait=1,warmup=1", "required");
	expect_parse_error("active=3", "required");
	expect_parse_error("wait=1,warmup=1,active=2,bogus=3", "unknown key 'bogus'");
	expect_parse_error("wait=1,warmup=-1,active=2", "whole number");
	expect_parse_error("wait=1,warmup=x,active=2", "whole number");
	/* The one grammar for a count (util/parse.h): plain digits, no sign, no leading zero. */
	expect_parse_error("wait=+1,warmup=1,active=2", "whole number");
	expect_parse_error("wait=01,warmup=1,active=2", "whole number");
	expect_parse_error("wait= 1,warmup=1,active=2", "whole number");
	expect_parse_error("wait,warmup=1,active=2", "not KEY=N");
	expect_parse_error("wait=1,warmup=1,active=2,skip_first_wait=2", "skip_first_wait is 0 or 1");
	expect_parse_error("wait=1,warmup=1,active=2,wait=3", "wait is given twice");
	expect_parse_error("active=2,wait=1,warmup=1,active=2", "active is given twice");
}

static void test_phase_names(void **state)
{
	(void)state;
	assert_string_equal(schedule_phase_name(PHASE_NONE), "NONE");
	assert_string_equal(schedule_phase_name(PHASE_WARMUP), "WARMUP");
	assert_string_equal(schedule_phase_name(PHASE_RECORD), "RECORD");
	assert_string_equal(schedule_phase_name(PHASE_RECORD_AND_SAVE), "RECORD_AND_SAVE");
}

static void test_step_spec_forms(void **state)
{
	struct step_spec s;
	char err[256];

	(void)state;
	assert_int_equal(step_spec__parse("train_step", &s, err, sizeof(err)), 0);
	assert_int_equal(s.kind, STEP_SYMBOL);
	assert_null(s.object);
	assert_string_equal(s.symbol, "train_step");
	assert_true(step_spec__wants_object(&s, "/any/lib.so"));
	step_spec__free(&s);

	assert_int_equal(step_spec__parse("libcudart:cudaDeviceSynchronize", &s, err, sizeof(err)), 0);
	assert_int_equal(s.kind, STEP_OBJECT_SYMBOL);
	assert_string_equal(s.object, "libcudart");
	assert_string_equal(s.symbol, "cudaDeviceSynchronize");
	assert_true(step_spec__wants_object(&s, "/usr/local/cuda/lib64/libcudart.so.13"));
	assert_false(step_spec__wants_object(&s, "/usr/lib/libcudart_static_x.so"));
	assert_false(step_spec__wants_object(&s, "/usr/lib/libcuda.so.1"));
	assert_string_equal(step_spec__str(&s), "libcudart:cudaDeviceSynchronize");
	step_spec__free(&s);

	assert_int_equal(step_spec__parse("usdt:/opt/train:train:step", &s, err, sizeof(err)), 0);
	assert_int_equal(s.kind, STEP_USDT);
	assert_string_equal(s.object, "/opt/train");
	assert_string_equal(s.provider, "train");
	assert_string_equal(s.symbol, "step");
	assert_string_equal(step_spec__str(&s), "usdt:/opt/train:train:step");
	step_spec__free(&s);

	/* torch: the end of each optimizer step's record_function range, in libtorch_cpu. */
	assert_int_equal(step_spec__parse("torch", &s, err, sizeof(err)), 0);
	assert_int_equal(s.kind, STEP_TORCH);
	assert_string_equal(s.symbol, "Optimizer.step#");
	assert_true(step_spec__wants_object(&s, "/venv/torch/lib/libtorch_cpu.so"));
	assert_false(step_spec__wants_object(&s, "/venv/torch/lib/libtorch_python.so"));
	assert_string_equal(step_spec__str(&s), "torch");
	step_spec__free(&s);

	/* torch:PREFIX: any other name; a colon belongs to the prefix. */
	assert_int_equal(step_spec__parse("torch:Optimizer.step#Adam", &s, err, sizeof(err)), 0);
	assert_int_equal(s.kind, STEP_TORCH);
	assert_string_equal(s.symbol, "Optimizer.step#Adam");
	assert_string_equal(step_spec__str(&s), "torch:Optimizer.step#Adam");
	step_spec__free(&s);
	assert_int_equal(step_spec__parse("torch:a::b", &s, err, sizeof(err)), 0);
	assert_string_equal(s.symbol, "a::b");
	step_spec__free(&s);
}

/*
 * torch's range entry: the first form found of step_torch_forms, whichever
 * the file has (2.15's C++11 std::string, 2.4's pre-C++11 one), with the exit.
 */
static void test_step_torch_pick(void **state)
{
	const struct step_torch_form *f;
	const char *names[2];
	uint64_t offs[2];

	(void)state;
	assert_int_equal(STEP_TORCH_SYMS, 3);
	f = step_torch_pick((uint64_t[]){ 0x10, 0x20, 0 }, offs, names);
	assert_non_null(f);
	assert_int_equal(f->string_abi, TORCH_STRING_CXX11);
	assert_true(offs[0] == 0x20 && offs[1] == 0x10);
	assert_string_equal(names[0], f->enter);
	assert_string_equal(names[1], step_torch_syms[0]);
	f = step_torch_pick((uint64_t[]){ 0x10, 0, 0x30 }, offs, names);
	assert_non_null(f);
	assert_int_equal(f->string_abi, TORCH_STRING_COW);
	assert_true(offs[0] == 0x30 && offs[1] == 0x10);
	assert_non_null(strstr(names[0], "record_function_enter_newERKSs"));
	/* No known entry: none picked, the exit still told apart. */
	assert_null(step_torch_pick((uint64_t[]){ 0x10, 0, 0 }, offs, names));
	assert_true(offs[0] == 0 && offs[1] == 0x10);
	assert_null(step_torch_pick((uint64_t[]){ 0, 0, 0 }, offs, names));
	assert_true(offs[0] == 0 && offs[1] == 0);
}

static void test_step_spec_errors(void **state)
{
	static const char *const bad[] = { "", ":sym", "lib:", "a:b:c", "usdt:obj:prov",
					   "usdt::p:n", "usdt:o::n", "usdt:o:p:", "usdt:o:p:n:x",
					   "torch:", /* 64 bytes: BPF compares at most 63 */
					   "torch:0123456789012345678901234567890123456789012345678901"
					   "234567890123" };
	struct step_spec s;
	char err[256];

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (step_spec__parse(bad[i], &s, err, sizeof(err)) != -EINVAL)
			fail_msg("'%s' was accepted", bad[i]);
	}
}

/* The step symbol and close matches, in the real libcudart. */
static void test_step_find_and_suggest(void **state)
{
	const char *cudart = "/usr/local/cuda/lib64/libcudart.so.13";
	struct step_suggest sg;
	struct step_sites sites;
	struct step_spec s;
	char err[256], close[512] = "";

	(void)state;
	assert_int_equal(step_spec__parse("libcudart:cudaDeviceSynchronize", &s, err, sizeof(err)), 0);
	assert_int_equal(step_spec__find(&s, cudart, &sites), 1);
	assert_int_equal(sites.n, 1);
	assert_true(sites.offsets[0] > 0);
	step_spec__free(&s);

	assert_int_equal(step_spec__parse("libcudart:cudaDeviceSynchronise", &s, err, sizeof(err)), 0);
	assert_int_equal(step_spec__find(&s, cudart, &sites), 0);
	step_spec__suggest_init(&s, &sg);
	step_spec__suggest(&s, cudart, &sg);
	step_spec__suggest_str(&sg, close, sizeof(close));
	if (strncmp(close, "cudaDeviceSynchronize", 21))
		fail_msg("the closest match is not first in '%s'", close);
	step_spec__free(&s);
}

/*
 * Close names only, each once over several objects, a few at most, closest
 * first; a list cut short ends with a whole name (it ended ", " before).
 */
static void test_step_suggest_close_only(void **state)
{
	static const char *const objs[][6] = {
		{ "main", "_init", "truncate", "train_stp", "Train_Step", "raise" },
		{ "_init", "train_step_impl", "rint", "train_stp", "lrintf", "step" },
	};
	struct step_suggest sg;
	struct step_spec s;
	char err[256], buf[512], small[24];

	(void)state;
	assert_int_equal(step_spec__parse("train_step", &s, err, sizeof(err)), 0);
	step_spec__suggest_init(&s, &sg);
	for (size_t o = 0; o < 2; o++)
		for (size_t i = 0; i < 6; i++)
			step_spec__consider(&sg, objs[o][i]);
	step_spec__suggest_str(&sg, buf, sizeof(buf));
	assert_string_equal(buf, "Train_Step, train_stp, train_step_impl");
	step_spec__suggest_str(&sg, small, sizeof(small));
	assert_string_equal(small, "Train_Step, train_stp");
	step_spec__free(&s);
}

/* Each kind's row: what callers ask instead of switching on the kind. */
static void test_step_source_rows(void **state)
{
	const char *const specs[] = { "train_step", "libtrain.so:step", "usdt:/opt/t:train:step",
				      "torch" };
	const struct step_source *src[4];
	struct step_spec s;
	char err[256];

	(void)state;
	for (int i = 0; i < 4; i++) {
		assert_int_equal(step_spec__parse(specs[i], &s, err, sizeof(err)), 0);
		src[i] = step_source(&s);
		assert_non_null(src[i]->find);
		step_spec__free(&s);
	}
	assert_true(src[0]->anywhere && src[0]->suggests && !src[0]->notes && !src[0]->walked);
	assert_true(!src[1]->anywhere && src[1]->suggests && !src[1]->notes);
	assert_true(src[2]->notes && src[2]->suggests && !src[2]->walked);
	assert_true(src[3]->walked && !src[3]->suggests && !src[3]->anywhere);
	assert_true(step_object_is(STEP_TORCH_LIB, "/venv/torch/lib/libtorch_cpu.so"));
	assert_false(step_object_is(STEP_TORCH_LIB, "/venv/torch/lib/libtorch_cuda.so"));
}

/* Time slices: ended by the clock, phased by the schedule from their base, restarted when late. */
static void test_step_slices(void **state)
{
	struct schedule sched = { .wait = 1, .active = 1 };
	struct step_slices sl = {};
	uint32_t phase;

	(void)state;
	step_slices__start(&sl, 100, 1000);
	assert_false(step_slices__due(&sl, 1099));
	assert_true(step_slices__due(&sl, 1100));
	assert_int_equal(step_slices__end(&sl, &sched, 1100, &phase), 1);
	assert_int_equal(phase, schedule_action(&sched, 1));
	assert_int_equal(sl.next, 1200);
	/* Late: the next slice is a whole one from now. */
	assert_int_equal(step_slices__end(&sl, &sched, 1500, &phase), 2);
	assert_int_equal(sl.next, 1600);
	assert_int_equal(step_slices__rebase(&sl), 3);
	assert_int_equal(step_slices__end(&sl, &sched, 1600, &phase), 3);
	assert_int_equal(phase, schedule_action(&sched, 0));
	sl = (struct step_slices){};
	assert_false(step_slices__due(&sl, UINT64_MAX));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_action_matches_torch_table),
		cmocka_unit_test(test_to_window_matches_walk),
		cmocka_unit_test(test_reference_example),
		cmocka_unit_test(test_cycle_counts_saves),
		cmocka_unit_test(test_no_schedule_records_everything),
		cmocka_unit_test(test_parse_full_and_defaults),
		cmocka_unit_test(test_parse_errors),
		cmocka_unit_test(test_phase_names),
		cmocka_unit_test(test_step_spec_forms),
		cmocka_unit_test(test_step_torch_pick),
		cmocka_unit_test(test_step_spec_errors),
		cmocka_unit_test(test_step_find_and_suggest),
		cmocka_unit_test(test_step_suggest_close_only),
		cmocka_unit_test(test_step_source_rows),
		cmocka_unit_test(test_step_slices),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
