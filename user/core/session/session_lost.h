/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Cycles whose trace could not be written (session_lost.c). Session's thread.
 */
#ifndef CORE_SESSION_SESSION_LOST_H
#define CORE_SESSION_SESSION_LOST_H

#include <stddef.h>
#include <stdint.h>

struct cycle_info;
struct session;
struct target;

struct session_lost;

/* The lost cycles' count, s->lost (none yet: zero). 0 or -ENOMEM. */
int session_lost_new(struct session *s);
void session_lost_free(struct session *s);

/*
 * A cycle written or lost (ci->err), before the front-end
 * hears of it; a loss is counted and its cause said once.
 */
void session_cycle_done(struct session *s, const struct target *t, const struct cycle_info *ci);
/* The lost cycles and launches, said at the end when there were any. */
void session_lost_report(const struct session *s);

#endif /* CORE_SESSION_SESSION_LOST_H */
