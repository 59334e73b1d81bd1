// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of the growable array (util/vec.h): growth with new elements
 * zeroed, append, reserve, truncate and sort, and lower_bound over runs of
 * equal keys and at both ends.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>
#include "util/vec.h"

struct pair {
	int a;
	long b;
};

static int cmp_pair_desc(const void *x, const void *y)
{
	const struct pair *p = x, *q = y;

	return (p->a < q->a) - (p->a > q->a);
}

static void test_vec_push_grows_and_zeroes(void **state)
{
	struct vec v = VEC_INIT(struct pair);

	(void)state;
	for (int i = 0; i < 1000; i++) {
		struct pair *p = vec__push(&v);

		assert_non_null(p);
		assert_int_equal(p->a, 0);
		assert_int_equal(p->b, 0);
		p->a = i;
		p->b = -i;
	}
	assert_int_equal(v.len, 1000);
	assert_true(v.cap >= 1000);
	for (int i = 0; i < 1000; i++) {
		assert_int_equal(vec_at(&v, struct pair, i)->a, i);
		assert_int_equal(vec_at(&v, struct pair, i)->b, -i);
	}
	vec__free(&v);
	assert_int_equal(v.len, 0);
	assert_null(v.data);
	/* Usable again after free. */
	assert_non_null(vec__push(&v));
	assert_int_equal(v.elem_size, sizeof(struct pair));
	vec__free(&v);
}

static int cmp_key_int(const void *key, const void *elem)
{
	int k = *(const int *)key, e = *(const int *)elem;

	return (k > e) - (k < e);
}

/* The first element not below the key: runs of equal keys, and both ends. */
static void test_lower_bound(void **state)
{
	const int v[] = { 1, 3, 3, 3, 7, 9 };
	const int keys[] = { 0, 1, 2, 3, 4, 9, 10 };
	const size_t want[] = { 0, 0, 1, 1, 4, 5, 6 };

	(void)state;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		assert_int_equal(lower_bound(v, 6, sizeof(int), &keys[i], cmp_key_int), want[i]);
	assert_int_equal(lower_bound(v, 0, sizeof(int), &keys[3], cmp_key_int), 0);
}

static void test_vec_append_reserve_truncate_sort(void **state)
{
	const struct pair src[3] = { { 1, 10 }, { 3, 30 }, { 2, 20 } };
	struct vec v;

	(void)state;
	vec__init(&v, sizeof(struct pair));
	assert_int_equal(vec__append(&v, src, 0), 0);
	assert_int_equal(v.len, 0);
	assert_int_equal(vec__reserve(&v, 100), 0);
	assert_true(v.cap >= 100);
	assert_int_equal(v.len, 0);
	assert_int_equal(vec__append(&v, src, 3), 0);
	assert_int_equal(vec__append(&v, src, 3), 0);
	assert_int_equal(v.len, 6);
	assert_int_equal(vec_at(&v, struct pair, 4)->b, 30);
	vec__sort(&v, cmp_pair_desc);
	assert_int_equal(vec_at(&v, struct pair, 0)->a, 3);
	assert_int_equal(vec_at(&v, struct pair, 5)->a, 1);
	vec__truncate(&v, 2);
	assert_int_equal(v.len, 2);
	vec__truncate(&v, 5); /* never grows */
	assert_int_equal(v.len, 2);
	/* A size that cannot be allocated is refused, not wrapped around. */
	assert_int_equal(vec__reserve(&v, SIZE_MAX), -ENOMEM);
	assert_int_equal(vec__reserve(&v, SIZE_MAX / 4), -ENOMEM);
	assert_int_equal(v.len, 2);
	vec__free(&v);
	/* Sorting nothing is fine. */
	vec__sort(&v, cmp_pair_desc);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vec_push_grows_and_zeroes),
		cmocka_unit_test(test_vec_append_reserve_truncate_sort),
		cmocka_unit_test(test_lower_bound),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
