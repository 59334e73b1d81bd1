// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cuprobe report's CSV format (report/csv.c): RFC 4180 quoting, and the rows
 * of steps, cycles, overhead and GPU kernels in their columns.
 *
 * Small traces are written into a scratch folder, cuprobe report runs on them
 * through report_main and its output is checked number by number
 * (report_fixture.h).
 */
#include "report_fixture.h"

#define CSV_HEAD                                                                               \
	"section,name,pid,tid,count,share_pct,per_s,"                                          \
	"step,cycle,first_step,last_step,wall_ns,partial,late_launches,"                       \
	"probe_hits,probe_cost_ns,probe_cost_share,cupti_overhead_ns,"                         \
	"gpu_total_ns,gpu_mean_ns,gpu_p50_ns,gpu_p99_ns,"                                      \
	"delay_mean_ns,delay_p50_ns,delay_p99_ns,gpu_busy_ns\n"

static void test_csv_quoting(void **state)
{
	struct fixture *fx = *state;
	char trace[PATH_MAX], out[PATH_MAX];
	struct run r;
	char *csv;

	write_trace(fx->dir, "q.pt.trace.json",
		    TRACE_HEAD THREAD_NAME(7, 8, "main, 2") KERNEL(7, 8, "1.0", "plain_kernel")
			    KERNEL(7, 8, "2.0", "void f<\\'q\\', 2>(int, char)")
				    TRACE_TAIL(7, 2000000000, 0));
	join(trace, fx->dir, "q.pt.trace.json");
	join(out, fx->dir, "out.csv");
	r = run_report(fx->dir, (const char *[]){ "--format=csv", "-o", out, trace, NULL });
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.err, "");
	run_free(&r);
	csv = slurp(out);
	assert_non_null(csv);
	assert_string_equal(csv, CSV_HEAD
				 "kernel,plain_kernel,,,1,50.000,0.500,,,,,,,,,,,,,,,,,,,\n"
				 "kernel,\"void f<\"\"q\"\", 2>(int, char)\",,,1,50.000,0.500,,,,,,,,,,,,,,,,,,,\n"
				 "api,cudaLaunchKernel,,,2,100.000,1.000,,,,,,,,,,,,,,,,,,,\n"
				 "thread,\"main, 2\",7,8,2,100.000,1.000,,,,,,,,,,,,,,,,,,,\n"
				 "cycle,train,7,,2,100.000,1.000,,0,,,2000000000,false,0,,,,,,,,,,,,\n");
	free(csv);
}

static void test_steps_and_cycles_csv(void **state)
{
	struct fixture *fx = *state;
	char rec[PATH_MAX];
	const char *rows;
	struct run r;

	write_step_recording(fx->dir);
	join(rec, fx->dir, "rec");
	r = run_report(fx->dir, (const char *[]){ "--format", "csv", rec, NULL });
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.err, "warning: 3 launches arrived after their cycle"));
	assert_int_equal(strncmp(r.out, CSV_HEAD, strlen(CSV_HEAD)), 0);
	/*
	 * Shares are of all 12 launches; per_s is per second of the row's own wall
	 * time, empty when it is 0.
	 */
	rows = strstr(r.out, "\nstep,");
	assert_non_null(rows);
	assert_string_equal(rows + 1, "step,,100,,3,25.000,2430.002,2,,,,1234567,false,,,,,,,,,,,,,\n"
				      "step,,100,,1,8.333,500.000,3,,,,2000000,false,,,,,,,,,,,,,\n"
				      "step,,100,,2,16.667,666.666,6,,,,3000001,false,,,,,,,,,,,,,\n"
				      "step,,100,,1,8.333,10000.000,7,,,,100000,true,,,,,,,,,,,,,\n"
				      "step,,200,,1,8.333,1998.002,2,,,,500500,false,,,,,,,,,,,,,\n"
				      "step,,200,,2,16.667,1333.333,3,,,,1500000,false,,,,,,,,,,,,,\n"
				      "step,,200,,1,8.333,1001001.001,6,,,,999,false,,,,,,,,,,,,,\n"
				      "step,,200,,0,0.000,,7,,,,0,true,,,,,,,,,,,,,\n"
				      "cycle,train,100,,4,33.333,800.000,,0,2,3,5000000,false,0,9,,,,,,,,,,,\n"
				      "cycle,train,200,,3,25.000,750.000,,0,2,3,4000000,false,0,9,,,,,,,,,,,\n"
				      "cycle,train,100,,4,33.333,666.667,,1,6,7,6000000,true,2,9,,,,,,,,,,,\n"
				      "cycle,train,200,,1,8.333,333.333,,1,6,7,3000000,true,1,9,,,,,,,,,,,\n");
	/* Kernel rows keep their columns and leave the new ones empty. */
	assert_non_null(strstr(r.out, CSV_HEAD "kernel,k1,,,9,75.000,500.000,,,,,,,,,,,,,,,,,,,\n"));
	run_free(&r);
}

static void test_overhead_csv(void **state)
{
	struct fixture *fx = *state;
	char ovh[PATH_MAX];
	const char *rows;
	struct run r;

	write_overhead_recording(fx->dir);
	join(ovh, fx->dir, "ovh");
	r = run_report(fx->dir, (const char *[]){ "--format", "csv", ovh, NULL });
	assert_int_equal(r.rc, 0);
	assert_int_equal(strncmp(r.out, CSV_HEAD, strlen(CSV_HEAD)), 0);
	rows = strstr(r.out, "\nstep,");
	assert_non_null(rows);
	assert_string_equal(
		rows + 1,
		"step,,100,,2,66.667,2000.000,2,,,,1000000,false,,40,53600,0.053600,,,,,,,,,\n"
		"step,,100,,0,0.000,0.000,3,,,,250000,true,,,,,,,,,,,,,\n"
		"cycle,train,100,,2,66.667,2.000,,0,2,3,1000000000,false,0,1000,1340000,0.001340,,,,,,,,,\n"
		"cycle,train,100,,1,33.333,2.000,,1,,,500000000,false,0,234,313560,0.000627,2500000,,,,,,,,\n"
		"cycle,train,200,,0,0.000,0.000,,1,,,100000000,false,0,10,12004,0.000120,,,,,,,,,\n");
	run_free(&r);
}

static void test_gpu_csv(void **state)
{
	struct fixture *fx = *state;
	char trace[PATH_MAX];
	const char *rows;
	struct run r;

	write_trace(fx->dir, "a.pt.trace.json", gpu_trace);
	join(trace, fx->dir, "a.pt.trace.json");
	r = run_report(fx->dir, (const char *[]){ "--format", "csv", trace, NULL });
	assert_int_equal(r.rc, 0);
	assert_int_equal(strncmp(r.out, CSV_HEAD, strlen(CSV_HEAD)), 0);
	rows = strstr(r.out, "\ngpu_kernel,");
	assert_non_null(rows);
	/* After the threads, before the steps; the launch columns stay empty. */
	assert_non_null(strstr(r.out, "\nthread,main,100,101,7,100.000,7000.000"
				      ",,,,,,,,,,," /* step .. cupti_overhead_ns */
				      ",,,,,,,," /* gpu_total_ns .. gpu_busy_ns */
				      "\ngpu_kernel,"));
	assert_string_equal(
		rows + 1,
		"gpu_kernel,kA,,,3,,,,,,,,,,,,,,18000,6000.000,6000,9920,5666.667,5000,9900,\n"
		"gpu_kernel,kB,,,1,,,,,,,,,,,,,,10000,10000.000,10000,10000,14000.000,14000,14000,\n"
		"gpu_kernel,Memcpy HtoD (Pinned -> Device),,,1,,,,,,,,,,,,,,4000,4000.000,4000,4000,"
		"2000.000,2000,2000,\n"
		"gpu_kernel,graph_node_b,,,1,,,,,,,,,,,,,,3000,3000.000,3000,3000,30000.000,30000,"
		"30000,\n"
		"gpu_kernel,graph_node_a,,,1,,,,,,,,,,,,,,2000,2000.000,2000,2000,28000.000,28000,"
		"28000,\n"
		"gpu_kernel,Memset (Device),,,1,,,,,,,,,,,,,,1000,1000.000,1000,1000,,,,\n"
		"step,,100,,4,57.143,44444.444,1,,,,90000,false,,,,,,,,,,,,,20000\n"
		"step,,100,,3,42.857,50000.000,2,,,,60000,false,,,,,,,,,,,,,12000\n"
		"cycle,train,100,,7,100.000,7000.000,,0,1,2,1000000,false,0,,,,4500,,,,,,,,\n");
	run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_csv_quoting, setup, teardown),
		cmocka_unit_test_setup_teardown(test_steps_and_cycles_csv, setup, teardown),
		cmocka_unit_test_setup_teardown(test_overhead_csv, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gpu_csv, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
