/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef RECORD_H
#define RECORD_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

/* `cuprobe record`; argv[0] is "record". Returns the exit status. */
int record_main(int argc, char **argv);

/*
 * A front-end's event loop around a session. Init blocks SIGINT, SIGTERM,
 * SIGCHLD and SIGHUP (the old mask in orig) to read them from a signalfd. A
 * shell starts background jobs with SIGINT ignored, and an ignored signal
 * never reaches a signalfd: `kill -INT` must still stop cuprobe, as it stops
 * perf record; SIGHUP keeps what it inherited (nohup). Run turns the
 * session's crank until no target runs, a signal other than SIGCHLD comes,
 * or duration seconds (> 0) pass. 0 or -errno.
 */
struct session;
struct cmd_loop {
	struct session *s;
	int epfd, sigfd;	/* -1 before init */
	bool stop, timed_out;
};
int cmd_loop__init(struct cmd_loop *l, struct session *s, sigset_t *orig);
int cmd_loop__run(struct cmd_loop *l, double duration);
void cmd_loop__close(struct cmd_loop *l);

#endif /* RECORD_H */
