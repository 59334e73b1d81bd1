// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A step probe not found: when it is said (at attach, once the process uses
 * CUDA, at its end), with the objects searched and the close names the
 * prober finds. Session's thread.
 */
#include <stdio.h>
#include <string.h>
#include "core/schedule/step_spec.h"
#include "core/session/prober.h"
#include "core/session/session_int.h"
#include "core/session/session_jobs.h"
#include "core/session/session_step_missing.h"
#include "util/log.h"

/* A process that maps CUDA and loads nothing new this long likely has all it needs. */
#define STEP_QUIET_NS (5 * 1000 * 1000 * 1000ull)


/* A Python program's step named as a symbol: its functions are not symbols. */
static void tell_python_step(const struct target *t, enum log_level level)
{
	if (strncmp(t->comm, "python", 6) && !t->facts.torch_mapped)
		return;
	log_msg(level, "pid %d (%s) runs Python: Python functions are not native symbols%s", t->pid,
	      t->comm, t->facts.torch_mapped ?
		      "; for a PyTorch loop use --step torch (a step ends with each optimizer "
		      "step) or --step torch:PREFIX (with each record_function range whose name "
		      "begins with PREFIX)" : "; a native function the loop calls once a step "
		      "can be, or a USDT probe");
}

void session_tell_step_missing(const struct target *t, const char *close, enum step_missing when)
{
	static const char *const how[] = {
		[STEP_NOT_YET] = "not found yet in",
		[STEP_LIKELY] = "not found in any of",
		[STEP_NEVER] = "was never found in",
	};
	static const char *const then[] = {
		[STEP_NOT_YET] = "; waiting for a library that defines it",
		[STEP_LIKELY] = "; check --step (cuprobe record --help); "
				"still looking in the libraries it loads",
		[STEP_NEVER] = "; check --step (cuprobe record --help)",
	};

	log_msg(when == STEP_NEVER ? LOG_ERROR : LOG_WARN,
		"step probe %s %s the %zu objects of pid %d (%s)%s%s%s%s",
		step_spec__str(t->plan.step), how[when], t->facts.nobjs, t->pid, t->comm,
		when == STEP_LIKELY ? ", which uses CUDA" : "",
		close[0] ? "; close matches: " : "", close, then[when]);
	if (when != STEP_NOT_YET)
		tell_python_step(t, when == STEP_NEVER ? LOG_ERROR : LOG_WARN);
}

/* --step torch with no probes: no torch loaded (yet), or one without the range calls. */
void session_tell_torch_missing(const struct target *t, bool final)
{
	const char *spec = step_spec__str(t->plan.step);

	if (t->facts.step_why[0])
		log_msg(final ? LOG_ERROR : LOG_WARN, "--step %s: pid %d (%s): %s (see --step "
			"torch in cuprobe-record(1))", spec, t->pid, t->comm, t->facts.step_why);
	else if (final && t->facts.torch_mapped)
		p_err("--step %s: pid %d (%s) ended before its step probes were in (they go in "
		      "once %s.so's range exit is looked up, after import torch): no step was "
		      "counted", spec, t->pid, t->comm, STEP_TORCH_LIB);
	else if (final)
		p_err("--step %s: pid %d (%s) never loaded %s.so, where PyTorch's record_function "
		      "ranges begin and end: no step was counted; is it a PyTorch program (import "
		      "torch)? Elsewhere use --step SYMBOL", spec, t->pid, t->comm, STEP_TORCH_LIB);
	else if (!t->facts.step_walk && !t->walking)
		p_info("pid %d: --step %s: waiting for torch (%s.so) to be loaded", t->pid, spec,
		       STEP_TORCH_LIB);
}

/* The step probe was not found in pid's objects: say what was searched, and what is close. */
void session_step_missing(struct session *s, struct target *t, enum step_missing when)
{
	char close[512];

	if (t->plan.step->kind == STEP_TORCH) {
		session_tell_torch_missing(t, when == STEP_NEVER);
		return;
	}
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
	/* A torch step says what it lacks itself (tell_torch_missing): no close names. */
	if (!t->plan.step || t->plan.step->kind == STEP_TORCH || t->facts.step_found ||
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
