/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The front-ends' one event loop around a session (record, compare, the
 * daemon). It blocks SIGINT, SIGTERM, SIGCHLD and SIGHUP and reads them
 * from a signalfd; it waits on the session's fd and on the fds a front-end
 * adds, turns the session's crank, and calls a front-end's tick on time.
 *
 * SIGINT and SIGTERM are set back to their default action before they are
 * blocked: a shell starts background jobs with SIGINT ignored, and an
 * ignored signal never reaches a signalfd, yet `kill -INT` must still stop
 * cuprobe, as it stops perf record. SIGHUP keeps what it inherited (nohup).
 * SIGCHLD is read and dropped (the session's pidfds tell of exits); SIGINT,
 * SIGTERM and SIGHUP stop the loop unless a front-end takes the signal
 * (cmd_loop__on_signal). A signal that comes after the loop stopped stays
 * blocked and pending: the recording's end (session__finish) is not cut.
 *
 * Everything here belongs to the thread that made the loop, which is the
 * session's thread; every callback runs on it.
 *
 *	l = cmd_loop__new(&orig);	(before threads that must not take the signals)
 *	s = session__new(...); cmd_loop__set_session(l, s);
 *	cmd_loop__add_fd(l, fd, on_fd, ctx); cmd_loop__set_tick(l, ns, on_tick, ctx);
 *	err = cmd_loop__run(l, duration);
 *	cmd_loop__free(l);
 */
#ifndef CORE_LOOP_CMD_LOOP_H
#define CORE_LOOP_CMD_LOOP_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

struct cmd_loop;
struct session;

/* fd is readable. */
typedef void (*cmd_loop_fd_fn)(void *ctx);
/* A signal a front-end took with cmd_loop__on_signal came. */
typedef void (*cmd_loop_signal_fn)(void *ctx, int signo);
/* A tick is due; now is CLOCK_MONOTONIC ns. */
typedef void (*cmd_loop_tick_fn)(void *ctx, uint64_t now);

/*
 * Blocks the signals (the mask before it into orig, when not NULL) and opens
 * their signalfd: call it before starting threads that must not take them
 * (threads inherit the mask). NULL and errno.
 */
struct cmd_loop *cmd_loop__new(sigset_t *orig);
/* Closes the loop's fds; the signals stay blocked. NULL is a no-op. */
void cmd_loop__free(struct cmd_loop *l);

/* The session the loop turns the crank of; its fd is waited on. Once. 0 or -errno. */
int cmd_loop__set_session(struct cmd_loop *l, struct session *s);
/* fn(ctx) runs once in each turn that finds fd readable, after the session's. 0 or -errno. */
int cmd_loop__add_fd(struct cmd_loop *l, int fd, cmd_loop_fd_fn fn, void *ctx);
/* signo (SIGINT, SIGTERM or SIGHUP) calls fn instead of stopping the loop. 0 or -EINVAL. */
int cmd_loop__on_signal(struct cmd_loop *l, int signo, cmd_loop_signal_fn fn, void *ctx);
/* fn runs every period_ns (at the first turn, then each time one has passed). */
void cmd_loop__set_tick(struct cmd_loop *l, uint64_t period_ns, cmd_loop_tick_fn fn, void *ctx);
/* The loop runs on while no target runs (the daemon): only a stop or an error ends it. */
void cmd_loop__keep_running(struct cmd_loop *l);

/*
 * Turns the crank until the loop is stopped (a signal, cmd_loop__stop), no
 * target runs (unless kept running), duration seconds (> 0) pass, or the
 * session fails. 0 or -errno (the session's, or epoll's).
 */
int cmd_loop__run(struct cmd_loop *l, double duration);
/* Ends cmd_loop__run after the turn under way (from a hook or a callback). */
void cmd_loop__stop(struct cmd_loop *l);
/* A signal stopped the loop. */
bool cmd_loop__signalled(const struct cmd_loop *l);
/* The duration given to cmd_loop__run ran out. */
bool cmd_loop__timed_out(const struct cmd_loop *l);

#endif /* CORE_LOOP_CMD_LOOP_H */
