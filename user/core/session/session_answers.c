// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The prober's answers, on the session's thread: a job about a target's
 * probeset comes back with the probeset's facts, and the target is updated,
 * its hold answered, its next job sent and the user told what changed.
 * session_jobs.c sends the jobs; this file is above every other it calls.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/probes/bpfobj.h"
#include "core/proc/pyproc.h"
#include "core/proc/stacks.h"
#include "core/session/session_int.h"
#include "core/session/session_answers.h"
#include "core/session/session_exec.h"
#include "core/session/session_holds.h"
#include "core/session/session_jobs.h"
#include "core/session/session_lead.h"
#include "core/session/session_step_missing.h"
#include "core/session/session_targets.h"
#include "stack.h"
#include "util/clock.h"
#include "util/log.h"

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

/* On the session's thread: the answer (prober_fn). */
void session_job_done(void *arg)
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
		session_refresh_views(s, t, &j->maps);
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
		session_holds_files(s, &j->facts);
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
