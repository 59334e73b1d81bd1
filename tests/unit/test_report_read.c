// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Trace files read into the report (report/read.c): wall time from the
 * events when cuprobe's duration is missing, a step's number from its span's
 * name, the errors of files that cannot be read, and malformed events, each
 * kind skipped and counted, and the count said in every format.
 *
 * Small traces are written into a scratch folder, cuprobe report runs on them
 * through report_main and its output is checked number by number
 * (report_fixture.h).
 */
#include "report_fixture.h"

/* Without cuprobe's duration, wall time is the span of the timed events. */
static void test_wall_time_from_events(void **state)
{
	struct fixture *fx = *state;
	char trace[PATH_MAX];
	json_t *root;

	write_trace(fx->dir, "kineto.pt.trace.json",
		    TRACE_HEAD KERNEL(9, 9, "10.000", "k") KERNEL(9, 9, "12.500", "k")
		    "{'ph':'X','cat':'kernel','name':'k','pid':0,'tid':7,'ts':13.0,'dur':2.0},"
		    KINETO_TAIL(9));
	join(trace, fx->dir, "kineto.pt.trace.json");
	root = report_json(fx->dir, (const char *[]){ trace, NULL });
	/* From ts 10.0 to 13.0 + 2.0 µs; the metadata's ts 0 does not count. */
	assert_int_equal(int_at(root, "wall_ns"), 5000);
	assert_int_equal(int_at(root, "processes"), 1);
	check_row(root, "kernels", 0, "k", "launches", 2, 100, 2 * 1e9 / 5000);
	json_decref(root);
}

/* torch.profiler's spans have no args.step: the step comes from the name. */
static void test_step_number_from_name(void **state)
{
	struct fixture *fx = *state;
	char trace[PATH_MAX];
	json_t *root;

	write_trace(fx->dir, "t.pt.trace.json", main_trace);
	join(trace, fx->dir, "t.pt.trace.json");
	root = report_json(fx->dir, (const char *[]){ trace, NULL });
	assert_int_equal(section_len(root, "steps"), 1);
	check_step(root, 0, 4242, 0, 900000, 10, false, 10 / 0.9);
	check_stat(root, 0, 4242, 1, 900000, 900000, 900000, 900000);
	json_decref(root);
}

static void test_read_errors(void **state)
{
	struct fixture *fx = *state;
	char path[PATH_MAX];
	struct run r;

	join(path, fx->dir, "missing.pt.trace.json");
	r = run_failing(fx->dir, path);
	check_error(&r, 1, path, "No such file or directory");
	run_free(&r);

	write_trace(fx->dir, "bad.pt.trace.json", "{\n  'traceEvents': [\n    {'ph': 'X',,}\n]}");
	join(path, fx->dir, "bad.pt.trace.json");
	r = run_failing(fx->dir, path);
	check_error(&r, 1, path, "not valid JSON at line 3, column");
	run_free(&r);

	write_trace(fx->dir, "other.json", "{'events': []}");
	join(path, fx->dir, "other.json");
	r = run_failing(fx->dir, path);
	check_error(&r, 1, path, "no traceEvents array");
	run_free(&r);

	write_trace(fx->dir, "empty/run_0/readme.txt", "nothing here");
	join(path, fx->dir, "empty");
	r = run_failing(fx->dir, path);
	check_error(&r, 1, path, "no trace found under");
	run_free(&r);

	/* A trace that cannot be opened: a link to nowhere. */
	join(path, fx->dir, "gone/x.pt.trace.json");
	mkdirs_for(path);
	assert_int_equal(symlink("nowhere", path), 0);
	join(path, fx->dir, "gone");
	r = run_failing(fx->dir, path);
	check_error(&r, 1, "unable to open",
		    "gone/x.pt.trace.json: No such file or directory: check that the file is readable");
	run_free(&r);

	/* One bad trace among good ones fails the whole report. */
	write_trace(fx->dir, "mixed/a.pt.trace.json", main_trace);
	write_trace(fx->dir, "mixed/b.pt.trace.json", "[1, 2");
	join(path, fx->dir, "mixed");
	r = run_failing(fx->dir, path);
	check_error(&r, 1, "mixed/b.pt.trace.json", "not valid JSON at line 1");
	run_free(&r);
}

/* Events with a field missing or of the wrong type, one a case; each is skipped and counted. */
static const char *const malformed_cases[] = {
	/* A launch without its pid, tid or name, or with a negative one. */
	"{'ph':'X','cat':'cuda_runtime','name':'cudaLaunchKernel','tid':1,'ts':1.0,'args':{}},",
	"{'ph':'X','cat':'cuda_runtime','name':'cudaLaunchKernel','pid':1,'ts':1.0,'args':{}},",
	"{'ph':'X','cat':'cuda_runtime','pid':1,'tid':1,'ts':1.0,'args':{'kernel':'k'}},",
	"{'ph':'X','cat':'cuda_runtime','name':'cudaLaunchKernel','pid':-1,'tid':1,'ts':1.0},",
	"{'ph':'X','cat':'cuda_driver','name':'cuLaunchKernel','pid':1,'tid':-5,'ts':1.0},",
	"{'ph':'X','cat':'cuda_runtime','name':'cudaLaunchKernel','pid':'1','tid':1,'ts':1.0},",
	/* A ts that is a string, a dur that is not a number or negative, args not an object. */
	"{'ph':'X','cat':'cuda_runtime','name':'cudaLaunchKernel','pid':1,'tid':1,'ts':'1.0'},",
	"{'ph':'X','cat':'cuda_runtime','name':'cudaLaunchKernel','pid':1,'tid':1,'ts':1.0,"
	"'dur':-1.0},",
	"{'ph':'X','cat':'cuda_runtime','name':'cudaLaunchKernel','pid':1,'tid':1,'ts':1.0,"
	"'dur':'0'},",
	"{'ph':'X','cat':'cuda_runtime','name':'cudaLaunchKernel','pid':1,'tid':1,'ts':1.0,"
	"'args':['k']},",
	/* The same for the other events the report uses: GPU work, steps, threads' names. */
	"{'ph':'X','cat':'kernel','name':'k','pid':0,'tid':7,'ts':'2.0','dur':1.0},",
	"{'ph':'X','cat':'gpu_memcpy','name':'Memcpy','tid':7,'ts':2.0,'dur':1.0},",
	"{'ph':'X','cat':'user_annotation','name':'ProfilerStep#1','pid':9,'tid':9,'ts':0.0,"
	"'dur':'x'},",
	"{'ph':'M','name':'thread_name','pid':9,'tid':9,'ts':0.0,'args':'worker'},",
	/* Any event with a bad time, one without a phase or a category, or no event at all. */
	"{'ph':'s','cat':'ac2g','name':'ac2g','id':1,'pid':9,'tid':9,'ts':'5'},",
	"{'name':'x','pid':9,'tid':9,'ts':1.0},",
	"{'ph':'X','name':'x','pid':9,'tid':9,'ts':1.0},",
	"42,",
	"null,",
};

static void test_malformed_events_each_kind(void **state)
{
	struct fixture *fx = *state;
	char trace[PATH_MAX], *text;
	json_t *root;

	join(trace, fx->dir, "m.pt.trace.json");
	for (size_t i = 0; i < sizeof(malformed_cases) / sizeof(malformed_cases[0]); i++) {
		if (asprintf(&text, "%s%s%s%s%s", TRACE_HEAD, KERNEL(9, 9, "1.0", "k"),
			     malformed_cases[i], KERNEL(9, 9, "2.0", "k"), KINETO_TAIL(9)) < 0)
			fail();
		write_trace(fx->dir, "m.pt.trace.json", text);
		free(text);
		root = report_json(fx->dir, (const char *[]){ trace, NULL });
		if (int_at(root, "malformed_events") != 1)
			fail_msg("case %zu: %s", i, malformed_cases[i]);
		assert_int_equal(int_at(root, "launches"), 2);
		assert_int_equal(section_len(root, "steps"), 0);
		assert_int_equal(section_len(root, "gpu_kernels"), 0);
		/* Only the good launches' span: a bad time is not used. */
		assert_int_equal(int_at(root, "wall_ns"), 1000);
		json_decref(root);
	}
}

/* How the count is said: a text line, a JSON key, a CSV summary row, a warning. */
static void test_malformed_events_reported(void **state)
{
	struct fixture *fx = *state;
	char trace[PATH_MAX];
	bool streamed;
	struct run r;

	write_trace(fx->dir, "m.pt.trace.json",
		    TRACE_HEAD KERNEL(9, 9, "1.0", "k") "42,{'ph':'X','name':'x'},"
		    "{'ph':'X','cat':'kernel','name':'k','pid':0,'tid':7,'ts':2.0,'dur':-2.0},"
		    KINETO_TAIL(9));
	join(trace, fx->dir, "m.pt.trace.json");
	r = run_report(fx->dir, (const char *[]){ trace, NULL });
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "\nLate       0\n"
				      "Malformed  3 events skipped (missing or mistyped fields)\n"
				      "Overhead   -\n"));
	assert_string_equal(r.err, "cuprobe report: warning: 3 events were skipped, with a field "
				   "missing or of the wrong type (pid, tid, name, ts, dur or args), "
				   "so the counts leave them out: check what wrote the traces\n");
	run_free(&r);
	r = run_report(fx->dir, (const char *[]){ "--format", "csv", trace, NULL });
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "\nsummary,malformed_events,,,3,,,,,,,,,,,,,,,,,,,,,\n"));
	run_free(&r);

	/* Read a line at a time, a malformed event is counted the same. */
	assert_int_equal(launches_of(fx->dir, "lines.pt.trace.json",
				     LINES_HEAD LINE_KERNEL(",")
				     "  {'ph':'X','cat':'cuda_runtime','name':'cudaLaunchKernel',"
				     "'pid':5,'tid':6,'ts':'1.0'},\n" LINE_KERNEL("") LINES_TAIL,
				     &streamed),
			 2);
	assert_true(streamed);
	join(trace, fx->dir, "lines.pt.trace.json");
	r = run_report(fx->dir, (const char *[]){ trace, NULL });
	assert_non_null(strstr(r.out, "Malformed  1 events skipped"));
	run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_wall_time_from_events, setup, teardown),
		cmocka_unit_test_setup_teardown(test_step_number_from_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed_events_each_kind, setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed_events_reported, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
