// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * compare's statistics and model on synthetic steps with known answers: the
 * quantiles, the bootstrap interval of the ratio and difference of medians,
 * the balanced rotation, mode names, and the model's figures per mode fed
 * through its hooks as the session would feed them.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "compare/compare_model.h"
#include "compare/compare_stats.h"

#define NEAR(a, b) assert_true(fabs((a) - (b)) < 1e-9)

static void test_quantiles(void **state)
{
	double x[101], one = 7;
	struct dist d;

	(void)state;
	/* 100, 99, ..., 0: unsorted on purpose. */
	for (int i = 0; i <= 100; i++)
		x[i] = 100 - i;
	assert_int_equal(dist__of(x, 101, &d), 0);
	assert_int_equal(d.n, 101);
	NEAR(d.median, 50);
	NEAR(d.p25, 25);
	NEAR(d.p75, 75);
	NEAR(d.p95, 95);
	NEAR(d.min, 0);
	NEAR(d.max, 100);
	NEAR(d.mean, 50);
	/* The sample standard deviation of 0..100: sqrt(sum (i-50)^2 / 100) = sqrt(858.5). */
	NEAR(d.stddev, sqrt(858.5));
	/* The input is left as it was. */
	NEAR(x[0], 100);
	/* Linear interpolation between the two middle values (numpy's default). */
	double four[] = { 4, 1, 3, 2 };
	assert_int_equal(dist__of(four, 4, &d), 0);
	NEAR(d.median, 2.5);
	NEAR(d.p95, 3.85);
	assert_int_equal(dist__of(&one, 1, &d), 0);
	NEAR(d.median, 7);
	NEAR(d.stddev, 0);
	assert_int_equal(dist__of(x, 0, &d), -EINVAL);
	assert_true(isnan(quantile_sorted(x, 0, 0.5)));
}

/* Constant samples: the ratio, the difference and their intervals are exact. */
static void test_ratio_constant(void **state)
{
	double a[20], b[30];
	struct median_cmp m;

	(void)state;
	for (int i = 0; i < 20; i++)
		a[i] = 10e6;
	for (int i = 0; i < 30; i++)
		b[i] = 12e6;
	assert_int_equal(median_cmp__of(a, 20, b, 30, 0.95, 500, 1, &m), 0);
	assert_true(m.has_ci);
	NEAR(m.ratio, 1.2);
	NEAR(m.ratio_lo, 1.2);
	NEAR(m.ratio_hi, 1.2);
	NEAR(m.diff, 2e6);
	NEAR(m.diff_lo, 2e6);
	NEAR(m.diff_hi, 2e6);
}

/*
 * Spread samples whose medians are 100 and 150: the interval holds the
 * point figure, lies within the samples' range, is the same for the same
 * seed, and does not hold 1 (the two do differ).
 */
static void test_ratio_spread(void **state)
{
	double a[41], b[41];
	struct median_cmp m, again;

	(void)state;
	for (int i = 0; i < 41; i++) {
		a[i] = 80 + i;	/* 80..120, median 100 */
		b[i] = 130 + i;	/* 130..170, median 150 */
	}
	assert_int_equal(median_cmp__of(a, 41, b, 41, 0.95, 2000, 42, &m), 0);
	NEAR(m.ratio, 1.5);
	NEAR(m.diff, 50);
	assert_true(m.ratio_lo <= 1.5 && 1.5 <= m.ratio_hi);
	assert_true(m.ratio_lo > 130.0 / 120 && m.ratio_hi < 170.0 / 80);
	assert_true(m.ratio_lo > 1);
	assert_true(m.diff_lo <= 50 && 50 <= m.diff_hi && m.diff_lo > 0);
	assert_int_equal(median_cmp__of(a, 41, b, 41, 0.95, 2000, 42, &again), 0);
	NEAR(again.ratio_lo, m.ratio_lo);
	NEAR(again.ratio_hi, m.ratio_hi);
	/* The same sample against itself: the interval holds 1 and 0. */
	assert_int_equal(median_cmp__of(a, 41, a, 41, 0.95, 2000, 7, &m), 0);
	assert_true(m.ratio_lo <= 1 && 1 <= m.ratio_hi && m.ratio_lo < 1 && m.ratio_hi > 1);
	assert_true(m.diff_lo < 0 && m.diff_hi > 0);
}

/* Fewer than COMPARE_MIN_CI_SAMPLES: point figures only; bad input refused. */
static void test_ratio_too_few(void **state)
{
	double a[] = { 10, 10, 10, 10 }, b[] = { 11, 11, 11, 11, 11, 11 }, z[] = { 0, 0, 0 };
	struct median_cmp m;

	(void)state;
	assert_int_equal(median_cmp__of(a, 4, b, 6, 0.95, 100, 1, &m), 0);
	assert_false(m.has_ci);
	NEAR(m.ratio, 1.1);
	assert_int_equal(median_cmp__of(a, 0, b, 6, 0.95, 100, 1, &m), -EINVAL);
	assert_int_equal(median_cmp__of(z, 3, b, 6, 0.95, 100, 1, &m), -EINVAL);
	assert_int_equal(median_cmp__of(a, 4, b, 6, 1.5, 100, 1, &m), -EINVAL);
}

static void test_order(void **state)
{
	enum window_mode modes[] = { MODE_OFF, MODE_BPF, MODE_CUPTI };
	enum window_mode want[] = { MODE_OFF, MODE_BPF, MODE_CUPTI, MODE_CUPTI, MODE_BPF,
				    MODE_OFF, MODE_OFF, MODE_BPF, MODE_CUPTI };
	enum window_mode out[9];

	(void)state;
	assert_int_equal(compare_order(modes, 3, 3, out), 9);
	assert_memory_equal(out, want, sizeof(want));
	assert_int_equal(compare_order(modes, 3, 1, out), 3);
	assert_memory_equal(out, want, 3 * sizeof(*out));
	/* Over each pair of rounds, each mode's mean position is the same: drift cancels. */
	assert_int_equal(compare_order(modes, 3, 2, out), 6);
	for (int m = 0; m < 3; m++) {
		int pos = 0;

		for (int k = 0; k < 6; k++)
			pos += out[k] == modes[m] ? k : 0;
		assert_int_equal(pos, 5);
	}
	assert_int_equal(compare_mode_parse("latency"), MODE_LATENCY);
	assert_int_equal(compare_mode_parse("cupti"), MODE_CUPTI);
	assert_int_equal(compare_mode_parse("Off"), -1);
	assert_string_equal(compare_mode_name(MODE_BPF), "bpf");
}

static void feed_window(struct compare *c, uint32_t k, enum window_mode mode, uint64_t *t,
			uint64_t step_ns)
{
	uint32_t steps = c->cfg.steps_per_mode;
	struct cycle_info ci = {
		.k = k, .mode = mode, .launches = mode == MODE_OFF ? 0 : 9 * steps,
		.hits = mode == MODE_OFF ? 0 : 10 * steps,
		.first_step = 100 * k + 1, .last_step = 100 * k + steps,
	};

	for (uint32_t i = 0; i <= steps; i++) {
		struct cycle_step_info si = {
			.step = 100 * k + i, .phase = i ? PHASE_RECORD : PHASE_WARMUP, .cycle = k,
			.mode = mode, .start_mono = *t, .end_mono = *t + step_ns,
		};

		assert_int_equal(compare__step(c, 42, &si), 0);
		*t += step_ns;
	}
	assert_int_equal(compare__window(c, 42, &ci, true), 0);
}

/* The model fed as the session would: figures per mode, and what it says it could not measure. */
static void test_model(void **state)
{
	struct compare_config cfg = {
		.modes = { MODE_OFF, MODE_BPF }, .nmodes = 2, .rounds = 2, .steps_per_mode = 5,
		.step = "cuprobe_step",
	};
	struct compare c;
	uint64_t t = 1000;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	(void)state;
	compare__init(&c, &cfg);
	assert_int_equal(c.norder, 4);
	assert_int_equal(compare__mode_index(&c, 3), 1); /* the second off window */
	assert_int_equal(compare__mode_index(&c, 2), 1); /* the second bpf window */
	for (uint32_t k = 0; k < 3; k++) {
		feed_window(&c, k, c.order[k], &t, c.order[k] == MODE_OFF ? 10000000 : 11000000);
		assert_false(compare__complete(&c));
	}
	feed_window(&c, 3, c.order[3], &t, 10000000);
	assert_true(compare__complete(&c));
	assert_int_equal(compare__analyse(&c), 0);
	assert_int_equal(c.res[MODE_OFF].steps, 10);
	assert_int_equal(c.res[MODE_BPF].steps, 10);
	NEAR(c.res[MODE_OFF].step_ns.median, 10e6);
	NEAR(c.res[MODE_BPF].vs_off.ratio, 1.1);
	assert_true(c.res[MODE_BPF].vs_off.has_ci);
	NEAR(c.res[MODE_BPF].launches_per_step, 9);
	NEAR(c.res[MODE_BPF].hits_per_step, 10);
	assert_int_equal(c.res[MODE_BPF].launches, 90);
	/* No traces here: the probe cost is unknown, so whether it explains is not said. */
	assert_int_equal(c.res[MODE_BPF].explained, -1);
	f = open_memstream(&buf, &len);
	compare__write_text(&c, f);
	fclose(f);
	assert_non_null(strstr(buf, "1.100 [1.100, 1.100]"));
	free(buf);
	compare__free(&c);
}

/* A run that ended early and had one round: each is said. */
static void test_model_notes(void **state)
{
	struct compare_config cfg = {
		.modes = { MODE_OFF, MODE_BPF, MODE_LATENCY }, .nmodes = 3, .rounds = 1,
		.steps_per_mode = 2, .step = "cuprobe_step",
	};
	struct compare c;
	uint64_t t = 1000;
	bool one_round = false, never = false, few = false;

	(void)state;
	compare__init(&c, &cfg);
	feed_window(&c, 0, MODE_OFF, &t, 10000000);
	feed_window(&c, 1, MODE_BPF, &t, 10000000);
	assert_int_equal(compare__analyse(&c), 0);
	for (size_t i = 0; i < c.notes.len; i++) {
		const char *n = *vec_at(&c.notes, char *, i);

		one_round |= strstr(n, "one round") != NULL;
		never |= strstr(n, "latency: never ran") != NULL;
		few |= strstr(n, "too few steps for a confidence interval") != NULL;
	}
	assert_true(one_round);
	assert_true(never);
	assert_true(few);
	assert_false(c.res[MODE_BPF].vs_off.has_ci);
	compare__free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_quantiles),     cmocka_unit_test(test_ratio_constant),
		cmocka_unit_test(test_ratio_spread),  cmocka_unit_test(test_ratio_too_few),
		cmocka_unit_test(test_order),	      cmocka_unit_test(test_model),
		cmocka_unit_test(test_model_notes),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
