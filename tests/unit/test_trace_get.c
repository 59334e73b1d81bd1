// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * GET /trace's file (daemon/trace_get.h), in a real output folder made here:
 * a trace is opened by its relative and its absolute name; a "..", a ".", an
 * absolute path elsewhere, a symlink planted for the trace or for its run
 * folder, a FIFO, a folder and a file without a trace's suffix are refused
 * with the status their errno maps to, and the FIFO is never opened (the
 * test would block).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <cmocka.h>
#include "daemon/trace_get.h"

struct fx {
	char out[PATH_MAX], secret[PATH_MAX + 16];
	int dirfd;
};

static void put(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **state)
{
	struct fx *fx = calloc(1, sizeof(*fx));
	char p[PATH_MAX + 64];

	assert_non_null(fx);
	snprintf(fx->out, sizeof(fx->out), "/tmp/cuprobe-trace-get-XXXXXX");
	assert_non_null(mkdtemp(fx->out));
	snprintf(p, sizeof(p), "%s/run_0", fx->out);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/run_0/h_1.2.pt.trace.json", fx->out);
	put(p, "{\"traceEvents\": []}\n");
	snprintf(fx->secret, sizeof(fx->secret), "%s.secret", fx->out);
	put(fx->secret, "not a trace\n");
	snprintf(p, sizeof(p), "%s/run_0/link.pt.trace.json", fx->out);
	assert_int_equal(symlink(fx->secret, p), 0);
	snprintf(p, sizeof(p), "%s/run_0/fifo.pt.trace.json", fx->out);
	assert_int_equal(mkfifo(p, 0600), 0);
	snprintf(p, sizeof(p), "%s/run_0/dir.pt.trace.json", fx->out);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/run_0/notes.txt", fx->out);
	put(p, "x\n");
	snprintf(p, sizeof(p), "%s/run_1", fx->out);
	assert_int_equal(symlink("/tmp", p), 0);
	fx->dirfd = open(fx->out, O_RDONLY | O_DIRECTORY);
	assert_true(fx->dirfd >= 0);
	*state = fx;
	return 0;
}

static int teardown(void **state)
{
	struct fx *fx = *state;
	char cmd[2 * PATH_MAX + 32];

	close(fx->dirfd);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s'", fx->out, fx->secret);
	assert_int_equal(system(cmd), 0);
	free(fx);
	return 0;
}

/* trace_get__open's result for name; why holds its message. */
static int try(struct fx *fx, const char *name, char *why, uint64_t *size)
{
	int fd = trace_get__open(fx->dirfd, fx->out, name, size, why, 512);

	if (fd >= 0) {
		char c;

		assert_int_equal(read(fd, &c, 1), 1);
		assert_int_equal(c, '{');
		close(fd);
		return 0;
	}
	return fd;
}

static void test_opens_traces(void **state)
{
	struct fx *fx = *state;
	char why[512], abs[PATH_MAX + 64];
	uint64_t size = 0;

	assert_int_equal(try(fx, "run_0/h_1.2.pt.trace.json", why, &size), 0);
	assert_int_equal(size, strlen("{\"traceEvents\": []}\n"));
	snprintf(abs, sizeof(abs), "%s/run_0/h_1.2.pt.trace.json", fx->out);
	assert_int_equal(try(fx, abs, why, &size), 0);
}

static void test_refuses(void **state)
{
	static const struct { const char *name, *said; int err; } cases[] = {
		{ "run_0/../run_0/h_1.2.pt.trace.json", "no '..'", -EINVAL },
		{ "../x.pt.trace.json", "no '..'", -EINVAL },
		{ "./run_0/h_1.2.pt.trace.json", "no '..'", -EINVAL },
		{ "run_0//h_1.2.pt.trace.json", "no '..'", -EINVAL },
		{ "/etc/passwd", "not a trace's path under", -EINVAL },
		{ "a/b/c/d.pt.trace.json", "not a trace's path", -EINVAL },
		{ "run_0/link.pt.trace.json", "a symbolic link", -EACCES },
		{ "run_0/fifo.pt.trace.json", "a FIFO", -EACCES },
		{ "run_0/dir.pt.trace.json", "a folder", -EACCES },
		{ "run_0/notes.txt", "is not a trace", -EACCES },
		{ "run_1/h_1.2.pt.trace.json", "a link or a file", -EACCES },
		{ "run_0/none.pt.trace.json", "no trace", -ENOENT },
		{ "run_9/h_1.2.pt.trace.json", "no folder 'run_9'", -ENOENT },
	};
	struct fx *fx = *state;
	char why[512];
	uint64_t size;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		why[0] = '\0';
		if (try(fx, cases[i].name, why, &size) != cases[i].err || !strstr(why, cases[i].said))
			fail_msg("%s: want %d with '%s', got: %s", cases[i].name, cases[i].err,
				 cases[i].said, why);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_opens_traces, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuses, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
