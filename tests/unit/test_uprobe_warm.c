// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Uprobe registration kept warm (uprobe_warm.h): a hold starts the writes and
 * they stop after the window; a window's keep lasts what it asks; the tracefs event exists while the session does
 * and is gone after; a killed session's event is removed by the next, a live
 * one's is not; CUPROBE_WARM=off and a base process that is gone say why and
 * leave nothing in tracefs; with no tracefs mounted, the warmer mounts its
 * own for its thread and leaves the process's mounts as they were. What the
 * writes buy (holds that do not wait for a grace period) is measured in
 * bench/ (torch_hold_max_ms_cold).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <cmocka.h>
#include "core/probes/uprobe_warm.h"
#include "core/proc/procmaps.h"

#define TRACEFS "/sys/kernel/tracing"

static pid_t base;

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* How many lines of uprobe_events contain s. */
static int events_with(const char *s)
{
	FILE *f = fopen(TRACEFS "/uprobe_events", "r");
	char line[512];
	int n = 0;

	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		n += strstr(line, s) != NULL;
	fclose(f);
	return n;
}

static void own_prefix(char *buf, size_t len)
{
	snprintf(buf, len, "cuprobe/warm_%d_", getpid());
}

static pid_t pausing_child(void)
{
	pid_t c = fork();

	if (c == 0) {
		/* A failed test does not leave it holding the runner's output. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		for (;;)
			pause();
	}
	assert_true(c > 0);
	return c;
}

static bool tracefs_here(void)
{
	return !access(TRACEFS "/uprobe_events", F_OK);
}

static int setup(void **state)
{
	(void)state;
	/*
	 * A host with no tracefs mounted: the tests look at the events through a
	 * mount of their own, in a mount namespace of their own.
	 */
	if (!tracefs_here() &&
	    (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	     mount("tracefs", TRACEFS, "tracefs", 0, NULL)))
		return -1;
	base = pausing_child();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	kill(base, SIGKILL);
	waitpid(base, NULL, 0);
	return 0;
}

static struct uprobe_warm_stats wait_writes(struct uprobe_warm *w, uint64_t n)
{
	struct uprobe_warm_stats st;

	for (int i = 0; i < 500; i++) {
		uprobe_warm__stats(w, &st);
		if (st.writes >= n || st.off)
			break;
		sleep_ms(10);
	}
	return st;
}

static void test_hold_starts_writes_event_goes_at_free(void **state)
{
	struct uprobe_warm *w = uprobe_warm__new(base);
	struct uprobe_warm_stats st, later;
	char prefix[64];

	(void)state;
	own_prefix(prefix, sizeof(prefix));
	assert_non_null(w);
	/* Idle until a hold: nothing in tracefs, no writes. */
	sleep_ms(50);
	uprobe_warm__stats(w, &st);
	assert_int_equal(st.writes, 0);
	assert_false(st.off);
	assert_int_equal(events_with(prefix), 0);
	uprobe_warm__hold(w);
	st = wait_writes(w, 5);
	assert_false(st.off);
	assert_true(st.writes >= 5);
	assert_true(st.active_ns > 0);
	assert_int_equal(events_with(prefix), 1);
	/* After the window the writes stop; the event stays for the next hold. */
	sleep_ms(UPROBE_WARM_WINDOW_MS + 200);
	uprobe_warm__stats(w, &st);
	sleep_ms(100);
	uprobe_warm__stats(w, &later);
	assert_int_equal(later.writes, st.writes);
	assert_true(later.active_ns >= UPROBE_WARM_WINDOW_MS * 1000000ULL);
	assert_int_equal(events_with(prefix), 1);
	/* Another hold starts them again. */
	uprobe_warm__hold(w);
	later = wait_writes(w, st.writes + 3);
	assert_true(later.writes >= st.writes + 3);
	uprobe_warm__free(w);
	assert_int_equal(events_with(prefix), 0);
}

/* A window's keep lasts what it asks for, not the hold's second; each is a stretch. */
static void test_keep_for_a_window(void **state)
{
	struct uprobe_warm *w = uprobe_warm__new(base);
	struct uprobe_warm_stats st, later;

	(void)state;
	assert_non_null(w);
	uprobe_warm__keep(w, 150 * 1000000ULL);
	st = wait_writes(w, 3);
	assert_false(st.off);
	assert_true(st.writes >= 3);
	sleep_ms(400);
	uprobe_warm__stats(w, &st);
	sleep_ms(100);
	uprobe_warm__stats(w, &later);
	assert_int_equal(later.writes, st.writes);
	assert_int_equal(later.stretches, 1);
	assert_true(later.active_ns < UPROBE_WARM_WINDOW_MS * 1000000ULL);
	/*
	 * A shorter keep inside a longer one does not cut it short: writes go on past
	 * the shorter's end (waited for, within the longer, on a loaded machine).
	 */
	uprobe_warm__keep(w, 3000 * 1000000ULL);
	uprobe_warm__keep(w, 1000000ULL);
	sleep_ms(100);
	uprobe_warm__stats(w, &st);
	later = wait_writes(w, st.writes + 1);
	assert_true(later.writes > st.writes);
	assert_int_equal(later.stretches, 2);
	uprobe_warm__free(w);
}

static void add_event(const char *name, int memfd)
{
	int fd = open(TRACEFS "/uprobe_events", O_WRONLY | O_APPEND);

	assert_true(fd >= 0);
	assert_true(dprintf(fd, "p:cuprobe/%s /proc/%d/fd/%d:0x0\n", name, getpid(), memfd) > 0);
	close(fd);
}

static void test_stale_events_of_dead_sessions_go(void **state)
{
	int memfd = memfd_create("test-warm", 0);
	char dead_name[64], live_name[64];
	pid_t dead = fork(), live;

	(void)state;
	assert_true(memfd >= 0);
	assert_int_equal(ftruncate(memfd, 4096), 0);
	if (dead == 0)
		_exit(0);
	assert_int_equal(waitpid(dead, NULL, 0), dead);
	live = pausing_child();
	snprintf(dead_name, sizeof(dead_name), "warm_%d_0", dead);
	snprintf(live_name, sizeof(live_name), "warm_%d_0", live);
	add_event(dead_name, memfd);
	add_event(live_name, memfd);
	assert_int_equal(events_with(dead_name), 1);
	assert_int_equal(uprobe_warm__remove_stale(TRACEFS), 1);
	assert_int_equal(events_with(dead_name), 0);
	/* A live process's event is its own. */
	assert_int_equal(events_with(live_name), 1);
	kill(live, SIGKILL);
	waitpid(live, NULL, 0);
	assert_int_equal(uprobe_warm__remove_stale(TRACEFS), 1);
	assert_int_equal(events_with(live_name), 0);
	close(memfd);
}

/* Events named exactly name (not only starting so). */
static int events_named(const char *name)
{
	char s[96];

	snprintf(s, sizeof(s), "cuprobe/%s ", name);
	return events_with(s);
}

/* The session's start time in the name: a dead session's pid now another process's is no owner. */
static void test_stale_event_of_a_reused_pid_goes(void **state)
{
	int memfd = memfd_create("test-warm", 0);
	char reused_name[80], live_name[80], old_name[64];
	pid_t live = pausing_child();
	unsigned long long start = proc_start_ticks(live);

	(void)state;
	assert_true(memfd >= 0);
	assert_int_equal(ftruncate(memfd, 4096), 0);
	assert_true(start > 1);
	/* The same pid, started at another time: a session that died, its pid taken since. */
	snprintf(reused_name, sizeof(reused_name), "warm_%d_%llu_0", live, start - 1);
	snprintf(live_name, sizeof(live_name), "warm_%d_%llu_1", live, start);
	/* An older cuprobe's name, without a start time: its pid alone says. */
	snprintf(old_name, sizeof(old_name), "warm_%d_2", live);
	add_event(reused_name, memfd);
	add_event(live_name, memfd);
	add_event(old_name, memfd);
	assert_int_equal(uprobe_warm__remove_stale(TRACEFS), 1);
	assert_int_equal(events_named(reused_name), 0);
	assert_int_equal(events_named(live_name), 1);
	assert_int_equal(events_named(old_name), 1);
	kill(live, SIGKILL);
	waitpid(live, NULL, 0);
	assert_int_equal(uprobe_warm__remove_stale(TRACEFS), 2);
	assert_int_equal(events_named(live_name), 0);
	assert_int_equal(events_named(old_name), 0);
	close(memfd);
}

static void test_off_by_environment(void **state)
{
	struct uprobe_warm *w;
	struct uprobe_warm_stats st;
	char prefix[64];

	(void)state;
	own_prefix(prefix, sizeof(prefix));
	setenv("CUPROBE_WARM", "off", 1);
	w = uprobe_warm__new(base);
	unsetenv("CUPROBE_WARM");
	assert_non_null(w);
	uprobe_warm__hold(w);
	sleep_ms(100);
	uprobe_warm__stats(w, &st);
	assert_true(st.off);
	assert_string_equal(st.why, "CUPROBE_WARM=off");
	assert_int_equal(st.writes, 0);
	assert_int_equal(events_with(prefix), 0);
	uprobe_warm__free(w);
}

static void test_base_gone_says_why_leaves_nothing(void **state)
{
	struct uprobe_warm *w;
	struct uprobe_warm_stats st;
	char prefix[64];
	pid_t gone = fork();

	(void)state;
	own_prefix(prefix, sizeof(prefix));
	if (gone == 0)
		_exit(0);
	assert_int_equal(waitpid(gone, NULL, 0), gone);
	w = uprobe_warm__new(gone);
	assert_non_null(w);
	uprobe_warm__hold(w);
	st = wait_writes(w, 1);
	assert_true(st.off);
	assert_non_null(strstr(st.why, "perf event"));
	assert_int_equal(st.writes, 0);
	/* The event made before the perf event failed is taken out at once. */
	assert_int_equal(events_with(prefix), 0);
	uprobe_warm__free(w);
}

/*
 * In a child whose mount namespace has no tracefs: the warmer mounts its own
 * and writes; the child's mounts are as they were after. Its exit status
 * names the first check that failed (cmocka's asserts belong to the parent).
 */
static int no_tracefs_child(void)
{
	struct uprobe_warm *w;
	struct uprobe_warm_stats st;

	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return 10;
	umount2(TRACEFS, MNT_DETACH);
	umount2("/sys/kernel/debug", MNT_DETACH);
	if (tracefs_here())
		return 11;
	w = uprobe_warm__new(base);
	if (!w)
		return 12;
	uprobe_warm__hold(w);
	st = wait_writes(w, 3);
	uprobe_warm__free(w);
	if (st.off || !st.own_tracefs)
		return 13;
	if (st.writes < 3)
		return 14;
	return tracefs_here() ? 15 : 0;
}

static void test_no_tracefs_mounted_mounts_its_own(void **state)
{
	char prefix[64];
	pid_t c = fork();
	int status;

	(void)state;
	if (c == 0)
		_exit(no_tracefs_child());
	assert_true(c > 0);
	assert_int_equal(waitpid(c, &status, 0), c);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* Its event went at its end, as with tracefs mounted. */
	snprintf(prefix, sizeof(prefix), "cuprobe/warm_%d_", c);
	assert_int_equal(events_with(prefix), 0);
	assert_true(tracefs_here());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hold_starts_writes_event_goes_at_free),
		cmocka_unit_test(test_keep_for_a_window),
		cmocka_unit_test(test_stale_events_of_dead_sessions_go),
		cmocka_unit_test(test_stale_event_of_a_reused_pid_goes),
		cmocka_unit_test(test_off_by_environment),
		cmocka_unit_test(test_base_gone_says_why_leaves_nothing),
		cmocka_unit_test(test_no_tracefs_mounted_mounts_its_own),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
