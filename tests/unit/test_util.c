// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/util/: the growable array and the hash table (against
 * a plain array as reference, with colliding hashes).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>
#include "util/hashmap.h"
#include "util/vec.h"

/* ---- vec ---- */

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

/* ---- hashmap ---- */

static void test_hashmap_string_keys(void **state)
{
	struct hashmap *m = hashmap__new(hashmap_str_hash, hashmap_str_equal, NULL);
	char key[32];
	long v, old_k, old_v;

	(void)state;
	assert_non_null(m);
	assert_false(hashmap__find(m, (long)"missing", &v));
	assert_int_equal(hashmap__add(m, (long)"alpha", 1), 0);
	assert_int_equal(hashmap__add(m, (long)"beta", 2), 0);
	/* Another pointer to equal bytes is the same key. */
	strcpy(key, "alpha");
	assert_int_equal(hashmap__add(m, (long)key, 9), -EEXIST);
	assert_true(hashmap__find(m, (long)key, &v));
	assert_int_equal(v, 1);
	assert_int_equal(hashmap__set(m, (long)key, 5, &old_k, &old_v), 0);
	assert_string_equal((const char *)old_k, "alpha");
	assert_int_equal(old_v, 1);
	assert_int_equal(hashmap__set(m, (long)"gamma", 3, &old_k, &old_v), 0);
	assert_int_equal(old_k, 0);
	assert_int_equal(old_v, 0);
	assert_int_equal(hashmap__size(m), 3);
	assert_true(hashmap__find(m, (long)"alpha", &v));
	assert_int_equal(v, 5);
	assert_true(hashmap__delete(m, (long)"beta", &old_k, &old_v));
	assert_int_equal(old_v, 2);
	assert_false(hashmap__delete(m, (long)"beta", NULL, NULL));
	assert_false(hashmap__find(m, (long)"beta", NULL));
	assert_int_equal(hashmap__size(m), 2);
	hashmap__clear(m);
	assert_int_equal(hashmap__size(m), 0);
	assert_false(hashmap__find(m, (long)"alpha", NULL));
	hashmap__free(m);
}

/* Few distinct hashes: long probe runs, runs that wrap, deletions that shift them. */
static size_t bad_hash(long key, void *ctx)
{
	return (size_t)key % *(const size_t *)ctx;
}

/* Random adds, sets and deletes, checked after each against a plain array. */
static void hashmap_against_reference(size_t buckets)
{
	enum { KEYS = 600, OPS = 20000 };
	struct hashmap *m = hashmap__new(bad_hash, hashmap_u64_equal, &buckets);
	long ref[KEYS];
	size_t n = 0;
	unsigned int seed = 7;

	assert_non_null(m);
	for (int i = 0; i < KEYS; i++)
		ref[i] = -1;
	for (int op = 0; op < OPS; op++) {
		long key = rand_r(&seed) % KEYS, v = -2;
		int what = rand_r(&seed) % 3;

		if (what == 0) {
			assert_int_equal(hashmap__add(m, key, op), ref[key] < 0 ? 0 : -EEXIST);
			n += ref[key] < 0;
			ref[key] = ref[key] < 0 ? op : ref[key];
		} else if (what == 1) {
			assert_int_equal(hashmap__set(m, key, op, NULL, NULL), 0);
			n += ref[key] < 0;
			ref[key] = op;
		} else {
			assert_int_equal(hashmap__delete(m, key, NULL, &v), ref[key] >= 0);
			if (ref[key] >= 0)
				assert_int_equal(v, ref[key]);
			n -= ref[key] >= 0;
			ref[key] = -1;
		}
		assert_int_equal(hashmap__size(m), n);
	}
	for (long key = 0; key < KEYS; key++) {
		long v = -2;

		assert_int_equal(hashmap__find(m, key, &v), ref[key] >= 0);
		if (ref[key] >= 0)
			assert_int_equal(v, ref[key]);
	}
	hashmap__free(m);
}

static void test_hashmap_matches_reference(void **state)
{
	(void)state;
	hashmap_against_reference(1);
	hashmap_against_reference(7);
	hashmap_against_reference(SIZE_MAX);
}

static void test_hashmap_iterates_every_entry_once(void **state)
{
	struct hashmap *m = hashmap__new(hashmap_u64_hash, hashmap_u64_equal, NULL);
	const struct hashmap_entry *e;
	static bool seen[5000];
	size_t bkt, n = 0;

	(void)state;
	for (long k = 0; k < 5000; k++)
		assert_int_equal(hashmap__add(m, k * 1000003, k), 0);
	hashmap__for_each_entry(m, e, bkt) {
		assert_int_equal(e->key, e->value * 1000003);
		assert_false(seen[e->value]);
		seen[e->value] = true;
		n++;
	}
	assert_int_equal(n, 5000);
	hashmap__free(m);
	/* An empty map: no entries, no table. */
	m = hashmap__new(hashmap_u64_hash, hashmap_u64_equal, NULL);
	hashmap__for_each_entry(m, e, bkt)
		fail();
	assert_false(hashmap__find(m, 1, NULL));
	assert_false(hashmap__delete(m, 1, NULL, NULL));
	hashmap__free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_vec_push_grows_and_zeroes),
		cmocka_unit_test(test_vec_append_reserve_truncate_sort),
		cmocka_unit_test(test_hashmap_string_keys),
		cmocka_unit_test(test_hashmap_matches_reference),
		cmocka_unit_test(test_hashmap_iterates_every_entry_once),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
