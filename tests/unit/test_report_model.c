// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cuprobe report's model (report/model.c): launches counted per kernel, API
 * and thread, with their shares, order and rates; the tables grown past many
 * keys; what the probes cost summed over files; and the counts that add up
 * over files (unnamed kernels, unprobed time, nested calls, lost steps).
 *
 * Small traces are written into a scratch folder, cuprobe report runs on them
 * through report_main and its output is checked number by number
 * (report_fixture.h).
 */
#include "report_fixture.h"

static void test_counts_shares_and_order(void **state)
{
	struct fixture *fx = *state;
	char trace[PATH_MAX];
	json_t *root;

	write_trace(fx->dir, "t.pt.trace.json", main_trace);
	join(trace, fx->dir, "t.pt.trace.json");
	root = report_json(fx->dir, (const char *[]){ trace, NULL });

	assert_int_equal(int_at(root, "schema_version"), 1);
	assert_int_equal(int_at(root, "trace_files"), 1);
	assert_int_equal(int_at(root, "processes"), 1);
	assert_int_equal(int_at(root, "launches"), 10);
	assert_int_equal(int_at(root, "wall_ns"), 2000000000);
	assert_int_equal(int_at(root, "drops"), 0);
	assert_float_equal(real_at(root, "launches_per_s"), 5.0, 1e-9);
	/* The element that is not an object is counted, not used. */
	assert_int_equal(int_at(root, "malformed_events"), 1);

	assert_int_equal(section_len(root, "kernels"), 7);
	check_row(root, "kernels", 0, "void ns::scale<float>(float*, int)", "launches", 3, 30, 1.5);
	check_row(root, "kernels", 1, "Memcpy HtoD", "launches", 2, 20, 1.0);
	/* Ties in byte order of the name. */
	check_row(root, "kernels", 2, "Memcpy DtoH", "launches", 1, 10, 0.5);
	check_row(root, "kernels", 3, "Memset", "launches", 1, 10, 0.5);
	check_row(root, "kernels", 4, "[cudaLaunchKernel]", "launches", 1, 10, 0.5);
	check_row(root, "kernels", 5, "graph 0x55d0c0de", "launches", 1, 10, 0.5);
	check_row(root, "kernels", 6, "vecadd_kernel", "launches", 1, 10, 0.5);

	assert_int_equal(section_len(root, "apis"), 5);
	check_row(root, "apis", 0, "cudaLaunchKernel", "calls", 4, 40, 2.0);
	check_row(root, "apis", 1, "cudaMemcpyAsync", "calls", 3, 30, 1.5);
	check_row(root, "apis", 2, "cuLaunchKernel", "calls", 1, 10, 0.5);
	check_row(root, "apis", 3, "cudaGraphLaunch", "calls", 1, 10, 0.5);
	check_row(root, "apis", 4, "cudaMemsetAsync", "calls", 1, 10, 0.5);

	/* Thread 4245 has a name but no launch: no row. */
	assert_int_equal(section_len(root, "threads"), 2);
	check_thread(root, 0, 4242, 4243, "worker", 8, 80, 4.0);
	check_thread(root, 1, 4242, 4244, NULL, 2, 20, 1.0);

	/*
	 * GPU events without a cuprobe.gpu object (as torch.profiler writes them):
	 * timed and joined, but no join counts. Three launches share id 1: the
	 * first one read, at 12.345 µs, is the kernel's.
	 */
	check_gpu_counts(root, NULL);
	assert_int_equal(section_len(root, "gpu_kernels"), 2);
	check_gpu_kernel(root, 0, (struct gpu_kernel_want){ "void ns::scale<float>(float*, int)",
							    1, 3000, 3000, 3000, 3000, false,
							    7655, 7655, 7655 });
	check_gpu_kernel(root, 1, (struct gpu_kernel_want){ "Memcpy HtoD (Pageable -> Device)", 1,
							    1000, 1000, 1000, 1000, false, 11000,
							    11000, 11000 });
	json_decref(root);
}

static void test_zero_wall_time_has_no_rate(void **state)
{
	struct fixture *fx = *state;
	char trace[PATH_MAX];
	json_t *root;

	write_trace(fx->dir, "one.pt.trace.json", TRACE_HEAD KERNEL(9, 9, "5.0", "k") KINETO_TAIL(9));
	join(trace, fx->dir, "one.pt.trace.json");
	root = report_json(fx->dir, (const char *[]){ trace, NULL });
	assert_int_equal(int_at(root, "wall_ns"), 0);
	assert_true(json_is_null(json_object_get(root, "launches_per_s")));
	check_row(root, "kernels", 0, "k", "launches", 1, 100, -1);
	check_row(root, "apis", 0, "cudaLaunchKernel", "calls", 1, 100, -1);
	check_thread(root, 0, 9, 9, NULL, 1, 100, -1);
	json_decref(root);
}

/* Enough keys to make the tables grow several times. */
static void test_many_kernels(void **state)
{
	enum { NKERNELS = 300 };
	struct fixture *fx = *state;
	char trace[PATH_MAX], name[16];
	size_t row = 0, len = 0;
	json_int_t total = 0;
	char *text = NULL;
	json_t *root;
	FILE *f;

	f = open_memstream(&text, &len);
	assert_non_null(f);
	fputs(TRACE_HEAD, f);
	for (int i = 0; i < NKERNELS; i++) {
		for (int j = 0; j <= i % 5; j++, total++)
			fprintf(f, KERNEL(1, %d, "1.0", "k%03d"), i, i);
	}
	fputs(TRACE_TAIL(1, 1000000000, 0), f);
	assert_int_equal(fclose(f), 0);
	write_trace(fx->dir, "many.pt.trace.json", text);
	free(text);
	join(trace, fx->dir, "many.pt.trace.json");
	root = report_json(fx->dir, (const char *[]){ trace, NULL });

	assert_int_equal(int_at(root, "launches"), total);
	assert_int_equal(section_len(root, "kernels"), NKERNELS);
	assert_int_equal(section_len(root, "threads"), NKERNELS);
	/* Most launches first; equal counts in name order. */
	for (int count = 5; count >= 1; count--) {
		for (int i = count - 1; i < NKERNELS; i += 5, row++) {
			snprintf(name, sizeof(name), "k%03d", i);
			check_row(root, "kernels", row, name, "launches", count,
				  100.0 * count / (double)total, count);
			check_thread(root, row, 1, i, NULL, count, 100.0 * count / (double)total,
				     count);
		}
	}
	json_decref(root);
}

static void test_overhead_json(void **state)
{
	struct fixture *fx = *state;
	char ovh[PATH_MAX];
	json_t *root;

	write_overhead_recording(fx->dir);
	join(ovh, fx->dir, "ovh");
	root = report_json(fx->dir, (const char *[]){ ovh, NULL });

	assert_int_equal(int_at(root, "schema_version"), 1);
	assert_int_equal(int_at(root, "wall_ns"), 1600000000);
	/* 1000 + 234 + 10 hits; two machines, so a range of per-hit costs. */
	check_overhead(root, (struct overhead_want){ 1244, 1665564, 1665564 / 1.6e9, 1200.4,
						     1340.0, 2500000 });
	assert_int_equal(section_len(root, "cycles"), 3);
	check_cycle_overhead(root, 0,
			     (struct overhead_want){ 1000, 1340000, 0.00134, 1340.0, -1, -1 });
	/* 313560 / 500000000 exactly, not the trace's rounded 0.000627. */
	check_cycle_overhead(root, 1, (struct overhead_want){ 234, 313560, 0.00062712, 1340.0,
							      -1, 2500000 });
	check_cycle_overhead(root, 2,
			     (struct overhead_want){ 10, 12004, 0.00012004, 1200.4, -1, -1 });
	assert_int_equal(int_at(json_array_get(json_object_get(root, "cycles"), 2), "pid"), 200);

	/* Step 2 has its cost; partial step 3 has none. */
	assert_int_equal(section_len(root, "steps"), 2);
	check_step(root, 0, 100, 2, 1000000, 2, false, 2.0);
	check_step_overhead(root, 0, (struct overhead_want){ 40, 53600, 0.0536, -1, -1, -1 });
	check_step(root, 1, 100, 3, 250000, 0, true, 0.0);
	check_step_overhead(root, 1, NO_OVERHEAD);
	json_decref(root);
}

/*
 * Unknowns: no keys at all (torch.profiler), keys that are not counts, and a
 * cost without a wall time to divide it by.
 */
static void test_overhead_unknown(void **state)
{
	struct fixture *fx = *state;
	char path[PATH_MAX];
	json_t *root;
	struct run r;

	write_trace(fx->dir, "torch/t.pt.trace.json",
		    TRACE_HEAD KERNEL(9, 9, "1.0", "k") KINETO_TAIL(9));
	join(path, fx->dir, "torch");
	root = report_json(fx->dir, (const char *[]){ path, NULL });
	check_overhead(root, NO_OVERHEAD);
	assert_int_equal(section_len(root, "cycles"), 0);
	json_decref(root);
	r = run_report(fx->dir, (const char *[]){ path, NULL });
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "\nLate       0\nOverhead   -\n\nKernels\n"));
	/* No cycle, so no Overhead table. */
	assert_null(strstr(r.out, "\nOverhead\n"));
	run_free(&r);

	write_trace(fx->dir, "odd/bad.pt.trace.json",
		    TRACE_HEAD OVERHEAD_TAIL(1, 0, 1000, ",'probe_hits':-1,'probe_cost_ns':'x',"
					     "'probe_ns_per_hit':null,'cupti_overhead_ns':-2.5"));
	write_trace(fx->dir, "odd/zero.pt.trace.json",
		    TRACE_HEAD OVERHEAD_TAIL(2, 0, 0, ",'probe_ns_per_hit':1000.0,'probe_hits':3,"
					     "'probe_cost_ns':3000"));
	join(path, fx->dir, "odd");
	root = report_json(fx->dir, (const char *[]){ path, NULL });
	check_cycle_overhead(root, 0, NO_OVERHEAD);
	/* A cost is known, but over a wall time of 0 it has no share. */
	check_cycle_overhead(root, 1, (struct overhead_want){ 3, 3000, -1, 1000.0, -1, -1 });
	check_overhead(root, (struct overhead_want){ 3, 3000, -1, 1000.0, 1000.0, -1 });
	json_decref(root);
	r = run_report(fx->dir, (const char *[]){ path, NULL });
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "\nOverhead   - (3 probe hits x 1000 ns)\n"));
	assert_non_null(strstr(r.out, "      0    1           -       -        -       -         -\n"
				      "      0    2           3    1000    0.003       -         -\n"
				      "  total    -           3    1000    0.003       -         -\n"));
	run_free(&r);
}

/* unprobed_ns adds up, and is said in the text, the JSON and a warning. */
static void test_unprobed(void **state)
{
	struct fixture *fx = *state;
	char dir[PATH_MAX];
	json_t *root;
	struct run r;

	write_trace(fx->dir, "rec/run_0/a.pt.trace.json",
		    TRACE_HEAD COUNTS_TAIL(7, 0, "0.2.0", ",'drops':0,'unprobed_ns':1500000"));
	write_trace(fx->dir, "rec/run_1/a.pt.trace.json",
		    TRACE_HEAD COUNTS_TAIL(7, 1, "0.2.0", ",'drops':0,'unprobed_ns':500000"));
	join(dir, fx->dir, "rec");
	root = report_json(fx->dir, (const char *[]){ dir, NULL });
	assert_int_equal(int_at(root, "unprobed_ns"), 2000000);
	json_decref(root);
	r = run_report(fx->dir, (const char *[]){ dir, NULL });
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "\nUnprobed   2.0 ms (windows recorded before their launch "
				      "probes were in: launches then are missed)\n"));
	assert_non_null(strstr(r.err, "warning: windows recorded 2.0 ms before their launch probes "
				      "were in"));
	run_free(&r);
}

/* nested_skipped and lost_steps add up; lost steps are said in the text and warned about. */
static void test_nested_and_lost_steps(void **state)
{
	struct fixture *fx = *state;
	char dir[PATH_MAX];
	json_t *root;
	struct run r;

	write_trace(fx->dir, "rec/run_0/a.pt.trace.json",
		    TRACE_HEAD KERNEL(7, 7, "1.0", "k")
		    COUNTS_TAIL(7, 0, "0.2.0", ",'drops':0,'nested_skipped':3,'lost_steps':0"));
	write_trace(fx->dir, "rec/run_1/a.pt.trace.json",
		    TRACE_HEAD COUNTS_TAIL(7, 1, "0.2.0", ",'drops':0,'nested_skipped':4,'lost_steps':2"));
	join(dir, fx->dir, "rec");
	root = report_json(fx->dir, (const char *[]){ dir, NULL });
	assert_int_equal(int_at(root, "nested_skipped"), 7);
	assert_int_equal(int_at(root, "lost_steps"), 2);
	assert_int_equal(int_at(root, "malformed_events"), 0);
	json_decref(root);

	r = run_report(fx->dir, (const char *[]){ dir, NULL });
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "\nLate       0\n"
				      "Lost steps 2 (step boundaries lost while recording)\n"
				      "Overhead   -\n"));
	assert_string_equal(r.err, "cuprobe report: warning: 2 step boundaries were lost while "
				   "recording (their events did not fit in the ring buffer), so the "
				   "steps around them are not timed exactly: record again with a "
				   "larger --ringbuf-size\n");
	run_free(&r);
	r = run_report(fx->dir, (const char *[]){ "--format", "csv", dir, NULL });
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "\ncycle,train,7,,0,0.000,0.000,,1,,,1000000,false,0,,,,,,,,,,,,\n"
				      "summary,lost_steps,,,2,,,,,,,,,,,,,,,,,,,,,\n"
				      "summary,nested_skipped,,,7,,,,,,,,,,,,,,,,,,,,,\n"));
	run_free(&r);

	/* Without lost steps, no line: the text header is as before. */
	join(dir, fx->dir, "rec/run_0");
	r = run_report(fx->dir, (const char *[]){ dir, NULL });
	assert_null(strstr(r.out, "Lost steps"));
	assert_string_equal(r.err, "");
	run_free(&r);
}

/* unnamed_kernels adds up over files, and is said in every format when not 0. */
static void test_unnamed_kernels(void **state)
{
	struct fixture *fx = *state;
	char dir[PATH_MAX];
	json_t *root;
	struct run r;

	write_trace(fx->dir, "un/run_0/a.pt.trace.json",
		    TRACE_HEAD KERNEL(7, 7, "1.0", "k")
		    COUNTS_TAIL(7, 0, "0.2.0", ",'drops':0,'unnamed_kernels':5"));
	write_trace(fx->dir, "un/run_1/a.pt.trace.json",
		    TRACE_HEAD COUNTS_TAIL(7, 1, "0.2.0", ",'drops':0,'unnamed_kernels':7"));
	join(dir, fx->dir, "un");
	root = report_json(fx->dir, (const char *[]){ dir, NULL });
	assert_int_equal(int_at(root, "unnamed_kernels"), 12);
	json_decref(root);
	r = run_report(fx->dir, (const char *[]){ dir, NULL });
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "\nUnnamed    12 kernel launches (no symbol, or a handle "
				      "made before cuprobe attached)\n"));
	run_free(&r);
	r = run_report(fx->dir, (const char *[]){ "--format", "csv", dir, NULL });
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "\nsummary,unnamed_kernels,,,12,"));
	run_free(&r);

	/* None unnamed: no line in the text. */
	write_trace(fx->dir, "named/run_0/a.pt.trace.json",
		    TRACE_HEAD COUNTS_TAIL(7, 0, "0.2.0", ",'drops':0,'unnamed_kernels':0"));
	join(dir, fx->dir, "named");
	r = run_report(fx->dir, (const char *[]){ dir, NULL });
	assert_null(strstr(r.out, "Unnamed"));
	run_free(&r);
}

/* A record_function range, as torch.profiler and record --step torch write one. */
#define RANGE(tid, name, ts, dur)                                                              \
	"{'ph':'X','cat':'user_annotation','name':'" name "','pid':7,'tid':" #tid ",'ts':" ts \
	",'dur':" dur ",'args':{}},"

/*
 * record_function ranges: counted and timed by name over files, the most time
 * first, in the text, JSON and CSV; ProfilerStep# spans are steps, never ranges.
 */
static void test_annotations(void **state)
{
	struct fixture *fx = *state;
	char path[PATH_MAX];
	json_t *root, *a;
	struct run r;

	write_trace(fx->dir, "ann/a.pt.trace.json",
		    TRACE_HEAD STEP_SPAN(7, 7, 4, "0.000", "1000.000", "")
			    RANGE(7, "Optimizer.step#SGD.step", "600.000", "300.000")
				    RANGE(7, "Optimizer.zero_grad#SGD.zero_grad", "10.000", "50.000")
					    KINETO_TAIL(7));
	write_trace(fx->dir, "ann/b.pt.trace.json",
		    TRACE_HEAD STEP_SPAN(7, 7, 5, "0.000", "1000.000", "")
			    RANGE(7, "Optimizer.step#SGD.step", "700.000", "100.000")
				    KINETO_TAIL(7));
	join(path, fx->dir, "ann");
	root = report_json(fx->dir, (const char *[]){ path, NULL });
	a = json_object_get(root, "annotations");
	assert_int_equal(json_array_size(a), 2);
	assert_string_equal(json_string_value(json_object_get(json_array_get(a, 0), "name")),
			    "Optimizer.step#SGD.step");
	assert_int_equal(int_at(json_array_get(a, 0), "calls"), 2);
	assert_int_equal(int_at(json_array_get(a, 0), "total_ns"), 400000);
	assert_int_equal(int_at(json_array_get(a, 1), "calls"), 1);
	assert_int_equal(int_at(json_array_get(a, 1), "total_ns"), 50000);
	assert_int_equal(section_len(root, "steps"), 2);
	json_decref(root);
	r = run_report(fx->dir, (const char *[]){ path, NULL });
	assert_int_equal(r.rc, 0);
	/* 0.4 ms of 2 ms of steps. */
	assert_non_null(strstr(r.out, "\nAnnotations (record_function ranges)\n"
				      "  CALLS  TOTAL MS  MEAN MS  STEP %  NAME\n"
				      "      2     0.400    0.200   20.00  Optimizer.step#SGD.step\n"
				      "      1     0.050    0.050    2.50  Optimizer.zero_grad#SGD.zero_grad\n"));
	run_free(&r);
}

/*
 * Each step split by its ranges: the DataLoader's and the optimizer's that
 * begin in it, of its process; the rest is the step's other time.
 */
static void test_step_parts(void **state)
{
	struct fixture *fx = *state;
	char path[PATH_MAX];
	json_t *root, *st;
	struct run r;

	write_trace(fx->dir, "parts/a.pt.trace.json",
		    TRACE_HEAD STEP_SPAN(7, 7, 4, "0.000", "1000.000", "")
			    STEP_SPAN(7, 7, 5, "1000.000", "1000.000", "")
				    RANGE(7, "enumerate(DataLoader)#It.__next__", "20.000", "200.000")
					    RANGE(7, "Optimizer.zero_grad#SGD.zero_grad", "300.000", "50.000")
						    RANGE(7, "Optimizer.step#SGD.step", "700.000", "250.000")
							    RANGE(7, "train_step", "10.000", "980.000")
								    RANGE(7, "Optimizer.step#SGD.step", "1500.000", "100.000")
									    KINETO_TAIL(7));
	join(path, fx->dir, "parts");
	root = report_json(fx->dir, (const char *[]){ path, NULL });
	st = json_array_get(json_object_get(root, "steps"), 0);
	assert_int_equal(int_at(st, "data_ns"), 200000);
	assert_int_equal(int_at(st, "optimizer_ns"), 300000);
	st = json_array_get(json_object_get(root, "steps"), 1);
	assert_int_equal(int_at(st, "data_ns"), 0);
	assert_int_equal(int_at(st, "optimizer_ns"), 100000);
	json_decref(root);
	r = run_report(fx->dir, (const char *[]){ path, NULL });
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "\nStep parts (record_function ranges)\n"
				      "  PID  STEP  WALL MS  DATA MS  OPTIMIZER MS  REST MS\n"
				      "    7     4    1.000    0.200         0.300    0.500\n"
				      "    7     5    1.000    0.000         0.100    0.900\n"));
	run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_counts_shares_and_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_zero_wall_time_has_no_rate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_kernels, setup, teardown),
		cmocka_unit_test_setup_teardown(test_overhead_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_overhead_unknown, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nested_and_lost_steps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unprobed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unnamed_kernels, setup, teardown),
		cmocka_unit_test_setup_teardown(test_annotations, setup, teardown),
		cmocka_unit_test_setup_teardown(test_step_parts, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
