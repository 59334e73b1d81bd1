// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cuprobe report's text format (report/text.c): the header of totals, the
 * tables of steps, cycles, overhead and GPU kernels, rates shown as "-"
 * when unknown, and long kernel names cut in the middle.
 *
 * Small traces are written into a scratch folder, cuprobe report runs on them
 * through report_main and its output is checked number by number
 * (report_fixture.h).
 */
#include "report_fixture.h"

static void test_steps_and_cycles_text(void **state)
{
	struct fixture *fx = *state;
	char rec[PATH_MAX];
	struct run r;

	write_step_recording(fx->dir);
	join(rec, fx->dir, "rec");
	r = run_report(fx->dir, (const char *[]){ rec, NULL });
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.err, "cuprobe report: warning: 3 launches arrived after their cycle "
				   "was written, so they are in no trace and the counts are low by "
				   "that many: the Cycles table shows which traces noted them (each "
				   "in the next file its process wrote)\n");
	/* The traces give probe hits (9 each) but no per-hit cost. */
	assert_non_null(strstr(r.out, "\nDrops      0\nLate       3 (arrived after their cycle "
				      "was written: in no trace)\nOverhead   - (36 probe hits, cost "
				      "per hit not measured)\n\nKernels\n"));
	assert_non_null(strstr(r.out, "\nSteps\n"
				      "  PID  STEP  WALL MS  LAUNCHES  LAUNCHES/MS  PROBE HITS  COST %  PARTIAL\n"
				      "  100     2    1.235         3        2.430           -       -       no\n"
				      "  100     3    2.000         1        0.500           -       -       no\n"
				      "  100     6    3.000         2        0.667           -       -       no\n"
				      "  100     7    0.100         1       10.000           -       -      yes\n"
				      "  200     2    0.500         1        1.998           -       -       no\n"
				      "  200     3    1.500         2        1.333           -       -       no\n"
				      "  200     6    0.001         1     1001.001           -       -       no\n"
				      "  200     7    0.000         0            -           -       -      yes\n"
				      "\nStep wall time (complete steps)\n"
				      "  PID  STEPS  MEAN MS  P50 MS  P99 MS  MAX MS\n"
				      "  100      3    2.078   2.000   2.980   3.000\n"
				      "  200      3    0.667   0.500   1.480   1.500\n"
				      "\nCycles\n"
				      "  CYCLE  PID  STEPS  LAUNCHES  WALL S  LATE  PARTIAL  COMMAND\n"
				      "      0  100    2-3         4   0.005     0       no  train\n"
				      "      0  200    2-3         3   0.004     0       no  train\n"
				      "      1  100    6-7         4   0.006     2      yes  train\n"
				      "      1  200    6-7         1   0.003     1      yes  train\n"
				      "\nOverhead\n"
				      "  CYCLE  PID  PROBE HITS  NS/HIT  COST MS  COST %  CUPTI MS\n"
				      "      0  100           9       -        -       -         -\n"
				      "      0  200           9       -        -       -         -\n"
				      "      1  100           9       -        -       -         -\n"
				      "      1  200           9       -        -       -         -\n"
				      "  total    -          36       -        -       -         -\n"));
	run_free(&r);
}

/* The text report of test_folders_add_up's traces (test_report_walk.c), before steps and cycles. */
static const char stepless_sections[] =
	"\nKernels\n"
	"  LAUNCHES   SHARE  LAUNCHES/S  KERNEL\n"
	"         3  75.00%         0.8  k1\n"
	"         1  25.00%         0.2  k2\n"
	"\nAPIs\n"
	"  CALLS    SHARE  CALLS/S  API\n"
	"      4  100.00%      1.0  cudaLaunchKernel\n"
	"\nThreads\n"
	"  PID  TID  LAUNCHES   SHARE  LAUNCHES/S  THREAD\n"
	"  100  101         2  50.00%         0.5  -\n"
	"  200  201         1  25.00%         0.2  loader\n"
	"  200  202         1  25.00%         0.2  -\n";

static void write_stepless_runs(const char *dir)
{
	write_trace(dir, "runs/run_0/host_100.1.pt.trace.json",
		    TRACE_HEAD KERNEL(100, 101, "1.0", "k1") KERNEL(100, 101, "2.0", "k1")
			    TRACE_TAIL(100, 1000000000, 3));
	write_trace(dir, "runs/run_1/deep/host_200.2.pt.trace.json",
		    TRACE_HEAD THREAD_NAME(200, 201, "loader") KERNEL(200, 201, "1.0", "k2")
			    KERNEL(200, 202, "2.0", "k1") THREAD_NAME(200, 201, "renamed")
				    TRACE_TAIL(200, 3000000000, 0));
	write_trace(dir, "runs/run_1/host_300.4.pt.trace.json", TRACE_HEAD TRACE_TAIL(300, 0, 0));
}

/* Traces without steps: the sections read as before, no steps, a cycle row per file. */
static void test_stepless_traces_unchanged(void **state)
{
	struct fixture *fx = *state;
	char runs[PATH_MAX];
	const char *kernels;
	json_t *root;
	struct run r;

	write_stepless_runs(fx->dir);
	join(runs, fx->dir, "runs");
	r = run_report(fx->dir, (const char *[]){ runs, NULL });
	assert_int_equal(r.rc, 0);
	assert_int_equal(strncmp(r.out, "Traces     3 files, 3 processes\nLaunches   4\n"
					"Wall time  4.000 s (1.0 launches/s)\n"
					"Drops      3 (the counts below miss at least this many)\n"
					"Late       0\nOverhead   -\n\nKernels\n",
				 strlen("Traces     3 files, 3 processes\nLaunches   4\n"
					"Wall time  4.000 s (1.0 launches/s)\n"
					"Drops      3 (the counts below miss at least this many)\n"
					"Late       0\nOverhead   -\n\nKernels\n")),
			 0);
	kernels = strstr(r.out, "\nKernels\n");
	assert_non_null(kernels);
	assert_int_equal(strncmp(kernels, stepless_sections, strlen(stepless_sections)), 0);
	assert_string_equal(kernels + strlen(stepless_sections),
			    "\nCycles\n"
			    "  CYCLE  PID  STEPS  LAUNCHES  WALL S  LATE  PARTIAL  COMMAND\n"
			    "      0  100      -         2   1.000     0       no  train\n"
			    "      0  200      -         2   3.000     0       no  train\n"
			    "      0  300      -         0   0.000     0       no  train\n"
			    "\nOverhead\n"
			    "  CYCLE  PID  PROBE HITS  NS/HIT  COST MS  COST %  CUPTI MS\n"
			    "      0  100           -       -        -       -         -\n"
			    "      0  200           -       -        -       -         -\n"
			    "      0  300           -       -        -       -         -\n"
			    "  total    -           -       -        -       -         -\n");
	/* No late launches: only the drops warning. */
	assert_null(strstr(r.err, "arrived after"));
	run_free(&r);

	root = report_json(fx->dir, (const char *[]){ runs, NULL });
	assert_int_equal(section_len(root, "steps"), 0);
	assert_int_equal(section_len(root, "step_stats"), 0);
	assert_int_equal(int_at(root, "late_launches"), 0);
	assert_int_equal(section_len(root, "cycles"), 3);
	check_cycle(root, 0, (struct cycle_want){ 0, 100, -1, -1, 2, 1000000000, false, 0 });
	check_cycle(root, 2, (struct cycle_want){ 0, 300, -1, -1, 0, 0, false, 0 });
	/* Traces without the overhead keys: every value unknown. */
	check_overhead(root, NO_OVERHEAD);
	/* Nor GPU work. */
	check_gpu_counts(root, NULL);
	assert_int_equal(section_len(root, "gpu_kernels"), 0);
	for (size_t i = 0; i < 3; i++)
		check_cycle_overhead(root, i, NO_OVERHEAD);
	json_decref(root);
}

static void test_overhead_text(void **state)
{
	struct fixture *fx = *state;
	char run0[PATH_MAX], run1a[PATH_MAX];
	struct run r;

	write_overhead_recording(fx->dir);
	/* Pid 100's cycles only: one machine, so one per-hit cost. */
	join(run0, fx->dir, "ovh/run_0");
	join(run1a, fx->dir, "ovh/run_1/a.pt.trace.json");
	r = run_report(fx->dir, (const char *[]){ run0, run1a, NULL });
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.err, "");
	/* 1653560 ns of 1.5 s is 0.110%. */
	assert_non_null(strstr(r.out, "\nLate       0\nOverhead   0.11% of wall time (1,234 probe "
				      "hits x 1340 ns), CUPTI 2.500 ms\n\nKernels\n"));
	assert_non_null(strstr(r.out, "\nSteps\n"
				      "  PID  STEP  WALL MS  LAUNCHES  LAUNCHES/MS  PROBE HITS  COST %  PARTIAL\n"
				      "  100     2    1.000         2        2.000          40    5.36       no\n"
				      "  100     3    0.250         0        0.000           -       -      yes\n"));
	assert_non_null(strstr(r.out, "\nOverhead\n"
				      "  CYCLE  PID  PROBE HITS  NS/HIT  COST MS  COST %  CUPTI MS\n"
				      "      0  100        1000    1340    1.340    0.13         -\n"
				      "      1  100         234    1340    0.314    0.06     2.500\n"
				      "  total    -        1234    1340    1.654    0.11     2.500\n"));
	run_free(&r);

	/* With pid 200's trace: two machines, so the per-hit cost is a range. */
	join(run0, fx->dir, "ovh");
	r = run_report(fx->dir, (const char *[]){ run0, NULL });
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "\nOverhead   0.10% of wall time (1,244 probe hits x "
				      "1200-1340 ns), CUPTI 2.500 ms\n"));
	assert_non_null(strstr(r.out, "      1  200          10       1200    0.012    0.01"
				      "         -\n"
				      "  total    -        1244  1200-1340    1.666    0.10     2.500\n"));
	run_free(&r);
}

static void test_gpu_text(void **state)
{
	struct fixture *fx = *state;
	char trace[PATH_MAX];
	struct run r;

	write_trace(fx->dir, "a.pt.trace.json", gpu_trace);
	join(trace, fx->dir, "a.pt.trace.json");
	r = run_report(fx->dir, (const char *[]){ trace, NULL });
	assert_int_equal(r.rc, 0);
	/* Nothing clock-faulted, dropped or missing: no warning. */
	assert_string_equal(r.err, "");
	assert_non_null(strstr(r.out, "\nLate       0\n"
				      "GPU        8 records; 6 launches joined, 0 without GPU work, 1 "
				      "without CUPTI record, 1 GPU records without launch, 0 clock "
				      "faults, 0 dropped, 0 missing at timeout\n"
				      "Overhead   -, CUPTI 0.004 ms\n\nKernels\n"));
	assert_non_null(strstr(
		r.out,
		"\nGPU kernels\n"
		"  COUNT  TOTAL MS  MEAN US  P50 US  P99 US  DELAY MEAN US  DELAY P50 US  DELAY P99 US  KERNEL\n"
		"      3     0.018    6.000   6.000   9.920          5.667         5.000         9.900  kA\n"
		"      1     0.010   10.000  10.000  10.000         14.000        14.000        14.000  kB\n"
		"      1     0.004    4.000   4.000   4.000          2.000         2.000         2.000  Memcpy HtoD (Pinned -> Device)\n"
		"      1     0.003    3.000   3.000   3.000         30.000        30.000        30.000  graph_node_b\n"
		"      1     0.002    2.000   2.000   2.000         28.000        28.000        28.000  graph_node_a\n"
		"      1     0.001    1.000   1.000   1.000              -             -             -  Memset (Device)\n"
		"\nSteps\n"
		"  PID  STEP  WALL MS  GPU BUSY MS  LAUNCHES  LAUNCHES/MS  PROBE HITS  COST %  PARTIAL\n"
		"  100     1    0.090        0.020         4       44.444           -       -       no\n"
		"  100     2    0.060        0.012         3       50.000           -       -       no\n"));
	run_free(&r);
}

#define LONG_NAME                                                                              \
	"void at::native::elementwise_kernel<128, 4, at::native::gpu_kernel_impl_nocast<"      \
	"at::native::AUnaryFunctor<float, float, float, at::native::binary_internal::"         \
	"MulFunctor<float> > >(at::TensorIteratorBase&, at::native::AUnaryFunctor<float, "     \
	"float, float, at::native::binary_internal::MulFunctor<float> > const&)::"             \
	"{lambda(int)#1}>(int, TAIL_OF_NAME)"

static void test_text_format(void **state)
{
	struct fixture *fx = *state;
	const char *name = LONG_NAME;
	char trace[PATH_MAX], shown[128];
	json_t *root;
	struct run r;

	write_trace(fx->dir, "long.pt.trace.json",
		    TRACE_HEAD KERNEL(5, 6, "1.0", LONG_NAME) KERNEL(5, 6, "1.0", "short_k")
			    KERNEL(5, 6, "1.0", "short_k") KINETO_TAIL(5));
	join(trace, fx->dir, "long.pt.trace.json");
	r = run_report(fx->dir, (const char *[]){ trace, NULL });
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.err, "");
	assert_non_null(strstr(r.out, "Traces     1 file, 1 process\n"));
	assert_non_null(strstr(r.out, "Launches   3\n"));
	/* Zero wall time: the rate column says "-". */
	assert_non_null(strstr(r.out, "\nKernels\n  LAUNCHES   SHARE  LAUNCHES/S  KERNEL\n"
				      "         2  66.67%           -  short_k\n"));
	/* 80 characters: the first 53, "...", the last 24. */
	snprintf(shown, sizeof(shown), "  %.53s...%s\n", name, name + strlen(name) - 24);
	assert_int_equal(strlen(shown), 2 + 80 + 1);
	assert_non_null(strstr(r.out, shown));
	assert_null(strstr(r.out, name));
	assert_non_null(strstr(r.out, "\nThreads\n  PID  TID  LAUNCHES    SHARE  LAUNCHES/S  THREAD\n"
				      "    5    6         3  100.00%           -  -\n"));
	run_free(&r);

	/* JSON keeps the whole name. */
	root = report_json(fx->dir, (const char *[]){ trace, NULL });
	check_row(root, "kernels", 1, name, "launches", 1, 100.0 / 3, -1);
	json_decref(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_steps_and_cycles_text, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stepless_traces_unchanged, setup, teardown),
		cmocka_unit_test_setup_teardown(test_overhead_text, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gpu_text, setup, teardown),
		cmocka_unit_test_setup_teardown(test_text_format, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
