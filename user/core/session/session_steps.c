// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What ctrl brings about a target's steps: a step boundary (from BPF, or a
 * time slice's end), the mirror moved on and the probes of the next window
 * asked for ahead of it; thread names and --step torch ranges, into its
 * cycles. Session's thread.
 */
#include "core/cycles/proc_cycles.h"
#include "core/session/session_int.h"
#include "core/session/session_hooks.h"
#include "core/session/session_lead.h"
#include "core/session/session_steps.h"
#include "core/session/session_targets.h"
#include "launch.h"
#include "schedule.h"
#include "step.h"

/* A step boundary, from BPF or a time slice's end. */
void session_step(struct session *s, struct target *t, const struct step_event *e)
{
	struct cycle_status before, after;
	int err;

	if (!t->cycles)
		return;
	proc_cycles__status(t->cycles, &before);
	err = proc_cycles__step(t->cycles, e);
	if (err)
		s->err = err;
	proc_cycles__status(t->cycles, &after);
	if (t->step_ts && e->ts_ns > t->step_ts)
		t->step_ns = e->ts_ns - t->step_ts;
	t->step_ts = e->ts_ns;
	/*
	 * Ahead of warmup, the probes of the next cycle's mode: a window asked
	 * for, the front-end's answer for that cycle (asked again as it begins),
	 * or the plan's.
	 */
	session_want_ahead(s, t, after.phase, after.next_cycle);
	if (before.phase == PHASE_WARMUP && phase_records(after.phase)) {
		/* The attach's answer may still be on its way: check once it is in. */
		if (t->attaching) {
			t->warm_step = e->step;
			t->warm_ts = e->ts_ns;
		} else {
			session_check_warmup(t, e->step, e->ts_ns);
		}
	}
	session_hook_step(s, t, &after, before.phase != after.phase);
}

/* REC_STEP: a step boundary of a target. */
int session_on_step(struct session *s, void *data, size_t size)
{
	const struct step_event *e = data;
	struct target *t = session_find(s, e->tgid);

	(void)size;
	if (t)
		session_step(s, t, e);
	return 0;
}

/* REC_THREAD: a thread's first launch, with its name, for its target's traces. */
int session_on_thread(struct session *s, void *data, size_t size)
{
	const struct thread_event *e = data;
	struct target *t = session_find(s, e->tgid);

	(void)size;
	if (t && t->cycles)
		proc_cycles__thread(t->cycles, e);
	return 0;
}

/* REC_RANGE: --step torch: a record_function range in a recorded step. */
int session_on_range(struct session *s, void *data, size_t size)
{
	const struct range_event *e = data;
	struct target *t = session_find(s, e->tgid);

	(void)size;
	if (t && t->cycles)
		proc_cycles__range(t->cycles, e);
	return 0;
}
