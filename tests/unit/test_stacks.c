// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --stack's pure parts: CPython line tables (3.10's and 3.11+'s location
 * tables) against the lines each interpreter itself gives (co_lines()),
 * version names, the strings and code ids BPF keeps of code objects, folded
 * output and the flame graph's SVG.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "core/proc/pyproc.h"
#include "core/proc/stacks.h"
#include "report/folded.h"
#include "util/utf8.h"

/*
 * The line tables of one function,
 *
 *	def sample(n):            # line 2
 *	    total = 0
 *	    for i in range(n):
 *	        if i % 2:
 *	            total += i
 *	        else:
 *	            total -= 1
 *	    return total
 *
 * as compiled by CPython 3.10.13, 3.11.2, 3.12.1 and 3.13.0, with the line of
 * every code unit as list(sample.__code__.co_lines()) gave it there.
 */
static const uint8_t lt_310[] = {0x04, 0x01, 0x0c, 0x01, 0x08, 0x01, 0x0a, 0x01, 0x0a, 0x02, 0x04, 0x01};
static const int lt_310_lines[][2] = {{0, 3}, {2, 3}, {4, 4}, {6, 4}, {8, 4}, {10, 4}, {12, 4}, {14, 4}, {16, 5}, {18, 5}, {20, 5}, {22, 5}, {24, 6}, {26, 6}, {28, 6}, {30, 6}, {32, 6}, {34, 8}, {36, 8}, {38, 8}, {40, 8}, {42, 8}, {44, 9}, {46, 9}};
#define LT_310_FIRST 2
static const uint8_t lt_312[] = {0x80, 0x00, 0xd8, 0x0c, 0x0d, 0x80, 0x45, 0xdc, 0x0d, 0x12, 0x90, 0x31, 0x8b, 0x58, 0xf2, 0x00, 0x04, 0x05, 0x17, 0x88, 0x01, 0xd8, 0x0b, 0x0c, 0x88, 0x71, 0x8a, 0x35, 0xd8, 0x0c, 0x11, 0x90, 0x51, 0x89, 0x4a, 0x89, 0x45, 0xe0, 0x0c, 0x11, 0x90, 0x51, 0x89, 0x4a, 0x89, 0x45, 0xf0, 0x09, 0x04, 0x05, 0x17, 0xf0, 0x0a, 0x00, 0x0c, 0x11, 0x80, 0x4c};
static const int lt_312_lines[][2] = {{0, 2}, {2, 3}, {4, 3}, {6, 4}, {8, 4}, {10, 4}, {12, 4}, {14, 4}, {16, 4}, {18, 4}, {20, 4}, {22, 4}, {24, 4}, {26, 4}, {28, 4}, {30, 4}, {32, 4}, {34, 5}, {36, 5}, {38, 5}, {40, 5}, {42, 5}, {44, 6}, {46, 6}, {48, 6}, {50, 6}, {52, 6}, {54, 6}, {56, 8}, {58, 8}, {60, 8}, {62, 8}, {64, 8}, {66, 8}, {68, 4}, {70, 9}, {72, 9}};
#define LT_312_FIRST 2
static const uint8_t lt_313[] = {0x80, 0x00, 0xd8, 0x0c, 0x0d, 0x80, 0x45, 0xdc, 0x0d, 0x12, 0x90, 0x31, 0x8e, 0x58, 0x88, 0x01, 0xd8, 0x0b, 0x0c, 0x88, 0x71, 0x8f, 0x35, 0xd8, 0x0c, 0x11, 0x89, 0x4a, 0x8a, 0x45, 0xe0, 0x0c, 0x11, 0x90, 0x51, 0x89, 0x4a, 0x8a, 0x45, 0xf1, 0x09, 0x00, 0x0e, 0x16, 0xf0, 0x0a, 0x00, 0x0c, 0x11, 0x80, 0x4c};
static const int lt_313_lines[][2] = {{0, 2}, {2, 3}, {4, 3}, {6, 4}, {8, 4}, {10, 4}, {12, 4}, {14, 4}, {16, 4}, {18, 4}, {20, 4}, {22, 4}, {24, 4}, {26, 4}, {28, 4}, {30, 4}, {32, 4}, {34, 5}, {36, 5}, {38, 5}, {40, 5}, {42, 5}, {44, 5}, {46, 5}, {48, 5}, {50, 5}, {52, 5}, {54, 6}, {56, 6}, {58, 6}, {60, 6}, {62, 6}, {64, 6}, {66, 8}, {68, 8}, {70, 8}, {72, 8}, {74, 8}, {76, 8}, {78, 8}, {80, 4}, {82, 4}, {84, 9}, {86, 9}};
#define LT_313_FIRST 2
static const uint8_t lt_311[] = {0x80, 0x00, 0xd8, 0x0c, 0x0d, 0x80, 0x45, 0xdd, 0x0d, 0x12, 0x90, 0x31, 0x89, 0x58, 0x8c, 0x58, 0xf0, 0x00, 0x04, 0x05, 0x17, 0xf0, 0x00, 0x04, 0x05, 0x17, 0x88, 0x01, 0xd8, 0x0b, 0x0c, 0x88, 0x71, 0x89, 0x35, 0xf0, 0x00, 0x03, 0x09, 0x17, 0xd8, 0x0c, 0x11, 0x90, 0x51, 0x89, 0x4a, 0x88, 0x45, 0x88, 0x45, 0xe0, 0x0c, 0x11, 0x90, 0x51, 0x89, 0x4a, 0x88, 0x45, 0x88, 0x45, 0xd8, 0x0b, 0x10, 0x80, 0x4c};
static const int lt_311_lines[][2] = {{0, 2}, {2, 3}, {4, 3}, {6, 4}, {8, 4}, {10, 4}, {12, 4}, {14, 4}, {16, 4}, {18, 4}, {20, 4}, {22, 4}, {24, 4}, {26, 4}, {28, 4}, {30, 4}, {32, 4}, {34, 4}, {36, 4}, {38, 4}, {40, 5}, {42, 5}, {44, 5}, {46, 5}, {48, 5}, {50, 6}, {52, 6}, {54, 6}, {56, 6}, {58, 6}, {60, 6}, {62, 8}, {64, 8}, {66, 8}, {68, 8}, {70, 8}, {72, 8}, {74, 9}, {76, 9}};
#define LT_311_FIRST 2

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void check_table(uint32_t version, const uint8_t *t, size_t len, int first,
			const int (*want)[2], size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int got = py_line_of(version, t, len, first, (uint64_t)want[i][0]);

		if (got != want[i][1])
			fail_msg("%x: offset %d: line %d, want %d", version, want[i][0], got,
				 want[i][1]);
	}
	/* Past the end, and in a cut table: no line, never a guess out of bounds. */
	assert_int_equal(py_line_of(version, t, len, first, 4096), -1);
	for (size_t cut = 0; cut < len; cut++)
		(void)py_line_of(version, t, cut, first, want[n - 1][0]);
}

static void test_lines_310(void **state)
{
	(void)state;
	check_table(0x030a, lt_310, sizeof(lt_310), LT_310_FIRST, lt_310_lines, N(lt_310_lines));
}

static void test_lines_311(void **state)
{
	(void)state;
	check_table(0x030b, lt_311, sizeof(lt_311), LT_311_FIRST, lt_311_lines, N(lt_311_lines));
}

static void test_lines_312(void **state)
{
	(void)state;
	check_table(0x030c, lt_312, sizeof(lt_312), LT_312_FIRST, lt_312_lines, N(lt_312_lines));
}

static void test_lines_313(void **state)
{
	(void)state;
	check_table(0x030d, lt_313, sizeof(lt_313), LT_313_FIRST, lt_313_lines, N(lt_313_lines));
}

static void test_version_of(void **state)
{
	(void)state;
	assert_int_equal(pyproc_version_of("/usr/bin/python3.11"), 0x030b);
	assert_int_equal(pyproc_version_of("/usr/lib/x86_64-linux-gnu/libpython3.12.so.1.0"),
			 0x030c);
	assert_int_equal(pyproc_version_of("/opt/py/bin/python3.13"), 0x030d);
	assert_int_equal(pyproc_version_of("/usr/bin/python3"), 0);
	assert_int_equal(pyproc_version_of("/usr/bin/python2.7"), 0);
	assert_int_equal(pyproc_version_of("/usr/lib/libfoo.so"), 0);
}

/* The characters BPF copies of a str, in its kind (1, 2 or 4 bytes each), as UTF-8. */
static void test_utf8(void **state)
{
	static const uint8_t k1[] = { 'f', '_', '0', 0xe9 };
	static const uint16_t k2[] = { 'f', 0x4e2d };
	static const uint32_t k4[] = { 'g', 0x1f600, 0x110000 };
	char *s;

	(void)state;
	s = py_utf8(k1, sizeof(k1), 1);
	assert_string_equal(s, "f_0\xc3\xa9");
	free(s);
	s = py_utf8((const uint8_t *)k2, sizeof(k2), 2);
	assert_string_equal(s, "f\xe4\xb8\xad");
	free(s);
	/* Past U+10FFFF is no character: U+FFFD, never bytes made up. */
	s = py_utf8((const uint8_t *)k4, sizeof(k4), 4);
	assert_string_equal(s, "g\xf0\x9f\x98\x80\xef\xbf\xbd");
	free(s);
	s = py_utf8(k1, 0, 1);
	assert_string_equal(s, "");
	free(s);
	assert_null(py_utf8(k1, sizeof(k1), 3));
}

/*
 * A code object made where a freed one was, with its name, file name and
 * line table at the same addresses (the allocator reuses them too), differs
 * in its name's hash: another id. Each field counts.
 */
static void test_code_id(void **state)
{
	uint32_t id = py_code_id(0x7f0010, 0x7f0020, 0x7f0030, 1, 3, 0x1111);

	(void)state;
	assert_int_equal(id, py_code_id(0x7f0010, 0x7f0020, 0x7f0030, 1, 3, 0x1111));
	assert_int_not_equal(id, py_code_id(0x7f0010, 0x7f0020, 0x7f0030, 1, 3, 0x1112));
	assert_int_not_equal(id, py_code_id(0x7f0018, 0x7f0020, 0x7f0030, 1, 3, 0x1111));
	assert_int_not_equal(id, py_code_id(0x7f0010, 0x7f0028, 0x7f0030, 1, 3, 0x1111));
	assert_int_not_equal(id, py_code_id(0x7f0010, 0x7f0020, 0x7f0038, 1, 3, 0x1111));
	assert_int_not_equal(id, py_code_id(0x7f0010, 0x7f0020, 0x7f0030, 2, 3, 0x1111));
	assert_int_not_equal(id, py_code_id(0x7f0010, 0x7f0020, 0x7f0030, 1, 4, 0x1111));
}

static char *written(int (*fn)(FILE *, const struct folded_line *, size_t),
		     const struct folded_line *l, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(fn(f, l, n), 0);
	fclose(f);
	return buf;
}

static int svg_of(FILE *f, const struct folded_line *l, size_t n)
{
	return flamegraph__write(f, l, n, "T <&>", "launches");
}

static void test_folded_text(void **state)
{
	struct folded_line l[] = {
		{ .stack = "main;f;k<int>", .weight = 3 },
		{ .stack = "main;g;k2", .weight = 1 },
	};
	char *s = written(folded__write, l, N(l));

	(void)state;
	assert_string_equal(s, "main;f;k<int> 3\nmain;g;k2 1\n");
	free(s);
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;

	for (const char *p = s; (p = strstr(p, what)); p += strlen(what))
		n++;
	return n;
}

static void test_flamegraph(void **state)
{
	struct folded_line l[] = {
		{ .stack = "main;f;k<int>", .weight = 3 },
		{ .stack = "main;f;k2", .weight = 1 },
		{ .stack = "main;g", .weight = 4 },
	};
	char *s = written(svg_of, l, N(l));

	(void)state;
	/* all, main, f, k<int>, k2, g: one frame each, shared prefixes merged. */
	assert_int_equal(count(s, "<g><title>"), 6);
	assert_non_null(strstr(s, "<title>all (8 launches, 100.00%)</title>"));
	assert_non_null(strstr(s, "<title>main (8 launches, 100.00%)</title>"));
	assert_non_null(strstr(s, "<title>f (4 launches, 50.00%)</title>"));
	assert_non_null(strstr(s, "<title>k&lt;int&gt; (3 launches, 37.50%)</title>"));
	assert_non_null(strstr(s, ">T &lt;&amp;&gt;</text>"));
	assert_null(strstr(s, "<int>"));
	/* f (4 of 8) is half of 1180 px wide, g the other half, after it. */
	assert_non_null(strstr(s, "width=\"590.0\""));
	assert_non_null(strstr(s, "x=\"600.0\""));
	assert_non_null(strstr(s, "</svg>\n"));
	free(s);
}

/* The characters of an SVG text as drawn: entities one each, UTF-8 sequences one each. */
static size_t drawn_chars(const char *s, size_t len)
{
	size_t n = 0;

	for (size_t i = 0; i < len; n++) {
		if (s[i] == '&') {
			const char *semi = memchr(s + i, ';', len - i);

			assert_non_null(semi);
			i = (size_t)(semi - s) + 1;
			continue;
		}
		assert_true(utf8__len((const unsigned char *)s + i) > 0);
		i += (size_t)utf8__len((const unsigned char *)s + i);
	}
	return n;
}

/*
 * Every label stays inside its box in the widest common monospace font
 * (0.602 em of 12px: DejaVu Sans Mono, Menlo), 3 px in from its left edge,
 * cut on a whole character: long names, long UTF-8 names, escaped ones.
 */
static void test_flamegraph_labels_fit(void **state)
{
	char ascii[301], utf8[401], esc[301];
	struct folded_line l[] = {
		{ .stack = ascii, .weight = 5 },
		{ .stack = utf8, .weight = 3 },
		{ .stack = esc, .weight = 2 },
	};
	const char *p;
	size_t labels = 0;
	char *s;

	(void)state;
	memset(ascii, 'a', 300);
	ascii[300] = '\0';
	for (int i = 0; i < 200; i++)
		memcpy(utf8 + 2 * i, "\xc3\xa9", 2);
	utf8[400] = '\0';
	for (int i = 0; i < 100; i++)
		memcpy(esc + 3 * i, "k<>", 3);
	esc[300] = '\0';
	s = written(svg_of, l, N(l));
	for (p = s; (p = strstr(p, "<rect x=\"")); p++) {
		double x, w, tx;
		const char *text = strstr(p, "/>"), *end;

		assert_int_equal(sscanf(p, "<rect x=\"%lf\" y=\"%*f\" width=\"%lf\"", &x, &w), 2);
		if (strncmp(text, "/><text x=\"", 11))
			continue;
		assert_int_equal(sscanf(text, "/><text x=\"%lf\"", &tx), 1);
		text = strchr(text + 2, '>') + 1;
		end = strstr(text, "</text>");
		if (tx - x < 3 || tx + 12 * 0.602 * (double)drawn_chars(text, (size_t)(end - text)) > x + w)
			fail_msg("label '%.*s' runs past its box (x %.1f, width %.1f)",
				 (int)(end - text), text, x, w);
		labels++;
	}
	/* all, and the three names, cut with "..". */
	assert_int_equal(labels, 4);
	assert_int_equal(count(s, "..</text>"), 3);
	free(s);
}

/* The names of a merge, leaf first, joined by ';'. */
static void check_merge(const struct merge_frame *nat, size_t nn, const char *const *py, size_t np,
			uint64_t entry, const char *want)
{
	const char *out[32];
	char got[512] = "";
	size_t n = stack_merge(nat, nn, py, entry, np, out);

	for (size_t i = 0; i < n; i++) {
		if (i)
			strcat(got, ";");
		strcat(got, out[i]);
	}
	assert_string_equal(got, want);
}

static void test_merge(void **state)
{
	/* Leaf first: the API, ctypes, two evaluations (the second inlines a helper), main. */
	static const struct merge_frame nat[] = {
		{ "cudaLaunchKernel", 0, false }, { "ffi_call", 1, false },
		{ "_PyEval_EvalFrameDefault", 2, true }, { "PyObject_Call", 3, false },
		{ "inlined_helper", 4, true }, { "_PyEval_EvalFrameDefault", 4, true },
		{ "main", 5, false },
	};
	static const char *const py[] = { "leaf.py", "mid.py", "outer.py", "top.py" };

	(void)state;
	/* 3.11+: one evaluation ran leaf and mid (mid began it), the next outer and top. */
	check_merge(nat, N(nat), py, 4, 1u << 1 | 1u << 3,
		    "cudaLaunchKernel;ffi_call;leaf.py;mid.py;PyObject_Call;outer.py;top.py;main");
	/* 3.10: an evaluation per frame; more Python frames than evaluations go on top. */
	check_merge(nat, N(nat), py, 4, 0xf,
		    "cudaLaunchKernel;ffi_call;leaf.py;PyObject_Call;mid.py;main;outer.py;top.py");
	/* The native walk stopped in ffi_call (no frame pointers): Python above it. */
	check_merge(nat, 2, py, 4, 1u << 1 | 1u << 3, "cudaLaunchKernel;ffi_call;leaf.py;mid.py;"
						      "outer.py;top.py");
	/* No Python frames: the evaluation frames stay as they are. */
	check_merge(nat, N(nat), py, 0, 0,
		    "cudaLaunchKernel;ffi_call;_PyEval_EvalFrameDefault;PyObject_Call;"
		    "inlined_helper;_PyEval_EvalFrameDefault;main");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lines_310),  cmocka_unit_test(test_lines_311),
		cmocka_unit_test(test_lines_312),  cmocka_unit_test(test_lines_313),
		cmocka_unit_test(test_version_of), cmocka_unit_test(test_folded_text),
		cmocka_unit_test(test_flamegraph), cmocka_unit_test(test_flamegraph_labels_fit),
		cmocka_unit_test(test_merge),
		cmocka_unit_test(test_utf8),	   cmocka_unit_test(test_code_id),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
