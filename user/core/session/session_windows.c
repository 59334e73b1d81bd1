// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Windows a front-end asks for (session__window, session__window_at), a
 * window ended early, and time slices ended as steps. Session's thread.
 */
#include <errno.h>
#include <stdint.h>
#include "core/probes/bpfobj.h"
#include "core/steps/step_slices.h"
#include "core/cycles/proc_cycles.h"
#include "core/session/session_int.h"
#include "core/session/session_lead.h"
#include "core/session/session_steps.h"
#include "core/session/session_targets.h"
#include "core/session/session_windows.h"
#include "proc_state.h"
#include "records.h"
#include "schedule.h"
#include "step.h"
#include "util/log.h"

int session__window(struct session *s, pid_t pid, uint32_t warmup, uint32_t active,
		    enum window_mode mode)
{
	struct schedule w = { .warmup = warmup, .active = active ? active : 1, .repeat = 1 };
	struct target *t = session_find(s, pid);
	struct cycle_status st;

	if (!t || t->gone)
		return -ESRCH;
	proc_cycles__status(t->cycles, &st);
	if (st.phase != PHASE_NONE || t->asked)
		return -EBUSY;
	t->asked = true;
	t->asked_mode = mode;
	t->conf.sched = w;
	/*
	 * Steps too short for the attach: the window begins later, so that the
	 * probes go in ahead of its warmup (session_step's lead), not during it.
	 */
	w.skip_first = mode == MODE_OFF ? 0 : session_lead(t);
	t->conf.sched = w;
	if (session_plan_clock(&t->plan) == CLOCK_SLICES) {
		proc_cycles__set_schedule(t->cycles, &w, step_slices__rebase(&t->slices));
		return 0;
	}
	/* BPF counts the new schedule from the next step hit; the mirror estimates it. */
	t->conf.gen++;
	proc_cycles__set_schedule(t->cycles, &w, st.step + 1);
	return bpfobj__set_conf(s->bpf, t->pid, &t->conf);
}

int session__window_at(struct session *s, pid_t pid, uint32_t warmup, uint32_t active,
		       enum window_mode mode, uint64_t first, uint64_t *now)
{
	struct schedule w = { .warmup = warmup, .active = active ? active : 1, .repeat = 1 };
	struct target *t = session_find(s, pid);
	struct cycle_status st;
	uint64_t lead;

	if (!t || t->gone)
		return -ESRCH;
	if (session_plan_clock(&t->plan) == CLOCK_SLICES)
		return -EINVAL;
	proc_cycles__status(t->cycles, &st);
	*now = st.step;
	if (st.phase != PHASE_NONE || t->asked)
		return -EBUSY;
	lead = mode == MODE_OFF ? 0 : session_lead(t);
	/* Its warmup begins after the step now and the steps the attach takes. */
	if (first < warmup || first - warmup < st.step + 1 + lead || first - warmup > UINT32_MAX)
		return -ERANGE;
	w.skip_first = (uint32_t)(first - warmup);
	t->asked = true;
	t->asked_mode = mode;
	t->conf.sched = w;
	t->conf.flags |= CONF_ABS_STEPS;
	t->conf.gen++;
	proc_cycles__set_schedule(t->cycles, &w, 0);
	return bpfobj__set_conf(s->bpf, t->pid, &t->conf);
}

void session_end_window(struct session *s, struct target *t)
{
	static const struct schedule none = { .skip_first = UINT32_MAX, .active = 1 };
	struct cycle_status st;

	if (!t || t->gone)
		return;
	proc_cycles__status(t->cycles, &st);
	t->asked = false;
	t->conf.sched = none;
	t->conf.flags &= ~CONF_ABS_STEPS;
	if (session_plan_clock(&t->plan) == CLOCK_SLICES) {
		proc_cycles__set_schedule(t->cycles, &none, step_slices__rebase(&t->slices));
		return;
	}
	t->conf.gen++;
	proc_cycles__set_schedule(t->cycles, &none, st.step + 1);
	if (bpfobj__set_conf(s->bpf, t->pid, &t->conf))
		p_warn("pid %d: the window could not be ended early; it ends with its steps",
		       t->pid);
}

/* Time slices: the loader ends a slice as a step probe would end a step. */
void session_end_slice(struct session *s, struct target *t, uint64_t now)
{
	struct step_event e = {
		.type = REC_STEP, .tgid = t->pid, .tid = t->pid, .ts_ns = now,
	};
	struct proc_state ps;

	if (bpfobj__proc_state(s->bpf, t->pid, &ps))
		return;
	e.step = step_slices__end(&t->slices, &t->conf.sched, now, &e.phase);
	e.launch_hits = ps.launch_hits;
	e.drops = ps.drops;
	e.nested = ps.nested;
	e.stale = ps.stale;
	session_step(s, t, &e);
}
