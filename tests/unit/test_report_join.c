// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * GPU work joined to its launch by correlation id within one file
 * (report/join.c), and what the report makes of it: GPU kernels' times and
 * delays, steps' GPU busy time, the join's counts added up over files, and
 * clock faults warned about.
 *
 * Small traces are written into a scratch folder, cuprobe report runs on them
 * through report_main and its output is checked number by number
 * (report_fixture.h).
 */
#include "report_fixture.h"

static void test_gpu_json(void **state)
{
	struct fixture *fx = *state;
	char trace[PATH_MAX];
	json_t *root;

	write_trace(fx->dir, "g/run_0/a.pt.trace.json", gpu_trace);
	join(trace, fx->dir, "g/run_0/a.pt.trace.json");
	root = report_json(fx->dir, (const char *[]){ trace, NULL });

	/* GPU work is not launches: the launch counts are as without it. */
	assert_int_equal(int_at(root, "launches"), 7);
	assert_int_equal(int_at(root, "processes"), 1);
	assert_int_equal(section_len(root, "kernels"), 5);
	check_row(root, "kernels", 0, "kA", "launches", 3, 300.0 / 7, 3000);
	check_gpu_counts(root, (const json_int_t[]){ 6, 0, 1, 1, 0, 0, 0, 8 });
	check_overhead(root, (struct overhead_want){ -1, -1, -1, -1, -1, 4500 });

	/*
	 * Most GPU time first. kA's delays are 10, 2 and 5 µs; its times 10, 2 and
	 * 6: p99 is 98% of the way from the second to the third.
	 */
	assert_int_equal(section_len(root, "gpu_kernels"), 6);
	check_gpu_kernel(root, 0, (struct gpu_kernel_want){ "kA", 3, 18000, 6000, 6000, 9920,
							    false, 17000 / 3.0, 5000, 9900 });
	check_gpu_kernel(root, 1, (struct gpu_kernel_want){ "kB", 1, 10000, 10000, 10000, 10000,
							    false, 14000, 14000, 14000 });
	check_gpu_kernel(root, 2, (struct gpu_kernel_want){ "Memcpy HtoD (Pinned -> Device)", 1,
							    4000, 4000, 4000, 4000, false, 2000,
							    2000, 2000 });
	/* Both kernels of the graph launch are timed from it. */
	check_gpu_kernel(root, 3, (struct gpu_kernel_want){ "graph_node_b", 1, 3000, 3000, 3000,
							    3000, false, 30000, 30000, 30000 });
	check_gpu_kernel(root, 4, (struct gpu_kernel_want){ "graph_node_a", 1, 2000, 2000, 2000,
							    2000, false, 28000, 28000, 28000 });
	check_gpu_kernel(root, 5, (struct gpu_kernel_want){ "Memset (Device)", 1, 1000, 1000,
							    1000, 1000, true, 0, 0, 0 });

	assert_int_equal(section_len(root, "steps"), 2);
	check_step_overhead(root, 0, NO_OVERHEAD);
	assert_int_equal(step_gpu_busy(root, 0), 20000);
	assert_int_equal(step_gpu_busy(root, 1), 12000);
	json_decref(root);
}

/* Two processes' traces: join counts add up, ids join within a trace only, faults warn. */
static void test_gpu_faults_and_totals(void **state)
{
	struct fixture *fx = *state;
	char dir[PATH_MAX];
	json_t *root;
	struct run r;

	write_trace(fx->dir, "g/a.pt.trace.json", gpu_trace);
	write_trace(fx->dir, "g/b.pt.trace.json", gpu_trace_faults);
	join(dir, fx->dir, "g");
	root = report_json(fx->dir, (const char *[]){ dir, NULL });
	check_gpu_counts(root, (const json_int_t[]){ 7, 0, 1, 2, 1, 2, 3, 1242 });
	/*
	 * pid 200's kA adds its 8 µs but no delay: id 12 is pid 100's kB launch.
	 * Times 2, 6, 8, 10 µs: p50 halfway between 6 and 8, p99 97% past 8.
	 */
	check_gpu_kernel(root, 0, (struct gpu_kernel_want){ "kA", 4, 26000, 6500, 7000, 9940,
							    false, 17000 / 3.0, 5000, 9900 });
	check_gpu_kernel(root, 6, (struct gpu_kernel_want){ "kD", 1, 1000, 1000, 1000, 1000,
							    false, -500, -500, -500 });
	/* pid 200's trace has no steps: the steps are pid 100's, as before. */
	assert_int_equal(step_gpu_busy(root, 0), 20000);
	assert_int_equal(step_gpu_busy(root, 1), 12000);
	json_decref(root);

	r = run_report(fx->dir, (const char *[]){ dir, NULL });
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.err, "cuprobe report: warning: GPU records are incomplete or skewed: "
				   "1 start before their launch (clock faults: their delays are "
				   "negative), 2 were dropped by CUPTI or the agent, 3 launches had "
				   "no GPU work yet when their cycle was written, so GPU times and "
				   "busy times miss the dropped and missing work: record again, with "
				   "a longer --cupti-wait if work was missing\n");
	assert_non_null(strstr(r.out, "\nGPU        1,242 records; 7 launches joined, 0 without "
				      "GPU work, 1 without CUPTI record, 2 GPU records without "
				      "launch, 1 clock faults, 2 dropped, 3 missing at timeout\n"));
	assert_non_null(strstr(r.out, "     1     0.001    1.000   1.000   1.000         -0.500"
				      "        -0.500        -0.500  kD\n"));
	run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_gpu_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gpu_faults_and_totals, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
