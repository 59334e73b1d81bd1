/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The start record and compare share: their session made, the command loop
 * around it, then the command spawned (held before its exec) or each running
 * process attached. Main thread, which becomes the session's.
 */
#ifndef CMD_CMD_START_H
#define CMD_CMD_START_H

#include <signal.h>
#include <stddef.h>
#include <sys/types.h>
#include "core/loop/cmd_loop.h"
#include "core/session/session.h"

struct cmd_start {
	const struct session_opts *so;
	const struct session_hooks *h;
	char **cmd;		/* the command to spawn, NULL-terminated; NULL: attach to pids */
	const pid_t *pids;
	size_t npids;
};

/*
 * Makes the session (*s) and its loop (*l; the signals blocked, the mask
 * before into orig), then starts the targets. *s and *l are set as each is
 * made, so that the caller frees them whatever the outcome. 0 or -errno.
 */
int cmd_start(const struct cmd_start *st, sigset_t *orig, struct session **s,
	      struct cmd_loop **l);

#endif /* CMD_CMD_START_H */
