/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A target's life in the session (session_targets.c). Session's thread.
 */
#ifndef CORE_SESSION_SESSION_TARGETS_H
#define CORE_SESSION_SESSION_TARGETS_H

#include <stdbool.h>
#include <sys/types.h>
#include "core/cycles/proc_cycles.h"

struct session;
struct target;
struct target_plan;

/* The target of pid, the latest one named looked at first; NULL when none. */
struct target *session_find(struct session *s, pid_t pid);
/* How a plan's steps are counted, and the schedule the loader's mirror follows. */
enum cycle_clock session_plan_clock(const struct target_plan *p);
/*
 * A new target for pid with plan p, its step 0 begun (its entries in BPF, its
 * cycles, its probeset). NULL with *err; a target set up with an error is
 * returned with it, to be ended.
 */
struct target *session_new_target(struct session *s, pid_t pid, bool child,
				  const struct target_plan *p, bool adopted, int *err);
void session_target_exit(struct session *s, struct target *t);
void session_end_target(struct session *s, struct target *t);
void session_remove(struct session *s, struct target *t);

#endif /* CORE_SESSION_SESSION_TARGETS_H */
