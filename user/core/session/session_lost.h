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

/* Cycles whose trace could not be written (session_lost.c). */
struct session_lost {
	uint64_t cycles, launches;	/* lost */
	uint64_t written;		/* cycles whose trace was written */
	int told[8];			/* the causes (-errno) said already */
	size_t ntold;
};

/*
 * A cycle written or lost (ci->err), before the front-end
 * hears of it; a loss is counted and its cause said once.
 */
void session_cycle_done(struct session *s, const struct target *t, const struct cycle_info *ci);
/* The lost cycles and launches, said at the end when there were any. */
void session_lost_report(const struct session *s);

#endif /* CORE_SESSION_SESSION_LOST_H */
