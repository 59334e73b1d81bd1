// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The join of uprobe launches to CUPTI API records (user/correlate.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include "core/gpu/correlate.h"

#define RT_LAUNCH 211	/* cudaLaunchKernel */
#define RT_MEMCPY 41	/* cudaMemcpyAsync */
#define DRV_LAUNCH 307	/* cuLaunchKernel */

static struct corr_launch L(uint32_t tid, uint32_t cbid, uint32_t driver, uint64_t ts)
{
	return (struct corr_launch){ .tid = tid, .cbid = cbid, .driver = driver, .ts = ts };
}

static struct corr_api A(uint32_t tid, uint32_t cbid, uint32_t driver, uint32_t corr,
			 uint64_t start, uint64_t end)
{
	return (struct corr_api){ .tid = tid, .cbid = cbid, .driver = driver, .correlation = corr,
				  .start = start, .end = end };
}

/* The correlation found for the launch of (tid, ts) after sorting. */
static uint32_t corr_of(const struct corr_launch *l, size_t n, uint32_t tid, uint64_t ts)
{
	for (size_t i = 0; i < n; i++)
		if (l[i].tid == tid && l[i].ts == ts)
			return l[i].correlation;
	fail_msg("no launch of tid %u at %lu", tid, (unsigned long)ts);
	return 0;
}

static void test_each_launch_in_its_record(void **state)
{
	struct corr_launch l[] = { L(7, RT_LAUNCH, 0, 1000), L(7, RT_LAUNCH, 0, 3000),
				   L(7, RT_MEMCPY, 0, 2000) };
	struct corr_api a[] = { A(7, RT_LAUNCH, 0, 11, 1010, 1500), A(7, RT_MEMCPY, 0, 12, 2005, 2600),
				A(7, RT_LAUNCH, 0, 13, 3001, 3400) };
	struct corr_stats st;

	(void)state;
	assert_int_equal(correlate(l, 3, a, 3, 100, &st), 0);
	assert_int_equal(corr_of(l, 3, 7, 1000), 11);
	assert_int_equal(corr_of(l, 3, 7, 2000), 12);
	assert_int_equal(corr_of(l, 3, 7, 3000), 13);
	assert_int_equal(st.matched, 3);
	assert_int_equal(st.unmatched_launches, 0);
	assert_int_equal(st.unmatched_api, 0);
}

/* Threads interleave in time; each thread's launches find their own records. */
static void test_threads_are_separate(void **state)
{
	struct corr_launch l[] = { L(1, RT_LAUNCH, 0, 100), L(2, RT_LAUNCH, 0, 110),
				   L(1, RT_LAUNCH, 0, 200), L(2, RT_LAUNCH, 0, 205) };
	struct corr_api a[] = { A(2, RT_LAUNCH, 0, 22, 112, 190), A(1, RT_LAUNCH, 0, 11, 101, 150),
				A(2, RT_LAUNCH, 0, 24, 206, 260), A(1, RT_LAUNCH, 0, 13, 201, 240) };
	struct corr_stats st;

	(void)state;
	assert_int_equal(correlate(l, 4, a, 4, 50, &st), 0);
	assert_int_equal(corr_of(l, 4, 1, 100), 11);
	assert_int_equal(corr_of(l, 4, 1, 200), 13);
	assert_int_equal(corr_of(l, 4, 2, 110), 22);
	assert_int_equal(corr_of(l, 4, 2, 205), 24);
}

/* A runtime launch's nested driver record shares its id: one launch, not two. */
static void test_nested_driver_record_is_not_a_launch(void **state)
{
	struct corr_launch l[] = { L(5, RT_LAUNCH, 0, 1000), L(5, DRV_LAUNCH, 1, 5000) };
	struct corr_api a[] = { A(5, RT_LAUNCH, 0, 40, 1001, 2000), A(5, DRV_LAUNCH, 1, 40, 1100, 1900),
				A(5, DRV_LAUNCH, 1, 41, 5002, 5500) };
	struct corr_stats st;

	(void)state;
	assert_int_equal(correlate(l, 2, a, 3, 100, &st), 0);
	assert_int_equal(corr_of(l, 2, 5, 1000), 40);
	assert_int_equal(corr_of(l, 2, 5, 5000), 41);
	assert_int_equal(st.nested, 1);
	assert_int_equal(st.unmatched_api, 0);
	assert_int_equal(st.matched, 2);
}

/* Records from before the window (warmup) and launches CUPTI never saw are counted. */
static void test_unmatched_both_ways(void **state)
{
	struct corr_launch l[] = { L(3, RT_LAUNCH, 0, 1000), L(3, RT_LAUNCH, 0, 9000) };
	struct corr_api a[] = { A(3, RT_LAUNCH, 0, 1, 100, 200), A(3, RT_LAUNCH, 0, 2, 300, 400),
				A(3, RT_LAUNCH, 0, 3, 1002, 1100) };
	struct corr_stats st;

	(void)state;
	assert_int_equal(correlate(l, 2, a, 3, 100, &st), 0);
	assert_int_equal(corr_of(l, 2, 3, 1000), 3);
	assert_int_equal(corr_of(l, 2, 3, 9000), 0);
	assert_int_equal(st.matched, 1);
	assert_int_equal(st.unmatched_launches, 1);
	assert_int_equal(st.unmatched_api, 2);
}

/* A record that starts far after the launch is not its record. */
static void test_tolerance_bounds_the_gap(void **state)
{
	struct corr_launch l[] = { L(9, RT_LAUNCH, 0, 1000) };
	struct corr_api a[] = { A(9, RT_LAUNCH, 0, 77, 1500, 1600) };
	struct corr_stats st;

	(void)state;
	assert_int_equal(correlate(l, 1, a, 1, 100, &st), 0);
	assert_int_equal(l[0].correlation, 0);
	assert_int_equal(st.unmatched_launches, 1);
	assert_int_equal(correlate(l, 1, a, 1, 1000, &st), 0);
	assert_int_equal(l[0].correlation, 77);
}

/* Equal timestamps: per-thread order decides. */
static void test_order_decides_ties(void **state)
{
	struct corr_launch l[] = { L(4, RT_LAUNCH, 0, 500), L(4, RT_LAUNCH, 0, 500) };
	struct corr_api a[] = { A(4, RT_LAUNCH, 0, 8, 500, 500), A(4, RT_LAUNCH, 0, 9, 500, 500) };
	struct corr_stats st;

	(void)state;
	assert_int_equal(correlate(l, 2, a, 2, 10, &st), 0);
	assert_int_equal(st.matched, 2);
	assert_true(l[0].correlation != l[1].correlation);
	assert_true(l[0].correlation == 8 || l[0].correlation == 9);
}

static void test_empty_inputs(void **state)
{
	struct corr_stats st;

	(void)state;
	assert_int_equal(correlate(NULL, 0, NULL, 0, 10, &st), 0);
	assert_int_equal(st.matched, 0);
	assert_int_equal(st.unmatched_api, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_launch_in_its_record),
		cmocka_unit_test(test_threads_are_separate),
		cmocka_unit_test(test_nested_driver_record_is_not_a_launch),
		cmocka_unit_test(test_unmatched_both_ways),
		cmocka_unit_test(test_tolerance_bounds_the_gap),
		cmocka_unit_test(test_order_decides_ties),
		cmocka_unit_test(test_empty_inputs),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
