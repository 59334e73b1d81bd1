// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The session's side of the prober: jobs about a target's probeset go out
 * as messages (the probes its schedule wants, a scan of its maps), and are
 * run on the prober; their answers come back to s->job_done
 * (session_answers.c), on the session's thread.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/probes/bpfobj.h"
#include "core/proc/procmaps.h"
#include "core/proc/stacks.h"
#include "core/proc/symbols.h"
#include "core/steps/step_spec.h"
#include "core/session/prober.h"
#include "core/session/session_int.h"
#include "core/session/session_holds.h"
#include "core/session/session_jobs.h"
#include "util/clock.h"
#include "util/log.h"

/* Files probed ahead wait while a hold, an attach or another process's scan is queued. */
static bool prereg_yield(void *prober)
{
	return prober__waiting(prober);
}

/* On the prober thread: the probeset is the prober's, the job carries the rest. */
static void job_run(void *arg)
{
	struct probe_job *j = arg;
	int err = 0;

	switch (j->kind) {
	case JOB_SCAN:
		err = probeset__scan(j->ps);
		probeset__take_maps(j->ps, &j->maps);
		break;
	case JOB_SET:
		err = probeset__set(j->ps, &j->want);
		break;
	case JOB_EXEC:
		err = probeset__prepare_exec(j->ps, j->arg);
		break;
	case JOB_PREREG:
		j->more = probeset__preregister(j->ps, prereg_yield, j->s->prober) > 0;
		break;
	case JOB_KEEP:
		j->kept = probeset__keeps_across_exec(j->ps) > 0;
		break;
	case JOB_WALK:
		err = probeset__step_walk(j->ps);
		break;
	case JOB_SUGGEST:
		j->arg[0] = '\0';
		probeset__suggest_step(j->ps, j->arg, sizeof(j->arg));
		break;
	case JOB_DROP:
		/* Closed here, before the new program's links: none of them may count a launch twice. */
		probeset__free(j->ps);
		return;
	case JOB_FREE:
		probeset__release(j->ps);
		return;
	}
	probeset__facts(j->ps, &j->facts);
	j->facts.err = err;
}

/*
 * What the session's thread knows of a process's map: its identity (a new
 * program), and the maps that name its launches' kernels and stacks, as the
 * scan read them while the process was held (maps, taken over; NULL or
 * empty: read now). Set after the scan, once the process is continued: no
 * event of it is read before this, since both happen on this thread, in
 * this order. A process may have exited by then, its maps gone with it:
 * what the scan read is its map, and the one its launches need.
 */
void session_refresh_views(struct session *s, struct target *t, struct procmaps *maps)
{
	target__refresh_identity(t);
	if (maps && maps->n)
		symbols__set_maps(s->syms, t->pid, maps);
	else
		symbols__refresh(s->syms, t->pid);
	if (s->stacks)
		stacks__refresh(s->stacks, t->pid);
}

int session_submit(struct session *s, struct target *t, enum probe_job_kind kind,
		   uint64_t hold_seq, const char *arg)
{
	struct probe_job *j = calloc(1, sizeof(*j));
	int err;

	if (!j)
		return -ENOMEM;
	j->s = s;
	j->kind = kind;
	j->pid = t->pid;
	j->ps = t->probes;
	j->want = t->want;
	j->hold_seq = hold_seq;
	if (arg)
		snprintf(j->arg, sizeof(j->arg), "%s", arg);
	err = prober__submit(s->prober, job_run, s->job_done, j);
	if (err) {
		free(j);
		return err;
	}
	t->jobs++;
	if (kind == JOB_SET && j->want.launch && !t->attaching)
		t->attach_sent = clock_mono_ns();
	t->attaching += kind == JOB_SET && j->want.launch;
	if (kind == JOB_FREE || kind == JOB_DROP)
		t->probes = NULL;
	return 0;
}

/*
 * A window's launch links are a new generation, which the next step's state
 * names (step.bpf.c): links of the last window still closing then record
 * nothing. Without a step probe there is no such state: those links are
 * closed before the next window's are made.
 */
void session_want_probes(struct session *s, struct target *t, bool on)
{
	enum window_mode mode = t->leading ? t->lead_mode : t->mode;
	bool window = on && mode != MODE_OFF;
	struct probe_want w = {
		/* A capture's launches are its graph's nodes, whatever the window (graph_store.h). */
		.launch = window || t->capture_probes,
		/* Event calls matter only to captures: their probes come with a capture's hold. */
		.events = t->capture_probes,
		.latency = on && mode == MODE_LATENCY,
		/* The agent's CUPTI goes on at warmup, not ahead of it: its records are the cycle's. */
		.agent = on && mode == MODE_CUPTI && !t->leading,
		.gen = t->conf.link_gen,
		.sync = !t->plan.step,
		.one_trap = t->one_trap,
		.one_trap_graphs = t->one_trap_graphs,
	};

	t->window_on = on;
	if (!memcmp(&w, &t->want, sizeof(w)) || !t->probes) {
		/* A capture's hold: the probes are in, or on their way (job_done answers it). */
		if (t->capture_hold && !t->attaching)
			session_capture_hold_done(s, t, NULL);
		return;
	}
	/*
	 * The first links of a process need no new generation: none came before
	 * them. Nor do links for a capture: the running step's state names the
	 * generation they must have to record. Links made again with or without
	 * return probes are a new set too: the old ones still record until they
	 * are closed (tens of ms a link), which must not be in the window's
	 * steps; while captures keep launch probes in, their generation stays.
	 */
	if (w.launch && window && t->plan.step && t->had_links &&
	    (!t->want.launch || (w.latency != t->want.latency && !t->capture_probes))) {
		t->conf.link_gen = (t->conf.link_gen + 1) & 0xff;
		w.gen = t->conf.link_gen;
		if (bpfobj__set_conf(s->bpf, t->pid, &t->conf))
			p_warn("pid %d: cannot name its new launch links: %s", t->pid,
			       strerror(errno));
	}
	/* Without a capture's probes in, a capture that begins holds the process until they are. */
	if (!w.events && t->want.events)
		session_capture_hold_flag(s, t, true);
	t->want = w;
	t->had_links |= w.launch;
	if (session_submit(s, t, JOB_SET, 0, NULL)) {
		p_warn("pid %d: out of memory: its launch probes stay as they are", t->pid);
		if (t->capture_hold)
			session_capture_hold_done(s, t, NULL);
	}
}

/*
 * The prober reads the map while the process is held: it is the one the new
 * probes are for. Events that come while a scan runs ask for one more after
 * it, with the latest hold: a flood of them is one scan, not thousands.
 */
void session_rescan(struct session *s, struct target *t)
{
	if (t->scanning) {
		t->rescan = true;
		return;
	}
	t->rescan = false;
	if (session_submit(s, t, JOB_SCAN, t->hold_since ? t->hold_seq : 0, NULL)) {
		session_answer_hold(s, t);
		session_refresh_views(s, t, NULL);
		return;
	}
	t->scanning = true;
}
