// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The daemon's pure parts: its settings and config file (every error names
 * the setting, the file and the line), step rules, container ids from cgroup
 * paths, and its series: the text format's escaping, histograms, the kernel
 * label bound that keeps counters monotonic, linger, and a pid reused.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "dconf.h"
#include "metrics.h"
#include "procinfo.h"
#include "store.h"

static void test_settings(void **state)
{
	struct dconf c;
	char err[512];

	(void)state;
	dconf__defaults(&c);
	assert_string_equal(c.listen, "127.0.0.1:9464");
	assert_int_equal(dconf__set(&c, "interval", "2.5", err, sizeof(err)), 0);
	assert_true(c.interval == 2.5);
	assert_int_equal(dconf__set(&c, "probability", "1.5", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "probability: '1.5' is not a number from 0 to 1"));
	assert_int_equal(dconf__set(&c, "window-steps", "2.5", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not a whole number"));
	assert_int_equal(dconf__set(&c, "retention", "512M", err, sizeof(err)), 0);
	assert_int_equal(c.retention, 512ull << 20);
	assert_int_equal(dconf__set(&c, "retention", "10", err, sizeof(err)), -EINVAL);
	assert_int_equal(dconf__set(&c, "listen", "9464", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not ADDR:PORT"));
	assert_int_equal(dconf__set(&c, "listen", "[::1]:9464", err, sizeof(err)), 0);
	assert_int_equal(dconf__set(&c, "cupti", "maybe", err, sizeof(err)), -EINVAL);
	assert_int_equal(dconf__set(&c, "cupti", "yes", err, sizeof(err)), 0);
	assert_true(c.cupti);
	assert_int_equal(dconf__set(&c, "cgroup", "kubepods", err, sizeof(err)), -EINVAL);
	assert_int_equal(dconf__set(&c, "nonsense", "1", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "unknown setting 'nonsense'"));
	dconf__free(&c);
}

static void test_rules(void **state)
{
	struct dconf c;
	char err[512];

	(void)state;
	dconf__defaults(&c);
	assert_int_equal(dconf__set(&c, "step", "python3=libtrain.so:train_step", err, sizeof(err)), 0);
	assert_int_equal(dconf__set(&c, "step", "/opt/t/bin/train=train_step", err, sizeof(err)), 0);
	assert_int_equal(dconf__set(&c, "step", "=x", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "is not COMM=SPEC"));
	assert_int_equal(dconf__set(&c, "step", "python3=usdt:onlytwo", err, sizeof(err)), -EINVAL);
	assert_int_equal(c.nrules, 2);
	assert_ptr_equal(dconf__match(&c, "python3", "/usr/bin/python3.11"), &c.rules[0]);
	assert_ptr_equal(dconf__match(&c, "train", "/opt/t/bin/train"), &c.rules[1]);
	assert_null(dconf__match(&c, "train", "/usr/bin/train"));
	dconf__free(&c);
}

static void test_config_file(void **state)
{
	char path[] = "/tmp/cuprobe-dconf.XXXXXX", err[512];
	struct dconf c;
	int fd;
	FILE *f;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs("# comment\n\ninterval = 7\n  budget=0.5  \nwarmup 3\n", f);
	fclose(f);
	dconf__defaults(&c);
	assert_int_equal(dconf__load(&c, path, err, sizeof(err)), -EINVAL);
	assert_true(c.interval == 7 && c.budget == 0.5);
	assert_non_null(strstr(err, ":5: 'warmup 3' is not 'key = value'"));
	unlink(path);
	assert_int_equal(dconf__load(&c, path, err, sizeof(err)), -ENOENT);
	assert_non_null(strstr(err, "cannot read config"));
	dconf__free(&c);
}

static void test_container(void **state)
{
	char id[80];

	(void)state;
	procinfo__container("/system.slice/docker-0123456789abcdef0123456789abcdef0123456789abcdef"
			    "0123456789abcdef.scope", id, sizeof(id));
	assert_string_equal(id, "0123456789ab");
	procinfo__container("/kubepods/burstable/pod1234/cri-containerd-"
			    "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210",
			    id, sizeof(id));
	assert_string_equal(id, "fedcba987654");
	procinfo__container("/user.slice/user-0.slice/session-1.scope", id, sizeof(id));
	assert_string_equal(id, "");
}

static char *render(struct metrics *m)
{
	struct metrics_host h = { .targets = 1, .probe_seconds = 1e-6 };
	char *text = NULL;
	size_t len = 0;

	assert_int_equal(metrics__render(m, &h, &text, &len), 0);
	assert_int_equal(strlen(text), len);
	return text;
}

static void test_series(void **state)
{
	struct metrics *m = metrics__new(2);
	struct plabels l = { .pid = 42, .comm = "py\"th\\on", .rank = 3, .cgroup = "/a",
			     .container = "" };
	struct pmetrics *pm;
	char *text;

	(void)state;
	pm = metrics__proc(m, &l);
	assert_non_null(pm);
	assert_ptr_equal(metrics__proc(m, &l), pm);
	/* Two kernels get slots; the third is "other", and stays there when it grows. */
	assert_int_equal(pmetrics__launches(pm, "k1", "cudaLaunchKernel", 5), 0);
	assert_int_equal(pmetrics__launches(pm, "k2", "cudaLaunchKernel", 3), 0);
	assert_int_equal(pmetrics__launches(pm, "k3", "cudaLaunchKernel", 2), 0);
	assert_int_equal(pmetrics__launches(pm, "k3", "cudaLaunchKernel", 9), 0);
	assert_int_equal(pmetrics__launches(pm, NULL, "cudaMemcpyAsync", 4), 0);
	assert_int_equal(pmetrics__launches(pm, "k1", "cuLaunchKernel", 1), 0);
	assert_int_equal(pmetrics__launch_total(pm), 24);
	pmetrics__step(pm, 0.02);
	pmetrics__step(pm, 0.2);
	pmetrics__window(pm, MODE_BPF, WIN_OK);
	text = render(m);
	assert_non_null(strstr(text, "cuprobe_launches_total{pid=\"42\",comm=\"py\\\"th\\\\on\","
				     "rank=\"3\",cgroup=\"/a\",kernel=\"k1\",api=\"cudaLaunchKernel\"} 5\n"));
	assert_non_null(strstr(text, "kernel=\"other\",api=\"cudaLaunchKernel\"} 11\n"));
	assert_non_null(strstr(text, "kernel=\"\",api=\"cudaMemcpyAsync\"} 4\n"));
	assert_non_null(strstr(text, "kernel=\"k1\",api=\"cuLaunchKernel\"} 1\n"));
	assert_null(strstr(text, "kernel=\"k3\""));
	assert_non_null(strstr(text, "cuprobe_step_seconds_bucket{pid=\"42\",comm=\"py\\\"th\\\\on\","
				     "rank=\"3\",cgroup=\"/a\",le=\"0.025\"} 1\n"));
	assert_non_null(strstr(text, "le=\"+Inf\"} 2\n"));
	assert_non_null(strstr(text, "cuprobe_step_seconds_count{pid=\"42\""));
	assert_non_null(strstr(text, "mode=\"bpf\",result=\"ok\"} 1\n"));
	assert_non_null(strstr(text, "# TYPE cuprobe_step_seconds histogram\n"));
	assert_non_null(strstr(text, "cuprobe_targets 1\n"));
	free(text);
	/* Gone: the series stay for the linger time, then go; a new process may take the pid. */
	metrics__gone(m, pm, 1000);
	metrics__expire(m, 1500, 1000);
	assert_int_equal(metrics__count(m), 1);
	metrics__expire(m, 2000, 1000);
	assert_int_equal(metrics__count(m), 0);
	pm = metrics__proc(m, &l);
	metrics__gone(m, pm, 1000);
	l.comm = "other";
	assert_ptr_not_equal(metrics__proc(m, &l), NULL);
	assert_int_equal(metrics__count(m), 1);
	metrics__free(m);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A window's trace read back: a line at a time in cuprobe's layout, whole otherwise; the same. */
static void check_counts(const char *path)
{
	struct trace_counts tc;

	assert_int_equal(trace_counts__read(path, &tc), 0);
	assert_int_equal(tc.launches, 4);
	assert_int_equal(tc.nk, 3);
	assert_string_equal(tc.k[0].kernel, "void k<\"q\">(int) \xc3\xa9");
	assert_string_equal(tc.k[0].api, "cudaLaunchKernel");
	assert_int_equal(tc.k[0].n, 2);
	assert_int_equal(tc.ngpu, 1);
	assert_true(tc.gpu_kernel_s[0] > 1.4e-6 && tc.gpu_kernel_s[0] < 1.6e-6);
	trace_counts__free(&tc);
}

static void test_trace_counts(void **state)
{
	char path[] = "/tmp/cuprobe-tc.XXXXXX";
	static const char lines[] =
		"{\n \"schemaVersion\": 1,\n \"traceEvents\": [\n"
		"  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", "
		"\"pid\": 1, \"tid\": 1, \"ts\": 0.000, \"dur\": 0.000, \"args\": {\"cbid\": 211, "
		"\"kernel\": \"void k<\\\"q\\\">(int) \\u00e9\"}},\n"
		"  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaLaunchKernel\", "
		"\"pid\": 1, \"tid\": 1, \"ts\": 1.000, \"dur\": 0.000, \"args\": {\"cbid\": 211, "
		"\"kernel\": \"void k<\\\"q\\\">(int) \\u00e9\"}},\n"
		"  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"cudaMemcpyAsync\", "
		"\"pid\": 1, \"tid\": 1, \"ts\": 2.000, \"dur\": 0.000, \"args\": {\"bytes\": 4}},\n"
		"  {\"ph\": \"X\", \"cat\": \"cuda_driver\", \"name\": \"cuLaunchKernel\", "
		"\"pid\": 1, \"tid\": 1, \"ts\": 3.000, \"dur\": 0.000, \"args\": {\"kernel\": \"d\"}},\n"
		"  {\"ph\": \"X\", \"cat\": \"kernel\", \"name\": \"d\", \"pid\": 0, \"tid\": 7, "
		"\"ts\": 4.000, \"dur\": 1.500, \"args\": {}},\n"
		"  {\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 1, \"tid\": 0, \"args\": {}}\n"
		" ],\n \"traceName\": \"x\"\n}\n";
	char *compact;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	write_file(path, lines);
	check_counts(path);
	/* The same JSON on one line: not the layout, so read whole. */
	compact = strdup(lines);
	for (char *p = compact; *p; p++)
		if (*p == '\n')
			*p = ' ';
	write_file(path, compact);
	free(compact);
	check_counts(path);
	write_file(path, "{\"traceEvents\": [");
	assert_int_equal(trace_counts__read(path, &(struct trace_counts){}), -EINVAL);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_settings),   cmocka_unit_test(test_rules),
		cmocka_unit_test(test_config_file), cmocka_unit_test(test_container),
		cmocka_unit_test(test_series),	   cmocka_unit_test(test_trace_counts),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
