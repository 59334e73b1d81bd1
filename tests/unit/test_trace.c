// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/trace/writer.c. One trace with a launch of every kind is
 * written into a scratch folder, then read back twice: with jansson, for the
 * structure and values, and as raw text, for what JSON parsing hides (three
 * decimals on every ts and dur), and once more whole, byte for byte. Smaller
 * traces cover the file's lifecycle.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <regex.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>
#include "agent.h"
#include "cuda/launch_api.h"
#include "trace/format.h"
#include "trace/writer.h"

#define PID 4242
#define HOST "node7"
#define START_MONO 5000000000ull
#define MONO_TO_REAL 1764000000000000000ll
#define END_MONO (START_MONO + 2000000000ull)

/* A kernel name and a thread name with every character JSON must escape. */
#define ODD_KERNEL "void k<\"q\">(char\\, \x01\t)"
#define ODD_THREAD "worker\"one\\two\x07\n"

static const struct trace_meta meta = {
	.pid = PID,
	.host = HOST,
	.command = "train",
	.rank = 3,
	.world_size = 8,
	.cycle = 2,
	.mono_to_real = MONO_TO_REAL,
	.start_mono = START_MONO,
};

static const struct trace_summary summary = {
	.end_mono = END_MONO,
	.launches = 9,
	.probe_hits = 11,
	.drops = 1,
	.unnamed = 2,
	.partial = true,
};

/* The launches written, with their correlation ids 1..N in order. */
struct launch_case {
	struct launch_event e;
	const char *kernel;
	const char *ts;	 /* as the file must print it */
	const char *dur;
};

static const struct launch_case cases[] = {
	{ { .api = API_cudaLaunchKernel, .tid = 4243, .ts_ns = START_MONO + 1234567,
	    .func = 0x401000, .shmem = 128, .grid = { 2, 1, 1 }, .block = { 64, 1, 1 } },
	  "void ns::scale<float>(float*, int)", "1234.567", "0.000" },
	{ { .api = API_cuLaunchKernel, .tid = 4244, .ts_ns = START_MONO + 5, .dur_ns = 1500,
	    .func = 0x55aa, .stream = 0x7f00dead, .grid = { 1, 2, 3 }, .block = { 4, 5, 6 },
	    .flags = LAUNCH_F_HAS_DUR, .step = 3 },
	  "CUfunction 0x55aa", "0.005", "1.500" },
	{ { .api = API_cudaGraphLaunch, .tid = 4243, .ts_ns = START_MONO + 3600000000123ull,
	    .func = 0xabc123, .stream = 0x10 },
	  NULL, "3600000000.123", "0.000" },
	{ { .api = API_cudaMemcpyAsync, .tid = 4243, .ts_ns = START_MONO, .bytes = 1 << 20,
	    .kind = 1 },
	  NULL, "0.000", "0.000" },
	{ { .api = API_cudaMemcpyAsync_ptsz, .tid = 4243, .ts_ns = START_MONO - 250, .bytes = 4096,
	    .kind = 2, .stream = 0x2 },
	  NULL, "-0.250", "0.000" },
	{ { .api = API_cudaMemsetAsync, .tid = 4243, .ts_ns = START_MONO + 1000, .bytes = 512,
	    .kind = 90 },
	  NULL, "1.000", "0.000" },
	{ { .api = API_cuGraphLaunch_ptsz, .tid = 4244, .ts_ns = START_MONO + 999999,
	    .func = 0xfeed },
	  NULL, "999.999", "0.000" },
	{ { .api = API_cudaLaunchKernelExC, .tid = 4243, .ts_ns = START_MONO + 1000000,
	    .grid = { 7, 1, 1 }, .block = { 32, 2, 1 }, .shmem = 49152 },
	  ODD_KERNEL, "1000.000", "0.000" },
	{ { .api = API_cudaMemsetAsync_ptsz, .tid = 4244, .ts_ns = START_MONO + 2, .bytes = 1,
	    .kind = (__u32)-1 },
	  NULL, "0.002", "0.000" },
};

#define NCASES (sizeof(cases) / sizeof(cases[0]))

/* The trace every read-back test looks at, written once for the group. */
static struct {
	char dir[64];
	char *path;	 /* final path, from trace__path */
	uint64_t open_before, open_after;
	char *text;	 /* the file's bytes */
	json_t *root;
} full;

static uint64_t real_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void make_dir(char dir[64])
{
	strcpy(dir, "/tmp/cuprobe-test-trace-XXXXXX");
	assert_non_null(mkdtemp(dir));
}

/* Removes dir and the plain files in it; a folder already gone is fine. */
static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char p[512];

	if (!d)
		return;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		unlink(p);
	}
	closedir(d);
	rmdir(dir);
}

/* The one entry in dir (besides . and ..), copied into name; the count is returned. */
static int dir_entries(const char *dir, char *name, size_t len)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (n++ == 0)
			snprintf(name, len, "%s", de->d_name);
	}
	closedir(d);
	return n;
}

static char *read_text(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	int c;

	assert_non_null(f);
	assert_non_null(m);
	while ((c = fgetc(f)) != EOF)
		fputc(c, m);
	fclose(f);
	fclose(m);
	return buf;
}

static json_t *load(const char *path)
{
	json_error_t jerr;
	json_t *root = json_load_file(path, 0, &jerr);

	if (!root)
		fail_msg("%s: line %d column %d: %s", path, jerr.line, jerr.column, jerr.text);
	return root;
}

static void write_launches(struct trace *t)
{
	for (size_t i = 0; i < NCASES; i++) {
		struct launch_event e = cases[i].e;

		e.type = REC_LAUNCH;
		e.tgid = PID;
		trace__launch(t, &e, cases[i].kernel, i + 1, NULL);
	}
}

static int write_full_trace(void **state)
{
	struct trace *t;

	(void)state;
	make_dir(full.dir);
	full.open_before = real_ns();
	t = trace__open(full.dir, &meta);
	full.open_after = real_ns();
	assert_non_null(t);
	write_launches(t);
	trace__thread(t, 4243, ODD_THREAD);
	trace__thread(t, 4244, "pt_main_thread");
	assert_int_equal(trace__close(t, &summary), 0);
	full.path = strdup(trace__path(t));
	trace__free(t);
	assert_non_null(full.path);
	full.text = read_text(full.path);
	full.root = load(full.path);
	return 0;
}

static int remove_full_trace(void **state)
{
	(void)state;
	json_decref(full.root);
	free(full.text);
	free(full.path);
	remove_dir(full.dir);
	return 0;
}

static json_t *events(void)
{
	json_t *ev = json_object_get(full.root, "traceEvents");

	assert_true(json_is_array(ev));
	return ev;
}

/* The launch event with this correlation id. */
static json_t *launch_event(uint64_t correlation)
{
	json_t *ev = events(), *e, *found = NULL;
	size_t i;

	json_array_foreach(ev, i, e) {
		json_t *corr = json_object_get(json_object_get(e, "args"), "correlation");

		if (json_is_integer(corr) && (uint64_t)json_integer_value(corr) == correlation) {
			assert_null(found); /* correlation ids are unique */
			found = e;
		}
	}
	if (!found)
		fail_msg("no event with correlation %" PRIu64, correlation);
	return found;
}

/* The metadata event of this name for tid. */
static json_t *meta_event(const char *name, int tid)
{
	json_t *ev = events(), *e;
	size_t i;

	json_array_foreach(ev, i, e) {
		if (!strcmp(json_string_value(json_object_get(e, "ph")), "M") &&
		    !strcmp(json_string_value(json_object_get(e, "name")), name) &&
		    json_integer_value(json_object_get(e, "tid")) == tid)
			return e;
	}
	fail_msg("no %s metadata for tid %d", name, tid);
	return NULL;
}

static json_t *arg(json_t *e, const char *key)
{
	return json_object_get(json_object_get(e, "args"), key);
}

static void assert_str(json_t *v, const char *want)
{
	assert_true(json_is_string(v));
	assert_string_equal(json_string_value(v), want);
}

static void assert_int(json_t *v, long long want)
{
	assert_true(json_is_integer(v));
	assert_int_equal(json_integer_value(v), want);
}

static void assert_dim(json_t *v, const __u32 want[3])
{
	assert_true(json_is_array(v));
	assert_int_equal(json_array_size(v), 3);
	for (size_t i = 0; i < 3; i++)
		assert_int(json_array_get(v, i), want[i]);
}

/* The raw line of the launch event with this correlation id. */
static char *raw_line(uint64_t correlation)
{
	char key[64];
	const char *hit, *b, *e;

	snprintf(key, sizeof(key), "\"correlation\": %" PRIu64 ",", correlation);
	hit = strstr(full.text, key);
	if (!hit)
		fail_msg("no \"%s\" in the file", key);
	assert_null(strstr(hit + 1, key));
	for (b = hit; b > full.text && b[-1] != '\n'; b--)
		;
	e = strchr(hit, '\n');
	assert_non_null(e);
	return strndup(b, e - b);
}

/* Entries of dir that a reader would take for a trace. */
static int visible_traces(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	assert_non_null(d);
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);

		n += len > strlen(TRACE_SUFFIX) &&
		     !strcmp(de->d_name + len - strlen(TRACE_SUFFIX), TRACE_SUFFIX);
	}
	closedir(d);
	return n;
}

/* A reader never sees a trace before it is whole: it has no name until closed. */
static void test_file_is_named_only_when_closed(void **state)
{
	char dir[64], name[256];
	struct trace *t;
	const char *base;

	(void)state;
	make_dir(dir);
	t = trace__open(dir, &meta);
	assert_non_null(t);
	base = strrchr(trace__path(t), '/') + 1;
	assert_int_equal(visible_traces(dir), 0);
	assert_int_equal(access(trace__path(t), F_OK), -1);

	write_launches(t);
	assert_int_equal(visible_traces(dir), 0);

	assert_int_equal(trace__close(t, &summary), 0);
	assert_int_equal(dir_entries(dir, name, sizeof(name)), 1);
	assert_string_equal(name, base);
	trace__free(t);
	remove_dir(dir);
}

/* trace__openat: the folder by its descriptor; the path still says where the file went. */
static void test_openat(void **state)
{
	char dir[64], want[128];
	struct trace *t;
	int dirfd;

	(void)state;
	make_dir(dir);
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	assert_true(dirfd >= 0);
	t = trace__openat(dirfd, &meta);
	assert_non_null(t);
	close(dirfd);
	snprintf(want, sizeof(want), "%s/" HOST "_%d.", dir, PID);
	assert_int_equal(strncmp(trace__path(t), want, strlen(want)), 0);
	assert_int_equal(trace__close(t, &summary), 0);
	assert_int_equal(access(trace__path(t), R_OK), 0);
	assert_int_equal(visible_traces(dir), 1);
	trace__free(t);
	remove_dir(dir);
}

/* A full disk at any write, the flush or the sync: no file at all. */
static void test_full_disk_leaves_nothing(void **state)
{
	char dir[64], name[256];
	struct trace *t;

	(void)state;
	make_dir(dir);
	if (mount("none", dir, "tmpfs", 0, "size=64k")) {
		rmdir(dir);
		skip(); /* mounting needs root */
	}
	t = trace__open(dir, &meta);
	assert_non_null(t);
	for (int i = 0; i < 1000; i++)
		write_launches(t);
	assert_int_equal(trace__close(t, &summary), -ENOSPC);
	trace__free(t);
	assert_int_equal(dir_entries(dir, name, sizeof(name)), 0);
	assert_int_equal(umount(dir), 0);
	assert_int_equal(rmdir(dir), 0);
}

static void test_file_name_is_host_pid_epoch(void **state)
{
	char want_dir[80];
	const char *name;
	regex_t re;
	regmatch_t m[2];
	uint64_t epoch;

	(void)state;
	snprintf(want_dir, sizeof(want_dir), "%s/", full.dir);
	assert_int_equal(strncmp(full.path, want_dir, strlen(want_dir)), 0);
	name = full.path + strlen(want_dir);
	assert_int_equal(regcomp(&re, "^node7_4242\\.([0-9]+)\\.pt\\.trace\\.json$", REG_EXTENDED), 0);
	if (regexec(&re, name, 2, m, 0))
		fail_msg("unexpected file name %s", name);
	regfree(&re);
	epoch = strtoull(name + m[1].rm_so, NULL, 10);
	assert_in_range(epoch, full.open_before, full.open_after);
}

static void test_top_level_keys_are_kineto(void **state)
{
	json_t *r = full.root, *di = json_object_get(r, "distributedInfo");

	(void)state;
	assert_true(json_is_object(r));
	assert_int(json_object_get(r, "schemaVersion"), 1);
	assert_true(json_is_array(json_object_get(r, "deviceProperties")));
	assert_true(json_is_object(di));
	assert_str(json_object_get(di, "backend"), "");
	assert_int(json_object_get(di, "rank"), 3);
	assert_int(json_object_get(di, "world_size"), 8);
	assert_str(json_object_get(r, "displayTimeUnit"), "ms");
	assert_true(json_is_integer(json_object_get(r, "baseTimeNanoseconds")));
	assert_true(json_is_array(json_object_get(r, "traceEvents")));
	assert_str(json_object_get(r, "traceName"), strrchr(full.path, '/') + 1);
	assert_true(json_is_object(json_object_get(r, "cuprobe")));
}

static void test_base_time_is_start_plus_offset(void **state)
{
	(void)state;
	assert_int(json_object_get(full.root, "baseTimeNanoseconds"),
		   (long long)START_MONO + MONO_TO_REAL);
}

static void test_ts_and_dur_are_microseconds_with_three_decimals(void **state)
{
	char want[128];

	(void)state;
	for (size_t i = 0; i < NCASES; i++) {
		char *line = raw_line(i + 1);
		json_t *e = launch_event(i + 1);
		double ts_us = ((double)(int64_t)(cases[i].e.ts_ns - START_MONO)) / 1000.0;

		snprintf(want, sizeof(want), "\"ts\": %s, \"dur\": %s,", cases[i].ts, cases[i].dur);
		if (!strstr(line, want))
			fail_msg("expected %s in: %s", want, line);
		free(line);
		assert_true(json_is_number(json_object_get(e, "ts")));
		assert_float_equal(json_number_value(json_object_get(e, "ts")), ts_us, 1e-6);
	}
}

/* Every ts and dur of the file, metadata included, has exactly three decimals. */
static void test_every_time_has_three_decimals(void **state)
{
	const char *p;
	size_t keys = 0, good = 0;
	regex_t re;
	regmatch_t m;

	(void)state;
	for (p = full.text; (p = strstr(p, "\"ts\": ")); p++)
		keys++;
	for (p = full.text; (p = strstr(p, "\"dur\": ")); p++)
		keys++;
	assert_int_equal(regcomp(&re, "\"(ts|dur)\": -?[0-9]+\\.[0-9]{3}[,}]", REG_EXTENDED), 0);
	for (p = full.text; !regexec(&re, p, 1, &m, 0); p += m.rm_eo)
		good++;
	regfree(&re);
	assert_int_equal(keys, NCASES * 2 + 7); /* 7 metadata events carry a ts */
	assert_int_equal(good, keys);
}

static void test_launch_events_common_fields(void **state)
{
	(void)state;
	for (size_t i = 0; i < NCASES; i++) {
		json_t *e = launch_event(i + 1);
		const struct launch_event *le = &cases[i].e;

		assert_str(json_object_get(e, "ph"), "X");
		assert_str(json_object_get(e, "name"), launch_apis[le->api].name);
		assert_int(json_object_get(e, "pid"), PID);
		assert_int(json_object_get(e, "tid"), le->tid);
		assert_int(arg(e, "cbid"), launch_apis[le->api].cbid);
		assert_int(arg(e, "step"), le->step);
	}
	/* Spot checks against CUPTI's numbers, independent of the table. */
	assert_int(arg(launch_event(1), "cbid"), 211);
	assert_int(arg(launch_event(2), "cbid"), 307);
}

static void test_cat_is_runtime_or_driver(void **state)
{
	(void)state;
	for (size_t i = 0; i < NCASES; i++) {
		const char *want = launch_api_is_driver(cases[i].e.api) ? "cuda_driver"
									 : "cuda_runtime";

		assert_str(json_object_get(launch_event(i + 1), "cat"), want);
	}
	assert_str(json_object_get(launch_event(1), "cat"), "cuda_runtime");
	assert_str(json_object_get(launch_event(2), "cat"), "cuda_driver");
	assert_str(json_object_get(launch_event(7), "cat"), "cuda_driver");
}

static void test_kernel_launch_args(void **state)
{
	(void)state;
	for (size_t i = 0; i < NCASES; i++) {
		json_t *e = launch_event(i + 1);

		if (launch_api_what(cases[i].e.api) != LAUNCH_KERNEL)
			continue;
		assert_str(arg(e, "kernel"), cases[i].kernel);
		assert_dim(arg(e, "grid"), cases[i].e.grid);
		assert_dim(arg(e, "block"), cases[i].e.block);
		assert_int(arg(e, "shared memory"), cases[i].e.shmem);
		assert_null(arg(e, "graph"));
		assert_null(arg(e, "bytes"));
	}
	assert_str(arg(launch_event(8), "kernel"), ODD_KERNEL);
	assert_int(arg(launch_event(8), "shared memory"), 49152);
}

static void test_graph_launch_args(void **state)
{
	(void)state;
	assert_str(arg(launch_event(3), "graph"), "0xabc123");
	assert_str(arg(launch_event(7), "graph"), "0xfeed");
	assert_null(arg(launch_event(3), "kernel"));
	assert_null(arg(launch_event(3), "grid"));
}

static void test_memcpy_args(void **state)
{
	(void)state;
	assert_int(arg(launch_event(4), "bytes"), 1 << 20);
	assert_str(arg(launch_event(4), "kind"), "HtoD");
	assert_int(arg(launch_event(5), "bytes"), 4096);
	assert_str(arg(launch_event(5), "kind"), "DtoH");
	assert_null(arg(launch_event(4), "kernel"));
	assert_null(arg(launch_event(4), "value"));
}

static void test_memset_args(void **state)
{
	(void)state;
	assert_int(arg(launch_event(6), "bytes"), 512);
	assert_int(arg(launch_event(6), "value"), 90);
	/* cudaMemsetAsync's value is an int. */
	assert_int(arg(launch_event(9), "value"), -1);
	assert_null(arg(launch_event(6), "kind"));
	assert_null(arg(launch_event(6), "kernel"));
}

/* HTA reads a "stream" arg as GPU work: CPU events name the handle instead. */
static void test_stream_handle_is_hex_and_no_stream_arg(void **state)
{
	char want[32];

	(void)state;
	for (size_t i = 0; i < NCASES; i++) {
		json_t *e = launch_event(i + 1);

		snprintf(want, sizeof(want), "0x%llx", (unsigned long long)cases[i].e.stream);
		assert_str(arg(e, "stream handle"), want);
		assert_null(arg(e, "stream"));
	}
	assert_str(arg(launch_event(2), "stream handle"), "0x7f00dead");
	assert_str(arg(launch_event(1), "stream handle"), "0x0");
}

static void test_thread_metadata_escaped(void **state)
{
	json_t *e;

	(void)state;
	e = meta_event("thread_name", 4243);
	assert_int(json_object_get(e, "pid"), PID);
	assert_str(arg(e, "name"), ODD_THREAD);
	assert_str(arg(meta_event("thread_name", 4244), "name"), "pt_main_thread");
	assert_int(arg(meta_event("thread_sort_index", 4243), "sort_index"), 4243);
	assert_int(arg(meta_event("thread_sort_index", 4244), "sort_index"), 4244);
	/* The raw text has the escapes, not the characters. */
	assert_non_null(strstr(full.text, "\"worker\\\"one\\\\two\\u0007\\u000a\""));
	assert_non_null(strstr(full.text, "\"void k<\\\"q\\\">(char\\\\, \\u0001\\u0009)\""));
}

static void test_process_metadata(void **state)
{
	json_t *e = meta_event("process_name", 0);

	(void)state;
	assert_int(json_object_get(e, "pid"), PID);
	assert_str(arg(e, "name"), "train");
	assert_str(arg(meta_event("process_labels", 0), "labels"), "CPU");
	assert_int(arg(meta_event("process_sort_index", 0), "sort_index"), PID);
}

static void test_event_counts(void **state)
{
	json_t *e;
	size_t i, x = 0, m = 0;

	(void)state;
	json_array_foreach(events(), i, e) {
		const char *ph = json_string_value(json_object_get(e, "ph"));

		assert_non_null(ph);
		assert_true(json_is_string(json_object_get(e, "name")));
		x += !strcmp(ph, "X");
		m += !strcmp(ph, "M");
	}
	assert_int_equal(x, NCASES);
	assert_int_equal(m, 2 * 2 + 3);
	assert_int_equal(json_array_size(events()), x + m);
}

static void test_cuprobe_summary_object(void **state)
{
	json_t *c = json_object_get(full.root, "cuprobe");

	(void)state;
	assert_true(json_is_string(json_object_get(c, "version")));
	assert_true(strlen(json_string_value(json_object_get(c, "version"))) > 0);
	assert_int(json_object_get(c, "pid"), PID);
	assert_str(json_object_get(c, "command"), "train");
	assert_int(json_object_get(c, "cycle"), 2);
	assert_true(json_is_true(json_object_get(c, "partial")));
	assert_int(json_object_get(c, "start_ns"), (long long)START_MONO + MONO_TO_REAL);
	assert_int(json_object_get(c, "end_ns"), (long long)END_MONO + MONO_TO_REAL);
	assert_int(json_object_get(c, "duration_ns"), 2000000000);
	assert_int(json_object_get(c, "launches"), 9);
	assert_int(json_object_get(c, "unnamed_kernels"), 2);
	assert_int(json_object_get(c, "probe_hits"), 11);
	assert_int(json_object_get(c, "drops"), 1);
}

/* Closes a trace with no events; returns its parsed content. */
static json_t *empty_trace(const struct trace_meta *m, const struct trace_summary *s)
{
	char dir[64];
	struct trace *t;
	json_t *root;

	make_dir(dir);
	t = trace__open(dir, m);
	assert_non_null(t);
	assert_int_equal(trace__close(t, s), 0);
	root = load(trace__path(t));
	trace__free(t);
	remove_dir(dir);
	return root;
}

/* A launch made into a captured stream: its own category, its capture's id, counted apart. */
static void test_captured_launch(void **state)
{
	struct trace_summary s = { .end_mono = END_MONO, .launches = 0, .captured = 1 };
	struct launch_event e = cases[0].e;
	json_t *root, *ev, *c;
	char dir[64];
	struct trace *t;

	(void)state;
	e.type = REC_LAUNCH;
	e.tgid = PID;
	e.flags |= LAUNCH_F_CAPTURED;
	e.capture = 7;
	make_dir(dir);
	t = trace__open(dir, &meta);
	assert_non_null(t);
	trace__launch(t, &e, cases[0].kernel, 1, NULL);
	assert_int_equal(trace__close(t, &s), 0);
	root = load(trace__path(t));
	trace__free(t);
	remove_dir(dir);
	ev = NULL;
	for (size_t i = 0; i < json_array_size(json_object_get(root, "traceEvents")); i++) {
		json_t *x = json_array_get(json_object_get(root, "traceEvents"), i);

		if (!strcmp(json_string_value(json_object_get(x, "ph")), "X"))
			ev = x;
	}
	assert_non_null(ev);
	assert_str(json_object_get(ev, "cat"), "cuda_capture");
	assert_str(json_object_get(ev, "name"), launch_apis[e.api].name);
	assert_int(json_object_get(json_object_get(ev, "args"), "capture id"), 7);
	assert_int(json_object_get(json_object_get(ev, "args"), "correlation"), 1);
	c = json_object_get(root, "cuprobe");
	assert_int(json_object_get(c, "launches"), 0);
	assert_int(json_object_get(c, "captured"), 1);
	json_decref(root);
}

static void test_unknown_rank_is_rank_zero_of_one(void **state)
{
	struct trace_meta m = meta;
	struct trace_summary s = { .end_mono = START_MONO };
	json_t *root, *di, *c;

	(void)state;
	m.rank = -1;
	m.world_size = -1;
	m.command = NULL;
	root = empty_trace(&m, &s);
	di = json_object_get(root, "distributedInfo");
	assert_int(json_object_get(di, "rank"), 0);
	assert_int(json_object_get(di, "world_size"), 1);
	c = json_object_get(root, "cuprobe");
	assert_str(json_object_get(c, "command"), "");
	assert_true(json_is_false(json_object_get(c, "partial")));
	assert_int(json_object_get(c, "duration_ns"), 0);
	json_decref(root);
}

static void test_trace_without_launches_is_valid(void **state)
{
	struct trace_summary s = { .end_mono = END_MONO };
	json_t *root;

	(void)state;
	root = empty_trace(&meta, &s);
	/* Only the process metadata. */
	assert_int_equal(json_array_size(json_object_get(root, "traceEvents")), 3);
	assert_int(json_object_get(json_object_get(root, "cuprobe"), "launches"), 0);
	json_decref(root);
}

static void test_discard_leaves_no_file(void **state)
{
	char dir[64], name[256];
	struct trace *t;

	(void)state;
	make_dir(dir);
	t = trace__open(dir, &meta);
	assert_non_null(t);
	write_launches(t);
	assert_int_equal(visible_traces(dir), 0);
	trace__discard(t);
	assert_int_equal(dir_entries(dir, name, sizeof(name)), 0);
	trace__free(t);
	assert_int_equal(rmdir(dir), 0);
}

static void test_free_of_open_trace_leaves_no_file(void **state)
{
	char dir[64], name[256];
	struct trace *t;

	(void)state;
	make_dir(dir);
	t = trace__open(dir, &meta);
	assert_non_null(t);
	trace__free(t);
	assert_int_equal(dir_entries(dir, name, sizeof(name)), 0);
	assert_int_equal(rmdir(dir), 0);
}

static void test_close_into_removed_directory_fails(void **state)
{
	char dir[64];
	struct trace *t;
	int err;

	(void)state;
	make_dir(dir);
	t = trace__open(dir, &meta);
	assert_non_null(t);
	write_launches(t);
	remove_dir(dir);
	assert_int_equal(access(dir, F_OK), -1);

	err = trace__close(t, &summary);
	assert_int_equal(err, -ENOENT);
	assert_int_equal(access(trace__path(t), F_OK), -1);
	assert_int_equal(access(dir, F_OK), -1);
	trace__free(t);
}

static void test_open_in_missing_directory_fails(void **state)
{
	(void)state;
	errno = 0;
	assert_null(trace__open("/nonexistent/cuprobe-test", &meta));
	assert_int_equal(errno, ENOENT);
}

/* Every kind of event and every key of the cuprobe object, in one trace. */
static void write_every_event(struct trace *t)
{
	const struct trace_step steps[] = {
		{ .tid = 4243, .step = 2, .start_mono = START_MONO, .end_mono = START_MONO + 1000000,
		  .probe_hits = 40, .probe_ns = 1340.0 },
		{ .tid = 4243, .step = 3, .start_mono = START_MONO + 1000000,
		  .end_mono = START_MONO + 1250000, .probe_hits = -1, .probe_ns = -1,
		  .partial = true },
		{ .tid = 4244, .step = 4, .start_mono = START_MONO + 1250000,
		  .end_mono = START_MONO + 1250000, .probe_hits = 3, .probe_ns = -1 },
	};
	const struct agent_kernel k = {
		.start_ns = START_MONO + 2000, .end_ns = START_MONO + 5500, .device = 0,
		.context = 1, .stream = 7, .correlation = 1, .grid = { 2, 1, 1 },
		.block = { 64, 1, 1 }, .dyn_shmem = 128, .static_shmem = 1024, .registers = 32,
	};
	const struct agent_kernel kg = {
		.start_ns = START_MONO + 9000, .end_ns = START_MONO + 8000, .device = 1,
		.context = 2, .stream = 21, .correlation = 3, .grid = { 1, 2, 3 },
		.block = { 4, 5, 6 }, .registers = 8, .graph_id = 24577, .graph_node_id = 6291713,
	};
	const struct agent_memcpy mc = {
		.start_ns = START_MONO + 6000, .end_ns = START_MONO + 10000, .bytes = 4096,
		.copy_kind = 1, .src_kind = 2, .dst_kind = 3, .device = 0, .context = 1,
		.stream = 14, .correlation = 4,
	};
	const struct agent_memset ms = {
		.start_ns = START_MONO + 11000, .end_ns = START_MONO + 11000, .bytes = 64,
		.value = 255, .memory_kind = 3, .device = 0, .context = 1, .stream = 7,
		.correlation = 6,
	};
	const struct trace_gpu_summary gpu = { 6, 0, 1, 1, 0, 2, 3, 4, 4500, 8, 0, 0 };

	write_launches(t);
	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++)
		trace__step(t, &steps[i]);
	trace__kernel(t, &k, "void ns::scale<float>(float*, int)");
	trace__flow(t, true, PID, 4243, START_MONO + 1234567, 1);
	trace__flow(t, false, 0, 7, START_MONO + 2000, 1);
	trace__kernel(t, &kg, ODD_KERNEL);
	trace__memcpy(t, &mc);
	trace__memset(t, &ms);
	trace__thread(t, 4243, ODD_THREAD);
	trace__set_gpu(t, &gpu);
}

/* The whole file, byte for byte, but the name, which holds the time it was made. */
static const char every_event_trace[] =
	"{\n"
	" \"schemaVersion\": 1,\n"
	" \"deviceProperties\": [],\n"
	" \"distributedInfo\": {\"backend\": \"\", \"rank\": 3, \"world_size\": 8},\n"
	" \"displayTimeUnit\": \"ms\",\n"
	" \"baseTimeNanoseconds\": 1764000005000000000,\n"
	" \"traceEvents\": [\n"
	"  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", \"pid\": 4242, \"tid\": 4243, \"ts\": 1234.567, \"dur\": 0.000, \"args\": {\"cbid\": 211, \"correlation\": 1, \"kernel\": \"void ns::scale<float>(float*, int)\", \"grid\": [2, 1, 1], \"block\": [64, 1, 1], \"shared memory\": 128, \"stream handle\": \"0x0\", \"step\": 0}},\n"
	"  {\"ph\": \"X\", \"cat\": \"cuda_driver\", \"name\": \"cuLaunchKernel\", \"pid\": 4242, \"tid\": 4244, \"ts\": 0.005, \"dur\": 1.500, \"args\": {\"cbid\": 307, \"correlation\": 2, \"kernel\": \"CUfunction 0x55aa\", \"grid\": [1, 2, 3], \"block\": [4, 5, 6], \"shared memory\": 0, \"stream handle\": \"0x7f00dead\", \"step\": 3}},\n"
	"  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaGraphLaunch\", \"pid\": 4242, \"tid\": 4243, \"ts\": 3600000000.123, \"dur\": 0.000, \"args\": {\"cbid\": 311, \"correlation\": 3, \"graph\": \"0xabc123\", \"graph content\": 0, \"stream handle\": \"0x10\", \"step\": 0}},\n"
	"  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaMemcpyAsync\", \"pid\": 4242, \"tid\": 4243, \"ts\": 0.000, \"dur\": 0.000, \"args\": {\"cbid\": 41, \"correlation\": 4, \"bytes\": 1048576, \"kind\": \"HtoD\", \"stream handle\": \"0x0\", \"step\": 0}},\n"
	"  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaMemcpyAsync_ptsz\", \"pid\": 4242, \"tid\": 4243, \"ts\": -0.250, \"dur\": 0.000, \"args\": {\"cbid\": 225, \"correlation\": 5, \"bytes\": 4096, \"kind\": \"DtoH\", \"stream handle\": \"0x2\", \"step\": 0}},\n"
	"  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaMemsetAsync\", \"pid\": 4242, \"tid\": 4243, \"ts\": 1.000, \"dur\": 0.000, \"args\": {\"cbid\": 51, \"correlation\": 6, \"bytes\": 512, \"value\": 90, \"stream handle\": \"0x0\", \"step\": 0}},\n"
	"  {\"ph\": \"X\", \"cat\": \"cuda_driver\", \"name\": \"cuGraphLaunch_ptsz\", \"pid\": 4242, \"tid\": 4244, \"ts\": 999.999, \"dur\": 0.000, \"args\": {\"cbid\": 515, \"correlation\": 7, \"graph\": \"0xfeed\", \"graph content\": 0, \"stream handle\": \"0x0\", \"step\": 0}},\n"
	"  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernelExC\", \"pid\": 4242, \"tid\": 4243, \"ts\": 1000.000, \"dur\": 0.000, \"args\": {\"cbid\": 430, \"correlation\": 8, \"kernel\": \"void k<\\\"q\\\">(char\\\\, \\u0001\\u0009)\", \"grid\": [7, 1, 1], \"block\": [32, 2, 1], \"shared memory\": 49152, \"stream handle\": \"0x0\", \"step\": 0}},\n"
	"  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaMemsetAsync_ptsz\", \"pid\": 4242, \"tid\": 4244, \"ts\": 0.002, \"dur\": 0.000, \"args\": {\"cbid\": 235, \"correlation\": 9, \"bytes\": 1, \"value\": -1, \"stream handle\": \"0x0\", \"step\": 0}},\n"
	"  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#2\", \"pid\": 4242, \"tid\": 4243, \"ts\": 0.000, \"dur\": 1000.000, \"args\": {\"step\": 2, \"probe_hits\": 40, \"probe_cost_ns\": 53600, \"probe_cost_share\": 0.053600}},\n"
	"  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#3\", \"pid\": 4242, \"tid\": 4243, \"ts\": 1000.000, \"dur\": 250.000, \"args\": {\"step\": 3, \"partial\": true}},\n"
	"  {\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#4\", \"pid\": 4242, \"tid\": 4244, \"ts\": 1250.000, \"dur\": 0.000, \"args\": {\"step\": 4, \"probe_hits\": 3}},\n"
	"  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"void ns::scale<float>(float*, int)\", \"pid\": 0, \"tid\": 7, \"ts\": 2.000, \"dur\": 3.500, \"args\": {\"device\": 0, \"context\": 1, \"stream\": 7, \"correlation\": 1, \"registers per thread\": 32, \"shared memory\": 1152, \"grid\": [2, 1, 1], \"block\": [64, 1, 1]}},\n"
	"  {\"ph\": \"s\", \"id\": 1, \"pid\": 4242, \"tid\": 4243, \"ts\": 1234.567, \"cat\": \"ac2g\", \"name\": \"ac2g\"},\n"
	"  {\"ph\": \"f\", \"id\": 1, \"pid\": 0, \"tid\": 7, \"ts\": 2.000, \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"},\n"
	"  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"void k<\\\"q\\\">(char\\\\, \\u0001\\u0009)\", \"pid\": 1, \"tid\": 21, \"ts\": 9.000, \"dur\": 0.000, \"args\": {\"device\": 1, \"context\": 2, \"stream\": 21, \"correlation\": 3, \"registers per thread\": 8, \"shared memory\": 0, \"grid\": [1, 2, 3], \"block\": [4, 5, 6], \"graph id\": 24577, \"graph node id\": 6291713}},\n"
	"  {\"ph\": \"X\", \"cat\": \"gpu_memcpy\", \"name\": \"Memcpy HtoD (Pinned -> Device)\", \"pid\": 0, \"tid\": 14, \"ts\": 6.000, \"dur\": 4.000, \"args\": {\"device\": 0, \"context\": 1, \"stream\": 14, \"correlation\": 4, \"bytes\": 4096, \"memory bandwidth (GB/s)\": 1.024}},\n"
	"  {\"ph\": \"X\", \"cat\": \"gpu_memset\", \"name\": \"Memset (Device)\", \"pid\": 0, \"tid\": 7, \"ts\": 11.000, \"dur\": 0.000, \"args\": {\"device\": 0, \"context\": 1, \"stream\": 7, \"correlation\": 6, \"bytes\": 64, \"value\": 255}},\n"
	"  {\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 4242, \"tid\": 4243, \"ts\": 0.000, \"args\": {\"name\": \"worker\\\"one\\\\two\\u0007\\u000a\"}},\n"
	"  {\"ph\": \"M\", \"name\": \"thread_sort_index\", \"pid\": 4242, \"tid\": 4243, \"ts\": 0.000, \"args\": {\"sort_index\": 4243}},\n"
	"  {\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 4242, \"tid\": 0, \"ts\": 0.000, \"args\": {\"name\": \"train\"}},\n"
	"  {\"ph\": \"M\", \"name\": \"process_labels\", \"pid\": 4242, \"tid\": 0, \"ts\": 0.000, \"args\": {\"labels\": \"CPU\"}},\n"
	"  {\"ph\": \"M\", \"name\": \"process_sort_index\", \"pid\": 4242, \"tid\": 0, \"ts\": 0.000, \"args\": {\"sort_index\": 4242}},\n"
	"  {\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 0, \"tid\": 0, \"ts\": 0.000, \"args\": {\"name\": \"train\"}},\n"
	"  {\"ph\": \"M\", \"name\": \"process_labels\", \"pid\": 0, \"tid\": 0, \"ts\": 0.000, \"args\": {\"labels\": \"GPU 0\"}},\n"
	"  {\"ph\": \"M\", \"name\": \"process_sort_index\", \"pid\": 0, \"tid\": 0, \"ts\": 0.000, \"args\": {\"sort_index\": 5000000}},\n"
	"  {\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 0, \"tid\": 7, \"ts\": 0.000, \"args\": {\"name\": \"stream 7\"}},\n"
	"  {\"ph\": \"M\", \"name\": \"thread_sort_index\", \"pid\": 0, \"tid\": 7, \"ts\": 0.000, \"args\": {\"sort_index\": 7}},\n"
	"  {\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 1, \"tid\": 0, \"ts\": 0.000, \"args\": {\"name\": \"train\"}},\n"
	"  {\"ph\": \"M\", \"name\": \"process_labels\", \"pid\": 1, \"tid\": 0, \"ts\": 0.000, \"args\": {\"labels\": \"GPU 1\"}},\n"
	"  {\"ph\": \"M\", \"name\": \"process_sort_index\", \"pid\": 1, \"tid\": 0, \"ts\": 0.000, \"args\": {\"sort_index\": 5000001}},\n"
	"  {\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 1, \"tid\": 21, \"ts\": 0.000, \"args\": {\"name\": \"stream 21\"}},\n"
	"  {\"ph\": \"M\", \"name\": \"thread_sort_index\", \"pid\": 1, \"tid\": 21, \"ts\": 0.000, \"args\": {\"sort_index\": 21}},\n"
	"  {\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": 0, \"tid\": 14, \"ts\": 0.000, \"args\": {\"name\": \"stream 14\"}},\n"
	"  {\"ph\": \"M\", \"name\": \"thread_sort_index\", \"pid\": 0, \"tid\": 14, \"ts\": 0.000, \"args\": {\"sort_index\": 14}}\n"
	" ],\n"
	" \"traceName\": \"NAME\",\n"
	" \"cuprobe\": {\"version\": \"0.2.0\", \"pid\": 4242, \"command\": \"train\", \"cycle\": 2, \"partial\": true, \"start_ns\": 1764000005000000000, \"end_ns\": 1764000007000000000, \"duration_ns\": 2000000000, \"launches\": 9, \"captured\": 0, \"unnamed_kernels\": 2, \"late_launches\": 3, \"drops\": 1, \"nested_skipped\": 5, \"stale_link_hits\": 0, \"lost_steps\": 1, \"unprobed_ns\": 2500000, \"steps\": [2, 4], \"probe_ns_per_hit\": 1340.0, \"probe_hits\": 11, \"probe_cost_ns\": 14740, \"probe_cost_share\": 0.000007, \"graph_replays\": 2, \"graph_unknown_replays\": 2, \"graph_kernels\": 0, \"graph_gpu_kernels\": 0, \"graph_mismatches\": 0, \"graphs\": [], \"gpu\": {\"joined_launches\": 6, \"launches_without_gpu\": 0, \"launches_without_api_record\": 1, \"gpu_without_launch\": 1, \"clock_faults\": 0, \"cupti_dropped\": 2, \"malformed_chunks\": 3, \"missing_at_timeout\": 4, \"gpu_records\": 8}, \"cupti_overhead_ns\": 4500, \"holds\": {\"count\": 3, \"total_ms\": 2.114, \"max_ms\": 1.506}}\n"
	"}\n";

static void test_whole_trace_is_byte_exact(void **state)
{
	struct trace_summary s = summary;
	char dir[64], *text, *name_at;
	const char *name;
	struct trace *t;

	(void)state;
	s.first_step = 2;
	s.last_step = 4;
	s.probe_ns = 1340.0;
	s.late = 3;
	s.nested = 5;
	s.lost_steps = 1;
	s.unprobed_ns = 2500000;
	s.holds = (struct trace_holds){ .count = 3, .total_ns = 2114000, .max_ns = 1506000 };
	make_dir(dir);
	t = trace__open(dir, &meta);
	assert_non_null(t);
	write_every_event(t);
	assert_int_equal(trace__close(t, &s), 0);
	text = read_text(trace__path(t));
	name = strrchr(trace__path(t), '/') + 1;
	name_at = strstr(text, name);
	assert_non_null(name_at);
	/* The name appears once, as traceName: put the fixed one in its place. */
	assert_null(strstr(name_at + 1, name));
	memmove(name_at + strlen("NAME"), name_at + strlen(name), strlen(name_at + strlen(name)) + 1);
	memcpy(name_at, "NAME", 4);
	if (strcmp(text, every_event_trace)) {
		FILE *f = fopen("/tmp/cuprobe-trace-got.json", "w");

		fputs(text, f);
		fclose(f);
		fail_msg("the trace differs from the expected one: see /tmp/cuprobe-trace-got.json");
	}
	free(text);
	trace__free(t);
	remove_dir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_file_is_named_only_when_closed),
		cmocka_unit_test(test_openat),
		cmocka_unit_test(test_full_disk_leaves_nothing),
		cmocka_unit_test(test_file_name_is_host_pid_epoch),
		cmocka_unit_test(test_top_level_keys_are_kineto),
		cmocka_unit_test(test_base_time_is_start_plus_offset),
		cmocka_unit_test(test_ts_and_dur_are_microseconds_with_three_decimals),
		cmocka_unit_test(test_every_time_has_three_decimals),
		cmocka_unit_test(test_launch_events_common_fields),
		cmocka_unit_test(test_cat_is_runtime_or_driver),
		cmocka_unit_test(test_kernel_launch_args),
		cmocka_unit_test(test_graph_launch_args),
		cmocka_unit_test(test_memcpy_args),
		cmocka_unit_test(test_memset_args),
		cmocka_unit_test(test_stream_handle_is_hex_and_no_stream_arg),
		cmocka_unit_test(test_thread_metadata_escaped),
		cmocka_unit_test(test_process_metadata),
		cmocka_unit_test(test_event_counts),
		cmocka_unit_test(test_cuprobe_summary_object),
		cmocka_unit_test(test_captured_launch),
		cmocka_unit_test(test_unknown_rank_is_rank_zero_of_one),
		cmocka_unit_test(test_trace_without_launches_is_valid),
		cmocka_unit_test(test_discard_leaves_no_file),
		cmocka_unit_test(test_free_of_open_trace_leaves_no_file),
		cmocka_unit_test(test_close_into_removed_directory_fails),
		cmocka_unit_test(test_open_in_missing_directory_fails),
		cmocka_unit_test(test_whole_trace_is_byte_exact),
	};

	return cmocka_run_group_tests(tests, write_full_trace, remove_full_trace);
}
