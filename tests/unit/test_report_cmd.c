// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The cuprobe report command (cmd/report.c): --output and --help, usage
 * errors, and where the report may go: never through a link or into a
 * special file, a regular file replaced whole, never one of its inputs.
 *
 * Small traces are written into a scratch folder, cuprobe report runs on them
 * through report_main and its output is checked number by number
 * (report_fixture.h).
 */
#include "report_fixture.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_output_file_and_help, setup, teardown),
		cmocka_unit_test_setup_teardown(test_usage_and_write_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_output_never_through_links_or_into_special_files,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_output_replaces_a_regular_file, setup, teardown),
		cmocka_unit_test_setup_teardown(test_output_is_an_input, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
