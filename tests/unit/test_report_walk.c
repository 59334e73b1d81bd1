// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The trace files that the PATHs given to cuprobe report name
 * (report/walk.c): folders walked for *.pt.trace.json, a file named twice
 * counted once, entries that are not regular files refused unread, links
 * to traces read.
 *
 * Small traces are written into a scratch folder, cuprobe report runs on them
 * through report_main and its output is checked number by number
 * (report_fixture.h).
 */
#include "report_fixture.h"

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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_folders_add_up, setup, teardown),
		cmocka_unit_test_setup_teardown(test_inputs_that_are_not_regular_files, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
