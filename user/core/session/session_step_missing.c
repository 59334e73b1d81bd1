// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A step probe not found: when it is said (at attach, once the process uses
 * CUDA, at its end), with the objects searched and the close names the
 * prober finds. Session's thread.
 */
#include <stdio.h>
#include <string.h>
#include "core/steps/step_source.h"
#include "core/steps/step_spec.h"
#include "core/steps/step_tell.h"
#include "core/session/prober.h"
#include "core/session/session_int.h"
#include "core/session/session_jobs.h"
#include "core/session/session_step_missing.h"
#include "proc_state.h"
#include "util/log.h"

/* A process that maps CUDA and loads nothing new this long likely has all it needs. */
#define STEP_QUIET_NS (5 * 1000 * 1000 * 1000ull)


/* What the step's messages say of t. */
static void step_proc_of(const struct target *t, struct step_proc *p)
{
	*p = (struct step_proc){
		.pid = t->pid, .comm = t->comm, .nobjs = t->facts.nobjs,
		.torch_mapped = t->facts.torch_mapped, .why = t->facts.step_why,
		.waiting = t->facts.step_walk || t->walking,
	};
}

void session_tell_step_missing(const struct target *t, const char *close, enum step_missing when)
{
	struct step_proc p;

	step_proc_of(t, &p);
	step_source(t->plan.step)->missing(t->plan.step, &p, close, when);
}

/* The step probe was not found in pid's objects: say what was searched, and what is close. */
void session_step_missing(struct session *s, struct target *t, enum step_missing when)
{
	char close[512] = "";

	if (step_source(t->plan.step)->suggests)
		session_suggest_step(s, t, close, sizeof(close));
	session_tell_step_missing(t, close, when);
}

/* It launched; or it mapped CUDA, no launch probe is in, and it loaded nothing new a while. */
static bool uses_cuda(struct target *t, const struct proc_state *ps, uint64_t now)
{
	if (ps->launch_hits || ps->stale || ps->nested)
		return true;
	if (t->facts.nobjs != t->step_nobjs) {
		t->step_nobjs = t->facts.nobjs;
		t->step_nobjs_at = now;
	}
	return t->facts.has_launch_apis && !t->window_on && now - t->step_nobjs_at >= STEP_QUIET_NS;
}

void session_check_step(struct session *s, struct target *t, const struct proc_state *ps,
			uint64_t now)
{
	/* A torch step says what it lacks itself (step_tell_torch_missing): no close names. */
	if (!t->plan.step || !step_source(t->plan.step)->suggests || t->facts.step_found ||
	    t->told_step || s->steps_found || !t->probes)
		return;
	if (!uses_cuda(t, ps, now))
		return;
	/* Not while a library it loaded is still being searched. */
	if (t->scanning || t->rescan || t->hold_since || t->exec_pending)
		return;
	t->told_step = true;
	t->asking_step = !session_submit(s, t, JOB_SUGGEST, 0, NULL);
}

void session_suggest_step(struct session *s, struct target *t, char *buf, size_t len)
{
	buf[0] = s->suggest[0] = '\0';
	if (!t->probes || session_submit(s, t, JOB_SUGGEST, 0, NULL))
		return;
	/* Ask and wait: the answer lands in s->suggest. */
	prober__drain(s->prober);
	snprintf(buf, len, "%s", s->suggest);
}
