// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Traces in cuprobe record's layout read a line at a time
 * (report/stream.c): the same report as the same traces read whole, in
 * every format, and a file that only looks like that layout read whole.
 * test_report_scan.c checks the reader of any other layout.
 *
 * Small traces are written into a scratch folder, cuprobe report runs on them
 * through report_main and its output is checked number by number
 * (report_fixture.h).
 */
#include "report_fixture.h"

/* Writes root as cuprobe record lays a trace out: one event a line, one space before keys. */
static void write_cuprobe_layout(FILE *f, const json_t *root)
{
	const size_t flags = JSON_COMPACT | JSON_ENCODE_ANY;
	const char *key;
	bool first = true;
	json_t *value, *ev;
	size_t i;

	fputc('{', f);
	json_object_foreach((json_t *)root, key, value) {
		json_t *name = json_string(key);

		fputs(first ? "\n " : ",\n ", f);
		first = false;
		assert_int_equal(json_dumpf(name, f, flags), 0);
		json_decref(name);
		fputs(": ", f);
		if (strcmp(key, "traceEvents") || !json_is_array(value)) {
			assert_int_equal(json_dumpf(value, f, flags), 0);
			continue;
		}
		fputc('[', f);
		json_array_foreach(value, i, ev) {
			fputs(i ? ",\n  " : "\n  ", f);
			assert_int_equal(json_dumpf(ev, f, flags), 0);
		}
		fputs("\n ]", f);
	}
	fputs("\n}\n", f);
}

/*
 * Rewrites DIR/one/REL, a trace on one line, as DIR/lines/REL in cuprobe's
 * layout and as DIR/indent/REL in json_dump's indented one.
 */
static void relayout(const char *dir, const char *rel)
{
	char src[PATH_MAX], dst[PATH_MAX], sub[PATH_MAX];
	json_error_t jerr;
	json_t *root;
	FILE *f;

	snprintf(sub, sizeof(sub), "one/%s", rel);
	join(src, dir, sub);
	root = json_load_file(src, 0, &jerr);
	if (!root)
		fail_msg("%s: %s", src, jerr.text);
	snprintf(sub, sizeof(sub), "lines/%s", rel);
	join(dst, dir, sub);
	mkdirs_for(dst);
	f = fopen(dst, "w");
	assert_non_null(f);
	write_cuprobe_layout(f, root);
	assert_int_equal(fclose(f), 0);
	snprintf(sub, sizeof(sub), "indent/%s", rel);
	join(dst, dir, sub);
	mkdirs_for(dst);
	assert_int_equal(json_dump_file(root, dst, JSON_INDENT(2)), 0);
	json_decref(root);
}

/* The report of DIR/SUB in FORMAT, as printed. */
static char *report_of(const char *dir, const char *sub, const char *format)
{
	char path[PATH_MAX];
	struct run r;
	char *out;

	join(path, dir, sub);
	r = run_report(dir, (const char *[]){ "--format", format, path, NULL });
	if (r.rc)
		fail_msg("report of %s failed (%d): %s", sub, r.rc, r.err);
	out = r.out;
	r.out = NULL;
	run_free(&r);
	return out;
}

/* The same traces, read whole and a line at a time, give the same report. */
static void test_layouts_agree(void **state)
{
	static const char *const rels[] = {
		"rec/run_0/b_100.9.pt.trace.json", "rec/run_0/a_200.8.pt.trace.json",
		"rec/run_1/b_100.9.pt.trace.json", "rec/run_1/a_200.8.pt.trace.json",
		"g/run_0/a.pt.trace.json",	   "g/run_0/b.pt.trace.json",
		"m/main.pt.trace.json",		   "m/empty.pt.trace.json",
	};
	static const char *const formats[] = { "json", "text", "csv" };
	struct fixture *fx = *state;
	char one[PATH_MAX], path[PATH_MAX];
	unsigned long streamed;
	json_t *root;

	join(one, fx->dir, "one");
	write_step_recording(one);
	write_trace(one, rels[4], gpu_trace);
	write_trace(one, rels[5], gpu_trace_faults);
	/* main_trace has an event that is not an object: its file is read whole. */
	write_trace(one, rels[6], main_trace);
	write_trace(one, rels[7], TRACE_HEAD "]," "'cuprobe':{'pid':7,'cycle':3}}");
	for (size_t i = 0; i < sizeof(rels) / sizeof(rels[0]); i++)
		relayout(fx->dir, rels[i]);

	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		char *whole = report_of(fx->dir, "one", formats[i]);
		char *indent = report_of(fx->dir, "indent", formats[i]);
		char *lines;

		streamed = report_streamed_files;
		lines = report_of(fx->dir, "lines", formats[i]);
		assert_int_equal(report_streamed_files - streamed, 7);
		assert_string_equal(lines, whole);
		assert_string_equal(indent, whole);
		free(whole);
		free(indent);
		free(lines);
	}

	/* The numbers are the ones the other tests check, not merely equal. */
	join(path, fx->dir, "lines/g/run_0/a.pt.trace.json");
	streamed = report_streamed_files;
	root = report_json(fx->dir, (const char *[]){ path, NULL });
	assert_int_equal(report_streamed_files - streamed, 1);
	assert_int_equal(int_at(root, "launches"), 7);
	check_gpu_counts(root, (const json_int_t[]){ 6, 0, 1, 1, 0, 0, 0, 8 });
	assert_int_equal(step_gpu_busy(root, 0), 20000);
	assert_int_equal(step_gpu_busy(root, 1), 12000);
	assert_int_equal(section_len(root, "cycles"), 1);
	json_decref(root);
}

/*
 * A file that looks like cuprobe's layout but is not in it, or not valid, is
 * read whole: the report is the whole file's, or its error.
 */
static void test_stream_fallback(void **state)
{
	struct fixture *fx = *state;
	char path[PATH_MAX];
	bool streamed;
	struct run r;

	assert_int_equal(launches_of(fx->dir, "ok.pt.trace.json",
				     LINES_HEAD LINE_KERNEL(",") LINE_KERNEL("") LINES_TAIL,
				     &streamed),
			 2);
	assert_true(streamed);

	/* An event over two lines: valid JSON, so the whole file counts it. */
	assert_int_equal(launches_of(fx->dir, "split.pt.trace.json",
				     LINES_HEAD LINE_KERNEL(",")
				     "  {'ph':'X','cat':'cuda_runtime','name':'cudaLaunchKernel',\n"
				     "'pid':5,'tid':6,'ts':2.0,'args':{'kernel':'k'}}\n" LINES_TAIL,
				     &streamed),
			 2);
	assert_false(streamed);

	/* A traceEvents nested in another key holds no top-level events. */
	assert_int_equal(launches_of(fx->dir, "nested.pt.trace.json",
				     "{\n 'x': {\n 'traceEvents': [\n" LINE_KERNEL("")
				     " ]\n },\n 'traceEvents': []\n}\n",
				     &streamed),
			 0);
	assert_false(streamed);

	/* jansson keeps the last of two keys: the events are replaced by none. */
	assert_int_equal(launches_of(fx->dir, "twice.pt.trace.json",
				     LINES_HEAD LINE_KERNEL("") " ],\n 'traceEvents': []\n}\n",
				     &streamed),
			 0);
	assert_false(streamed);

	/* A malformed event line: the whole-file path's error, with its line. */
	write_trace(fx->dir, "bad.pt.trace.json",
		    LINES_HEAD LINE_KERNEL(",") "  {'ph': 'X',, 'cat': 'kernel'},\n"
		    LINE_KERNEL("") LINES_TAIL);
	join(path, fx->dir, "bad.pt.trace.json");
	r = run_failing(fx->dir, path);
	check_error(&r, 1, path, "not valid JSON at line 5, column");
	run_free(&r);

	/* Every line an event, but no comma between two: not JSON either. */
	write_trace(fx->dir, "comma.pt.trace.json",
		    LINES_HEAD LINE_KERNEL("") LINE_KERNEL("") LINES_TAIL);
	join(path, fx->dir, "comma.pt.trace.json");
	r = run_failing(fx->dir, path);
	check_error(&r, 1, path, "not valid JSON at line 5, column");
	run_free(&r);

	/* Nor a comma after the last. */
	write_trace(fx->dir, "trailing.pt.trace.json", LINES_HEAD LINE_KERNEL(",") LINES_TAIL);
	join(path, fx->dir, "trailing.pt.trace.json");
	r = run_failing(fx->dir, path);
	check_error(&r, 1, path, "not valid JSON at line 5, column");
	run_free(&r);

	/* A file cut short after its events. */
	write_trace(fx->dir, "cut.pt.trace.json", LINES_HEAD LINE_KERNEL(""));
	join(path, fx->dir, "cut.pt.trace.json");
	r = run_failing(fx->dir, path);
	check_error(&r, 1, path, "not valid JSON at line");
	run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_layouts_agree, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_fallback, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
