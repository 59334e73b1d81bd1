// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The session's side of the prober: jobs about a target's probeset go out
 * as messages, and their answers (the probeset's facts) come back here, on
 * the session's thread, where the target is updated, holds are answered and
 * the user is told what changed.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/probes/bpfobj.h"
#include "core/proc/procmaps.h"
#include "core/proc/pyproc.h"
#include "core/proc/stacks.h"
#include "core/proc/symbols.h"
#include "core/schedule/step_spec.h"
#include "core/session/prober.h"
#include "core/session/session_int.h"
#include "core/session/session_exec.h"
#include "core/session/session_holds.h"
#include "core/session/session_jobs.h"
#include "core/session/session_lead.h"
#include "core/session/session_step_missing.h"
#include "core/session/session_targets.h"
#include "util/clock.h"
#include "util/log.h"

/* A message to the prober about one target's probeset, and its answer. */
struct probe_job {
	struct session *s;
	enum probe_job_kind kind;
	pid_t pid;
	struct probeset *ps;
	struct probe_want want;		/* JOB_SET */
	uint64_t hold_seq;		/* JOB_SCAN: the hold it answers, 0 for none */
	bool kept;			/* JOB_KEEP: the answer */
	bool more;			/* JOB_PREREG: it let other jobs go first, and goes on */
	struct procmaps maps;		/* JOB_SCAN: the maps it read while the process was held */
	char arg[PATH_MAX];		/* JOB_EXEC: the executable; JOB_SUGGEST: the answer */
	struct probe_facts facts;	/* the answer */
};

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

/* What the user hears when a scan found something new. */
static void tell_scan(struct session *s, struct target *t, const struct probe_facts *f)
{
	if (!t->facts.has_launch_apis && f->has_launch_apis && t->told_waiting)
		p_info("pid %d (%s): CUDA library loaded, probes attached", t->pid, t->comm);
	/* More than the executable and the dynamic linker: the startup libraries are in. */
	if (!f->has_launch_apis && !t->told_waiting && f->nobjs > 2) {
		t->told_waiting = true;
		p_info("pid %d (%s) has no CUDA library mapped yet: watching for one to be loaded",
		       t->pid, t->comm);
	}
	if (!t->facts.step_found && f->step_found)
		p_info("pid %d: step probe found in %s", t->pid, f->step_object);
	s->steps_found += !t->facts.step_found && f->step_found;
}

/* --stack: a process that runs CPython has its Python frames walked too. */
static void find_python(struct session *s, struct target *t)
{
	struct py_offsets o;
	struct py_layout l;
	char where[256] = "";
	int ret;

	if (!s->stacks || t->python)
		return;
	ret = pyproc__find(t->pid, &o, &l, where, sizeof(where));
	if (ret == -ENOTSUP && !t->python_told) {
		t->python_told = true;
		p_warn("pid %d: %s is a Python cuprobe cannot walk (CPython 3.10 to 3.13 only): "
		       "its launches get native stacks only", t->pid, where);
	}
	if (ret <= 0)
		return;
	if (bpfobj__set_py_proc(s->bpf, t->pid, &o)) {
		p_warn("pid %d: cannot tell BPF about its Python: %s", t->pid, strerror(errno));
		return;
	}
	stacks__set_python(s->stacks, t->pid, &l);
	t->python = true;
	p_info("pid %d: Python %u.%u in %s: launches get its Python frames", t->pid,
	       o.version >> 8, o.version & 0xff, where);
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
static void refresh_views(struct session *s, struct target *t, struct procmaps *maps)
{
	target__refresh_identity(t);
	if (maps && maps->n)
		symbols__set_maps(s->syms, t->pid, maps);
	else
		symbols__refresh(s->syms, t->pid);
	if (s->stacks)
		stacks__refresh(s->stacks, t->pid);
}

/* On the session's thread: the answer. */
static void job_done(void *arg)
{
	struct probe_job *j = arg;
	struct session *s = j->s;
	struct target *t = session_find(s, j->pid);

	if (!t)
		goto out;
	/* Its probes are out: its entries in BPF and the target itself can go. */
	if (j->kind == JOB_FREE) {
		session_remove(s, t);
		goto out;
	}
	t->jobs--;
	if (j->kind == JOB_DROP)
		goto out;
	/* After exec: the probeset serves the new program (a scan adds to it), or goes. */
	if (j->kind == JOB_KEEP) {
		t->scanning = false;
		if (!j->kept) {
			session_exec_anew(s, t);
			goto out;
		}
		p_dbg("pid %d (%s): new program, its probes kept for the files it maps again",
		      t->pid, t->comm);
		session_rescan(s, t);
		goto out;
	}
	if (j->facts.err && j->facts.err != -ESRCH && j->facts.err != -ENOENT)
		p_warn("pid %d: cannot %s: %s", t->pid,
		       j->kind == JOB_SET  ? "attach or detach its launch probes" :
		       j->kind == JOB_WALK ? "attach its step probe" :
					     "read its new libraries", strerror(-j->facts.err));
	if (j->kind == JOB_SUGGEST)
		snprintf(s->suggest, sizeof(s->suggest), "%.500s", j->arg);
	if (j->kind == JOB_SUGGEST && t->asking_step) {
		t->asking_step = false;
		session_tell_step_missing(t, j->arg, STEP_LIKELY);
	}
	/* The process goes on first; the views of its map follow, before any event of it is read. */
	if (j->kind == JOB_SCAN && !t->exec_pending) {
		if (j->hold_seq && j->hold_seq == t->hold_seq)
			session_answer_hold_facts(s, t, &j->facts);
		refresh_views(s, t, &j->maps);
		/* After the exec's hold, while it runs: the registrations' grace period is not a hold's. */
		if (t->prereg) {
			t->prereg = false;
			/* Not for a process whose probes went with its end meanwhile. */
			if (t->probes)
				session_submit(s, t, JOB_PREREG, 0, NULL);
		}
	}
	if (j->kind == JOB_SCAN || j->kind == JOB_EXEC || j->kind == JOB_WALK) {
		tell_scan(s, t, &j->facts);
		find_python(s, t);
	}
	t->facts = j->facts;
	if (j->kind == JOB_WALK)
		t->walking = false;
	/* The step's walk, once the process is not held: it takes up to a second. */
	if (j->facts.step_walk && !t->walking && !t->hold_since && t->probes == j->ps &&
	    !session_submit(s, t, JOB_WALK, 0, NULL))
		t->walking = true;
	/* After what it let go first (the same probeset: not a new program's since). */
	if (j->kind == JOB_PREREG && j->more && t->probes == j->ps)
		session_submit(s, t, JOB_PREREG, 0, NULL);
	if (j->kind == JOB_SCAN || j->kind == JOB_EXEC || j->kind == JOB_PREREG) {
		s->holds.files_read += j->facts.scan_read;
		s->holds.files_reused += j->facts.scan_objs - j->facts.scan_read;
	}
	if (j->kind == JOB_SCAN) {
		t->scanning = false;
		if (t->exec_pending) {
			/* The scan was of the old program: the new one is decided now. */
			t->exec_pending = false;
			session_exec(s, t);
		} else if (t->rescan) {
			session_rescan(s, t);
		}
	}
	/* How long a launch attach takes here: the lead of the next window's (session_step). */
	if (j->kind == JOB_SET && j->want.launch && t->attach_sent && !j->facts.err) {
		uint64_t took = clock_mono_ns() - t->attach_sent;

		t->attach_ns = took > t->attach_ns ? took : t->attach_ns;
	}
	/* The attach a warmup asked for is in: was it in before the active step began? */
	if (j->kind == JOB_SET && j->want.launch && !--t->attaching && t->warm_ts) {
		session_check_warmup(t, t->warm_step, t->warm_ts);
		t->warm_ts = 0;
	}
	/*
	 * A capture's probes in (launches and events): a capture that begins from
	 * now on needs no hold, and one held goes on.
	 */
	if (j->kind == JOB_SET && j->want.events && !t->attaching && t->want.events) {
		session_capture_hold_flag(s, t, false);
		if (t->capture_hold)
			session_capture_hold_done(s, t, &j->facts);
	}
out:
	procmaps__free(&j->maps);
	free(j);
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
	err = prober__submit(s->prober, job_run, job_done, j);
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
		refresh_views(s, t, NULL);
		return;
	}
	t->scanning = true;
}
