// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The front-ends' event loop (cmd_loop.h): one epoll set holding the signalfd,
 * the session's fd and the front-end's own fds. Each turn reads the
 * signals, turns the session's crank, calls the callbacks of the fds that
 * were readable, then the tick when it is due.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include "core/loop/cmd_loop.h"
#include "core/session/session.h"
#include "util/clock.h"

/* The longest wait for an fd when nothing is due sooner. */
#define POLL_MS 100
/* The front-end's own fds: the daemon has one (its HTTP queue). */
#define MAX_FDS 8
/* The signals a front-end may take instead of a stop. */
#define MAX_SIGNALS 3

/* epoll tags: the signalfd, the session, then the front-end's fds from TAG_FD. */
enum { TAG_SIGNALS, TAG_SESSION, TAG_FD };

struct loop_fd {
	int fd;
	cmd_loop_fd_fn fn;
	void *ctx;
};

struct loop_signal {
	int signo;
	cmd_loop_signal_fn fn;
	void *ctx;
};

struct cmd_loop {
	struct session *s;
	int epfd, sigfd;
	struct loop_fd fds[MAX_FDS];
	size_t nfds;
	struct loop_signal sigs[MAX_SIGNALS];
	size_t nsigs;
	cmd_loop_tick_fn tick;
	void *tick_ctx;
	uint64_t tick_ns, last_tick;
	bool keep_running;
	bool stop, signalled, timed_out;
};

static void signal_set(sigset_t *mask)
{
	sigemptyset(mask);
	sigaddset(mask, SIGINT);
	sigaddset(mask, SIGTERM);
	sigaddset(mask, SIGCHLD);
	sigaddset(mask, SIGHUP);
}

/* SIGINT and SIGTERM back to their default first: see loop.h. The signalfd, or -errno. */
static int block_signals(sigset_t *orig)
{
	sigset_t mask;
	int fd;

	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal_set(&mask);
	if (sigprocmask(SIG_BLOCK, &mask, orig))
		return -errno;
	fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	return fd < 0 ? -errno : fd;
}

static int epoll_add(int epfd, int fd, uint32_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u32 = tag };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

struct cmd_loop *cmd_loop__new(sigset_t *orig)
{
	struct cmd_loop *l = calloc(1, sizeof(*l));
	int err;

	if (!l)
		return NULL;
	l->epfd = -1;
	l->sigfd = block_signals(orig);
	err = l->sigfd < 0 ? l->sigfd : 0;
	if (!err) {
		l->epfd = epoll_create1(EPOLL_CLOEXEC);
		err = l->epfd < 0 ? -errno : epoll_add(l->epfd, l->sigfd, TAG_SIGNALS);
	}
	if (!err)
		return l;
	cmd_loop__free(l);
	errno = -err;
	return NULL;
}

void cmd_loop__free(struct cmd_loop *l)
{
	if (!l)
		return;
	if (l->epfd >= 0)
		close(l->epfd);
	if (l->sigfd >= 0)
		close(l->sigfd);
	free(l);
}

int cmd_loop__set_session(struct cmd_loop *l, struct session *s)
{
	int err;

	if (l->s)
		return -EBUSY;
	err = epoll_add(l->epfd, session__fd(s), TAG_SESSION);
	if (!err)
		l->s = s;
	return err;
}

int cmd_loop__add_fd(struct cmd_loop *l, int fd, cmd_loop_fd_fn fn, void *ctx)
{
	int err;

	if (l->nfds == MAX_FDS)
		return -ENOSPC;
	err = epoll_add(l->epfd, fd, TAG_FD + (uint32_t)l->nfds);
	if (!err)
		l->fds[l->nfds++] = (struct loop_fd){ .fd = fd, .fn = fn, .ctx = ctx };
	return err;
}

int cmd_loop__on_signal(struct cmd_loop *l, int signo, cmd_loop_signal_fn fn, void *ctx)
{
	if ((signo != SIGINT && signo != SIGTERM && signo != SIGHUP) || l->nsigs == MAX_SIGNALS)
		return -EINVAL;
	l->sigs[l->nsigs++] = (struct loop_signal){ .signo = signo, .fn = fn, .ctx = ctx };
	return 0;
}

void cmd_loop__set_tick(struct cmd_loop *l, uint64_t period_ns, cmd_loop_tick_fn fn, void *ctx)
{
	l->tick = fn;
	l->tick_ctx = ctx;
	l->tick_ns = period_ns;
	l->last_tick = 0;
}

void cmd_loop__keep_running(struct cmd_loop *l)
{
	l->keep_running = true;
}

void cmd_loop__stop(struct cmd_loop *l)
{
	l->stop = true;
}

bool cmd_loop__signalled(const struct cmd_loop *l)
{
	return l->signalled;
}

bool cmd_loop__timed_out(const struct cmd_loop *l)
{
	return l->timed_out;
}

static const struct loop_signal *taken(const struct cmd_loop *l, int signo)
{
	for (size_t i = 0; i < l->nsigs; i++)
		if (l->sigs[i].signo == signo)
			return &l->sigs[i];
	return NULL;
}

static void read_signals(struct cmd_loop *l)
{
	struct signalfd_siginfo si;

	while (read(l->sigfd, &si, sizeof(si)) == sizeof(si)) {
		const struct loop_signal *h = taken(l, (int)si.ssi_signo);

		if (si.ssi_signo == SIGCHLD)
			continue; /* the session's pidfds tell */
		if (h)
			h->fn(h->ctx, (int)si.ssi_signo);
		else
			l->stop = l->signalled = true;
	}
}

/* How long a turn may wait: not at all when the rings hold more, else until the tick. */
static int wait_ms(const struct cmd_loop *l)
{
	uint64_t now, due;

	if (session__busy(l->s))
		return 0;
	if (!l->tick)
		return POLL_MS;
	now = clock_mono_ns();
	due = l->last_tick + l->tick_ns;
	if (now >= due)
		return 0;
	return (due - now) / 1000000 >= POLL_MS ? POLL_MS : (int)((due - now + 999999) / 1000000);
}

static void run_tick(struct cmd_loop *l)
{
	uint64_t now;

	if (!l->tick)
		return;
	now = clock_mono_ns();
	if (now - l->last_tick < l->tick_ns)
		return;
	l->last_tick = now;
	l->tick(l->tick_ctx, now);
}

/* One turn: signals, the session, the front-end's fds that were readable, the tick. */
static int turn(struct cmd_loop *l)
{
	struct epoll_event evs[MAX_FDS + 2];
	bool ready[MAX_FDS] = { false };
	int n, err;

	n = epoll_wait(l->epfd, evs, MAX_FDS + 2, wait_ms(l));
	if (n < 0 && errno != EINTR)
		return -errno;
	for (int k = 0; k < n; k++) {
		uint32_t tag = evs[k].data.u32;

		if (tag == TAG_SIGNALS)
			read_signals(l);
		else if (tag >= TAG_FD)
			ready[tag - TAG_FD] = true;
	}
	err = session__dispatch(l->s);
	for (size_t i = 0; i < l->nfds; i++)
		if (ready[i])
			l->fds[i].fn(l->fds[i].ctx);
	run_tick(l);
	return err;
}

int cmd_loop__run(struct cmd_loop *l, double duration)
{
	uint64_t deadline = duration > 0 ? clock_mono_ns() + (uint64_t)(duration * 1e9) : 0;
	int err = 0;

	if (!l->s)
		return -EINVAL;
	while (!err && !l->stop && (l->keep_running || session__alive(l->s))) {
		err = turn(l);
		if (deadline && clock_mono_ns() >= deadline)
			l->stop = l->timed_out = true;
	}
	return err;
}
