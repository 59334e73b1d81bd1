// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/util/: the growable array, the hash table (against a
 * plain array as reference, with colliding hashes), the JSON writer (against
 * jansson's output where the two must agree byte for byte) and the safe file
 * writer (with links, FIFOs, devices and sockets planted where it writes),
 * and the one percentile rule (against numpy's answers).
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
#include "util/json_writer.h"
#include "util/percentile.h"
#include "util/safe_file.h"
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

/* ---- hashmap ---- */

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

/* ---- json_writer ---- */

struct mem_out {
	FILE *f;
	char *buf;
	size_t len;
	struct json_writer *w;
};

static void mem_open(struct mem_out *o)
{
	o->buf = NULL;
	o->len = 0;
	o->f = open_memstream(&o->buf, &o->len);
	assert_non_null(o->f);
	o->w = json_writer__new(o->f);
	assert_non_null(o->w);
}

/* The text written; the caller frees it. */
static char *mem_close(struct mem_out *o)
{
	assert_int_equal(json_writer__flush(o->w), 0);
	json_writer__free(o->w);
	assert_int_equal(fclose(o->f), 0);
	return o->buf;
}

static void assert_written(struct mem_out *o, const char *want)
{
	char *got = mem_close(o);

	assert_string_equal(got, want);
	free(got);
}

static void test_json_writer_compact(void **state)
{
	struct mem_out o;
	struct json_writer *w;

	(void)state;
	mem_open(&o);
	w = o.w;
	json_writer__start_object(w);
	json_writer__name(w, "a");
	json_writer__u64(w, UINT64_MAX);
	json_writer__name(w, "b");
	json_writer__start_array(w);
	json_writer__i64(w, INT64_MIN);
	json_writer__i64(w, 0);
	json_writer__bool(w, true);
	json_writer__null(w);
	json_writer__string(w, NULL);
	json_writer__start_object(w);
	json_writer__end_object(w);
	json_writer__start_array(w);
	json_writer__end_array(w);
	json_writer__end_array(w);
	json_writer__name(w, "c\"d");
	json_writer__raw(w, "{\"x\": 1}", 8);
	json_writer__end_object(w);
	assert_int_equal(json_writer__error(w), 0);
	assert_written(&o, "{\"a\": 18446744073709551615, \"b\": [-9223372036854775808, 0, true, "
			   "null, null, {}, []], \"c\\\"d\": {\"x\": 1}}");
}

/* cuprobe's trace layout: top-level keys a line each, events a line each, events compact. */
static void test_json_writer_lines(void **state)
{
	struct mem_out o;
	struct json_writer *w;

	(void)state;
	mem_open(&o);
	w = o.w;
	json_writer__lines(w, 1);
	json_writer__start_object(w);
	json_writer__name(w, "deviceProperties");
	json_writer__start_array(w);
	json_writer__end_array(w);
	json_writer__name(w, "traceEvents");
	json_writer__lines(w, 2);
	json_writer__start_array(w);
	for (int i = 0; i < 2; i++) {
		json_writer__start_object(w);
		json_writer__name(w, "ts");
		json_writer__fixed(w, 1234567 * (i ? -1 : 1), 3);
		json_writer__name(w, "grid");
		json_writer__start_array(w);
		json_writer__u64(w, 2);
		json_writer__u64(w, 1);
		json_writer__end_array(w);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
	json_writer__name(w, "cuprobe");
	json_writer__start_object(w);
	json_writer__name(w, "v");
	json_writer__double(w, 0.5, 6);
	json_writer__end_object(w);
	json_writer__end_object(w);
	assert_written(&o, "{\n"
			   " \"deviceProperties\": [],\n"
			   " \"traceEvents\": [\n"
			   "  {\"ts\": 1234.567, \"grid\": [2, 1]},\n"
			   "  {\"ts\": -1234.567, \"grid\": [2, 1]}\n"
			   " ],\n"
			   " \"cuprobe\": {\"v\": 0.500000}\n"
			   "}");
}

static void test_json_writer_fixed(void **state)
{
	static const struct {
		int64_t v;
		unsigned int decimals;
		const char *want;
	} cases[] = {
		{ 1234567, 3, "1234.567" }, { -250, 3, "-0.250" }, { 0, 3, "0.000" },
		{ 5, 0, "5" },		    { -5, 1, "-0.5" },	   { 3600000000123, 3, "3600000000.123" },
		{ INT64_MIN, 3, "-9223372036854775.808" },	   { INT64_MAX, 0, "9223372036854775807" },
		{ 7, 18, "0.000000000000000007" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct mem_out o;

		mem_open(&o);
		json_writer__fixed(o.w, cases[i].v, cases[i].decimals);
		assert_written(&o, cases[i].want);
	}
}

/* The doubles that --format json writes: jansson's %.17g, byte for byte. */
static void test_json_writer_double_sig_matches_jansson(void **state)
{
	double values[64] = { 0.0, -0.0, 1.0, 5.0, 30.0, 100.0, 1e16, 1e17, 1e20, 1e-5, 1.5e-7,
			      0.1, 1.0 / 3, 2.0 / 3 * 1e-300, 1e300, -42.125, 123456789.0,
			      5666.666666666667, 1024.0, 1.7976931348623157e308,
			      4.9406564584124654e-324 };
	unsigned int seed = 3;
	size_t n = 21;

	(void)state;
	while (n < sizeof(values) / sizeof(values[0])) {
		double r = (double)rand_r(&seed) / RAND_MAX;

		values[n++] = r * pow(10, rand_r(&seed) % 40 - 20) * (rand_r(&seed) % 2 ? 1 : -1);
	}
	for (size_t i = 0; i < n; i++) {
		json_t *j = json_real(values[i]);
		char *want = json_dumps(j, JSON_ENCODE_ANY);
		struct mem_out o;

		mem_open(&o);
		json_writer__double_sig(o.w, values[i], 17);
		assert_written(&o, want);
		free(want);
		json_decref(j);
	}
}

static void test_json_writer_double(void **state)
{
	const double big = 1.7976931348623157e308;
	char want[512];
	struct mem_out o;

	(void)state;
	mem_open(&o);
	json_writer__start_array(o.w);
	json_writer__double(o.w, 1340.0, 1);
	json_writer__double(o.w, 2.5, 0);
	json_writer__double(o.w, 0.0536, 6);
	json_writer__double(o.w, 1.024, 3);
	json_writer__double(o.w, NAN, 3);
	json_writer__double(o.w, INFINITY, 3);
	json_writer__double_sig(o.w, -INFINITY, 17);
	json_writer__end_array(o.w);
	/* %.0f rounds half to even, as the trace's probe_cost_ns always did. */
	assert_written(&o, "[1340.0, 2, 0.053600, 1.024, null, null, null]");

	/* The longest a double gets. */
	mem_open(&o);
	json_writer__double(o.w, -big, 17);
	snprintf(want, sizeof(want), "%.17f", -big);
	assert_written(&o, want);
}

/* One document written by the writer pretty and by jansson with JSON_INDENT(2). */
static void test_json_writer_pretty_matches_jansson(void **state)
{
	json_t *doc = json_pack("{s:i, s:[], s:{}, s:[{s:s, s:f, s:n}, {s:[i, i]}], s:{s:b, s:o}}",
				"schema_version", 1, "empty", "none", "rows", "name", "k<1, 2>",
				"share", 30.0, "rate", "two", 1, 2, "o", "p", 1, "q",
				json_pack("[[], {s:i}]", "r", 3));
	char *want = json_dumps(doc, JSON_INDENT(2));
	struct json_writer *w;
	struct mem_out o;

	(void)state;
	assert_non_null(want);
	mem_open(&o);
	w = o.w;
	json_writer__pretty(w, 2);
	json_writer__start_object(w);
	json_writer__name(w, "schema_version");
	json_writer__i64(w, 1);
	json_writer__name(w, "empty");
	json_writer__start_array(w);
	json_writer__end_array(w);
	json_writer__name(w, "none");
	json_writer__start_object(w);
	json_writer__end_object(w);
	json_writer__name(w, "rows");
	json_writer__start_array(w);
	json_writer__start_object(w);
	json_writer__name(w, "name");
	json_writer__string(w, "k<1, 2>");
	json_writer__name(w, "share");
	json_writer__double_sig(w, 30.0, 17);
	json_writer__name(w, "rate");
	json_writer__null(w);
	json_writer__end_object(w);
	json_writer__start_object(w);
	json_writer__name(w, "two");
	json_writer__start_array(w);
	json_writer__i64(w, 1);
	json_writer__i64(w, 2);
	json_writer__end_array(w);
	json_writer__end_object(w);
	json_writer__end_array(w);
	json_writer__name(w, "o");
	json_writer__start_object(w);
	json_writer__name(w, "p");
	json_writer__bool(w, true);
	json_writer__name(w, "q");
	json_writer__start_array(w);
	json_writer__start_array(w);
	json_writer__end_array(w);
	json_writer__start_object(w);
	json_writer__name(w, "r");
	json_writer__i64(w, 3);
	json_writer__end_object(w);
	json_writer__end_array(w);
	json_writer__end_object(w);
	json_writer__end_object(w);
	assert_written(&o, want);
	free(want);
	json_decref(doc);
}

/* A string through the writer, returned as written. */
static char *json_str(const char *s)
{
	struct mem_out o;

	mem_open(&o);
	json_writer__string(o.w, s);
	return mem_close(&o);
}

static void assert_json_str(const char *in, const char *want)
{
	char *out = json_str(in);

	assert_string_equal(out, want);
	free(out);
}

static void test_json_writer_escapes(void **state)
{
	(void)state;
	assert_json_str("", "\"\"");
	assert_json_str("plain text", "\"plain text\"");
	assert_json_str("a\"b", "\"a\\\"b\"");
	assert_json_str("a\\b", "\"a\\\\b\"");
	assert_json_str("\n\t\r\b\f", "\"\\u000a\\u0009\\u000d\\u0008\\u000c\"");
	assert_json_str("\x01\x1f", "\"\\u0001\\u001f\"");
	assert_json_str("/ \x7f", "\"/ \x7f\"");
	assert_json_str("caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80",
			"\"caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80\"");
	/* Each byte of a broken sequence becomes one replacement character. */
	assert_json_str("ab\xc3", "\"ab\\ufffd\"");
	assert_json_str("x\xe2\x86", "\"x\\ufffd\\ufffd\"");
	assert_json_str("\xff\x80y", "\"\\ufffd\\ufffdy\"");
}

/* Strings are looked at 8 bytes at a time: a byte to escape is found wherever it stands. */
static void test_json_writer_escape_at_every_position(void **state)
{
	static const char odd[] = { '"', '\\', '\n', '\x01', '\x1f', '\xff' };
	char in[48], want[64];

	(void)state;
	for (size_t len = 1; len < 40; len++) {
		for (size_t at = 0; at < len; at++) {
			for (size_t k = 0; k < sizeof(odd); k++) {
				const char *esc = odd[k] == '"' ? "\\\"" : odd[k] == '\\' ? "\\\\" :
						  odd[k] == '\n' ? "\\u000a" : odd[k] == 1 ? "\\u0001" :
						  odd[k] == 0x1f ? "\\u001f" : "\\ufffd";

				memset(in, 'a', len);
				in[len] = '\0';
				in[at] = odd[k];
				snprintf(want, sizeof(want), "\"%.*s%s%s\"", (int)at, in, esc,
					 in + at + 1);
				assert_json_str(in, want);
			}
		}
	}
}

/* One object with a member of every kind, by the writer's calls or through a cursor. */
static void write_members(struct json_writer *w, bool cursor, const char *text)
{
	struct json_cursor c;

	if (!cursor) {
		json_writer__start_object(w);
		json_writer__field_u64(w, "u", UINT64_MAX);
		json_writer__field_i64(w, "i", INT64_MIN);
		json_writer__field_fixed(w, "ts", -250, 3);
		json_writer__field_string(w, "s", text);
		json_writer__field_null(w, "n");
		json_writer__field_double(w, "d", 0.0536, 6);
		json_writer__field_bool(w, "b", true);
		json_writer__name(w, "grid");
		json_writer__start_array(w);
		json_writer__u64(w, 2);
		json_writer__start_object(w);
		json_writer__end_object(w);
		json_writer__raw(w, "\"0x10\"", 6);
		json_writer__end_array(w);
		json_writer__end_object(w);
		return;
	}
	c = json_writer__cursor(w);
	json_cursor__start_object(w, &c);
	json_cursor__name(w, &c, JSON_LITERAL("u"));
	json_cursor__u64(w, &c, UINT64_MAX);
	json_cursor__name(w, &c, JSON_LITERAL("i"));
	json_cursor__i64(w, &c, INT64_MIN);
	json_cursor__name(w, &c, JSON_LITERAL("ts"));
	json_cursor__fixed(w, &c, -250, 3);
	json_cursor__name(w, &c, JSON_LITERAL("s"));
	json_cursor__string(w, &c, text);
	json_cursor__name(w, &c, JSON_LITERAL("n"));
	json_cursor__string(w, &c, NULL);
	json_cursor__name(w, &c, JSON_LITERAL("d"));
	json_cursor__double(w, &c, 0.0536, 6);
	json_cursor__name(w, &c, JSON_LITERAL("b"));
	json_cursor__bool(w, &c, true);
	json_cursor__name(w, &c, JSON_LITERAL("grid"));
	json_cursor__start_array(w, &c);
	json_cursor__u64(w, &c, 2);
	json_cursor__start_object(w, &c);
	json_cursor__end_object(w, &c);
	json_cursor__raw(w, &c, "\"0x10\"", 6);
	json_cursor__end_array(w, &c);
	json_cursor__end_object(w, &c);
	json_writer__cursor_close(w, c);
}

/* A document of such objects, laid out as a trace, one way or the other. */
static char *members_document(bool cursor, const char *text, int n)
{
	struct mem_out o;

	mem_open(&o);
	json_writer__lines(o.w, 1);
	json_writer__start_object(o.w);
	json_writer__name(o.w, "one");
	write_members(o.w, cursor, text);
	json_writer__name(o.w, "many");
	json_writer__lines(o.w, 2);
	json_writer__start_array(o.w);
	for (int i = 0; i < n; i++)
		write_members(o.w, cursor, text);
	json_writer__end_array(o.w);
	json_writer__end_object(o.w);
	return mem_close(&o);
}

/* The cursor writes what the writer's calls write, in any container, across buffer flushes. */
static void test_json_cursor_writes_what_the_writer_writes(void **state)
{
	char long_text[700];
	const char *texts[] = { "plain", "k<\"q\">\n", "caf\xc3\xa9\xff", long_text };

	(void)state;
	memset(long_text, 'x', sizeof(long_text) - 1);
	long_text[sizeof(long_text) - 1] = '\0';
	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		/* Thousands of objects: the 1 MiB buffer fills and flushes mid-object. */
		char *by_calls = members_document(false, texts[i], 5000);
		char *by_cursor = members_document(true, texts[i], 5000);

		assert_string_equal(by_cursor, by_calls);
		free(by_calls);
		free(by_cursor);
	}
}

static void test_json_cursor_object(void **state)
{
	struct mem_out o;

	(void)state;
	mem_open(&o);
	write_members(o.w, true, "k");
	assert_written(&o, "{\"u\": 18446744073709551615, \"i\": -9223372036854775808, "
			   "\"ts\": -0.250, \"s\": \"k\", \"n\": null, \"d\": 0.053600, "
			   "\"b\": true, \"grid\": [2, {}, \"0x10\"]}");
}

/* Every ASCII string comes back unchanged through a JSON parser. */
static void test_json_writer_round_trips_ascii(void **state)
{
	char in[128], *out;
	json_error_t jerr;
	json_t *v;

	(void)state;
	for (int c = 1; c < 128; c++)
		in[c - 1] = (char)c;
	in[127] = '\0';
	out = json_str(in);
	v = json_loads(out, JSON_DECODE_ANY, &jerr);
	free(out);
	if (!v)
		fail_msg("invalid JSON: %s", jerr.text);
	assert_true(json_is_string(v));
	assert_memory_equal(json_string_value(v), in, sizeof(in));
	json_decref(v);
}

/*
 * A thread's comm is cut at 15 bytes, which can fall inside a UTF-8
 * character; the name must still come out as valid JSON, or the whole trace
 * is unreadable (jansson, Python's json and Perfetto all reject it).
 */
static void test_json_writer_invalid_utf8_is_still_valid_json(void **state)
{
	static const char *const cut[] = { "ab\xc3\xa9\xc3", "\xff", "x\xe2\x86", "\x80y",
					   "\xf5\x80\x80\x80", "\xc0\xaf" };
	json_error_t jerr;

	(void)state;
	for (size_t i = 0; i < sizeof(cut) / sizeof(cut[0]); i++) {
		char *out = json_str(cut[i]);
		json_t *v = json_loads(out, JSON_DECODE_ANY, &jerr);

		free(out);
		if (!v)
			fail_msg("case %zu gave invalid JSON: %s", i, jerr.text);
		assert_true(json_is_string(v));
		json_decref(v);
	}
}

/* Strings and documents larger than the writer's buffer arrive whole. */
static void test_json_writer_large_output(void **state)
{
	size_t n = 3u << 20;
	char *big = malloc(n + 1), *out;
	json_error_t jerr;
	struct mem_out o;
	json_t *v;

	(void)state;
	assert_non_null(big);
	for (size_t i = 0; i < n; i++)
		big[i] = i % 1000 == 999 ? '\n' : (char)('a' + i % 26);
	big[n] = '\0';
	mem_open(&o);
	json_writer__start_array(o.w);
	json_writer__string(o.w, big);
	for (int i = 0; i < 100000; i++)
		json_writer__u64(o.w, (uint64_t)i);
	json_writer__end_array(o.w);
	out = mem_close(&o);
	v = json_loads(out, 0, &jerr);
	if (!v)
		fail_msg("invalid JSON: %s", jerr.text);
	assert_string_equal(json_string_value(json_array_get(v, 0)), big);
	assert_int_equal(json_array_size(v), 100001);
	assert_int_equal(json_integer_value(json_array_get(v, 100000)), 99999);
	json_decref(v);
	free(out);
	free(big);
}

/* A full disk is an error the caller sees, at flush. */
static void test_json_writer_write_error(void **state)
{
	FILE *f = fopen("/dev/full", "w");
	struct json_writer *w;

	(void)state;
	assert_non_null(f);
	setvbuf(f, NULL, _IONBF, 0);
	w = json_writer__new(f);
	json_writer__start_array(w);
	json_writer__u64(w, 1);
	json_writer__end_array(w);
	assert_int_equal(json_writer__error(w), 0);
	assert_int_equal(json_writer__flush(w), -ENOSPC);
	assert_int_equal(json_writer__error(w), -ENOSPC);
	/* Closing more than was opened is an error too, and the first one stays. */
	json_writer__end_array(w);
	assert_int_equal(json_writer__error(w), -ENOSPC);
	json_writer__free(w);
	fclose(f);
}

/* ---- safe_file ---- */

struct dir_fixture {
	char path[64];
	int fd;
};

static int make_scratch(void **state)
{
	struct dir_fixture *d = calloc(1, sizeof(*d));

	if (!d)
		return -1;
	strcpy(d->path, "/tmp/cuprobe-test-util-XXXXXX");
	if (!mkdtemp(d->path))
		return -1;
	d->fd = open(d->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	*state = d;
	return d->fd < 0 ? -1 : 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int remove_scratch(void **state)
{
	struct dir_fixture *d = *state;
	int err;

	close(d->fd);
	err = nftw(d->path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(d);
	return err;
}

/* The entries of the folder, sorted, joined with spaces: "" when empty. */
static char *listing(int dirfd)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dir = fdopendir(fd);
	struct dirent **names = NULL, *de;
	size_t n = 0, len = 0;
	FILE *f;
	char *out = NULL;

	assert_non_null(dir);
	while ((de = readdir(dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		names = realloc(names, (n + 1) * sizeof(*names));
		names[n] = malloc(sizeof(*de));
		memcpy(names[n++], de, sizeof(*de));
	}
	closedir(dir);
	f = open_memstream(&out, &len);
	for (size_t i = 0; i < n; i++) {
		for (size_t j = i + 1; j < n; j++) {
			if (strcmp(names[j]->d_name, names[i]->d_name) < 0) {
				de = names[i];
				names[i] = names[j];
				names[j] = de;
			}
		}
		fprintf(f, "%s%s", i ? " " : "", names[i]->d_name);
		free(names[i]);
	}
	fclose(f);
	free(names);
	return out;
}

static void assert_listing(int dirfd, const char *want)
{
	char *got = listing(dirfd);

	assert_string_equal(got, want);
	free(got);
}

static void put_file(int dirfd, const char *name, const char *text)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void assert_file(int dirfd, const char *name, const char *want)
{
	char buf[256] = "";
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		fail_msg("cannot open %s: %s", name, strerror(errno));
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(n >= 0);
	buf[n] = '\0';
	assert_string_equal(buf, want);
}

/* Opens name in the fixture's folder, writes text, publishes; returns publish's result. */
static int write_safely(int dirfd, const char *name, int mode, const char *text)
{
	struct safe_file *sf = safe_file__open(dirfd, name, mode, 0644);
	int err;

	if (!sf)
		return -errno;
	assert_int_equal(write(safe_file__fd(sf), text, strlen(text)), (ssize_t)strlen(text));
	err = safe_file__publish(sf);
	safe_file__free(sf);
	return err;
}

static void test_safe_file_new_appears_only_when_published(void **state)
{
	struct dir_fixture *d = *state;
	struct safe_file *sf = safe_file__open(d->fd, "t.pt.trace.json", SAFE_FILE_NEW, 0640);
	struct stat st;

	assert_non_null(sf);
	assert_int_equal(write(safe_file__fd(sf), "{}\n", 3), 3);
	/* Unnamed while written. */
	assert_listing(d->fd, "");
	assert_int_equal(safe_file__publish(sf), 0);
	assert_listing(d->fd, "t.pt.trace.json");
	assert_int_equal(safe_file__publish(sf), -EINVAL); /* once */
	safe_file__free(sf);
	assert_file(d->fd, "t.pt.trace.json", "{}\n");
	assert_int_equal(fstatat(d->fd, "t.pt.trace.json", &st, 0), 0);
	assert_int_equal(st.st_mode & 0777, 0640); /* less the umask, 022 */
}

static void test_safe_file_new_never_replaces(void **state)
{
	struct dir_fixture *d = *state;

	for (int named = 0; named < 2; named++) {
		int mode = SAFE_FILE_NEW | (named ? SAFE_FILE_NAMED_TMP : 0);

		put_file(d->fd, "taken", "old");
		assert_int_equal(write_safely(d->fd, "taken", mode, "new"), -EEXIST);
		assert_file(d->fd, "taken", "old");
		/* A link planted at the final name is a name taken: never followed. */
		put_file(d->fd, "victim", "secret");
		assert_int_equal(symlinkat("victim", d->fd, "link"), 0);
		assert_int_equal(write_safely(d->fd, "link", mode, "new"), -EEXIST);
		assert_file(d->fd, "victim", "secret");
		/* Nothing else was left. */
		assert_listing(d->fd, "link taken victim");
		assert_int_equal(unlinkat(d->fd, "link", 0), 0);
	}
}

static void test_safe_file_named_temporary(void **state)
{
	struct dir_fixture *d = *state;
	struct safe_file *sf;
	char *names;

	sf = safe_file__open(d->fd, "a.json", SAFE_FILE_NEW | SAFE_FILE_NAMED_TMP, 0644);
	assert_non_null(sf);
	assert_listing(d->fd, ".a.json.tmp");
	safe_file__free(sf);
	/* Freed unpublished: gone. */
	assert_listing(d->fd, "");

	/* A link planted at the first temporary name is not opened: another name is used. */
	put_file(d->fd, "victim", "secret");
	assert_int_equal(symlinkat("victim", d->fd, ".a.json.tmp"), 0);
	sf = safe_file__open(d->fd, "a.json", SAFE_FILE_NEW | SAFE_FILE_NAMED_TMP, 0644);
	assert_non_null(sf);
	names = listing(d->fd);
	assert_int_equal(strncmp(names, ".a.json.", 8), 0);
	assert_non_null(strstr(names, ".tmp .a.json.tmp victim"));
	free(names);
	assert_int_equal(write(safe_file__fd(sf), "new", 3), 3);
	assert_int_equal(safe_file__publish(sf), 0);
	safe_file__free(sf);
	assert_file(d->fd, "victim", "secret");
	assert_file(d->fd, "a.json", "new");
	assert_listing(d->fd, ".a.json.tmp a.json victim");
}

static void test_safe_file_replace_regular(void **state)
{
	struct dir_fixture *d = *state;
	struct stat before, after;

	for (int named = 0; named < 2; named++) {
		int mode = SAFE_FILE_REPLACE | (named ? SAFE_FILE_NAMED_TMP : 0);

		assert_int_equal(write_safely(d->fd, "out.json", mode, "one"), 0);
		assert_file(d->fd, "out.json", "one");
		assert_int_equal(fstatat(d->fd, "out.json", &before, 0), 0);
		assert_int_equal(write_safely(d->fd, "out.json", mode, "two"), 0);
		assert_file(d->fd, "out.json", "two");
		/* Replaced whole (a new file), never rewritten in place. */
		assert_int_equal(fstatat(d->fd, "out.json", &after, 0), 0);
		assert_int_not_equal(before.st_ino, after.st_ino);
		assert_listing(d->fd, "out.json");
		assert_int_equal(unlinkat(d->fd, "out.json", 0), 0);
	}
}

static void test_safe_file_replace_refuses_what_is_not_regular(void **state)
{
	struct dir_fixture *d = *state;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int sock;

	put_file(d->fd, "victim", "secret");
	assert_int_equal(symlinkat("victim", d->fd, "link"), 0);
	assert_int_equal(mkfifoat(d->fd, "fifo", 0600), 0);
	assert_int_equal(mkdirat(d->fd, "folder", 0700), 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/sock", d->path);
	sock = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(sock, (struct sockaddr *)&sa, sizeof(sa)), 0);
	for (int named = 0; named < 2; named++) {
		int mode = SAFE_FILE_REPLACE | (named ? SAFE_FILE_NAMED_TMP : 0);

		assert_int_equal(write_safely(d->fd, "link", mode, "x"), -ELOOP);
		assert_int_equal(write_safely(d->fd, "fifo", mode, "x"), -EEXIST);
		assert_int_equal(write_safely(d->fd, "folder", mode, "x"), -EISDIR);
		assert_int_equal(write_safely(d->fd, "sock", mode, "x"), -EEXIST);
	}
	close(sock);
	assert_file(d->fd, "victim", "secret");
	assert_listing(d->fd, "fifo folder link sock victim");
	assert_string_equal(safe_file__kind(S_IFIFO), "a FIFO");
	assert_string_equal(safe_file__kind(S_IFSOCK), "a socket");
	assert_string_equal(safe_file__kind(S_IFLNK), "a symbolic link");
}

static void test_safe_file_replace_refuses_device(void **state)
{
	struct dir_fixture *d = *state;
	struct stat st;

	if (geteuid())
		skip(); /* mknod needs root */
	assert_int_equal(mknodat(d->fd, "null", S_IFCHR | 0666, makedev(1, 3)), 0);
	assert_int_equal(mknodat(d->fd, "blk", S_IFBLK | 0600, makedev(7, 200)), 0);
	assert_int_equal(write_safely(d->fd, "null", SAFE_FILE_REPLACE, "x"), -EEXIST);
	assert_int_equal(write_safely(d->fd, "blk", SAFE_FILE_REPLACE, "x"), -EEXIST);
	assert_int_equal(fstatat(d->fd, "null", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISCHR(st.st_mode));
	assert_string_equal(safe_file__kind(st.st_mode), "a character device");
	assert_listing(d->fd, "blk null");
}

/* What is at the name is checked again when publishing: a FIFO put there meanwhile stays. */
static void test_safe_file_replace_checks_again_at_publish(void **state)
{
	struct dir_fixture *d = *state;

	for (int named = 0; named < 2; named++) {
		int mode = SAFE_FILE_REPLACE | (named ? SAFE_FILE_NAMED_TMP : 0);
		struct safe_file *sf = safe_file__open(d->fd, "out", mode, 0644);

		assert_non_null(sf);
		assert_int_equal(mkfifoat(d->fd, "out", 0600), 0);
		assert_int_equal(safe_file__publish(sf), -EEXIST);
		safe_file__free(sf);
		assert_listing(d->fd, "out");
		assert_int_equal(unlinkat(d->fd, "out", 0), 0);
	}
}

/* Replace mode names the file by a temporary first: a link planted there is not followed. */
static void test_safe_file_replace_ignores_planted_temporary(void **state)
{
	struct dir_fixture *d = *state;

	put_file(d->fd, "victim", "secret");
	assert_int_equal(symlinkat("victim", d->fd, ".out.json.tmp"), 0);
	assert_int_equal(symlinkat("victim", d->fd, "out.json.tmp"), 0);
	for (int named = 0; named < 2; named++) {
		int mode = SAFE_FILE_REPLACE | (named ? SAFE_FILE_NAMED_TMP : 0);

		assert_int_equal(write_safely(d->fd, "out.json", mode, named ? "b" : "a"), 0);
		assert_file(d->fd, "out.json", named ? "b" : "a");
		assert_file(d->fd, "victim", "secret");
		assert_listing(d->fd, ".out.json.tmp out.json out.json.tmp victim");
	}
}

static void test_safe_file_killed_writer_leaves_nothing(void **state)
{
	struct dir_fixture *d = *state;
	int status;
	pid_t pid;

	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		struct safe_file *sf = safe_file__open(d->fd, "t.pt.trace.json", SAFE_FILE_NEW, 0644);

		if (!sf || write(safe_file__fd(sf), "{\"traceEvents\": [", 17) != 17)
			_exit(1);
		raise(SIGKILL);
		_exit(2);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);
	assert_listing(d->fd, "");
}

static void test_safe_file_publish_into_removed_folder(void **state)
{
	struct dir_fixture *d = *state;
	struct safe_file *sf;
	int sub;

	assert_int_equal(mkdirat(d->fd, "gone", 0755), 0);
	sub = openat(d->fd, "gone", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	sf = safe_file__open(sub, "t.json", SAFE_FILE_NEW, 0644);
	assert_non_null(sf);
	assert_int_equal(unlinkat(d->fd, "gone", AT_REMOVEDIR), 0);
	assert_int_equal(safe_file__publish(sf), -ENOENT);
	safe_file__free(sf);
	close(sub);
	/* Bad names are refused. */
	assert_null(safe_file__open(d->fd, "a/b", SAFE_FILE_NEW, 0644));
	assert_int_equal(errno, EINVAL);
	assert_null(safe_file__open(d->fd, "..", SAFE_FILE_REPLACE, 0644));
	assert_int_equal(errno, EINVAL);
}

static void test_safe_file_open_path(void **state)
{
	struct dir_fixture *d = *state;
	char path[PATH_MAX];
	struct safe_file *sf;

	snprintf(path, sizeof(path), "%s/r.txt", d->path);
	sf = safe_file__open_path(path, SAFE_FILE_REPLACE, 0644);
	assert_non_null(sf);
	assert_int_equal(safe_file__publish(sf), 0);
	safe_file__free(sf);
	assert_listing(d->fd, "r.txt");
	snprintf(path, sizeof(path), "%s/missing/r.txt", d->path);
	assert_null(safe_file__open_path(path, SAFE_FILE_REPLACE, 0644));
	assert_int_equal(errno, ENOENT);
}

static void test_safe_file_make_dirs(void **state)
{
	struct dir_fixture *d = *state;
	char path[PATH_MAX], long_name[300];
	unsigned int made;
	struct stat st;
	int fd;

	assert_int_equal(mkdirat(d->fd, "a", 0755), 0);
	snprintf(path, sizeof(path), "%s/a/./b//c/", d->path);
	fd = safe_file__make_dirs(path, 0755, &made);
	assert_true(fd >= 0);
	assert_int_equal(made, 2);
	assert_int_equal(fstat(fd, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	close(fd);
	/* Already there: nothing made. */
	fd = safe_file__make_dirs(path, 0755, &made);
	assert_true(fd >= 0);
	assert_int_equal(made, 0);
	close(fd);
	/* A folder with something in it stays. */
	put_file(d->fd, "a/b/c/keep", "x");
	assert_int_equal(safe_file__remove_made_dirs(path, 2), -ENOTEMPTY);
	assert_int_equal(unlinkat(d->fd, "a/b/c/keep", 0), 0);
	assert_int_equal(safe_file__remove_made_dirs(path, 2), 0);
	assert_listing(d->fd, "a");
	assert_int_equal(fstatat(d->fd, "a/b", &st, 0), -1);

	/* A failure after making some: what was made goes again. */
	memset(long_name, 'n', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	snprintf(path, sizeof(path), "%s/a/new/%s/x", d->path, long_name);
	assert_int_equal(safe_file__make_dirs(path, 0755, &made), -ENAMETOOLONG);
	assert_int_equal(made, 0);
	assert_int_equal(fstatat(d->fd, "a/new", &st, 0), -1);
	/* A file in the way. */
	put_file(d->fd, "a/file", "x");
	snprintf(path, sizeof(path), "%s/a/file/x", d->path);
	assert_int_equal(safe_file__make_dirs(path, 0755, &made), -ENOTDIR);
}

static void test_safe_file_child_dir(void **state)
{
	struct dir_fixture *d = *state;
	bool created;
	int fd;

	fd = safe_file__child_dir(d->fd, "run_0", 0755, &created);
	assert_true(fd >= 0);
	assert_true(created);
	close(fd);
	fd = safe_file__child_dir(d->fd, "run_0", 0755, &created);
	assert_true(fd >= 0);
	assert_false(created);
	close(fd);
	/* A link to a folder, planted where a run folder goes. */
	assert_int_equal(mkdirat(d->fd, "elsewhere", 0755), 0);
	assert_int_equal(symlinkat("elsewhere", d->fd, "run_1"), 0);
	assert_int_equal(safe_file__child_dir(d->fd, "run_1", 0755, &created), -ELOOP);
	assert_false(created);
	put_file(d->fd, "run_2", "x");
	assert_int_equal(safe_file__child_dir(d->fd, "run_2", 0755, &created), -ENOTDIR);
	assert_int_equal(safe_file__child_dir(d->fd, "../x", 0755, &created), -EINVAL);
	if (geteuid())
		return; /* chown needs root */
	/* A folder another user made first. */
	assert_int_equal(mkdirat(d->fd, "run_3", 0777), 0);
	assert_int_equal(fchownat(d->fd, "run_3", 12345, 12345, 0), 0);
	assert_int_equal(safe_file__child_dir(d->fd, "run_3", 0755, &created), -EPERM);
	assert_false(created);
}

#define SCRATCH(test) cmocka_unit_test_setup_teardown(test, make_scratch, remove_scratch)

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
		cmocka_unit_test(test_vec_push_grows_and_zeroes),
		cmocka_unit_test(test_vec_append_reserve_truncate_sort),
		cmocka_unit_test(test_lower_bound),
		cmocka_unit_test(test_hashmap_string_keys),
		cmocka_unit_test(test_hashmap_matches_reference),
		cmocka_unit_test(test_hashmap_iterates_every_entry_once),
		cmocka_unit_test(test_json_writer_compact),
		cmocka_unit_test(test_json_writer_lines),
		cmocka_unit_test(test_json_writer_fixed),
		cmocka_unit_test(test_json_writer_double_sig_matches_jansson),
		cmocka_unit_test(test_json_writer_double),
		cmocka_unit_test(test_json_writer_pretty_matches_jansson),
		cmocka_unit_test(test_json_writer_escapes),
		cmocka_unit_test(test_json_writer_escape_at_every_position),
		cmocka_unit_test(test_json_cursor_object),
		cmocka_unit_test(test_json_cursor_writes_what_the_writer_writes),
		cmocka_unit_test(test_json_writer_round_trips_ascii),
		cmocka_unit_test(test_json_writer_invalid_utf8_is_still_valid_json),
		cmocka_unit_test(test_json_writer_large_output),
		cmocka_unit_test(test_json_writer_write_error),
		cmocka_unit_test(test_percentile_is_numpys),
		SCRATCH(test_safe_file_new_appears_only_when_published),
		SCRATCH(test_safe_file_new_never_replaces),
		SCRATCH(test_safe_file_named_temporary),
		SCRATCH(test_safe_file_replace_regular),
		SCRATCH(test_safe_file_replace_refuses_what_is_not_regular),
		SCRATCH(test_safe_file_replace_refuses_device),
		SCRATCH(test_safe_file_replace_checks_again_at_publish),
		SCRATCH(test_safe_file_replace_ignores_planted_temporary),
		SCRATCH(test_safe_file_killed_writer_leaves_nothing),
		SCRATCH(test_safe_file_publish_into_removed_folder),
		SCRATCH(test_safe_file_open_path),
		SCRATCH(test_safe_file_make_dirs),
		SCRATCH(test_safe_file_child_dir),
	};

	/* Permissions below are checked against this umask. */
	umask(022);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
