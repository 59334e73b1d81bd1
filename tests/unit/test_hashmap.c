// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of the hash table (util/hashmap.h): string keys, random adds,
 * sets and deletes against a plain array as reference with colliding
 * hashes, and iteration that visits every entry once.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "util/hashmap.h"

static void test_hashmap_string_keys(void **state)
{
	struct hmap *m = hmap__new(hmap_str_hash, hmap_str_equal, NULL);
	char key[32];
	long v, old_k, old_v;

	(void)state;
	assert_non_null(m);
	assert_false(hmap__find(m, (long)"missing", &v));
	assert_int_equal(hmap__add(m, (long)"alpha", 1), 0);
	assert_int_equal(hmap__add(m, (long)"beta", 2), 0);
	/* Another pointer to equal bytes is the same key. */
	strcpy(key, "alpha");
	assert_int_equal(hmap__add(m, (long)key, 9), -EEXIST);
	assert_true(hmap__find(m, (long)key, &v));
	assert_int_equal(v, 1);
	assert_int_equal(hmap__set(m, (long)key, 5, &old_k, &old_v), 0);
	assert_string_equal((const char *)old_k, "alpha");
	assert_int_equal(old_v, 1);
	assert_int_equal(hmap__set(m, (long)"gamma", 3, &old_k, &old_v), 0);
	assert_int_equal(old_k, 0);
	assert_int_equal(old_v, 0);
	assert_int_equal(hmap__size(m), 3);
	assert_true(hmap__find(m, (long)"alpha", &v));
	assert_int_equal(v, 5);
	assert_true(hmap__delete(m, (long)"beta", &old_k, &old_v));
	assert_int_equal(old_v, 2);
	assert_false(hmap__delete(m, (long)"beta", NULL, NULL));
	assert_false(hmap__find(m, (long)"beta", NULL));
	assert_int_equal(hmap__size(m), 2);
	hmap__clear(m);
	assert_int_equal(hmap__size(m), 0);
	assert_false(hmap__find(m, (long)"alpha", NULL));
	hmap__free(m);
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
	struct hmap *m = hmap__new(bad_hash, hmap_u64_equal, &buckets);
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
			assert_int_equal(hmap__add(m, key, op), ref[key] < 0 ? 0 : -EEXIST);
			n += ref[key] < 0;
			ref[key] = ref[key] < 0 ? op : ref[key];
		} else if (what == 1) {
			assert_int_equal(hmap__set(m, key, op, NULL, NULL), 0);
			n += ref[key] < 0;
			ref[key] = op;
		} else {
			assert_int_equal(hmap__delete(m, key, NULL, &v), ref[key] >= 0);
			if (ref[key] >= 0)
				assert_int_equal(v, ref[key]);
			n -= ref[key] >= 0;
			ref[key] = -1;
		}
		assert_int_equal(hmap__size(m), n);
	}
	for (long key = 0; key < KEYS; key++) {
		long v = -2;

		assert_int_equal(hmap__find(m, key, &v), ref[key] >= 0);
		if (ref[key] >= 0)
			assert_int_equal(v, ref[key]);
	}
	hmap__free(m);
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
	struct hmap *m = hmap__new(hmap_u64_hash, hmap_u64_equal, NULL);
	const struct hmap_entry *e;
	static bool seen[5000];
	size_t bkt, n = 0;

	(void)state;
	for (long k = 0; k < 5000; k++)
		assert_int_equal(hmap__add(m, k * 1000003, k), 0);
	hmap__for_each_entry(m, e, bkt) {
		assert_int_equal(e->key, e->value * 1000003);
		assert_false(seen[e->value]);
		seen[e->value] = true;
		n++;
	}
	assert_int_equal(n, 5000);
	hmap__free(m);
	/* An empty map: no entries, no table. */
	m = hmap__new(hmap_u64_hash, hmap_u64_equal, NULL);
	hmap__for_each_entry(m, e, bkt)
		fail();
	assert_false(hmap__find(m, 1, NULL));
	assert_false(hmap__delete(m, 1, NULL, NULL));
	hmap__free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hashmap_string_keys),
		cmocka_unit_test(test_hashmap_matches_reference),
		cmocka_unit_test(test_hashmap_iterates_every_entry_once),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
