// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cuprobe report, end to end through report_main: small traces written into a
 * scratch folder, the report parsed back and checked number by number.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>
#include "report/report.h"

/* Traces are written with ' for " to keep them readable here. */
#define TRACE_HEAD                                                                              \
	"{'schemaVersion':1,'deviceProperties':[],"                                             \
	"'distributedInfo':{'backend':'','rank':0,'world_size':1},'displayTimeUnit':'ms',"     \
	"'baseTimeNanoseconds':1764500000000000000,'traceEvents':["

#define LAUNCH(api, cat, pid, tid, ts, args)                                                   \
	"{'ph':'X','cat':'" cat "','name':'" api "','pid':" #pid ",'tid':" #tid ",'ts':" ts    \
	",'dur':0.000,'args':" args "},"

#define KERNEL(pid, tid, ts, name)                                                             \
	LAUNCH("cudaLaunchKernel", "cuda_runtime", pid, tid, ts,                               \
	       "{'cbid':211,'correlation':1,'kernel':'" name "','grid':[4,1,1],"                \
	       "'block':[128,1,1],'shared memory':0,'stream':0,'step':0}")

#define THREAD_NAME(pid, tid, name)                                                            \
	"{'ph':'M','name':'thread_name','pid':" #pid ",'tid':" #tid                             \
	",'ts':0.000,'args':{'name':'" name "'}},"

/* Closes traceEvents with an event every trace has. */
#define PROCESS_NAME_END(pid)                                                                  \
	"{'ph':'M','name':'process_name','pid':" #pid ",'tid':0,'ts':0.000,"                    \
	"'args':{'name':'train'}}]"

/* A trace as torch.profiler writes it: no cuprobe block. */
#define KINETO_TAIL(pid) PROCESS_NAME_END(pid) "}"

#define TRACE_TAIL(pid, duration_ns, drops)                                                    \
	PROCESS_NAME_END(pid) ",'traceName':'run_0/host.pt.trace.json',"                       \
	"'cuprobe':{'version':'0.1.0','pid':" #pid ",'command':'train','cycle':0,"              \
	"'partial':false,'duration_ns':" #duration_ns ",'launches':0,'drops':" #drops "}}"

/* A launch made in a step, as cuprobe record writes it with --step. */
#define STEP_KERNEL(pid, tid, ts, name, step)                                                  \
	LAUNCH("cudaLaunchKernel", "cuda_runtime", pid, tid, ts,                               \
	       "{'cbid':211,'correlation':1,'kernel':'" name "','grid':[4,1,1],"                \
	       "'block':[128,1,1],'shared memory':0,'stream handle':'0x0','step':" #step "}")

/* A step's span; more is "" or ",'partial':true". */
#define STEP_SPAN(pid, tid, step, ts, dur, more)                                               \
	"{'ph':'X','cat':'user_annotation','name':'ProfilerStep#" #step "','pid':" #pid        \
	",'tid':" #tid ",'ts':" ts ",'dur':" dur ",'args':{'step':" #step more "}},"

/* The end of a trace recorded with --step: partial is true or false. */
#define STEPS_TAIL(pid, cycle, partial, duration_ns, late, first, last)                        \
	PROCESS_NAME_END(pid) ",'traceName':'host.pt.trace.json',"                             \
	"'cuprobe':{'version':'0.1.0','pid':" #pid ",'command':'train','cycle':" #cycle         \
	",'partial':" #partial ",'start_ns':1,'end_ns':2,'duration_ns':" #duration_ns          \
	",'launches':0,'unnamed_kernels':0,'late_launches':" #late ",'probe_hits':9,"          \
	"'drops':0,'steps':[" #first "," #last "]}}"

/*
 * Ten launches of process 4242: thread 4243 ("worker") makes eight, thread
 * 4244 two. The trace also holds events that must not count: GPU work, a
 * step annotation, a flow, a name for a thread without launches, and an
 * element that is not an object.
 */
static const char main_trace[] =
	TRACE_HEAD
	THREAD_NAME(4242, 4243, "worker")
	THREAD_NAME(4242, 4245, "idle")
	"{'ph':'X','cat':'user_annotation','name':'ProfilerStep#0','pid':4242,'tid':4243,"
	"'ts':1.0,'dur':900.0,'args':{}},"
	KERNEL(4242, 4243, "12.345", "void ns::scale<float>(float*, int)")
	KERNEL(4242, 4243, "12.500", "void ns::scale<float>(float*, int)")
	KERNEL(4242, 4243, "12.700", "void ns::scale<float>(float*, int)")
	LAUNCH("cuLaunchKernel", "cuda_driver", 4242, 4244, "14.0",
	       "{'cbid':307,'correlation':5,'kernel':'vecadd_kernel','grid':[1,1,1],"
	       "'block':[32,1,1],'shared memory':0,'stream':0,'step':0}")
	LAUNCH("cudaMemcpyAsync", "cuda_runtime", 4242, 4243, "13.0",
	       "{'cbid':41,'correlation':2,'bytes':4096,'kind':'HtoD','stream':0,'step':0}")
	LAUNCH("cudaMemcpyAsync", "cuda_runtime", 4242, 4243, "13.1",
	       "{'cbid':41,'correlation':6,'bytes':4096,'kind':'HtoD','stream':0,'step':0}")
	LAUNCH("cudaMemcpyAsync", "cuda_runtime", 4242, 4243, "13.2",
	       "{'cbid':41,'correlation':7,'bytes':64,'kind':'DtoH','stream':0,'step':0}")
	LAUNCH("cudaMemsetAsync", "cuda_runtime", 4242, 4244, "15.0",
	       "{'cbid':51,'correlation':3,'bytes':4096,'value':0,'stream':0,'step':0}")
	LAUNCH("cudaGraphLaunch", "cuda_runtime", 4242, 4243, "16.0",
	       "{'cbid':311,'correlation':4,'graph':'0x55d0c0de','stream':0,'step':0}")
	LAUNCH("cudaLaunchKernel", "cuda_runtime", 4242, 4243, "17.0",
	       "{'cbid':211,'correlation':8,'stream':0,'step':0}")
	"{'ph':'X','cat':'kernel','name':'void ns::scale<float>(float*, int)','pid':0,"
	"'tid':7,'ts':20.0,'dur':3.0,'args':{'device':0,'stream':7,'correlation':1}},"
	"{'ph':'X','cat':'gpu_memcpy','name':'Memcpy HtoD (Pageable -> Device)','pid':0,"
	"'tid':7,'ts':24.0,'dur':1.0,'args':{'device':0,'stream':7,'correlation':2}},"
	"{'ph':'s','cat':'ac2g','name':'ac2g','id':1,'pid':4242,'tid':4243,'ts':12.345},"
	"42,"
	TRACE_TAIL(4242, 2000000000, 0);

struct fixture {
	char *dir;
};

static void join(char *buf, const char *dir, const char *rel)
{
	int n = snprintf(buf, PATH_MAX, "%s/%s", dir, rel);

	assert_in_range(n, 1, PATH_MAX - 1);
}

static void mkdirs_for(const char *path)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = strchr(buf + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			fail_msg("mkdir %s: %s", buf, strerror(errno));
		*p = '/';
	}
}

/* Writes text to dir/rel, turning every ' into ". */
static void write_trace(const char *dir, const char *rel, const char *text)
{
	char path[PATH_MAX];
	FILE *f;

	join(path, dir, rel);
	mkdirs_for(path);
	f = fopen(path, "w");
	assert_non_null(f);
	for (const char *p = text; *p; p++)
		fputc(*p == '\'' ? '"' : *p, f);
	assert_int_equal(fclose(f), 0);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;
	FILE *mem;
	int c;

	if (!f)
		return NULL;
	mem = open_memstream(&buf, &len);
	while ((c = fgetc(f)) != EOF)
		fputc(c, mem);
	fclose(mem);
	fclose(f);
	return buf;
}

static bool exists(const char *dir, const char *rel)
{
	char path[PATH_MAX];

	join(path, dir, rel);
	return access(path, F_OK) == 0;
}

struct run {
	int rc;
	char *out; /* what report_main wrote to stdout and stderr */
	char *err;
};

static void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}

static int redirect(int fd, const char *path)
{
	int saved = dup(fd);
	int tmp = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	dup2(tmp, fd);
	close(tmp);
	return saved;
}

/* Runs `cuprobe report ARGS...` (args ends with NULL), capturing stdout and stderr. */
static struct run run_report(const char *dir, const char *const *args)
{
	char out_path[PATH_MAX], err_path[PATH_MAX];
	char *argv[32] = { "report" };
	int argc = 1, out_fd, err_fd;
	struct run r;

	for (; args[argc - 1]; argc++) {
		assert_true(argc < 31);
		argv[argc] = (char *)args[argc - 1];
	}
	join(out_path, dir, ".stdout");
	join(err_path, dir, ".stderr");
	fflush(stdout);
	fflush(stderr);
	out_fd = redirect(STDOUT_FILENO, out_path);
	err_fd = redirect(STDERR_FILENO, err_path);
	r.rc = report_main(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(out_fd, STDOUT_FILENO);
	dup2(err_fd, STDERR_FILENO);
	close(out_fd);
	close(err_fd);
	r.out = slurp(out_path);
	r.err = slurp(err_path);
	assert_non_null(r.out);
	assert_non_null(r.err);
	return r;
}

/* Runs with --format json -o DIR/report.json and returns the parsed report. */
static json_t *report_json(const char *dir, const char *const *paths)
{
	const char *args[16] = { "--format", "json", "-o" };
	char out[PATH_MAX];
	json_error_t jerr;
	struct run r;
	json_t *root;
	int n = 4;

	join(out, dir, "report.json");
	args[3] = out;
	for (int i = 0; paths[i]; i++) {
		assert_true(n < 15);
		args[n++] = paths[i];
	}
	args[n] = NULL;
	r = run_report(dir, args);
	if (r.rc)
		fail_msg("report failed (%d): %s", r.rc, r.err);
	assert_string_equal(r.out, "");
	run_free(&r);
	assert_false(exists(dir, "report.json.tmp"));
	root = json_load_file(out, 0, &jerr);
	if (!root)
		fail_msg("report is not JSON: %s (line %d)", jerr.text, jerr.line);
	return root;
}

static json_int_t int_at(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);

	if (!json_is_integer(v))
		fail_msg("%s is not an integer", key);
	return json_integer_value(v);
}

static double real_at(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);

	if (!json_is_real(v))
		fail_msg("%s is not a real", key);
	return json_real_value(v);
}

/* rate < 0: the rate must be null. */
static void check_rate(const json_t *row, const char *key, double rate)
{
	if (rate < 0)
		assert_true(json_is_null(json_object_get(row, key)));
	else
		assert_float_equal(real_at(row, key), rate, 1e-9);
}

/* Checks row i of a kernel or API section. */
static void check_row(const json_t *root, const char *section, size_t i, const char *name,
		      const char *count_key, json_int_t count, double share, double rate)
{
	const json_t *arr = json_object_get(root, section);
	const json_t *row = json_array_get(arr, i);
	char rate_key[64];

	assert_non_null(row);
	assert_string_equal(json_string_value(json_object_get(row, "name")), name);
	assert_int_equal(int_at(row, count_key), count);
	assert_float_equal(real_at(row, "share_pct"), share, 1e-9);
	snprintf(rate_key, sizeof(rate_key), "%s_per_s", count_key);
	check_rate(row, rate_key, rate);
}

static void check_thread(const json_t *root, size_t i, json_int_t pid, json_int_t tid,
			 const char *name, json_int_t count, double share, double rate)
{
	const json_t *row = json_array_get(json_object_get(root, "threads"), i);
	const json_t *jname;

	assert_non_null(row);
	assert_int_equal(int_at(row, "pid"), pid);
	assert_int_equal(int_at(row, "tid"), tid);
	jname = json_object_get(row, "name");
	if (name)
		assert_string_equal(json_string_value(jname), name);
	else
		assert_true(json_is_null(jname));
	assert_int_equal(int_at(row, "launches"), count);
	assert_float_equal(real_at(row, "share_pct"), share, 1e-9);
	check_rate(row, "launches_per_s", rate);
}

static size_t section_len(const json_t *root, const char *section)
{
	const json_t *arr = json_object_get(root, section);

	assert_true(json_is_array(arr));
	return json_array_size(arr);
}

/* What a gpu_kernels row must hold; no_delay: the three delays must be null. */
struct gpu_kernel_want {
	const char *name;
	json_int_t count, total_ns;
	double mean_ns;
	json_int_t p50_ns, p99_ns;
	bool no_delay;
	double delay_mean_ns;
	json_int_t delay_p50_ns, delay_p99_ns;
};

static void check_gpu_kernel(const json_t *root, size_t i, struct gpu_kernel_want w)
{
	const json_t *row = json_array_get(json_object_get(root, "gpu_kernels"), i);

	if (!row)
		fail_msg("no gpu_kernels row %zu", i);
	assert_int_equal(json_object_size(row), 9);
	assert_string_equal(json_string_value(json_object_get(row, "name")), w.name);
	assert_int_equal(int_at(row, "count"), w.count);
	assert_int_equal(int_at(row, "total_ns"), w.total_ns);
	assert_float_equal(real_at(row, "mean_ns"), w.mean_ns, 1e-9);
	assert_int_equal(int_at(row, "p50_ns"), w.p50_ns);
	assert_int_equal(int_at(row, "p99_ns"), w.p99_ns);
	if (w.no_delay) {
		assert_true(json_is_null(json_object_get(row, "delay_mean_ns")));
		assert_true(json_is_null(json_object_get(row, "delay_p50_ns")));
		assert_true(json_is_null(json_object_get(row, "delay_p99_ns")));
		return;
	}
	assert_float_equal(real_at(row, "delay_mean_ns"), w.delay_mean_ns, 1e-9);
	assert_int_equal(int_at(row, "delay_p50_ns"), w.delay_p50_ns);
	assert_int_equal(int_at(row, "delay_p99_ns"), w.delay_p99_ns);
}

/* The report's gpu object, keys in the trace's order; want NULL: it must be null. */
static void check_gpu_counts(const json_t *root, const json_int_t *want)
{
	static const char *const keys[] = { "joined_launches", "launches_without_gpu",
					    "launches_without_api_record", "gpu_without_launch",
					    "clock_faults", "cupti_dropped", "missing_at_timeout",
					    "gpu_records" };
	const json_t *gpu = json_object_get(root, "gpu");

	if (!want) {
		if (!json_is_null(gpu))
			fail_msg("gpu is not null");
		return;
	}
	if (!json_is_object(gpu))
		fail_msg("no gpu object");
	assert_int_equal(json_object_size(gpu), 8);
	for (size_t i = 0; i < 8; i++)
		assert_int_equal(int_at(gpu, keys[i]), want[i]);
}

static json_int_t step_gpu_busy(const json_t *root, size_t i)
{
	const json_t *row = json_array_get(json_object_get(root, "steps"), i);

	if (!row)
		fail_msg("no step row %zu", i);
	assert_int_equal(json_object_size(row), 10);
	return int_at(row, "gpu_busy_ns");
}

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

static void test_folders_add_up(void **state)
{
	struct fixture *fx = *state;
	char runs[PATH_MAX], again[PATH_MAX];
	json_t *root;
	struct run r;

	write_trace(fx->dir, "runs/run_0/host_100.1.pt.trace.json",
		    TRACE_HEAD KERNEL(100, 101, "1.0", "k1") KERNEL(100, 101, "2.0", "k1")
			    TRACE_TAIL(100, 1000000000, 3));
	write_trace(fx->dir, "runs/run_1/deep/host_200.2.pt.trace.json",
		    TRACE_HEAD THREAD_NAME(200, 201, "loader") KERNEL(200, 201, "1.0", "k2")
			    KERNEL(200, 202, "2.0", "k1") THREAD_NAME(200, 201, "renamed")
				    TRACE_TAIL(200, 3000000000, 0));
	/* A process that launched nothing in its window still counts as one. */
	write_trace(fx->dir, "runs/run_1/host_300.4.pt.trace.json",
		    TRACE_HEAD TRACE_TAIL(300, 0, 0));
	/* Not traces by name: never opened, or their bad content would fail the run. */
	write_trace(fx->dir, "runs/notes.json", "not json");
	write_trace(fx->dir, "runs/run_1/host_300.3.pt.trace.json.gz", "\x1f\x8b");
	join(runs, fx->dir, "runs");
	/* The same file again, by another path: counted once. */
	join(again, fx->dir, "runs/run_0/../run_0/host_100.1.pt.trace.json");
	root = report_json(fx->dir, (const char *[]){ runs, again, NULL });

	assert_int_equal(int_at(root, "trace_files"), 3);
	assert_int_equal(int_at(root, "processes"), 3);
	assert_int_equal(int_at(root, "launches"), 4);
	assert_int_equal(int_at(root, "wall_ns"), 4000000000);
	assert_int_equal(int_at(root, "drops"), 3);
	assert_int_equal(section_len(root, "kernels"), 2);
	check_row(root, "kernels", 0, "k1", "launches", 3, 75, 0.75);
	check_row(root, "kernels", 1, "k2", "launches", 1, 25, 0.25);
	assert_int_equal(section_len(root, "threads"), 3);
	check_thread(root, 0, 100, 101, NULL, 2, 50, 0.5);
	/* The first name a thread had is kept. */
	check_thread(root, 1, 200, 201, "loader", 1, 25, 0.25);
	check_thread(root, 2, 200, 202, NULL, 1, 25, 0.25);
	json_decref(root);

	/* Drops are also said on stderr, in every format. */
	r = run_report(fx->dir, (const char *[]){ "--format", "csv", runs, NULL });
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.err, "cuprobe report: warning: 3 launch records were dropped"));
	run_free(&r);
}

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

/*
 * A recording with --step of two processes over two cycles, laid out as
 * cuprobe record writes it. File names put pid 200 before pid 100, and the
 * first file holds step 3 before step 2, so that only sorting gives the
 * report's order. Cycle 1 was cut short: its last steps are partial, and
 * three launches came after their cycle was written.
 */
static void write_step_recording(const char *dir)
{
	write_trace(dir, "rec/run_0/b_100.9.pt.trace.json",
		    TRACE_HEAD THREAD_NAME(100, 101, "main")
		    STEP_SPAN(100, 101, 3, "1234.567", "2000.000", "")
		    STEP_SPAN(100, 101, 2, "0.000", "1234.567", "")
		    STEP_KERNEL(100, 101, "1.0", "k1", 2) STEP_KERNEL(100, 101, "2.0", "k1", 2)
		    STEP_KERNEL(100, 101, "3.0", "k1", 2) STEP_KERNEL(100, 102, "1300.0", "k2", 3)
		    STEPS_TAIL(100, 0, false, 5000000, 0, 2, 3));
	write_trace(dir, "rec/run_0/a_200.8.pt.trace.json",
		    TRACE_HEAD STEP_SPAN(200, 201, 2, "0.000", "500.500", "")
		    STEP_SPAN(200, 201, 3, "500.500", "1500.000", "")
		    STEP_KERNEL(200, 201, "1.0", "k1", 2) STEP_KERNEL(200, 201, "600.0", "k1", 3)
		    STEP_KERNEL(200, 201, "601.0", "k1", 3)
		    STEPS_TAIL(200, 0, false, 4000000, 0, 2, 3));
	/* Step 5 has no span (its cycle was not saved): its launch counts in no step. */
	write_trace(dir, "rec/run_1/b_100.9.pt.trace.json",
		    TRACE_HEAD STEP_SPAN(100, 101, 6, "0.000", "3000.001", "")
		    STEP_SPAN(100, 101, 7, "3000.001", "100.000", ",'partial':true")
		    STEP_KERNEL(100, 101, "1.0", "k1", 6) STEP_KERNEL(100, 101, "2.0", "k1", 6)
		    STEP_KERNEL(100, 101, "3001.0", "k2", 7) STEP_KERNEL(100, 101, "0.5", "k2", 5)
		    STEPS_TAIL(100, 1, true, 6000000, 2, 6, 7));
	write_trace(dir, "rec/run_1/a_200.8.pt.trace.json",
		    TRACE_HEAD STEP_SPAN(200, 201, 6, "0.000", "0.999", "")
		    STEP_SPAN(200, 201, 7, "0.999", "0.000", ",'partial':true")
		    STEP_KERNEL(200, 201, "0.5", "k1", 6)
		    STEPS_TAIL(200, 1, true, 3000000, 1, 6, 7));
}

static bool bool_at(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);

	if (!json_is_boolean(v))
		fail_msg("%s is not a boolean", key);
	return json_is_true(v);
}

/* rate < 0: launches_per_ms must be null. */
static void check_step(const json_t *root, size_t i, json_int_t pid, json_int_t step,
		       json_int_t wall_ns, json_int_t launches, bool partial, double rate)
{
	const json_t *row = json_array_get(json_object_get(root, "steps"), i);

	if (!row)
		fail_msg("no step row %zu", i);
	assert_int_equal(json_object_size(row), 10);
	assert_int_equal(int_at(row, "pid"), pid);
	assert_int_equal(int_at(row, "step"), step);
	/* These traces have no cuprobe.gpu object: the busy time is unknown. */
	assert_true(json_is_null(json_object_get(row, "gpu_busy_ns")));
	assert_int_equal(int_at(row, "wall_ns"), wall_ns);
	assert_int_equal(int_at(row, "launches"), launches);
	assert_int_equal(bool_at(row, "partial"), partial);
	check_rate(row, "launches_per_ms", rate);
}

static void check_stat(const json_t *root, size_t i, json_int_t pid, json_int_t steps,
		       double mean_ns, json_int_t p50_ns, json_int_t p99_ns, json_int_t max_ns)
{
	const json_t *row = json_array_get(json_object_get(root, "step_stats"), i);

	if (!row)
		fail_msg("no step_stats row %zu", i);
	assert_int_equal(json_object_size(row), 6);
	assert_int_equal(int_at(row, "pid"), pid);
	assert_int_equal(int_at(row, "steps"), steps);
	assert_float_equal(real_at(row, "mean_ns"), mean_ns, 1e-6);
	assert_int_equal(int_at(row, "p50_ns"), p50_ns);
	assert_int_equal(int_at(row, "p99_ns"), p99_ns);
	assert_int_equal(int_at(row, "max_ns"), max_ns);
}

struct cycle_want {
	json_int_t cycle, pid;
	json_int_t first_step, last_step; /* -1: null */
	json_int_t launches, duration_ns;
	bool partial;
	json_int_t late_launches;
};

static void check_step_bound(const json_t *row, const char *key, json_int_t want)
{
	if (want < 0)
		assert_true(json_is_null(json_object_get(row, key)));
	else
		assert_int_equal(int_at(row, key), want);
}

static void check_cycle(const json_t *root, size_t i, struct cycle_want w)
{
	const json_t *row = json_array_get(json_object_get(root, "cycles"), i);

	if (!row)
		fail_msg("no cycle row %zu", i);
	assert_int_equal(json_object_size(row), 14);
	assert_int_equal(int_at(row, "cycle"), w.cycle);
	assert_int_equal(int_at(row, "pid"), w.pid);
	assert_string_equal(json_string_value(json_object_get(row, "command")), "train");
	check_step_bound(row, "first_step", w.first_step);
	check_step_bound(row, "last_step", w.last_step);
	assert_int_equal(int_at(row, "launches"), w.launches);
	assert_int_equal(int_at(row, "duration_ns"), w.duration_ns);
	assert_int_equal(bool_at(row, "partial"), w.partial);
	assert_int_equal(int_at(row, "late_launches"), w.late_launches);
}

/* want < 0: the key must be there and null. */
static void check_int_or_null(const json_t *obj, const char *key, json_int_t want)
{
	const json_t *v = json_object_get(obj, key);

	if (want < 0) {
		if (!json_is_null(v))
			fail_msg("%s is not null", key);
		return;
	}
	assert_int_equal(int_at(obj, key), want);
}

static void check_real_or_null(const json_t *obj, const char *key, double want)
{
	const json_t *v = json_object_get(obj, key);

	if (want < 0) {
		if (!json_is_null(v))
			fail_msg("%s is not null", key);
		return;
	}
	assert_float_equal(real_at(obj, key), want, 1e-12);
}

/* What cuprobe cost, as a row or the report's overhead object has it; -1: null. */
struct overhead_want {
	json_int_t hits, cost_ns;
	double share;
	double per_hit_min, per_hit_max; /* cycles: per_hit_min only */
	json_int_t cupti_ns;
};

static void check_step_overhead(const json_t *root, size_t i, struct overhead_want w)
{
	const json_t *row = json_array_get(json_object_get(root, "steps"), i);

	if (!row)
		fail_msg("no step row %zu", i);
	check_int_or_null(row, "probe_hits", w.hits);
	check_int_or_null(row, "probe_cost_ns", w.cost_ns);
	check_real_or_null(row, "probe_cost_share", w.share);
}

static void check_cycle_overhead(const json_t *root, size_t i, struct overhead_want w)
{
	const json_t *row = json_array_get(json_object_get(root, "cycles"), i);

	if (!row)
		fail_msg("no cycle row %zu", i);
	check_int_or_null(row, "probe_hits", w.hits);
	check_int_or_null(row, "probe_cost_ns", w.cost_ns);
	check_real_or_null(row, "probe_cost_share", w.share);
	check_real_or_null(row, "probe_ns_per_hit", w.per_hit_min);
	check_int_or_null(row, "cupti_overhead_ns", w.cupti_ns);
}

static void check_overhead(const json_t *root, struct overhead_want w)
{
	const json_t *o = json_object_get(root, "overhead");

	if (!json_is_object(o))
		fail_msg("no overhead object");
	assert_int_equal(json_object_size(o), 6);
	check_int_or_null(o, "probe_hits", w.hits);
	check_int_or_null(o, "probe_cost_ns", w.cost_ns);
	check_real_or_null(o, "share", w.share);
	check_real_or_null(o, "probe_ns_per_hit_min", w.per_hit_min);
	check_real_or_null(o, "probe_ns_per_hit_max", w.per_hit_max);
	check_int_or_null(o, "cupti_overhead_ns", w.cupti_ns);
}

/* Nothing known. */
#define NO_OVERHEAD ((struct overhead_want){ -1, -1, -1, -1, -1, -1 })

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

/* The text report of test_folders_add_up's traces, before steps and cycles were added. */
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

/* The end of a trace whose cuprobe object holds the keys in more. */
#define OVERHEAD_TAIL(pid, cycle, duration_ns, more)                                           \
	PROCESS_NAME_END(pid) ",'traceName':'h.pt.trace.json',"                                \
	"'cuprobe':{'version':'0.1.0','pid':" #pid ",'command':'train','cycle':" #cycle         \
	",'partial':false,'duration_ns':" #duration_ns ",'launches':0,'late_launches':0,"      \
	"'drops':0" more "}}"

/*
 * A recording of what the probes cost. Pid 100 ran two cycles on a machine
 * that measured 1340 ns a hit: 1000 hits in 1 s, then 234 in 0.5 s, with
 * 2.5 ms of CUPTI overhead. Pid 200 ran on one that measured 1200.4 ns. The
 * traces' shares are rounded to 6 decimals; the report computes its own.
 */
static void write_overhead_recording(const char *dir)
{
	write_trace(dir, "ovh/run_0/a.pt.trace.json",
		    TRACE_HEAD STEP_SPAN(100, 101, 2, "0.000", "1000.000",
					 ",'probe_hits':40,'probe_cost_ns':53600,"
					 "'probe_cost_share':0.053600")
		    STEP_SPAN(100, 101, 3, "1000.000", "250.000", ",'partial':true")
		    STEP_KERNEL(100, 101, "1.0", "k1", 2) STEP_KERNEL(100, 101, "2.0", "k1", 2)
		    OVERHEAD_TAIL(100, 0, 1000000000,
				  ",'steps':[2,3],'probe_ns_per_hit':1340.0,'probe_hits':1000,"
				  "'probe_cost_ns':1340000,'probe_cost_share':0.001340"));
	write_trace(dir, "ovh/run_1/a.pt.trace.json",
		    TRACE_HEAD STEP_KERNEL(100, 101, "1.0", "k1", 0)
		    OVERHEAD_TAIL(100, 1, 500000000,
				  ",'probe_ns_per_hit':1340.0,'probe_hits':234,'probe_cost_ns':313560,"
				  "'probe_cost_share':0.000627,'cupti_overhead_ns':2500000"));
	write_trace(dir, "ovh/run_1/b.pt.trace.json",
		    TRACE_HEAD OVERHEAD_TAIL(200, 1, 100000000,
					     ",'probe_ns_per_hit':1200.4,'probe_hits':10,"
					     "'probe_cost_ns':12004,'probe_cost_share':0.000120"));
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

/* A launch with CUPTI's correlation id; step is ",'step':N" or "" (torch.profiler's). */
#define CORR_LAUNCH(api, pid, tid, ts, corr, step, more)                                        \
	LAUNCH(api, "cuda_runtime", pid, tid, ts,                                              \
	       "{'cbid':211,'correlation':" #corr more ",'stream handle':'0x0'" step "}")

#define CORR_KERNEL(pid, tid, ts, name, corr, step)                                            \
	CORR_LAUNCH("cudaLaunchKernel", pid, tid, ts, corr, step, ",'kernel':'" name "'")

/* GPU work as CUPTI gives it: pid is the device, tid CUPTI's stream id. */
#define GPU_WORK(cat, name, device, stream, ts, dur, corr, more)                                \
	"{'ph':'X','cat':'" cat "','name':'" name "','pid':" #device ",'tid':" #stream          \
	",'ts':" ts ",'dur':" dur ",'args':{'device':" #device ",'context':1,'stream':" #stream \
	",'correlation':" #corr more "}},"

#define GPU_KERNEL(name, device, stream, ts, dur, corr)                                        \
	GPU_WORK("kernel", name, device, stream, ts, dur, corr,                                \
		 ",'registers per thread':32,'shared memory':0,'grid':[1,2,1],'block':[64,1,1]")

#define AC2G(ph, id, pid, tid, ts)                                                             \
	"{'ph':'" ph "','cat':'ac2g','name':'ac2g','id':" #id ",'pid':" #pid ",'tid':" #tid     \
	",'ts':" ts "},"

#define GPU_COUNTS(joined, without_gpu, without_api, without_launch, faults, dropped,         \
		   missing, records)                                                           \
	"{'joined_launches':" #joined ",'launches_without_gpu':" #without_gpu                   \
	",'launches_without_api_record':" #without_api ",'gpu_without_launch':" #without_launch \
	",'clock_faults':" #faults ",'cupti_dropped':" #dropped ",'missing_at_timeout':"       \
	#missing ",'gpu_records':" #records "}"

/* The end of a trace recorded with --cupti: gpu is GPU_COUNTS(...). */
#define GPU_TAIL(pid, duration_ns, gpu, more)                                                  \
	PROCESS_NAME_END(pid) ",'traceName':'g.pt.trace.json',"                                \
	"'cuprobe':{'version':'0.1.0','pid':" #pid ",'command':'train','cycle':0,"             \
	"'partial':false,'duration_ns':" #duration_ns ",'launches':0,'late_launches':0,"       \
	"'drops':0" more ",'gpu':" gpu "}}"

/*
 * A --cupti recording of pid 100, steps 1 and 2 (times in µs):
 * step 1: kA [20, 30] on stream 7 and kB [25, 35] on stream 14 overlap, and a
 *   graph launch ran two kernels, [40, 42] and [42, 45]; the union is 20 µs of
 *   the 25 µs they add up to. A launch of kC found no CUPTI record (an id of
 *   2^32 and more).
 * step 2: a copy [102, 106] and kA [110, 116] on device 0, and kA [103, 105]
 *   on device 1: 10 + 2 µs, where one union over both devices would say 10.
 * A memset no launch made has no delay and no step.
 * Some GPU work comes before its launch in the file: the join waits for the end.
 */
static const char gpu_trace[] =
	TRACE_HEAD THREAD_NAME(100, 101, "main")
	GPU_KERNEL("graph_node_b", 0, 14, "42.000", "3.000", 13)
	STEP_SPAN(100, 101, 1, "0.000", "90.000", "")
	STEP_SPAN(100, 101, 2, "90.000", "60.000", "")
	CORR_KERNEL(100, 101, "10.000", "kA", 11, ",'step':1")
	AC2G("s", 11, 100, 101, "10.000")
	CORR_KERNEL(100, 101, "11.000", "kB", 12, ",'step':1")
	CORR_LAUNCH("cudaGraphLaunch", 100, 101, "12.000", 13, ",'step':1", ",'graph':'0x6001'")
	CORR_KERNEL(100, 101, "13.000", "kC", 4294967301, ",'step':1")
	GPU_KERNEL("kA", 0, 7, "20.000", "10.000", 11)
	AC2G("f", 11, 0, 7, "20.000")
	GPU_KERNEL("kB", 0, 14, "25.000", "10.000", 12)
	GPU_WORK("kernel", "graph_node_a", 0, 14, "40.000", "2.000", 13,
		 ",'graph id':24577,'graph node id':6291713")
	CORR_LAUNCH("cudaMemcpyAsync", 100, 101, "100.000", 14, ",'step':2",
		    ",'bytes':4096,'kind':'HtoD'")
	CORR_KERNEL(100, 101, "101.000", "kA", 15, ",'step':2")
	CORR_KERNEL(100, 101, "105.000", "kA", 16, ",'step':2")
	GPU_WORK("gpu_memcpy", "Memcpy HtoD (Pinned -> Device)", 0, 14, "102.000", "4.000", 14,
		 ",'bytes':4096,'memory bandwidth (GB/s)':1.024")
	GPU_KERNEL("kA", 1, 21, "103.000", "2.000", 15)
	GPU_KERNEL("kA", 0, 7, "110.000", "6.000", 16)
	GPU_WORK("gpu_memset", "Memset (Device)", 0, 7, "200.000", "1.000", 99,
		 ",'bytes':64,'value':0")
	GPU_TAIL(100, 1000000, GPU_COUNTS(6, 0, 1, 1, 0, 0, 0, 8),
		 ",'steps':[1,2],'cupti_overhead_ns':4500");

/*
 * Another process, without steps: kD started 0.5 µs before its launch (a
 * clock fault), and a kA whose correlation id only pid 100's trace holds: ids
 * are per process, so it stays unjoined.
 */
static const char gpu_trace_faults[] =
	TRACE_HEAD GPU_KERNEL("kD", 0, 7, "49.500", "1.000", 11)
	CORR_KERNEL(200, 201, "50.000", "kD", 11, "")
	GPU_KERNEL("kA", 0, 7, "60.000", "8.000", 12)
	GPU_TAIL(200, 2000000, GPU_COUNTS(1, 0, 0, 1, 1, 2, 3, 1234), "");

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

static void test_output_file_and_help(void **state)
{
	struct fixture *fx = *state;
	char trace[PATH_MAX], out[PATH_MAX];
	struct run r;
	char *text;

	write_trace(fx->dir, "t.pt.trace.json", main_trace);
	join(trace, fx->dir, "t.pt.trace.json");
	join(out, fx->dir, "report.txt");
	r = run_report(fx->dir, (const char *[]){ trace, "--output", out, NULL });
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.out, "");
	run_free(&r);
	assert_false(exists(fx->dir, "report.txt.tmp"));
	text = slurp(out);
	assert_non_null(text);
	assert_non_null(strstr(text, "Wall time  2.000 s (5.0 launches/s)\n"));
	assert_non_null(strstr(text, "  4242  4243         8  80.00%         4.0  worker\n"));
	free(text);

	r = run_report(fx->dir, (const char *[]){ "--help", NULL });
	assert_int_equal(r.rc, 0);
	assert_non_null(strstr(r.out, "Usage: cuprobe report [--format text|json|csv|folded]"));
	assert_non_null(strstr(r.out, "Examples:\n"));
	assert_string_equal(r.err, "");
	run_free(&r);
}

/* One line on stderr, in the house form, that holds each of the needles. */
static void check_error(const struct run *r, int rc, const char *needle1, const char *needle2)
{
	assert_int_equal(r->rc, rc);
	assert_string_equal(r->out, "");
	assert_int_equal(strncmp(r->err, "cuprobe report: ", 16), 0);
	assert_non_null(strchr(r->err, '\n'));
	assert_string_equal(strchr(r->err, '\n'), "\n");
	if (needle1 && !strstr(r->err, needle1))
		fail_msg("'%s' not in: %s", needle1, r->err);
	if (needle2 && !strstr(r->err, needle2))
		fail_msg("'%s' not in: %s", needle2, r->err);
}

/* Runs a failing report into DIR/out.json and checks that nothing was written. */
static struct run run_failing(const char *dir, const char *path)
{
	char out[PATH_MAX];
	struct run r;

	join(out, dir, "out.json");
	r = run_report(dir, (const char *[]){ "--format", "json", "-o", out, path, NULL });
	assert_false(exists(dir, "out.json"));
	assert_false(exists(dir, "out.json.tmp"));
	return r;
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

static void test_usage_and_write_errors(void **state)
{
	struct fixture *fx = *state;
	char trace[PATH_MAX], out[PATH_MAX];
	struct run r;

	write_trace(fx->dir, "t.pt.trace.json", main_trace);
	join(trace, fx->dir, "t.pt.trace.json");

	r = run_report(fx->dir, (const char *[]){ "--format", "xml", trace, NULL });
	check_error(&r, 2, "unknown format 'xml'", "text, json, csv or folded");
	run_free(&r);

	r = run_report(fx->dir, (const char *[]){ "--format", "json", NULL });
	check_error(&r, 2, "no trace given", NULL);
	run_free(&r);

	r = run_report(fx->dir, (const char *[]){ "--bogus", trace, NULL });
	check_error(&r, 2, "unknown option --bogus", "--help");
	run_free(&r);

	r = run_report(fx->dir, (const char *[]){ trace, "-o", NULL });
	check_error(&r, 2, "missing argument for -o", NULL);
	run_free(&r);

	join(out, fx->dir, "no/such/folder/out.json");
	r = run_report(fx->dir, (const char *[]){ "-o", out, trace, NULL });
	check_error(&r, 1, out, "No such file or directory");
	run_free(&r);

	/* A folder is not replaced; nothing is left behind. */
	join(out, fx->dir, "a_folder");
	assert_int_equal(mkdir(out, 0755), 0);
	r = run_report(fx->dir, (const char *[]){ "-o", out, trace, NULL });
	check_error(&r, 1, out, "not a regular file (a folder): give a path to a regular file");
	run_free(&r);
	assert_false(exists(fx->dir, "a_folder.tmp"));
	assert_false(exists(fx->dir, ".a_folder.tmp"));
}

/* The names in dir, sorted and joined by spaces, but the test's own .stdout and .stderr. */
static char *names_in(const char *dir)
{
	struct dirent **list;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	int n = scandir(dir, &list, NULL, alphasort);

	assert_true(n >= 0);
	for (int i = 0; i < n; i++) {
		const char *name = list[i]->d_name;

		if (strcmp(name, ".") && strcmp(name, "..") && strcmp(name, ".stdout") &&
		    strcmp(name, ".stderr"))
			fprintf(f, "%s%s", len || ftell(f) ? " " : "", name);
		free(list[i]);
	}
	free(list);
	fclose(f);
	return out;
}

static void assert_names(const char *dir, const char *want)
{
	char *got = names_in(dir);

	assert_string_equal(got, want);
	free(got);
}

/* Runs a report into -o out that must be refused with what; nothing may change. */
static void check_refused_output(const char *dir, const char *out, const char *what,
				 const char *trace)
{
	char want[PATH_MAX + 128];
	struct run r;

	snprintf(want, sizeof(want), "-o %s: not a regular file (%s): give a path to a regular file",
		 out, what);
	r = run_report(dir, (const char *[]){ "--format", "json", "-o", out, trace, NULL });
	check_error(&r, 1, want, NULL);
	run_free(&r);
}

/*
 * As root, -o FILE in a folder others can write to: a link, a FIFO, a device
 * or a socket planted at FILE is refused (and never opened, so never blocks),
 * and links planted at the temporary names are never written through.
 */
static void test_output_never_through_links_or_into_special_files(void **state)
{
	struct fixture *fx = *state;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char trace[PATH_MAX], out[PATH_MAX], victim[PATH_MAX], path[PATH_MAX];
	struct run r;
	char *text;
	int sock;

	write_trace(fx->dir, "in/t.pt.trace.json", main_trace);
	join(trace, fx->dir, "in/t.pt.trace.json");
	write_trace(fx->dir, "victim", "secret");
	join(victim, fx->dir, "victim");
	alarm(20); /* a FIFO opened for writing would block: fail rather than hang */

	join(out, fx->dir, "link.json");
	assert_int_equal(symlink(victim, out), 0);
	check_refused_output(fx->dir, out, "a symbolic link", trace);
	join(out, fx->dir, "fifo.json");
	assert_int_equal(mkfifo(out, 0600), 0);
	check_refused_output(fx->dir, out, "a FIFO", trace);
	join(out, fx->dir, "sock.json");
	assert_true(strlen(out) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, out, strlen(out) + 1);
	sock = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(sock, (struct sockaddr *)&sa, sizeof(sa)), 0);
	check_refused_output(fx->dir, out, "a socket", trace);
	close(sock);
	if (!geteuid()) {
		join(out, fx->dir, "null.json");
		assert_int_equal(mknod(out, S_IFCHR | 0666, makedev(1, 3)), 0);
		check_refused_output(fx->dir, out, "a character device", trace);
	}

	/* Links at the temporary names, old and new: the report goes to FILE all the same. */
	join(path, fx->dir, "out.json.tmp");
	assert_int_equal(symlink(victim, path), 0);
	join(path, fx->dir, ".out.json.tmp");
	assert_int_equal(symlink(victim, path), 0);
	join(out, fx->dir, "out.json");
	r = run_report(fx->dir, (const char *[]){ "--format", "json", "-o", out, trace, NULL });
	assert_int_equal(r.rc, 0);
	run_free(&r);
	alarm(0);
	text = slurp(victim);
	assert_string_equal(text, "secret");
	free(text);
	text = slurp(out);
	assert_non_null(strstr(text, "\"launches\": 10,"));
	free(text);
	assert_names(fx->dir, geteuid() ? ".out.json.tmp fifo.json in link.json out.json "
					  "out.json.tmp sock.json victim"
					: ".out.json.tmp fifo.json in link.json null.json out.json "
					  "out.json.tmp sock.json victim");
}

/* -o FILE replaces a regular file whole: a new file, never one rewritten in place. */
static void test_output_replaces_a_regular_file(void **state)
{
	struct fixture *fx = *state;
	char trace[PATH_MAX], out[PATH_MAX];
	struct stat before, after;
	struct run r;
	char *text;

	write_trace(fx->dir, "t.pt.trace.json", main_trace);
	join(trace, fx->dir, "t.pt.trace.json");
	write_trace(fx->dir, "old.txt", "an older report");
	join(out, fx->dir, "old.txt");
	assert_int_equal(stat(out, &before), 0);
	r = run_report(fx->dir, (const char *[]){ "-o", out, trace, NULL });
	assert_int_equal(r.rc, 0);
	assert_string_equal(r.out, "");
	run_free(&r);
	assert_int_equal(stat(out, &after), 0);
	assert_int_not_equal(before.st_ino, after.st_ino);
	text = slurp(out);
	assert_int_equal(strncmp(text, "Traces     1 file, 1 process\n", 29), 0);
	free(text);
	assert_names(fx->dir, "old.txt t.pt.trace.json");
}

/*
 * A PATH, or an entry named *.pt.trace.json in a folder, that is not a regular
 * file is refused without being read: a FIFO would block, a device might not
 * end. Links to traces are read.
 */
static void test_inputs_that_are_not_regular_files(void **state)
{
	struct fixture *fx = *state;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char path[PATH_MAX], trace[PATH_MAX];
	json_t *root;
	struct run r;
	int sock;

	alarm(20); /* fail rather than hang on a FIFO */
	join(path, fx->dir, "fifo.pt.trace.json");
	assert_int_equal(mkfifo(path, 0600), 0);
	r = run_failing(fx->dir, path);
	check_error(&r, 1, path, "not a regular file (a FIFO): pass a trace file or a folder");
	run_free(&r);
	r = run_failing(fx->dir, "/dev/null");
	check_error(&r, 1, "/dev/null: not a regular file (a character device)", NULL);
	run_free(&r);

	/* In a folder: a FIFO, a socket, and a link to a FIFO, each among good traces. */
	write_trace(fx->dir, "d1/a.pt.trace.json", main_trace);
	join(path, fx->dir, "d1/b.pt.trace.json");
	assert_int_equal(mkfifo(path, 0600), 0);
	join(path, fx->dir, "d1");
	r = run_failing(fx->dir, path);
	check_error(&r, 1, "d1/b.pt.trace.json: not a regular file (a FIFO)", NULL);
	run_free(&r);
	write_trace(fx->dir, "d2/a.pt.trace.json", main_trace);
	join(path, fx->dir, "d2/s.pt.trace.json");
	assert_true(strlen(path) < sizeof(sa.sun_path));
	memcpy(sa.sun_path, path, strlen(path) + 1);
	sock = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(sock, (struct sockaddr *)&sa, sizeof(sa)), 0);
	join(path, fx->dir, "d2");
	r = run_failing(fx->dir, path);
	check_error(&r, 1, "d2/s.pt.trace.json: not a regular file (a socket)", NULL);
	run_free(&r);
	close(sock);
	write_trace(fx->dir, "d3/a.pt.trace.json", main_trace);
	join(path, fx->dir, "d3/l.pt.trace.json");
	assert_int_equal(symlink("../fifo.pt.trace.json", path), 0);
	join(path, fx->dir, "d3");
	r = run_failing(fx->dir, path);
	check_error(&r, 1, "d3/l.pt.trace.json: not a regular file (a FIFO)", NULL);
	run_free(&r);
	alarm(0);

	/* Links to traces are read, named or found in a folder. */
	write_trace(fx->dir, "real/t.pt.trace.json", main_trace);
	join(path, fx->dir, "links/l.pt.trace.json");
	mkdirs_for(path);
	assert_int_equal(symlink("../real/t.pt.trace.json", path), 0);
	join(trace, fx->dir, "links");
	root = report_json(fx->dir, (const char *[]){ path, trace, NULL });
	assert_int_equal(int_at(root, "trace_files"), 1);
	assert_int_equal(int_at(root, "launches"), 10);
	json_decref(root);
}

/* -o naming a trace being read, by any path, would lose it: refused, the trace untouched. */
static void test_output_is_an_input(void **state)
{
	struct fixture *fx = *state;
	char trace[PATH_MAX], dir[PATH_MAX], other[PATH_MAX], out[PATH_MAX];
	const char *const cases[][2] = {
		{ "runs/run_0/t.pt.trace.json", "runs/run_0/t.pt.trace.json" },
		{ "runs", "runs/run_0/t.pt.trace.json" },
		{ "runs/run_0/t.pt.trace.json", "runs/hardlink.json" },
	};
	struct run r;
	char *text;

	write_trace(fx->dir, "runs/run_0/t.pt.trace.json", main_trace);
	join(trace, fx->dir, "runs/run_0/t.pt.trace.json");
	join(other, fx->dir, "runs/hardlink.json");
	assert_int_equal(link(trace, other), 0);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		join(dir, fx->dir, cases[i][0]);
		join(out, fx->dir, cases[i][1]);
		r = run_report(fx->dir, (const char *[]){ "--format", "csv", "-o", out, dir, NULL });
		check_error(&r, 1, out, "is one of the input traces: choose another name");
		run_free(&r);
	}
	text = slurp(trace);
	assert_non_null(strstr(text, "\"traceEvents\":["));
	free(text);
	join(dir, fx->dir, "runs");
	assert_names(dir, "hardlink.json run_0");
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Traces read a line at a time so far (user/report/stream.c). */
extern unsigned long report_streamed_files;

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

/* A kernel launch on its own line, as cuprobe record writes it. */
#define LINE_KERNEL(comma)                                                                     \
	"  {'ph':'X','cat':'cuda_runtime','name':'cudaLaunchKernel','pid':5,'tid':6,"         \
	"'ts':1.0,'dur':0.0,'args':{'correlation':1,'kernel':'k'}}" comma "\n"

#define LINES_HEAD "{\n 'schemaVersion': 1,\n 'traceEvents': [\n"
#define LINES_TAIL " ],\n 'cuprobe': {'pid': 5, 'cycle': 0, 'duration_ns': 1000000000}\n}\n"

/* The launches a trace in DIR/REL gives, and whether it was read a line at a time. */
static json_int_t launches_of(const char *dir, const char *rel, const char *text, bool *streamed)
{
	unsigned long before = report_streamed_files;
	char path[PATH_MAX];
	json_int_t n;
	json_t *root;

	write_trace(dir, rel, text);
	join(path, dir, rel);
	root = report_json(dir, (const char *[]){ path, NULL });
	*streamed = report_streamed_files > before;
	n = int_at(root, "launches");
	json_decref(root);
	return n;
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

/* The end of a trace whose cuprobe object has the version and counts given. */
#define COUNTS_TAIL(pid, cycle, version, more)                                                 \
	PROCESS_NAME_END(pid) ",'traceName':'h.pt.trace.json',"                                \
	"'cuprobe':{'version':'" version "','pid':" #pid ",'command':'train','cycle':" #cycle   \
	",'partial':false,'duration_ns':1000000,'launches':0" more "}}"

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

static int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	char tmpl[] = "/tmp/cuprobe-test-report-XXXXXX";

	if (!fx || !mkdtemp(tmpl))
		return -1;
	fx->dir = strdup(tmpl);
	*state = fx;
	return fx->dir ? 0 : -1;
}

static int teardown(void **state)
{
	struct fixture *fx = *state;
	int err = nftw(fx->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);

	free(fx->dir);
	free(fx);
	return err;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_counts_shares_and_order, setup, teardown),
		cmocka_unit_test_setup_teardown(test_folders_add_up, setup, teardown),
		cmocka_unit_test_setup_teardown(test_wall_time_from_events, setup, teardown),
		cmocka_unit_test_setup_teardown(test_zero_wall_time_has_no_rate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_kernels, setup, teardown),
		cmocka_unit_test_setup_teardown(test_csv_quoting, setup, teardown),
		cmocka_unit_test_setup_teardown(test_steps_and_cycles_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_step_percentiles, setup, teardown),
		cmocka_unit_test_setup_teardown(test_steps_and_cycles_text, setup, teardown),
		cmocka_unit_test_setup_teardown(test_steps_and_cycles_csv, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stepless_traces_unchanged, setup, teardown),
		cmocka_unit_test_setup_teardown(test_step_number_from_name, setup, teardown),
		cmocka_unit_test_setup_teardown(test_step_seen_twice, setup, teardown),
		cmocka_unit_test_setup_teardown(test_overhead_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_overhead_text, setup, teardown),
		cmocka_unit_test_setup_teardown(test_overhead_csv, setup, teardown),
		cmocka_unit_test_setup_teardown(test_overhead_unknown, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gpu_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gpu_text, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gpu_csv, setup, teardown),
		cmocka_unit_test_setup_teardown(test_gpu_faults_and_totals, setup, teardown),
		cmocka_unit_test_setup_teardown(test_text_format, setup, teardown),
		cmocka_unit_test_setup_teardown(test_output_file_and_help, setup, teardown),
		cmocka_unit_test_setup_teardown(test_read_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_layouts_agree, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stream_fallback, setup, teardown),
		cmocka_unit_test_setup_teardown(test_usage_and_write_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_output_never_through_links_or_into_special_files,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_output_replaces_a_regular_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_output_is_an_input, setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed_events_each_kind, setup, teardown),
		cmocka_unit_test_setup_teardown(test_malformed_events_reported, setup, teardown),
		cmocka_unit_test_setup_teardown(test_drops_by_trace_version, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nested_and_lost_steps, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unprobed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unnamed_kernels, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inputs_that_are_not_regular_files, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
