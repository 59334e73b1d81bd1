// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cuprobe report's statistics once every file is read (report/stats.c):
 * steps merged and sorted, step wall time percentiles against numpy's, cycles
 * sorted, and drops counted once per recording in traces before 0.2.0.
 *
 * Small traces are written into a scratch folder, cuprobe report runs on them
 * through report_main and its output is checked number by number
 * (report_fixture.h).
 */
#include "report_fixture.h"

static void test_steps_and_cycles_json(void **state)
{
	struct fixture *fx = *state;
	char run0[PATH_MAX], run1[PATH_MAX];
	json_t *root;

	write_step_recording(fx->dir);
	join(run0, fx->dir, "rec/run_0");
	join(run1, fx->dir, "rec/run_1");
	/* Cycle 1 is read first: the cycles come out sorted all the same. */
	root = report_json(fx->dir, (const char *[]){ run1, run0, NULL });

	assert_int_equal(int_at(root, "schema_version"), 1);
	assert_int_equal(int_at(root, "trace_files"), 4);
	assert_int_equal(int_at(root, "processes"), 2);
	assert_int_equal(int_at(root, "launches"), 12);
	assert_int_equal(int_at(root, "wall_ns"), 18000000);
	assert_int_equal(int_at(root, "drops"), 0);
	assert_int_equal(int_at(root, "late_launches"), 3);
	check_row(root, "kernels", 0, "k1", "launches", 9, 75, 9 * 1e9 / 18e6);

	/* dur 1234.567 µs is 1234567 ns exactly. */
	assert_int_equal(section_len(root, "steps"), 8);
	check_step(root, 0, 100, 2, 1234567, 3, false, 3 / 1.234567);
	check_step(root, 1, 100, 3, 2000000, 1, false, 0.5);
	check_step(root, 2, 100, 6, 3000001, 2, false, 2 / 3.000001);
	check_step(root, 3, 100, 7, 100000, 1, true, 10.0);
	check_step(root, 4, 200, 2, 500500, 1, false, 1 / 0.5005);
	check_step(root, 5, 200, 3, 1500000, 2, false, 2 / 1.5);
	check_step(root, 6, 200, 6, 999, 1, false, 1 / 0.000999);
	check_step(root, 7, 200, 7, 0, 0, true, -1);

	/*
	 * Partial steps are left out: three complete steps each. p99 lies 98% of
	 * the way from the second to the third (numpy: 2980000.98 and 1480010).
	 */
	assert_int_equal(section_len(root, "step_stats"), 2);
	check_stat(root, 0, 100, 3, (1234567 + 2000000 + 3000001) / 3.0, 2000000, 2980001,
		   3000001);
	check_stat(root, 1, 200, 3, (999 + 500500 + 1500000) / 3.0, 500500, 1480010, 1500000);

	assert_int_equal(section_len(root, "cycles"), 4);
	check_cycle(root, 0, (struct cycle_want){ 0, 100, 2, 3, 4, 5000000, false, 0 });
	check_cycle(root, 1, (struct cycle_want){ 0, 200, 2, 3, 3, 4000000, false, 0 });
	check_cycle(root, 2, (struct cycle_want){ 1, 100, 6, 7, 4, 6000000, true, 2 });
	check_cycle(root, 3, (struct cycle_want){ 1, 200, 6, 7, 1, 3000000, true, 1 });

	/* Hits without a per-hit cost: the hits add up, the cost stays unknown. */
	check_overhead(root, (struct overhead_want){ 36, -1, -1, -1, -1, -1 });
	check_cycle_overhead(root, 0, (struct overhead_want){ 9, -1, -1, -1, -1, -1 });
	for (size_t i = 0; i < 8; i++)
		check_step_overhead(root, i, NO_OVERHEAD);
	json_decref(root);
}

/*
 * Linear interpolation between the closest ranks on known lists, as numpy's
 * percentile and pandas' quantile give them: the q-quantile of n sorted
 * values lies at (n - 1) * q, rounded to the nanosecond.
 */
static void test_step_percentiles(void **state)
{
	enum { NSTEPS = 200 };
	struct fixture *fx = *state;
	char trace[PATH_MAX];
	size_t len = 0;
	char *text = NULL;
	json_t *root;
	FILE *f;

	f = open_memstream(&text, &len);
	assert_non_null(f);
	fputs(TRACE_HEAD, f);
	/* Pid 1: walls 1..200 µs in a shuffled order, and a long partial step. */
	for (int i = 0; i < NSTEPS; i++)
		fprintf(f, STEP_SPAN(1, 1, %d, "0.0", "%d.000", ""), i, (i * 37) % NSTEPS + 1, i);
	fputs(STEP_SPAN(1, 1, 200, "0.0", "99999.000", ",'partial':true"), f);
	/* Pid 2: an odd count; the median is the middle value, p99 98% past it. */
	fputs(STEP_SPAN(2, 2, 0, "0.0", "30.000", "") STEP_SPAN(2, 2, 1, "0.0", "10.000", "")
		      STEP_SPAN(2, 2, 2, "0.0", "20.000", ""), f);
	/* Pid 3: only a partial step, so a step row and no stats. */
	fputs(STEP_SPAN(3, 3, 0, "0.0", "1.005", ",'partial':true"), f);
	fputs(KINETO_TAIL(1), f);
	assert_int_equal(fclose(f), 0);
	write_trace(fx->dir, "p.pt.trace.json", text);
	free(text);
	join(trace, fx->dir, "p.pt.trace.json");
	root = report_json(fx->dir, (const char *[]){ trace, NULL });

	assert_int_equal(section_len(root, "steps"), NSTEPS + 1 + 3 + 1);
	check_step(root, NSTEPS, 1, 200, 99999000, 0, true, 0);
	/* 1.005 * 1000 is 1004.9999999999999 in a double: rounded, not truncated. */
	check_step(root, NSTEPS + 4, 3, 0, 1005, 0, true, 0);
	assert_int_equal(section_len(root, "step_stats"), 2);
	/* numpy.percentile(range(1000, 200001, 1000), [50, 99]): 100500, 198010. */
	check_stat(root, 0, 1, NSTEPS, 100500, 100500, 198010, 200000);
	check_stat(root, 1, 2, 3, 20000, 20000, 29800, 30000);
	/* torch.profiler's traces have no cuprobe object, so no cycle. */
	assert_int_equal(section_len(root, "cycles"), 0);
	json_decref(root);
}

/* One pid's step in two files (two recordings): one row, times and launches added up. */
static void test_step_seen_twice(void **state)
{
	struct fixture *fx = *state;
	char dir[PATH_MAX];
	json_t *root;

	write_trace(fx->dir, "two/a.pt.trace.json", main_trace);
	write_trace(fx->dir, "two/b.pt.trace.json",
		    TRACE_HEAD STEP_SPAN(4242, 1, 0, "0.0", "100.000",
					 ",'partial':true,'probe_hits':5,'probe_cost_ns':6700")
		    STEP_KERNEL(4242, 1, "1.0", "k", 0) KINETO_TAIL(4242));
	join(dir, fx->dir, "two");
	root = report_json(fx->dir, (const char *[]){ dir, NULL });
	assert_int_equal(section_len(root, "steps"), 1);
	check_step(root, 0, 4242, 0, 1000000, 11, true, 11.0);
	/* Only one span had a cost: its share is of that span's 100 µs alone. */
	check_step_overhead(root, 0, (struct overhead_want){ 5, 6700, 0.067, -1, -1, -1 });
	assert_int_equal(section_len(root, "step_stats"), 0);
	json_decref(root);
}

/*
 * Traces before 0.2.0 carry the whole recording's drops in every file: each
 * recording (the folder above its run_<k> folders) and process counts once,
 * with its largest value. From 0.2.0 on, drops are the file's own and add up.
 */
static void test_drops_by_trace_version(void **state)
{
	struct fixture *fx = *state;
	char dir[PATH_MAX];
	json_t *root;
	struct run r;

	/* One recording of pid 100, three cycles, as the count grew; pid 200 with it. */
	write_trace(fx->dir, "old/rec/run_0/a.pt.trace.json",
		    TRACE_HEAD COUNTS_TAIL(100, 0, "0.1.0", ",'drops':3"));
	write_trace(fx->dir, "old/rec/run_1/a.pt.trace.json",
		    TRACE_HEAD COUNTS_TAIL(100, 1, "0.1.0", ",'drops':5"));
	write_trace(fx->dir, "old/rec/run_2/a.pt.trace.json",
		    TRACE_HEAD COUNTS_TAIL(100, 2, "0.1.0", ",'drops':5"));
	write_trace(fx->dir, "old/rec/run_0/b.pt.trace.json",
		    TRACE_HEAD COUNTS_TAIL(200, 0, "0.1.0", ",'drops':2"));
	/* Another recording of pid 100, outside run_<k> folders. */
	write_trace(fx->dir, "old/other/a.pt.trace.json",
		    TRACE_HEAD COUNTS_TAIL(100, 0, "0.1.0", ",'drops':4"));
	join(dir, fx->dir, "old");
	root = report_json(fx->dir, (const char *[]){ dir, NULL });
	assert_int_equal(int_at(root, "drops"), 5 + 2 + 4);
	assert_int_equal(int_at(root, "trace_files"), 5);
	json_decref(root);

	/* 0.2.0: per process and cycle, so they add up; with the old ones, both rules. */
	write_trace(fx->dir, "new/run_0/a.pt.trace.json",
		    TRACE_HEAD COUNTS_TAIL(300, 0, "0.2.0", ",'drops':1"));
	write_trace(fx->dir, "new/run_1/a.pt.trace.json",
		    TRACE_HEAD COUNTS_TAIL(300, 1, "0.2.0", ",'drops':2"));
	join(dir, fx->dir, "new");
	root = report_json(fx->dir, (const char *[]){ dir, NULL });
	assert_int_equal(int_at(root, "drops"), 3);
	json_decref(root);
	r = run_report(fx->dir, (const char *[]){ fx->dir, NULL });
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "\nDrops      14 (the counts below miss at least this many)\n"));
	assert_non_null(strstr(r.err, "warning: 14 launch records were dropped"));
	run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_steps_and_cycles_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_step_percentiles, setup, teardown),
		cmocka_unit_test_setup_teardown(test_step_seen_twice, setup, teardown),
		cmocka_unit_test_setup_teardown(test_drops_by_trace_version, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
