// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of the streaming JSON writer (util/json_writer.h), against
 * jansson's output where the two must agree byte for byte: compact, line
 * and pretty layouts, fixed and shortest doubles, escapes at every position,
 * the cursor, invalid UTF-8, large output and write errors; values or null.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>
#include "util/json_writer.h"

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

/* A value that may be unknown is written, or null: never left out. */
static void test_json_writer_or_null(void **state)
{
	struct mem_out o;
	struct json_writer *w;

	(void)state;
	mem_open(&o);
	w = o.w;
	json_writer__start_object(w);
	json_writer__field_u64_or_null(w, "a", true, 7);
	json_writer__field_u64_or_null(w, "b", false, 7);
	json_writer__field_i64_or_null(w, "c", true, -3);
	json_writer__field_i64_or_null(w, "d", false, -3);
	json_writer__field_sig_or_null(w, "e", true, 0.1, 9);
	json_writer__field_sig_or_null(w, "f", false, 0.1, 9);
	json_writer__end_object(w);
	assert_written(&o, "{\"a\": 7, \"b\": null, \"c\": -3, \"d\": null, \"e\": 0.1, "
			   "\"f\": null}");
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_json_writer_compact),
		cmocka_unit_test(test_json_writer_or_null),
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
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
