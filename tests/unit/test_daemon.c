// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The daemon's pure parts: its settings and config file (every error names
 * the setting, the file and the line), step rules, container ids from cgroup
 * paths, and its series: the text format's escaping, histograms, the kernel
 * label bound that keeps counters monotonic, linger, and a pid reused; a
 * window's trace read back, graph replays expanded into their kernels.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "daemon/dconf.h"
#include "daemon/metrics.h"
#include "daemon/procinfo.h"
#include "daemon/store.h"

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
	assert_int_equal(dconf__set(&c, "capture-retention", "2G", err, sizeof(err)), 0);
	assert_int_equal(c.capture_retention, 2ull << 30);
	assert_int_equal(dconf__set(&c, "capture-retention", "1K", err, sizeof(err)), -EINVAL);
	assert_int_equal(dconf__set(&c, "retention", "10", err, sizeof(err)), -EINVAL);
	assert_int_equal(dconf__set(&c, "listen", "9464", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not ADDR:PORT"));
	assert_int_equal(dconf__set(&c, "listen", "[::1]:9464", err, sizeof(err)), 0);
	assert_int_equal(dconf__set(&c, "cupti", "maybe", err, sizeof(err)), -EINVAL);
	assert_int_equal(dconf__set(&c, "cupti", "yes", err, sizeof(err)), 0);
	assert_true(c.cupti);
	assert_int_equal(dconf__set(&c, "stack", "sometimes", err, sizeof(err)), -EINVAL);
	assert_int_equal(dconf__set(&c, "stack", "true", err, sizeof(err)), 0);
	assert_true(c.stack);
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
	/* It chooses the web-config: held as the web-config is; a FIFO never blocks. */
	assert_int_equal(mkfifo(path, 0600), 0);
	alarm(5);
	assert_int_equal(dconf__load(&c, path, err, sizeof(err)), -EINVAL);
	alarm(0);
	assert_non_null(strstr(err, "it is a FIFO: give a regular file"));
	unlink(path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
	assert_true(fd >= 0);
	assert_int_equal(fchmod(fd, 0666), 0);
	close(fd);
	assert_int_equal(dconf__load(&c, path, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "other users may write it (mode 0666): chmod go-w"));
	unlink(path);
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

/* A window-max-bytes not given follows a retention under its default; one given does not. */
static void test_window_follows_retention(void **state)
{
	struct dconf c;
	char err[512];

	(void)state;
	dconf__defaults(&c);
	assert_int_equal(dconf__finish(&c, err, sizeof(err)), 0);
	assert_int_equal(c.window_max_bytes, 128ull << 20);
	assert_int_equal(dconf__set(&c, "retention", "10M", err, sizeof(err)), 0);
	assert_int_equal(dconf__finish(&c, err, sizeof(err)), 0);
	assert_int_equal(c.window_max_bytes, 10ull << 20);
	assert_int_equal(dconf__set(&c, "capture-retention", "5M", err, sizeof(err)), 0);
	assert_int_equal(dconf__finish(&c, err, sizeof(err)), 0);
	assert_int_equal(c.window_max_bytes, 5ull << 20);
	/* Raised again (a reload), it follows them back up to its default. */
	assert_int_equal(dconf__set(&c, "retention", "1G", err, sizeof(err)), 0);
	assert_int_equal(dconf__set(&c, "capture-retention", "1G", err, sizeof(err)), 0);
	assert_int_equal(dconf__finish(&c, err, sizeof(err)), 0);
	assert_int_equal(c.window_max_bytes, 128ull << 20);
	assert_int_equal(dconf__set(&c, "retention", "10M", err, sizeof(err)), 0);
	assert_int_equal(dconf__set(&c, "window-max-bytes", "128M", err, sizeof(err)), 0);
	assert_int_equal(dconf__finish(&c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "window-max-bytes (134217728) is more than retention"));
	assert_int_equal(dconf__set(&c, "window-max-bytes", "4M", err, sizeof(err)), 0);
	assert_int_equal(dconf__finish(&c, err, sizeof(err)), 0);
	assert_int_equal(c.window_max_bytes, 4ull << 20);
	dconf__free(&c);
}

static char cg_dir[] = "/tmp/cuprobe-cgroup.XXXXXX";

/* procinfo__cgroup_path of arg against the fixture's mountinfo: its return, out or err in got. */
static int cg_path(const char *mountinfo, const char *arg, char *got, size_t len)
{
	char path[256], a[512], err[1024];
	int rc;

	snprintf(path, sizeof(path), "%s/%s", cg_dir, mountinfo);
	snprintf(a, sizeof(a), "%s%s", arg[0] == '+' ? cg_dir : "", arg + (arg[0] == '+'));
	rc = procinfo__cgroup_path(path, a, got, len, err, sizeof(err));
	if (rc)
		snprintf(got, len, "%s", err);
	return rc;
}

static void put_text(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", cg_dir, name);
	f = fopen(path, "w");
	if (!f)
		fail_msg("%s: %s", path, strerror(errno));
	fprintf(f, text, cg_dir, cg_dir, cg_dir);
	fclose(f);
}

static void mkdirs(const char *rel)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "mkdir -p '%s/%s'", cg_dir, rel);
	assert_int_equal(system(cmd), 0);
}

/*
 * --cgroup as the cgroup's path or its folder on a cgroup2 mount, by a
 * mountinfo of a hybrid host (the mount point escaped, "\040" for a space),
 * one of a container whose cgroup2 shows /pod at its root, and one of a
 * host with cgroup v1 only; one that does not exist is refused.
 */
static void test_cgroup_path(void **state)
{
	char got[1024];

	(void)state;
	assert_non_null(mkdtemp(cg_dir));
	mkdirs("uni fied/x/y");
	mkdirs("v1/only");
	mkdirs("ns/c");
	put_text("hybrid.mountinfo", "31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw,mode=755\n"
		 "40 31 0:37 / %s/v1 rw,relatime - cgroup cgroup rw,name=systemd\n"
		 "41 31 0:38 / %s/uni\\040fied rw,relatime - cgroup2 cgroup2 rw\n"
		 "42 31 0:38 /pod %s/ns rw,relatime shared:5 - cgroup2 cgroup2 rw\n");
	assert_int_equal(cg_path("hybrid.mountinfo", "+/uni fied/x", got, sizeof(got)), 0);
	assert_string_equal(got, "/x");
	assert_int_equal(cg_path("hybrid.mountinfo", "+/uni fied/x/y/", got, sizeof(got)), 0);
	assert_string_equal(got, "/x/y");
	assert_int_equal(cg_path("hybrid.mountinfo", "+/uni fied", got, sizeof(got)), 0);
	assert_string_equal(got, "/");
	assert_int_equal(cg_path("hybrid.mountinfo", "/x/y", got, sizeof(got)), 0);
	assert_string_equal(got, "/x/y");
	assert_int_equal(cg_path("hybrid.mountinfo", "+/ns/c", got, sizeof(got)), 0);
	assert_string_equal(got, "/pod/c");
	assert_int_equal(cg_path("hybrid.mountinfo", "/pod/c", got, sizeof(got)), 0);
	assert_int_equal(cg_path("hybrid.mountinfo", "/no-such-cgroup", got, sizeof(got)), -ENOENT);
	assert_non_null(strstr(got, "there is no cgroup /no-such-cgroup: give one that exists"));
	assert_non_null(strstr(got, "/uni fied"));
	assert_int_equal(cg_path("hybrid.mountinfo", "+/uni fied/nope", got, sizeof(got)), -ENOENT);
	/* cgroup v1 counts only where there is no cgroup2. */
	assert_int_equal(cg_path("hybrid.mountinfo", "+/v1/only", got, sizeof(got)), -ENOENT);
	assert_int_equal(cg_path("hybrid.mountinfo", "/only", got, sizeof(got)), -ENOENT);
	put_text("v1.mountinfo", "40 31 0:37 / %s/v1 rw,relatime - cgroup cgroup rw,cpu\n");
	assert_int_equal(cg_path("v1.mountinfo", "/only", got, sizeof(got)), 0);
	assert_string_equal(got, "/only");
	assert_int_equal(cg_path("v1.mountinfo", "+/v1/only", got, sizeof(got)), 0);
	assert_string_equal(got, "/only");
	/* No cgroup mount at all (ip netns exec's /sys): taken as given, said. */
	assert_int_equal(cg_path("none", "/x/", got, sizeof(got)), -ENODEV);
	assert_non_null(strstr(got, "cannot check that cgroup /x exists: no cgroup file system"));
	/* A cgroup and what is under it, by whole components. */
	assert_true(procinfo__in_cgroup("/x", "/x"));
	assert_true(procinfo__in_cgroup("/x/y", "/x"));
	assert_false(procinfo__in_cgroup("/xy", "/x"));
	assert_true(procinfo__in_cgroup("/anything", "/"));
	snprintf(got, sizeof(got), "rm -rf '%s'", cg_dir);
	assert_int_equal(system(got), 0);
}

/* Ready to sample: CUDA mapped, and not in the middle of `import torch`. */
static void test_ready(void **state)
{
	struct procinfo pi = { .cuda = true };

	(void)state;
	assert_true(procinfo__ready(&pi));
	/* import torch: libtorch_global_deps.so has mapped CUDA, libtorch_cpu.so is not in yet. */
	pi.torch_deps = true;
	assert_false(procinfo__ready(&pi));
	pi.torch = true;
	assert_true(procinfo__ready(&pi));
	pi = (struct procinfo){ .torch_deps = true, .torch = true };
	assert_false(procinfo__ready(&pi));
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

/* A graph launch line of cuprobe's layout; content "" for an older trace's, naming none. */
#define GRAPH_LINE(api, content)                                                                \
	"  {\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"" api "\", \"pid\": 1, "       \
	"\"tid\": 1, \"ts\": 0.000, \"dur\": 0.000, \"args\": {\"cbid\": 311, \"graph\": "       \
	"\"0x6000\"" content ", \"stream handle\": \"0x0\", \"step\": 0}},\n"

/*
 * Content 1 (k_a x3, k_b) three times through cudaGraphLaunch and once through
 * cuGraphLaunch; content 2 (k_b x2) once; content 0 and content 9, which the
 * list lacks, are of unknown content; a graph launch naming none is a launch only.
 */
static const char graph_lines[] =
	"{\n \"schemaVersion\": 1,\n \"traceEvents\": [\n"
	GRAPH_LINE("cudaGraphLaunch", ", \"graph content\": 1")
	GRAPH_LINE("cudaGraphLaunch", ", \"graph content\": 1")
	GRAPH_LINE("cudaGraphLaunch", ", \"graph content\": 1")
	GRAPH_LINE("cuGraphLaunch", ", \"graph content\": 1")
	GRAPH_LINE("cudaGraphLaunch", ", \"graph content\": 2")
	GRAPH_LINE("cudaGraphLaunch", ", \"graph content\": 0")
	GRAPH_LINE("cudaGraphLaunch", ", \"graph content\": 9")
	GRAPH_LINE("cudaGraphLaunch", "")
	"  {\"ph\": \"M\", \"name\": \"process_name\", \"pid\": 1, \"tid\": 0, \"args\": {}}\n"
	" ],\n \"traceName\": \"x\",\n"
	" \"cuprobe\": {\"version\": \"0.2.0\", \"pid\": 1, \"launches\": 8, \"graph_replays\": 7, "
	"\"graphs\": [{\"id\": 1, \"origin\": \"capture\", \"nodes\": 4, \"kernels\": 4, "
	"\"kernel_nodes\": [{\"kernel\": \"k_a\", \"grid\": [1, 1, 1], \"block\": [32, 1, 1], "
	"\"shared memory\": 0, \"count\": 3}, {\"kernel\": \"k_b\", \"count\": 1}]}, "
	"{\"id\": 2, \"origin\": \"built\", "
	"\"kernel_nodes\": [{\"kernel\": \"k_b\", \"count\": 2}]}]}\n"
	"}\n";

static const struct trace_kernel *find_tk(const struct trace_kernel *v, size_t n,
					  const char *kernel, const char *api)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i].api, api) &&
		    (kernel ? v[i].kernel && !strcmp(v[i].kernel, kernel) : !v[i].kernel))
			return &v[i];
	fail_msg("no (%s, %s)", kernel ? kernel : "NULL", api);
	return NULL;
}

static void check_graph_counts(const char *path)
{
	struct trace_counts tc;

	assert_int_equal(trace_counts__read(path, &tc), 0);
	/* Launches count a replay once, as before. */
	assert_int_equal(tc.launches, 8);
	assert_int_equal(tc.nk, 2);
	assert_int_equal(find_tk(tc.k, tc.nk, NULL, "cudaGraphLaunch")->n, 7);
	assert_int_equal(find_tk(tc.k, tc.nk, NULL, "cuGraphLaunch")->n, 1);
	assert_int_equal(tc.replays_known, 5);
	assert_int_equal(tc.replays_unknown, 2);
	/* Busiest first: k_a 9 + 3, k_b 3 + 2 + 1. */
	assert_int_equal(tc.ngk, 4);
	assert_string_equal(tc.gk[0].kernel, "k_a");
	assert_string_equal(tc.gk[0].api, "cudaGraphLaunch");
	assert_int_equal(tc.gk[0].n, 9);
	assert_int_equal(find_tk(tc.gk, tc.ngk, "k_b", "cudaGraphLaunch")->n, 5);
	assert_int_equal(find_tk(tc.gk, tc.ngk, "k_a", "cuGraphLaunch")->n, 3);
	assert_int_equal(find_tk(tc.gk, tc.ngk, "k_b", "cuGraphLaunch")->n, 1);
	trace_counts__free(&tc);
}

static void test_graph_trace_counts(void **state)
{
	char path[] = "/tmp/cuprobe-tc.XXXXXX";
	struct trace_counts tc;
	char *compact;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	write_file(path, graph_lines);
	check_graph_counts(path);
	/* Read whole: the same. */
	compact = strdup(graph_lines);
	for (char *p = compact; *p; p++)
		if (*p == '\n')
			*p = ' ';
	write_file(path, compact);
	free(compact);
	check_graph_counts(path);
	/* Without the cuprobe object, no content is known. */
	write_file(path, "{\n \"traceEvents\": [\n"
		   GRAPH_LINE("cudaGraphLaunch", ", \"graph content\": 1")
		   "  {\"ph\": \"M\", \"name\": \"x\", \"pid\": 1, \"tid\": 0}\n ]\n}\n");
	assert_int_equal(trace_counts__read(path, &tc), 0);
	assert_int_equal(tc.replays_known, 0);
	assert_int_equal(tc.replays_unknown, 1);
	assert_int_equal(tc.ngk, 0);
	trace_counts__free(&tc);
	unlink(path);
}

/* Graph kernels by (kernel, api), bounded as launches are; replays by content, from 0. */
static void test_graph_series(void **state)
{
	struct metrics *m = metrics__new(2);
	struct plabels l = { .pid = 7, .comm = "train", .rank = -1, .cgroup = "", .container = "" };
	struct pmetrics *pm;
	char *text;

	(void)state;
	pm = metrics__proc(m, &l);
	assert_non_null(pm);
	text = render(m);
	assert_non_null(strstr(text, "# TYPE cuprobe_graph_kernels_total counter\n"
				     "# HELP cuprobe_graph_replays_total"));
	assert_non_null(strstr(text, "cuprobe_graph_replays_total{pid=\"7\",comm=\"train\","
				     "content=\"known\"} 0\n"
				     "cuprobe_graph_replays_total{pid=\"7\",comm=\"train\","
				     "content=\"unknown\"} 0\n"));
	free(text);
	assert_int_equal(pmetrics__launches(pm, NULL, "cudaGraphLaunch", 4), 0);
	assert_int_equal(pmetrics__graph_kernels(pm, "k_a", "cudaGraphLaunch", 12), 0);
	assert_int_equal(pmetrics__graph_kernels(pm, "k_b", "cudaGraphLaunch", 5), 0);
	assert_int_equal(pmetrics__graph_kernels(pm, "k_c", "cudaGraphLaunch", 2), 0);
	assert_int_equal(pmetrics__graph_kernels(pm, "k_a", "cuGraphLaunch", 3), 0);
	pmetrics__graph_replays(pm, 4, 1);
	pmetrics__graph_replays(pm, 1, 2);
	/* The kernels of graphs are not launches. */
	assert_int_equal(pmetrics__launch_total(pm), 4);
	text = render(m);
	assert_non_null(strstr(text, "cuprobe_launches_total{pid=\"7\",comm=\"train\",kernel=\"\","
				     "api=\"cudaGraphLaunch\"} 4\n"));
	assert_non_null(strstr(text, "cuprobe_graph_kernels_total{pid=\"7\",comm=\"train\","
				     "kernel=\"k_a\",api=\"cudaGraphLaunch\"} 12\n"));
	assert_non_null(strstr(text, "kernel=\"k_b\",api=\"cudaGraphLaunch\"} 5\n"));
	assert_non_null(strstr(text, "cuprobe_graph_kernels_total{pid=\"7\",comm=\"train\","
				     "kernel=\"other\",api=\"cudaGraphLaunch\"} 2\n"));
	assert_non_null(strstr(text, "kernel=\"k_a\",api=\"cuGraphLaunch\"} 3\n"));
	assert_null(strstr(text, "k_c"));
	assert_non_null(strstr(text, "content=\"known\"} 5\n"));
	assert_non_null(strstr(text, "content=\"unknown\"} 3\n"));
	free(text);
	metrics__free(m);
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static void remove_tree(const char *dir)
{
	nftw(dir, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/* Makes DIR/run_<n> with one file of kb KiB, as a window would. */
static void make_window(const char *dir, long n, int kb)
{
	char path[1024], *buf = calloc(1024, 1);
	FILE *f;

	snprintf(path, sizeof(path), "%s/run_%ld", dir, n);
	assert_int_equal(mkdir(path, 0755), 0);
	snprintf(path, sizeof(path), "%s/run_%ld/t.pt.trace.json", dir, n);
	f = fopen(path, "w");
	assert_non_null(f);
	for (int i = 0; i < kb; i++) {
		memset(buf, 'a' + i % 26, 1024);
		fwrite(buf, 1, 1024, f);
	}
	fclose(f);
	free(buf);
}

static const struct out_mode private_mode = { .file = 0600, .dir = 0700 };

static bool exists(const char *dir, long n)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/run_%ld", dir, n);
	return access(path, F_OK) == 0;
}

/* Numbering goes on from the folders there; the oldest go first, never the newest. */
static void test_retention(void **state)
{
	char dir[] = "/tmp/cuprobe-store.XXXXXX", next[512], err[256];
	struct store *st;
	long n;

	(void)state;
	assert_non_null(mkdtemp(dir));
	make_window(dir, 3, 100);
	make_window(dir, 7, 100);
	st = store__new(dir, 350 * 1024, &private_mode, err, sizeof(err));
	assert_non_null(st);
	assert_true(store__bytes(st) >= 200 * 1024);
	assert_int_equal(store__next_dir(st, next, sizeof(next), &n), 0);
	assert_non_null(strstr(next, "/run_8"));
	make_window(dir, 8, 100);
	store__written(st, n, 0);
	assert_true(exists(dir, 3) && exists(dir, 7) && exists(dir, 8));
	assert_int_equal(store__next_dir(st, next, sizeof(next), &n), 0);
	make_window(dir, 9, 100);
	store__written(st, n, 0);
	/* 400 KiB over 350: run_3 goes. */
	assert_false(exists(dir, 3));
	assert_true(exists(dir, 7) && exists(dir, 8) && exists(dir, 9));
	assert_int_equal(store__removed(st), 1);
	/* One window larger than the limit: all older ones go, it stays. */
	assert_int_equal(store__next_dir(st, next, sizeof(next), &n), 0);
	make_window(dir, 10, 500);
	store__written(st, n, 0);
	assert_false(exists(dir, 7) || exists(dir, 8) || exists(dir, 9));
	assert_true(exists(dir, 10));
	store__free(st);
	/* Not a folder: refused, said. */
	assert_null(store__new("/dev/null", 1 << 20, &private_mode, err, sizeof(err)));
	assert_non_null(strstr(err, "a link or a file"));
	/* A folder others may write: refused, said with the fix. */
	assert_int_equal(chmod(dir, 0777), 0);
	assert_null(store__new(dir, 1 << 20, &private_mode, err, sizeof(err)));
	assert_non_null(strstr(err, "chmod go-w"));
	assert_int_equal(chmod(dir, 0700), 0);
	remove_tree(dir);
}

/*
 * Label values are valid UTF-8 whatever the bytes of a process's name: a
 * broken sequence becomes U+FFFD, newlines, quotes and backslashes are
 * escaped, and valid multi-byte characters stay as they are.
 */
static void test_series_utf8(void **state)
{
	struct metrics *m = metrics__new(2);
	struct plabels l = { .pid = 7, .comm = "b\xff\xfe\nq\"x\\y", .rank = -1, .cgroup = "/\xc3\xa9\xed\xa0\x80",
			     .container = "" };
	struct pmetrics *pm;
	char *text;

	(void)state;
	pm = metrics__proc(m, &l);
	assert_non_null(pm);
	assert_int_equal(pmetrics__launches(pm, "k\xc0\xaf", "cudaLaunchKernel", 1), 0);
	text = render(m);
	assert_non_null(strstr(text, "comm=\"b\xef\xbf\xbd\xef\xbf\xbd\\nq\\\"x\\\\y\""));
	/* é kept; a surrogate (ED A0 80) and an overlong '/' (C0 AF) are not UTF-8. */
	assert_non_null(strstr(text, "cgroup=\"/\xc3\xa9\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""));
	assert_non_null(strstr(text, "kernel=\"k\xef\xbf\xbd\xef\xbf\xbd\""));
	assert_null(strstr(text, "\xff"));
	free(text);
	metrics__free(m);
}

/*
 * Windows being written hold room under the limit: a reservation evicts the
 * oldest windows first, and one that cannot fit beside the others is refused.
 */
static void test_reserve(void **state)
{
	char dir[] = "/tmp/cuprobe-store.XXXXXX", next[512], err[256];
	struct store *st;
	long n;

	(void)state;
	assert_non_null(mkdtemp(dir));
	make_window(dir, 1, 100);
	make_window(dir, 2, 100);
	st = store__new(dir, 400 * 1024, &private_mode, err, sizeof(err));
	assert_non_null(st);
	/* 200 KiB kept + 250 reserved > 400: run_1 goes now, before the window writes. */
	assert_int_equal(store__reserve(st, 250 * 1024), 0);
	assert_false(exists(dir, 1));
	assert_true(exists(dir, 2));
	/* Another 250 cannot fit beside the first window's: refused, nothing removed. */
	assert_int_equal(store__reserve(st, 250 * 1024), -ENOSPC);
	assert_true(exists(dir, 2));
	assert_int_equal(store__reserved(st), 250 * 1024);
	assert_int_equal(store__next_dir(st, next, sizeof(next), &n), 0);
	assert_int_equal(n, 3);
	make_window(dir, 3, 120);
	store__written(st, n, 250 * 1024);
	assert_int_equal(store__reserved(st), 0);
	assert_true(exists(dir, 2) && exists(dir, 3));
	assert_true(store__bytes(st) <= 400 * 1024);
	store__free(st);
	remove_tree(dir);
}

/*
 * The output folder is held from the start: a user who renames a folder on
 * its path and puts a link there makes nothing go through the link, and a
 * path with a folder another user may write is refused at start.
 */
static void test_output_held(void **state)
{
	char top[] = "/tmp/cuprobe-store.XXXXXX", up[600], out[700], victim[600], old[700],
	     next[512], err[512], path[1024];
	struct store *st;
	long n;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(top));
	snprintf(up, sizeof(up), "%s/up", top);
	snprintf(out, sizeof(out), "%s/out", up);
	snprintf(victim, sizeof(victim), "%s/victim", top);
	snprintf(old, sizeof(old), "%s/old", up);
	assert_int_equal(mkdir(up, 0755), 0);
	assert_int_equal(mkdir(victim, 0700), 0);
	make_window(victim, 99, 10);
	st = store__new(out, 1 << 20, &private_mode, err, sizeof(err));
	assert_non_null(st);
	/* Made private. */
	{
		struct stat sb;

		assert_int_equal(stat(out, &sb), 0);
		assert_int_equal(sb.st_mode & 0777, 0700);
	}
	/* out is swapped for a link to victim after the daemon started. */
	assert_int_equal(rename(out, old), 0);
	assert_int_equal(symlink(victim, out), 0);
	assert_int_equal(store__next_dir(st, next, sizeof(next), &n), 0);
	assert_int_equal(mkdir(next, 0700), 0);
	snprintf(path, sizeof(path), "%s/run_%ld", old, n);
	assert_int_equal(access(path, F_OK), 0);
	snprintf(path, sizeof(path), "%s/run_%ld", victim, n);
	assert_int_not_equal(access(path, F_OK), 0);
	/* Retention removes in the held folder only: victim's run_99 stays. */
	snprintf(path, sizeof(path), "%s/x", next);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, err, sizeof(err)), sizeof(err));
	assert_int_equal(fsync(fd), 0);
	close(fd);
	store__written(st, n, 0);
	assert_int_equal(store__reserve(st, 1 << 20), 0);
	assert_true(exists(victim, 99));
	assert_false(exists(old, n));
	store__free(st);
	/* A folder on the path that another user may write (no sticky bit): refused. */
	assert_int_equal(unlink(out), 0);
	assert_int_equal(chmod(up, 0777), 0);
	assert_null(store__new(out, 1 << 20, &private_mode, err, sizeof(err)));
	assert_non_null(strstr(err, "may be written by another user"));
	/* Owned by another user: refused too. */
	assert_int_equal(chmod(up, 0755), 0);
	assert_int_equal(chown(up, 65534, 65534), 0);
	assert_null(store__new(out, 1 << 20, &private_mode, err, sizeof(err)));
	assert_non_null(strstr(err, "may be written by another user"));
	/* A link as the output: refused. */
	assert_int_equal(chown(up, 0, 0), 0);
	assert_int_equal(symlink(victim, out), 0);
	assert_null(store__new(out, 1 << 20, &private_mode, err, sizeof(err)));
	assert_non_null(strstr(err, "a link or a file"));
	/* A relative path: refused. */
	assert_null(store__new("relative/out", 1 << 20, &private_mode, err, sizeof(err)));
	assert_non_null(strstr(err, "absolute"));
	remove_tree(top);
}

/* Retention never removes a run_<n> folder another user owns (make test runs as root). */
static void test_retention_not_others(void **state)
{
	char dir[] = "/tmp/cuprobe-store.XXXXXX", next[512], err[256], path[600];
	struct store *st;
	long n;

	(void)state;
	assert_int_equal(geteuid(), 0);
	assert_non_null(mkdtemp(dir));
	make_window(dir, 1, 100);
	snprintf(path, sizeof(path), "%s/run_1", dir);
	assert_int_equal(chown(path, 65534, 65534), 0);
	make_window(dir, 2, 100);
	st = store__new(dir, 150 * 1024, &private_mode, err, sizeof(err));
	assert_non_null(st);
	assert_int_equal(store__next_dir(st, next, sizeof(next), &n), 0);
	assert_non_null(strstr(next, "/run_3"));
	make_window(dir, 3, 100);
	store__written(st, n, 0);
	/* Over the limit: our run_2 goes; run_1 is not ours and stays. */
	assert_true(exists(dir, 1) && !exists(dir, 2) && exists(dir, 3));
	store__free(st);
	remove_tree(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_settings),   cmocka_unit_test(test_rules),
		cmocka_unit_test(test_config_file), cmocka_unit_test(test_container),
		cmocka_unit_test(test_window_follows_retention),
		cmocka_unit_test(test_cgroup_path),
		cmocka_unit_test(test_ready),
		cmocka_unit_test(test_series),	   cmocka_unit_test(test_trace_counts),
		cmocka_unit_test(test_graph_trace_counts),
		cmocka_unit_test(test_graph_series),
		cmocka_unit_test(test_retention),
		cmocka_unit_test(test_retention_not_others),
		cmocka_unit_test(test_series_utf8),
		cmocka_unit_test(test_reserve),
		cmocka_unit_test(test_output_held),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
