// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* record's and compare's session start (cmd_start.h). */
#include <errno.h>
#include "cmd/cmd_start.h"

static int start_targets(const struct cmd_start *st, struct session *s, const sigset_t *orig)
{
	int err;

	if (st->cmd)
		return session__spawn(s, st->cmd, orig);
	for (size_t i = 0; i < st->npids; i++) {
		err = session__attach(s, st->pids[i]);
		if (err)
			return err;
	}
	return 0;
}

int cmd_start(const struct cmd_start *st, sigset_t *orig, struct session **s,
	      struct cmd_loop **l)
{
	int err;

	*s = session__new(st->so, st->h);
	if (!*s)
		return -errno;
	*l = cmd_loop__new(orig);
	if (!*l)
		return -errno;
	err = cmd_loop__set_session(*l, *s);
	if (err)
		return err;
	return start_targets(st, *s, orig);
}
