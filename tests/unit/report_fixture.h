/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the unit tests of cuprobe report (tests/unit/test_report_*.c) share:
 * the traces they write, with ' for " to keep them readable; a scratch
 * folder per test (setup, teardown); cuprobe report run through report_main
 * with its stdout and stderr captured (run_report, report_json); and the
 * checks of the JSON report's rows. Each test file takes what it needs:
 * functions are static inline and data unused-tolerant, so that -Wall -Werror
 * lets a file leave the rest unused. A check fails the calling test through
 * cmocka; the helpers that return memory say who frees it.
 */
#ifndef TESTS_UNIT_REPORT_FIXTURE_H
#define TESTS_UNIT_REPORT_FIXTURE_H

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
#include "cmd/commands.h"

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
static const char main_trace[] __attribute__((unused)) =
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

static inline void join(char *buf, const char *dir, const char *rel)
{
	int n = snprintf(buf, PATH_MAX, "%s/%s", dir, rel);

	assert_in_range(n, 1, PATH_MAX - 1);
}

static inline void mkdirs_for(const char *path)
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
static inline void write_trace(const char *dir, const char *rel, const char *text)
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

static inline char *slurp(const char *path)
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

static inline bool exists(const char *dir, const char *rel)
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

static inline void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}

static inline int redirect(int fd, const char *path)
{
	int saved = dup(fd);
	int tmp = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	dup2(tmp, fd);
	close(tmp);
	return saved;
}

/* Runs `cuprobe report ARGS...` (args ends with NULL), capturing stdout and stderr. */
static inline struct run run_report(const char *dir, const char *const *args)
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
static inline json_t *report_json(const char *dir, const char *const *paths)
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

static inline json_int_t int_at(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);

	if (!json_is_integer(v))
		fail_msg("%s is not an integer", key);
	return json_integer_value(v);
}

static inline double real_at(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);

	if (!json_is_real(v))
		fail_msg("%s is not a real", key);
	return json_real_value(v);
}

/* rate < 0: the rate must be null. */
static inline void check_rate(const json_t *row, const char *key, double rate)
{
	if (rate < 0)
		assert_true(json_is_null(json_object_get(row, key)));
	else
		assert_float_equal(real_at(row, key), rate, 1e-9);
}

/* Checks row i of a kernel or API section. */
static inline void check_row(const json_t *root, const char *section, size_t i, const char *name,
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

static inline void check_thread(const json_t *root, size_t i, json_int_t pid, json_int_t tid,
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

static inline size_t section_len(const json_t *root, const char *section)
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

static inline void check_gpu_kernel(const json_t *root, size_t i, struct gpu_kernel_want w)
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
static inline void check_gpu_counts(const json_t *root, const json_int_t *want)
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

static inline json_int_t step_gpu_busy(const json_t *root, size_t i)
{
	const json_t *row = json_array_get(json_object_get(root, "steps"), i);

	if (!row)
		fail_msg("no step row %zu", i);
	assert_int_equal(json_object_size(row), 12);
	return int_at(row, "gpu_busy_ns");
}

/*
 * A recording with --step of two processes over two cycles, laid out as
 * cuprobe record writes it. File names put pid 200 before pid 100, and the
 * first file holds step 3 before step 2, so that only sorting gives the
 * report's order. Cycle 1 was cut short: its last steps are partial, and
 * three launches came after their cycle was written.
 */
static inline void write_step_recording(const char *dir)
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

static inline bool bool_at(const json_t *obj, const char *key)
{
	const json_t *v = json_object_get(obj, key);

	if (!json_is_boolean(v))
		fail_msg("%s is not a boolean", key);
	return json_is_true(v);
}

/* rate < 0: launches_per_ms must be null. */
static inline void check_step(const json_t *root, size_t i, json_int_t pid, json_int_t step,
			      json_int_t wall_ns, json_int_t launches, bool partial, double rate)
{
	const json_t *row = json_array_get(json_object_get(root, "steps"), i);

	if (!row)
		fail_msg("no step row %zu", i);
	assert_int_equal(json_object_size(row), 12);
	assert_int_equal(int_at(row, "pid"), pid);
	assert_int_equal(int_at(row, "step"), step);
	/* These traces have no cuprobe.gpu object: the busy time is unknown. */
	assert_true(json_is_null(json_object_get(row, "gpu_busy_ns")));
	/* Nor record_function ranges: no parts. */
	assert_true(json_is_null(json_object_get(row, "data_ns")));
	assert_true(json_is_null(json_object_get(row, "optimizer_ns")));
	assert_int_equal(int_at(row, "wall_ns"), wall_ns);
	assert_int_equal(int_at(row, "launches"), launches);
	assert_int_equal(bool_at(row, "partial"), partial);
	check_rate(row, "launches_per_ms", rate);
}

static inline void check_stat(const json_t *root, size_t i, json_int_t pid, json_int_t steps,
			      double mean_ns, json_int_t p50_ns, json_int_t p99_ns,
			      json_int_t max_ns)
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

static inline void check_step_bound(const json_t *row, const char *key, json_int_t want)
{
	if (want < 0)
		assert_true(json_is_null(json_object_get(row, key)));
	else
		assert_int_equal(int_at(row, key), want);
}

static inline void check_cycle(const json_t *root, size_t i, struct cycle_want w)
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
static inline void check_int_or_null(const json_t *obj, const char *key, json_int_t want)
{
	const json_t *v = json_object_get(obj, key);

	if (want < 0) {
		if (!json_is_null(v))
			fail_msg("%s is not null", key);
		return;
	}
	assert_int_equal(int_at(obj, key), want);
}

static inline void check_real_or_null(const json_t *obj, const char *key, double want)
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

static inline void check_step_overhead(const json_t *root, size_t i, struct overhead_want w)
{
	const json_t *row = json_array_get(json_object_get(root, "steps"), i);

	if (!row)
		fail_msg("no step row %zu", i);
	check_int_or_null(row, "probe_hits", w.hits);
	check_int_or_null(row, "probe_cost_ns", w.cost_ns);
	check_real_or_null(row, "probe_cost_share", w.share);
}

static inline void check_cycle_overhead(const json_t *root, size_t i, struct overhead_want w)
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

static inline void check_overhead(const json_t *root, struct overhead_want w)
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
static inline void write_overhead_recording(const char *dir)
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
static const char gpu_trace[] __attribute__((unused)) =
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
static const char gpu_trace_faults[] __attribute__((unused)) =
	TRACE_HEAD GPU_KERNEL("kD", 0, 7, "49.500", "1.000", 11)
	CORR_KERNEL(200, 201, "50.000", "kD", 11, "")
	GPU_KERNEL("kA", 0, 7, "60.000", "8.000", 12)
	GPU_TAIL(200, 2000000, GPU_COUNTS(1, 0, 0, 1, 1, 2, 3, 1234), "");

/* One line on stderr, in the house form, that holds each of the needles. */
static inline void check_error(const struct run *r, int rc, const char *needle1,
			       const char *needle2)
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
static inline struct run run_failing(const char *dir, const char *path)
{
	char out[PATH_MAX];
	struct run r;

	join(out, dir, "out.json");
	r = run_report(dir, (const char *[]){ "--format", "json", "-o", out, path, NULL });
	assert_false(exists(dir, "out.json"));
	assert_false(exists(dir, "out.json.tmp"));
	return r;
}

static inline int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Traces read a line at a time so far (user/report/stream.c). */
extern unsigned long report_streamed_files;

/* A kernel launch on its own line, as cuprobe record writes it. */
#define LINE_KERNEL(comma)                                                                     \
	"  {'ph':'X','cat':'cuda_runtime','name':'cudaLaunchKernel','pid':5,'tid':6,"         \
	"'ts':1.0,'dur':0.0,'args':{'correlation':1,'kernel':'k'}}" comma "\n"

#define LINES_HEAD "{\n 'schemaVersion': 1,\n 'traceEvents': [\n"
#define LINES_TAIL " ],\n 'cuprobe': {'pid': 5, 'cycle': 0, 'duration_ns': 1000000000}\n}\n"

/* The launches a trace in DIR/REL gives, and whether it was read a line at a time. */
static inline json_int_t launches_of(const char *dir, const char *rel, const char *text,
				     bool *streamed)
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

/* The end of a trace whose cuprobe object has the version and counts given. */
#define COUNTS_TAIL(pid, cycle, version, more)                                                 \
	PROCESS_NAME_END(pid) ",'traceName':'h.pt.trace.json',"                                \
	"'cuprobe':{'version':'" version "','pid':" #pid ",'command':'train','cycle':" #cycle   \
	",'partial':false,'duration_ns':1000000,'launches':0" more "}}"

static inline int setup(void **state)
{
	struct fixture *fx = calloc(1, sizeof(*fx));
	char tmpl[] = "/tmp/cuprobe-test-report-XXXXXX";

	if (!fx || !mkdtemp(tmpl))
		return -1;
	fx->dir = strdup(tmpl);
	*state = fx;
	return fx->dir ? 0 : -1;
}

static inline int teardown(void **state)
{
	struct fixture *fx = *state;
	int err = nftw(fx->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);

	free(fx->dir);
	free(fx);
	return err;
}

#endif /* TESTS_UNIT_REPORT_FIXTURE_H */
