// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The attach-lead policy: a window's launch probes go in ahead of its warmup
 * by as many steps as their attach takes, and uprobe registration is kept
 * warm around a window's attach and detach. Session's thread.
 */
#include <stdint.h>
#include "core/probes/bpfobj.h"
#include "core/probes/uprobe_warm.h"
#include "core/cycles/proc_cycles.h"
#include "core/session/session_int.h"
#include "core/session/session_hooks.h"
#include "core/session/session_jobs.h"
#include "core/session/session_lead.h"
#include "proc_state.h"
#include "schedule.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/plural.h"

/*
 * Warmup is there to absorb the attach: say so when it was too short to, and
 * how long the window recorded without its probes, in its trace (unprobed_ns).
 */
void session_check_warmup(struct target *t, uint64_t step, uint64_t ts)
{
	uint64_t since = t->facts.probes_since ?: clock_mono_ns();

	if (t->mode == MODE_OFF || since <= ts)
		return;
	/* A target that has ended has no cycles: they were written at its end. */
	if (t->cycles)
		proc_cycles__unprobed(t->cycles, step, ts, since);
	p_warn("pid %d: step %lu began before the launch probes were in (%.1f ms before): "
	       "launches it made before them are missed (its trace's unprobed_ns says how long); "
	       "give warmup more time (warmup=2, or longer steps)",
	       t->pid, (unsigned long)step, (since - ts) / 1e6);
}

/*
 * Attaching launch probes takes longer than some warmup steps: the attach
 * then begins that many steps earlier, so that every launch of the first
 * active step is recorded. Probes in before warmup record nothing (BPF
 * gates on the phase). The attach is planned at twice the longest one seen
 * (a loaded machine takes longer some times), at least ATTACH_FLOOR_NS, and
 * ATTACH_GUESS_NS until one is measured; the lead only grows, so probes do not come and go between
 * windows with the noise of the measure.
 */
#define ATTACH_GUESS_NS (25 * 1000 * 1000ull)
/* Never planned shorter: one quick attach says little of the next on a busy machine. */
#define ATTACH_FLOOR_NS (20 * 1000 * 1000ull)
#define LEAD_MAX 1000

static uint32_t attach_lead(const struct target *t)
{
	uint64_t need = t->attach_ns ? 2 * t->attach_ns : ATTACH_GUESS_NS, warm;

	if (need < ATTACH_FLOOR_NS)
		need = ATTACH_FLOOR_NS;
	uint64_t lead;

	if (!t->step_ns || !t->plan.step)
		return 0;
	warm = (uint64_t)t->conf.sched.warmup * t->step_ns;
	if (need <= warm)
		return 0;
	lead = (need - warm + t->step_ns - 1) / t->step_ns;
	return lead > LEAD_MAX ? LEAD_MAX : (uint32_t)lead;
}

uint32_t session_lead(const struct target *t)
{
	uint32_t lead = attach_lead(t);

	return t->attach_ns && t->lead > lead ? t->lead : lead;
}

/*
 * At a spawn or an exec, before any step, the step length is unknown, and
 * so the lead: a window that begins at the next step has its probes in now,
 * while the process is held, or a loaded prober (other processes' exec
 * scans) could answer after the window's first launches. Later windows go
 * by the lead.
 */
#define FIRST_LEAD 1

/* The first of the next max steps that wants launch probes (warmup or active): 1..max, 0: none. */
static uint64_t probes_in(const struct target *t, uint64_t max)
{
	for (uint64_t k = 1; k <= max; k++)
		if (phase_probes(proc_cycles__phase_ahead(t->cycles, k)))
			return k;
	return 0;
}

/* Whether a step of the next lead steps wants launch probes. */
static bool probes_soon(struct target *t)
{
	uint32_t lead = attach_lead(t);
	bool first = t->plan.step && !t->step_ts;

	if (t->attach_ns && lead > t->lead) {
		p_dbg("pid %d: a launch attach took up to %.1f ms: they go in %u %s before warmup",
		      t->pid, t->attach_ns / 1e6, lead, plural(lead, "step", "steps"));
		t->lead = lead;
	}
	if (t->attach_ns)
		lead = t->lead;
	if (first && lead < FIRST_LEAD)
		lead = FIRST_LEAD;
	if (!probes_in(t, lead))
		return false;
	if (first)
		p_dbg("pid %d: a window at its first step: launch probes in now, while it is held",
		      t->pid);
	else if (!t->told_lead)
		p_info("pid %d: attaching launch probes takes up to %.1f ms%s, a step %.1f ms: they "
		       "go in %u %s before warmup, recording nothing until it",
		       t->pid, (t->attach_ns ?: ATTACH_GUESS_NS) / 1e6,
		       t->attach_ns ? "" : " (a first guess)", t->step_ns / 1e6, lead,
		       plural(lead, "step", "steps"));
	t->told_lead |= !first;
	return true;
}

/*
 * A window's attach and its detach register and unregister uprobes, and wait
 * for a grace period where registration has gone cold: it is kept warm from
 * WARM_AHEAD_NS before the attach is due to WARM_AHEAD_NS past the step that
 * closes the window (uprobe_warm.h).
 */
#define WARM_AHEAD_NS (50 * 1000 * 1000ull)
#define WARM_AHEAD_MAX 64

static void warm_for_window(struct session *s, struct target *t, uint32_t phase)
{
	uint64_t ahead, k;

	if (!t->step_ns || !t->plan.step)
		return;
	if (phase_probes(phase)) {
		uprobe_warm__keep(s->warm, 2 * t->step_ns + WARM_AHEAD_NS);
		return;
	}
	if (t->lead_mode == MODE_OFF)
		return;
	ahead = session_lead(t) + 1 + (WARM_AHEAD_NS + t->step_ns - 1) / t->step_ns;
	if (ahead > WARM_AHEAD_MAX)
		ahead = WARM_AHEAD_MAX;
	k = probes_in(t, ahead);
	if (k)
		uprobe_warm__keep(s->warm, (k + 1) * t->step_ns);
}

/*
 * How near a window a step wakes the loader (proc_conf.wake_ahead): the steps
 * probes_soon and warm_for_window look ahead and two more, rounded up to a
 * power of two that only grows, so that the conf is written a few times in a
 * run, not with every step's length. Until the step's length is known, every
 * step wakes it.
 */
static void wake_ahead(struct session *s, struct target *t)
{
	uint64_t warm, need;
	uint32_t ahead = 1;

	if (!t->step_ns || !t->plan.step)
		return;
	warm = (WARM_AHEAD_NS + t->step_ns - 1) / t->step_ns;
	need = (uint64_t)session_lead(t) + 3 + (warm > WARM_AHEAD_MAX ? WARM_AHEAD_MAX : warm);
	while (ahead < need && ahead < 1u << 30)
		ahead <<= 1;
	if (t->conf.wake_ahead != WAKE_EVERY && ahead <= t->conf.wake_ahead)
		return;
	t->conf.wake_ahead = ahead;
	p_dbg("pid %d: a step wakes cuprobe from %u steps before a window", t->pid, ahead);
	if (bpfobj__set_conf(s->bpf, t->pid, &t->conf))
		p_warn("pid %d: cannot update its BPF conf: its steps wake cuprobe as before",
		       t->pid);
}

void session_want_ahead(struct session *s, struct target *t, uint32_t phase, uint32_t next_cycle)
{
	t->leading = !phase_probes(phase);
	t->lead_mode = t->asked ? t->asked_mode : session_hook_mode(s, t, next_cycle);
	if (!(s->o.modes & 1u << t->lead_mode))
		t->lead_mode = MODE_OFF;
	warm_for_window(s, t, phase);
	wake_ahead(s, t);
	session_want_probes(s, t, phase_probes(phase) ||
					  (t->lead_mode != MODE_OFF && probes_soon(t)));
}
