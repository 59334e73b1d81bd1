// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include "core/probes/guard.h"
#include "hold.h"
#include "proc_state.h"

/* The guardian's fds, moved out of the way of everything it closes. */
#define FD_LOADER 1000
#define FD_BYE 1001
#define FD_STATE 1002
#define FD_CONF 1003

/*
 * A hold unanswered for this long means the loader is alive but not
 * running (stopped, starved of CPU, stuck): its own bound is 3 s, and
 * BPF makes no new hold after HOLD_STALE_NS.
 */
#define STALE_NS (HOLD_STALE_NS + 1000 * 1000000ull)
#define LOOK_MS 250

/* Holds seen unanswered while the loader lives, in the guardian's own memory. */
struct seen {
	__u32 tgid;
	__u64 seq;
	__u64 since;
	bool continued;
};

static struct seen seen[CUPROBE_MAX_PROCS];
static size_t nseen;

struct guard {
	pid_t pid;
	int pidfd;	/* the guardian's */
	int bye;	/* write end: "x" when the loader ends cleanly */
};

/*
 * Continues every process whose stops outnumber its answers, and answers
 * them, so that a later look does not continue it again (its user may have
 * stopped it since). Returns how many were continued.
 */
static int sweep(void)
{
	__u32 key, next, *prev = NULL;
	int n = 0;

	while (!bpf_map_get_next_key(FD_STATE, prev, &next)) {
		struct proc_state ps;
		struct proc_conf conf;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(FD_STATE, &key, &ps) ||
		    bpf_map_lookup_elem(FD_CONF, &key, &conf) || ps.stops <= conf.holds_answered)
			continue;
		if (!kill((pid_t)key, SIGCONT)) {
			n++;
			fprintf(stderr, "cuprobe: guardian: continued pid %u, left stopped by a cuprobe "
					"that ended without continuing it\n", key);
		}
		conf.holds_answered = ps.stops;
		bpf_map_update_elem(FD_CONF, &key, &conf, BPF_EXIST);
	}
	return n;
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static struct seen *seen_get(__u32 tgid)
{
	for (size_t i = 0; i < nseen; i++)
		if (seen[i].tgid == tgid)
			return &seen[i];
	if (nseen == CUPROBE_MAX_PROCS)
		return NULL;
	seen[nseen] = (struct seen){ .tgid = tgid };
	return &seen[nseen++];
}

/*
 * While the loader lives, the maps stay its own: a hold left unanswered for
 * STALE_NS is continued once, and remembered here, not written there.
 */
static void look_stale(void)
{
	__u32 key, next, *prev = NULL;
	__u64 now = now_ns();

	while (!bpf_map_get_next_key(FD_STATE, prev, &next)) {
		struct proc_state ps;
		struct proc_conf conf;
		struct seen *h;

		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(FD_STATE, &key, &ps) ||
		    bpf_map_lookup_elem(FD_CONF, &key, &conf) || ps.stops <= conf.holds_answered ||
		    !(h = seen_get(key)))
			continue;
		if (h->seq != ps.stops) {
			*h = (struct seen){ .tgid = key, .seq = ps.stops, .since = now };
			continue;
		}
		if (h->continued || now - h->since < STALE_NS)
			continue;
		h->continued = true;
		if (!kill((pid_t)key, SIGCONT))
			fprintf(stderr, "cuprobe: guardian: continued pid %u, held for over %llu ms by a "
					"cuprobe that is not running\n", key, STALE_NS / 1000000);
	}
}

static void settle(void)
{
	static const int ign[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP, SIGTTIN,
				   SIGTTOU, SIGUSR1, SIGUSR2 };
	ssize_t n;
	int fd;

	setsid();
	for (size_t i = 0; i < sizeof(ign) / sizeof(ign[0]); i++)
		signal(ign[i], SIG_IGN);
	prctl(PR_SET_NAME, "cuprobe-guard");
	prctl(PR_SET_PDEATHSIG, 0);
	/* Not root: the OOM killer may still choose it. */
	fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = write(fd, "-1000", 5);
		close(fd);
	}
	/* It keeps no folder busy. */
	n = chdir("/");
	(void)n;
	fd = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		dup2(fd, STDIN_FILENO);
		dup2(fd, STDOUT_FILENO);
		close(fd);
	}
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static __attribute__((noreturn)) void guard_main(void)
{
	struct pollfd p[2] = { { .fd = FD_LOADER, .events = POLLIN },
			       { .fd = FD_BYE, .events = POLLIN } };
	char c = 0;

	settle();
	for (;;) {
		int n = poll(p, 2, LOOK_MS);

		if (n > 0)
			break;
		if (n == 0)
			look_stale();
	}
	if (read(FD_BYE, &c, 1) == 1 && c == 'x') {
		sweep();
		_exit(0);
	}
	/*
	 * The loader is gone, and its links with it. A stop sent just before
	 * may still be on its way: look again after it has surely landed.
	 */
	sweep();
	sleep_ms(100);
	sweep();
	sleep_ms(1000);
	sweep();
	_exit(0);
}

static int move_fd(int fd, int to)
{
	return fd == to || dup2(fd, to) == to ? 0 : -errno;
}

struct guard *guard__start(int state_fd, int conf_fd)
{
	struct guard *g = calloc(1, sizeof(*g));
	int self, pipefd[2] = { -1, -1 }, err;

	if (!g)
		return NULL;
	self = syscall(SYS_pidfd_open, getpid(), 0);
	if (self < 0 || pipe2(pipefd, O_CLOEXEC)) {
		err = -errno;
		goto fail;
	}
	g->pid = fork();
	if (g->pid < 0) {
		err = -errno;
		goto fail;
	}
	if (g->pid == 0) {
		/* Above every fd it closes, then nothing else: no link survives in here. */
		if (move_fd(fcntl(self, F_DUPFD, 2000), FD_LOADER) ||
		    move_fd(fcntl(pipefd[0], F_DUPFD, 2000), FD_BYE) ||
		    move_fd(fcntl(state_fd, F_DUPFD, 2000), FD_STATE) ||
		    move_fd(fcntl(conf_fd, F_DUPFD, 2000), FD_CONF))
			_exit(1);
		syscall(SYS_close_range, 3, FD_LOADER - 1, 0);
		syscall(SYS_close_range, FD_CONF + 1, ~0U, 0);
		guard_main();
	}
	close(self);
	close(pipefd[0]);
	g->bye = pipefd[1];
	g->pidfd = syscall(SYS_pidfd_open, g->pid, 0);
	if (g->pidfd < 0) {
		err = -errno;
		kill(g->pid, SIGKILL);
		close(g->bye);
		free(g);
		errno = -err;
		return NULL;
	}
	return g;
fail:
	if (self >= 0)
		close(self);
	if (pipefd[0] >= 0) {
		close(pipefd[0]);
		close(pipefd[1]);
	}
	free(g);
	errno = -err;
	return NULL;
}

pid_t guard__pid(const struct guard *g)
{
	return g->pid;
}

int guard__fd(const struct guard *g)
{
	return g->pidfd;
}

void guard__release(struct guard *g)
{
	if (!g)
		return;
	/* Should it be gone already, there is nothing to tell. */
	ssize_t n = write(g->bye, "x", 1);

	(void)n;
	close(g->bye);
	close(g->pidfd);
	free(g);
}
