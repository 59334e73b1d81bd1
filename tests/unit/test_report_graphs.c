// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Graph replays in cuprobe report (report/graphs.c): each replay of a known
 * content adds its kernels to the Kernels table, with a "from graphs" count;
 * the Graphs line, the JSON graphs object and the CSV rows say what the
 * replays ran; contents count once per process over files; replays of
 * unknown content and CUPTI's mismatches are warned; what is not whole is
 * counted malformed; folded stacks put a replay's kernels under its stack;
 * and graph launches that name no content report as they always did.
 *
 * The traces are written on one line (report/scan.c reads them); the e2e
 * fixture tests/e2e/fixtures/graphs.pt.trace.json is in cuprobe's line layout.
 */
#include "report_fixture.h"

#define GRAPH_LAUNCH(ts, corr, handle, content, more)                                           \
	LAUNCH("cudaGraphLaunch", "cuda_runtime", 4242, 4243, ts,                               \
	       "{'cbid':311,'correlation':" #corr ",'graph':'" handle "','graph content':"       \
	       #content ",'stream handle':'0x0','step':0" more "}")

/* Content A: gemm x3 and relu x1, a copy; B: relu x2, softmax x5, a set. */
#define GRAPH_A(id, origin)                                                                     \
	"{'id':" #id ",'origin':'" origin "','nodes':5,'kernels':4,'copies':1,'sets':0,"        \
	"'other':0,'kernel_nodes':[{'kernel':'gemm','grid':[4,1,1],'block':[128,1,1],"         \
	"'shared memory':0,'count':3},{'kernel':'relu','grid':[4,1,1],'block':[128,1,1],"      \
	"'shared memory':0,'count':1}],'copy_nodes':[{'bytes':4096,'kind':'HtoD','count':1}],"  \
	"'set_nodes':[]}"
#define GRAPH_B(id)                                                                             \
	"{'id':" #id ",'origin':'built','nodes':8,'kernels':7,'copies':0,'sets':1,'other':0,"   \
	"'kernel_nodes':[{'kernel':'relu','grid':[8,1,1],'block':[256,1,1],'shared memory':0," \
	"'count':2},{'kernel':'softmax(float*, int)','grid':[1,1,1],'block':[1024,1,1],"        \
	"'shared memory':4096,'count':5}],'copy_nodes':[],'set_nodes':[{'bytes':64,'count':1}]}"

/* The end of a trace whose cuprobe object lists graphs; more: other keys, from ','. */
#define GRAPHS_TAIL(pid, cycle, graphs, more)                                                   \
	PROCESS_NAME_END(pid) ",'traceName':'x.pt.trace.json','cuprobe':{'version':'0.2.0',"    \
	"'pid':" #pid ",'command':'train','cycle':" #cycle ",'partial':false,"                  \
	"'duration_ns':1000000000,'launches':0,'drops':0" more ",'graphs':[" graphs "]}}"

/* Two plain gemm launches; A three times, B twice, one of unknown content. */
static const char graphs_trace[] =
	TRACE_HEAD
	KERNEL(4242, 4243, "1.0", "gemm") KERNEL(4242, 4243, "2.0", "gemm")
	GRAPH_LAUNCH("3.0", 3, "0xa1", 1, "") GRAPH_LAUNCH("4.0", 4, "0xa1", 1, "")
	GRAPH_LAUNCH("5.0", 5, "0xa1", 1, "") GRAPH_LAUNCH("6.0", 6, "0xb2", 2, "")
	GRAPH_LAUNCH("7.0", 7, "0xb2", 2, "") GRAPH_LAUNCH("8.0", 8, "0xc3", 0, "")
	GRAPHS_TAIL(4242, 0, GRAPH_A(1, "capture") "," GRAPH_B(2), "");

/* Row i of the Kernels table, with its from_graphs count; the traces last wall_s seconds. */
static void check_kernel(const json_t *root, size_t i, const char *name, json_int_t launches,
			 json_int_t from_graphs, json_int_t total, double wall_s)
{
	const json_t *row = json_array_get(json_object_get(root, "kernels"), i);

	check_row(root, "kernels", i, name, "launches", launches, 100.0 * launches / total,
		  (double)launches / wall_s);
	assert_int_equal(json_object_size(row), 5);
	assert_int_equal(int_at(row, "from_graphs"), from_graphs);
}

struct graphs_want {
	json_int_t replays, unknown, contents, kernels, copies, sets;
	json_int_t gpu_kernels, mismatches; /* -1: null */
};

static void check_graphs(const json_t *root, struct graphs_want w)
{
	const json_t *g = json_object_get(root, "graphs");

	if (!json_is_object(g))
		fail_msg("no graphs object");
	assert_int_equal(json_object_size(g), 8);
	assert_int_equal(int_at(g, "replays"), w.replays);
	assert_int_equal(int_at(g, "unknown_replays"), w.unknown);
	assert_int_equal(int_at(g, "contents"), w.contents);
	assert_int_equal(int_at(g, "kernels"), w.kernels);
	assert_int_equal(int_at(g, "copies"), w.copies);
	assert_int_equal(int_at(g, "sets"), w.sets);
	check_step_bound(g, "gpu_kernels", w.gpu_kernels);
	check_step_bound(g, "mismatches", w.mismatches);
}

static void test_replays_in_kernels(void **state)
{
	struct fixture *fx = *state;
	char trace[PATH_MAX];
	json_t *root;

	write_trace(fx->dir, "t.pt.trace.json", graphs_trace);
	join(trace, fx->dir, "t.pt.trace.json");
	root = report_json(fx->dir, (const char *[]){ trace, NULL });
	/* Launches stay the events: a replay is one launch. */
	assert_int_equal(int_at(root, "launches"), 8);
	assert_int_equal(int_at(root, "malformed_events"), 0);
	check_graphs(root, (struct graphs_want){ 6, 1, 2, 26, 3, 2, -1, -1 });
	/* Shares are of the table's own total: 8 launches and 26 kernels of replays. */
	assert_int_equal(section_len(root, "kernels"), 6);
	check_kernel(root, 0, "gemm", 11, 9, 34, 1);
	check_kernel(root, 1, "softmax(float*, int)", 10, 10, 34, 1);
	check_kernel(root, 2, "relu", 7, 7, 34, 1);
	check_kernel(root, 3, "graph 0xa1", 3, 0, 34, 1);
	check_kernel(root, 4, "graph 0xb2", 2, 0, 34, 1);
	check_kernel(root, 5, "graph 0xc3", 1, 0, 34, 1);
	/* APIs and threads count launches, as before. */
	check_row(root, "apis", 0, "cudaGraphLaunch", "calls", 6, 75, 6.0);
	check_row(root, "apis", 1, "cudaLaunchKernel", "calls", 2, 25, 2.0);
	check_thread(root, 0, 4242, 4243, NULL, 8, 100, 8.0);
	assert_int_equal(int_at(json_array_get(json_object_get(root, "cycles"), 0), "launches"), 8);
	json_decref(root);
}

static void test_replays_text_and_warning(void **state)
{
	struct fixture *fx = *state;
	char trace[PATH_MAX];
	struct run r;

	write_trace(fx->dir, "t.pt.trace.json", graphs_trace);
	join(trace, fx->dir, "t.pt.trace.json");
	r = run_report(fx->dir, (const char *[]){ trace, NULL });
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "\nGraphs     5 replays of 2 graphs ran 26 kernels, 3 "
				      "copies, 2 sets; 1 replay of a graph of unknown content\n"));
	assert_non_null(strstr(r.out,
			       "\nKernels\n"
			       "  LAUNCHES   SHARE  LAUNCHES/S  FROM GRAPHS  KERNEL\n"
			       "        11  32.35%        11.0            9  gemm\n"
			       "        10  29.41%        10.0           10  softmax(float*, int)\n"
			       "         7  20.59%         7.0            7  relu\n"
			       "         3   8.82%         3.0            0  graph 0xa1\n"));
	/* The other tables have no such column. */
	assert_non_null(strstr(r.out, "\nAPIs\n  CALLS   SHARE  CALLS/S  API\n"));
	assert_non_null(strstr(r.err, "warning: 1 graph replay ran graphs of unknown content"));
	assert_non_null(strstr(r.err, "attach with -p before the graphs are captured"));
	assert_null(strstr(r.err, "CUPTI"));
	run_free(&r);
}

static void test_replays_csv(void **state)
{
	struct fixture *fx = *state;
	char trace[PATH_MAX];
	struct run r;

	write_trace(fx->dir, "t.pt.trace.json", graphs_trace);
	join(trace, fx->dir, "t.pt.trace.json");
	r = run_report(fx->dir, (const char *[]){ "--format", "csv", trace, NULL });
	assert_int_equal(r.rc, 0);
	/* The kernel rows, then of them what the replays ran; all 26 columns. */
	assert_non_null(strstr(r.out, "\nkernel,graph 0xc3,,,1,2.941,1.000,,,,,,,,,,,,,,,,,,,\n"
				      "graph_kernel,gemm,,,9,26.471,9.000,,,,,,,,,,,,,,,,,,,\n"
				      "graph_kernel,\"softmax(float*, int)\",,,10,29.412,10.000"
				      ",,,,,,,,,,,,,,,,,,,\n"
				      "graph_kernel,relu,,,7,20.588,7.000,,,,,,,,,,,,,,,,,,,\n"
				      "api,cudaGraphLaunch,,,6,75.000,6.000,"));
	assert_non_null(strstr(r.out, "\nsummary,graph_replays,,,6,,,,,,,,,,,,,,,,,,,,,\n"
				      "summary,graph_unknown_replays,,,1,,,,,,,,,,,,,,,,,,,,,\n"
				      "summary,graph_contents,,,2,,,,,,,,,,,,,,,,,,,,,\n"
				      "summary,graph_kernels,,,26,,,,,,,,,,,,,,,,,,,,,\n"
				      "summary,graph_copies,,,3,,,,,,,,,,,,,,,,,,,,,\n"
				      "summary,graph_sets,,,2,,,,,,,,,,,,,,,,,,,,,\n"));
	assert_null(strstr(r.out, "graph_mismatches"));
	run_free(&r);
}

/*
 * A second cycle replays A again under another id and as a clone, and an id
 * its list lacks; another process replays A: contents count per process.
 */
static void test_replays_over_files(void **state)
{
	struct fixture *fx = *state;
	char dir[PATH_MAX];
	json_t *root;
	struct run r;

	write_trace(fx->dir, "rec/run_0/a.pt.trace.json", graphs_trace);
	write_trace(fx->dir, "rec/run_1/a.pt.trace.json",
		    TRACE_HEAD GRAPH_LAUNCH("1.0", 1, "0xd4", 7, "")
		    GRAPH_LAUNCH("2.0", 2, "0xe5", 9, "")
		    GRAPHS_TAIL(4242, 1, GRAPH_A(7, "cloned"), ""));
	write_trace(fx->dir, "rec/run_1/b.pt.trace.json",
		    TRACE_HEAD
		    LAUNCH("cudaGraphLaunch", "cuda_runtime", 5000, 5000, "1.0",
			   "{'cbid':311,'correlation':1,'graph':'0xa1','graph content':1}")
		    GRAPHS_TAIL(5000, 1, GRAPH_A(1, "capture"), ""));
	join(dir, fx->dir, "rec");
	root = report_json(fx->dir, (const char *[]){ dir, NULL });
	check_graphs(root, (struct graphs_want){ 9, 2, 3, 34, 5, 2, -1, -1 });
	assert_int_equal(int_at(root, "launches"), 11);
	check_kernel(root, 0, "gemm", 17, 15, 45, 3);
	check_kernel(root, 1, "softmax(float*, int)", 10, 10, 45, 3);
	check_kernel(root, 2, "relu", 9, 9, 45, 3);
	json_decref(root);
	r = run_report(fx->dir, (const char *[]){ dir, NULL });
	assert_non_null(strstr(r.out, "\nGraphs     7 replays of 3 graphs ran 34 kernels, 5 "
				      "copies, 2 sets; 2 replays of graphs of unknown content\n"));
	assert_non_null(strstr(r.err, "warning: 2 graph replays ran graphs of unknown content"));
	run_free(&r);
}

/* With --cupti: what CUPTI joined to the replays, and the replays it disagrees on. */
static void test_replays_cupti(void **state)
{
	struct fixture *fx = *state;
	char trace[PATH_MAX];
	json_t *root;
	struct run r;

	write_trace(fx->dir, "t.pt.trace.json",
		    TRACE_HEAD GRAPH_LAUNCH("1.0", 1, "0xa1", 1, "")
		    GRAPH_LAUNCH("2.0", 2, "0xa1", 1, "")
		    GRAPHS_TAIL(4242, 0, GRAPH_A(1, "capture"),
				",'graph_gpu_kernels':7,'graph_mismatches':1"));
	join(trace, fx->dir, "t.pt.trace.json");
	root = report_json(fx->dir, (const char *[]){ trace, NULL });
	check_graphs(root, (struct graphs_want){ 2, 0, 1, 8, 2, 0, 7, 1 });
	json_decref(root);
	r = run_report(fx->dir, (const char *[]){ trace, NULL });
	assert_non_null(strstr(r.out, "\nGraphs     2 replays of 1 graph ran 8 kernels, 2 copies; "
				      "1 replay ran another number of kernels on the GPU\n"));
	assert_non_null(strstr(r.err, "warning: 1 graph replay ran another number of kernels on "
				      "the GPU (CUPTI)"));
	assert_null(strstr(r.err, "unknown content"));
	run_free(&r);
	r = run_report(fx->dir, (const char *[]){ "--format", "csv", trace, NULL });
	assert_non_null(strstr(r.out, "\nsummary,graph_gpu_kernels,,,7,,,,,,,,,,,,,,,,,,,,,\n"
				      "summary,graph_mismatches,,,1,,,,,,,,,,,,,,,,,,,,,\n"));
	run_free(&r);
}

/*
 * A mistyped content skips its launch; a kernel node without its count, and
 * a content without an id, are not used: each is counted malformed.
 */
static void test_replays_malformed(void **state)
{
	struct fixture *fx = *state;
	char trace[PATH_MAX];
	json_t *root;

	write_trace(fx->dir, "t.pt.trace.json",
		    TRACE_HEAD GRAPH_LAUNCH("1.0", 1, "0xa1", '1', "")
		    GRAPH_LAUNCH("2.0", 2, "0xa1", -1, "")
		    GRAPH_LAUNCH("3.0", 3, "0xb2", 2, "")
		    GRAPHS_TAIL(4242, 0,
				"{'origin':'capture','kernels':0},"
				"{'id':2,'kernels':2,'kernel_nodes':[{'kernel':'k','count':2},"
				"{'kernel':'no_count'},{'count':1}]}", ""));
	join(trace, fx->dir, "t.pt.trace.json");
	root = report_json(fx->dir, (const char *[]){ trace, NULL });
	assert_int_equal(int_at(root, "launches"), 1);
	assert_int_equal(int_at(root, "malformed_events"), 5);
	check_graphs(root, (struct graphs_want){ 1, 0, 1, 2, 0, 0, -1, -1 });
	check_kernel(root, 0, "k", 2, 2, 3, 1);
	check_kernel(root, 1, "graph 0xb2", 1, 0, 3, 1);
	json_decref(root);
}

/* Graph launches that name no content (traces before graphs were followed): as before. */
static void test_graph_launches_without_content(void **state)
{
	struct fixture *fx = *state;
	char trace[PATH_MAX];
	json_t *root;
	struct run r;

	write_trace(fx->dir, "t.pt.trace.json", main_trace);
	join(trace, fx->dir, "t.pt.trace.json");
	root = report_json(fx->dir, (const char *[]){ trace, NULL });
	assert_null(json_object_get(root, "graphs"));
	assert_int_equal(json_object_size(json_array_get(json_object_get(root, "kernels"), 0)), 4);
	json_decref(root);
	r = run_report(fx->dir, (const char *[]){ trace, NULL });
	assert_null(strstr(r.out, "Graphs"));
	assert_null(strstr(r.out, "FROM GRAPHS"));
	run_free(&r);
	r = run_report(fx->dir, (const char *[]){ "--format", "csv", trace, NULL });
	assert_null(strstr(r.out, "graph_"));
	run_free(&r);
}

/* Frames 1 (root) and 2; frame 3 is the graph launch's own, as native stacks end. */
#define SPAN(name, id, parent)                                                                  \
	"{'ph':'X','cat':'python_function','name':'" name "','pid':4242,'tid':4243,'ts':1.0,"  \
	"'dur':9.0,'args':{'Python id':" #id parent ",'Python thread':4243}},"

static const char stack_trace[] =
	TRACE_HEAD
	SPAN("train.py(1): <module>", 1, "") SPAN("train.py(2): step", 2, ",'Python parent id':1")
	SPAN("cudaGraphLaunch", 3, ",'Python parent id':2")
	GRAPH_LAUNCH("3.0", 3, "0xa1", 1, ",'Python parent id':3")
	GRAPH_LAUNCH("4.0", 4, "0xa1", 1, ",'Python parent id':3")
	GRAPH_LAUNCH("5.0", 5, "0xb2", 2, ",'Python parent id':2")
	GRAPH_LAUNCH("6.0", 6, "0xc3", 0, ",'Python parent id':2")
	GPU_KERNEL("gemm", 0, 7, "20.0", "1.000", 3) GPU_KERNEL("gemm", 0, 7, "22.0", "2.000", 3)
	GPU_KERNEL("relu", 0, 7, "25.0", "0.500", 3)
	GPU_KERNEL("k_unknown", 0, 7, "30.0", "4.000", 6)
	GRAPHS_TAIL(4242, 0, GRAPH_A(1, "capture") "," GRAPH_B(2),
		    ",'stacks':{'taken':4,'lost':0,'truncated':0,'unsymbolized_frames':0,"
		    "'python':4,'python_lost':0}");

static void test_replays_folded(void **state)
{
	struct fixture *fx = *state;
	char trace[PATH_MAX];
	struct run r;

	write_trace(fx->dir, "t.pt.trace.json", stack_trace);
	join(trace, fx->dir, "t.pt.trace.json");
	r = run_report(fx->dir, (const char *[]){ "--format", "folded", trace, NULL });
	assert_int_equal(r.rc, 0);
	/* The frame of cudaGraphLaunch once: the stack's own, else added. */
	assert_string_equal(r.out,
			    "train.py(1): <module>;train.py(2): step;cudaGraphLaunch;"
			    "[graph of unknown content] 1\n"
			    "train.py(1): <module>;train.py(2): step;cudaGraphLaunch;gemm 6\n"
			    "train.py(1): <module>;train.py(2): step;cudaGraphLaunch;relu 4\n"
			    "train.py(1): <module>;train.py(2): step;cudaGraphLaunch;"
			    "softmax(float*, int) 5\n");
	assert_non_null(strstr(r.err, "warning: 1 graph replay ran graphs of unknown content"));
	run_free(&r);
	/* GPU ns: each GPU event of a replay under its own name; the replay without any, none. */
	r = run_report(fx->dir, (const char *[]){ "--format", "folded", "--weight", "gpu", trace,
						  NULL });
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.out,
			    "train.py(1): <module>;train.py(2): step;cudaGraphLaunch;gemm 3000\n"
			    "train.py(1): <module>;train.py(2): step;cudaGraphLaunch;"
			    "k_unknown 4000\n"
			    "train.py(1): <module>;train.py(2): step;cudaGraphLaunch;relu 500\n");
	assert_non_null(strstr(r.err, "warning: 2 launches have no GPU work"));
	run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_replays_in_kernels, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replays_text_and_warning, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replays_csv, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replays_over_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replays_cupti, setup, teardown),
		cmocka_unit_test_setup_teardown(test_replays_malformed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_graph_launches_without_content, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_replays_folded, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
