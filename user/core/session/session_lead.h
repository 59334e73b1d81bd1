/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The attach-lead policy (session_lead.c). Session's thread.
 */
#ifndef CORE_SESSION_SESSION_LEAD_H
#define CORE_SESSION_SESSION_LEAD_H

#include <stdint.h>

struct session;
struct target;

/*
 * How many steps before warmup t's launch probes must go
 * in for its warmup to cover their attach (0: warmup is long enough).
 */
uint32_t session_lead(const struct target *t);
/*
 * What t's launch probes should be as its step is in phase: on while it
 * warms up or records, and ahead of a window near enough (the lead; before
 * its step length is known, a window within its first steps), in the mode
 * the next cycle (next_cycle) will have.
 */
void session_want_ahead(struct session *s, struct target *t, uint32_t phase, uint32_t next_cycle);
/* Says when t's warmup began (step, at ts) before its launch probes were in. */
void session_check_warmup(struct target *t, uint64_t step, uint64_t ts);

#endif /* CORE_SESSION_SESSION_LEAD_H */
