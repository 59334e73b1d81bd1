/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A step probe not found (session_step_missing.c). Session's thread.
 */
#ifndef CORE_SESSION_SESSION_STEP_MISSING_H
#define CORE_SESSION_SESSION_STEP_MISSING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/steps/step_tell.h"

struct proc_state;
struct session;
struct target;


/* That t's step probe is not found, with the close names the prober found (close). */
void session_tell_step_missing(const struct target *t, const char *close, enum step_missing when);
/* The same, the close names asked of the prober first where the kind suggests names. */
void session_step_missing(struct session *s, struct target *t, enum step_missing when);
/* The prober's close names for t's step (JOB_SUGGEST), waited for, in buf. */
void session_suggest_step(struct session *s, struct target *t, char *buf, size_t len);
/*
 * Once t uses CUDA (it launched, as ps counts, or it mapped CUDA and loaded
 * nothing new for STEP_QUIET_NS while no launch probe is in), with every
 * object it loaded searched and no step probe in any target: asks the
 * prober for the close names, said when it answers.
 */
void session_check_step(struct session *s, struct target *t, const struct proc_state *ps,
			uint64_t now);

#endif /* CORE_SESSION_SESSION_STEP_MISSING_H */
