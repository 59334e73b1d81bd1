// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of the one percentile rule (util/percentile.h): linear between
 * the closest ranks, against numpy's answers.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "util/percentile.h"

/* numpy.percentile's default (linear) on the same lists gives these. */
static void test_percentile_is_numpys(void **state)
{
	const double five[] = { 15, 20, 35, 40, 50 }, four[] = { 1, 2, 3, 4 }, one[] = { 7 };
	const uint64_t u[] = { 10, 20, 30 }, two[] = { 1, 2 };
	const int64_t neg[] = { -10, 0, 7 };
	struct { int pad; uint64_t dur; } rows[] = { { 0, 100 }, { 0, 200 }, { 0, 400 } };
	size_t lo;
	double frac;

	(void)state;
	assert_true(fabs(quantile_sorted(five, 5, 0.40) - 29.0) < 1e-9);
	assert_true(fabs(quantile_sorted(five, 5, 0.50) - 35.0) < 1e-9);
	assert_true(fabs(quantile_sorted(five, 5, 0.99) - 49.6) < 1e-9);
	assert_true(fabs(quantile_sorted(four, 4, 0.50) - 2.5) < 1e-9);
	assert_true(fabs(quantile_sorted(four, 4, 0.99) - 3.97) < 1e-9);
	assert_true(quantile_sorted(four, 4, 0) == 1 && quantile_sorted(four, 4, 1) == 4);
	assert_true(quantile_sorted(one, 1, 0.99) == 7);
	assert_true(isnan(quantile_sorted(four, 0, 0.5)));
	/* Integers round to the nearest, halves up: 29.8 -> 30, 1.5 -> 2. */
	assert_int_equal(quantile_sorted_u64(u, 3, 0.99), 30);
	assert_int_equal(quantile_sorted_u64(u, 3, 0.50), 20);
	assert_int_equal(quantile_sorted_u64(u, 3, 0.26), 15);
	assert_int_equal(quantile_sorted_u64(two, 2, 0.50), 2);
	assert_int_equal(quantile_sorted_u64(u, 0, 0.50), 0);
	assert_int_equal(quantile_sorted_i64(neg, 3, 0.25), -5);
	assert_int_equal(quantile_sorted_i64(neg, 3, 0.99), 7);
	assert_int_equal(quantile_sorted_u64_field(&rows[0].dur, 3, sizeof(rows[0]), 0.75), 300);
	/* Large values keep their nanoseconds: the step is interpolated, not the doubles. */
	const uint64_t big[] = { (1ull << 62) + 1, (1ull << 62) + 3 };
	assert_int_equal(quantile_sorted_u64(big, 2, 0.5), (1ull << 62) + 2);
	quantile_rank(5, 0.4, &lo, &frac);
	assert_int_equal(lo, 1);
	assert_true(fabs(frac - 0.6) < 1e-9);
	quantile_rank(5, 1, &lo, &frac);
	assert_int_equal(lo, 4);
	assert_true(frac == 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_percentile_is_numpys),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
