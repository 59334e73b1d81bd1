// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The front-end's hooks, each given a copy of the target's public view
 * (target__view), never the engine's struct target. Session's thread.
 */
#include "core/session/session_int.h"
#include "core/session/session_hooks.h"

enum window_mode session_hook_mode(struct session *s, const struct target *t, uint32_t k)
{
	struct session_target v;

	if (!s->h.cycle_mode)
		return t->plan.mode;
	target__view(t, &v);
	return s->h.cycle_mode(s->h.ctx, &v, k);
}

void session_hook_step(struct session *s, const struct target *t, const struct cycle_status *st,
		       bool changed)
{
	struct session_target v;

	if (!s->h.step)
		return;
	target__view(t, &v);
	s->h.step(s->h.ctx, &v, st, changed);
}

void session_hook_exited(struct session *s, const struct target *t)
{
	struct session_target v;

	if (!s->h.exited)
		return;
	target__view(t, &v);
	s->h.exited(s->h.ctx, &v);
}
