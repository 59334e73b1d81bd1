/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The front-end's hooks (session_hooks.c). Session's thread. */
#ifndef CORE_SESSION_SESSION_HOOKS_H
#define CORE_SESSION_SESSION_HOOKS_H

#include <stdbool.h>
#include <stdint.h>
#include "core/session/session_types.h"

struct cycle_status;
struct session;
struct target;

/*
 * Each given t's public view: the mode of t's cycle k (the plan's without a
 * cycle_mode hook), a step begun (changed: its phase is new), an exit.
 */
enum window_mode session_hook_mode(struct session *s, const struct target *t, uint32_t k);
void session_hook_step(struct session *s, const struct target *t, const struct cycle_status *st,
		       bool changed);
void session_hook_exited(struct session *s, const struct target *t);

#endif /* CORE_SESSION_SESSION_HOOKS_H */
