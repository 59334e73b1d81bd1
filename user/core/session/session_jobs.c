// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The session's side of the prober: jobs about a target's probeset go out
 * as messages, and their answers (the probeset's facts) come back here, on
 * the session's thread, where the target is updated, holds are answered and
 * the user is told what changed.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/probes/bpfobj.h"
#include "core/proc/pyproc.h"
#include "core/proc/stacks.h"
#include "core/proc/symbols.h"
#include "core/steps/step_spec.h"
#include "core/session/prober.h"
#include "core/session/session_int.h"
#include "util/clock.h"
#include "util/log.h"

static void answer_hold(struct session *s, struct target *t, const struct probe_facts *f);
static void capture_hold_flag(struct session *s, struct target *t, bool on);
static void capture_hold_done(struct session *s, struct target *t, const struct probe_facts *f);

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
			answer_hold(s, t, &j->facts);
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
		capture_hold_flag(s, t, false);
		if (t->capture_hold)
			capture_hold_done(s, t, &j->facts);
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

/* CONF_CAPTURE_HOLD as BPF reads it: set while a capture's probes of t are not all in. */
static void capture_hold_flag(struct session *s, struct target *t, bool on)
{
	uint32_t flags = on ? t->conf.flags | CONF_CAPTURE_HOLD : t->conf.flags & ~CONF_CAPTURE_HOLD;

	if (flags == t->conf.flags)
		return;
	t->conf.flags = flags;
	if (bpfobj__set_conf(s->bpf, t->pid, &t->conf) && !t->exited)
		p_warn("pid %d: cannot tell BPF whether its launch probes are in: %s", t->pid,
		       strerror(errno));
}

/* The capture's hold: its launch probes are in (or cannot be put in). */
static void capture_hold_done(struct session *s, struct target *t, const struct probe_facts *f)
{
	t->capture_hold = false;
	answer_hold(s, t, f);
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
			capture_hold_done(s, t, NULL);
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
		capture_hold_flag(s, t, true);
	t->want = w;
	t->had_links |= w.launch;
	if (session_submit(s, t, JOB_SET, 0, NULL)) {
		p_warn("pid %d: out of memory: its launch probes stay as they are", t->pid);
		if (t->capture_hold)
			capture_hold_done(s, t, NULL);
	}
}

void session_capture_hold(struct session *s, struct target *t)
{
	if (!t->capture_probes)
		p_dbg("pid %d: a stream capture began: its probes go in (launches, for its "
		      "graph's nodes, and event calls)", t->pid);
	t->capture_probes = true;
	t->capture_hold = true;
	t->capture_last = clock_mono_ns();
	session_want_probes(s, t, t->window_on);
}

/* How long launch probes stay in after the latest capture: a program captures many in a row. */
#define CAPTURE_LINGER_NS (2000 * 1000 * 1000ull)

void session_capture_linger(struct session *s, struct target *t, const struct proc_state *ps,
			    uint64_t now)
{
	if (!t->capture_probes || ps->captures_open || now - t->capture_last < CAPTURE_LINGER_NS)
		return;
	t->capture_probes = false;
	p_dbg("pid %d: no stream capture for %llu ms: the probes kept for captures go", t->pid,
	      CAPTURE_LINGER_NS / 1000000);
	session_want_probes(s, t, t->window_on);
}

/*
 * Nested launches in a row that showed no new host stub before the runtime's
 * probes go: a program's kernels are mostly launched in its first steps.
 */
#define ONE_TRAP_QUIET 1000

/* Runtime replays seen entering cuGraphLaunch, none refused before it, ere their probes go. */
#define ONE_TRAP_GRAPHS 100

void session_one_trap(struct session *s, struct target *t, const struct proc_state *ps)
{
	bool kernels = !t->one_trap && ps->learned &&
		       ps->nested - ps->nested_at_learned >= ONE_TRAP_QUIET;
	/*
	 * A replay needs nothing learned: its executable graph is the driver's
	 * handle too. But a runtime that refuses a replay before the driver
	 * (no device) would lose it with its probe gone: one such is enough to
	 * keep the probe for good.
	 */
	bool graphs = !t->one_trap_graphs && ps->graph_nested >= ONE_TRAP_GRAPHS &&
		      !ps->graph_unnested;

	if (!kernels && !graphs)
		return;
	if (kernels)
		p_dbg("pid %d: %llu host stubs learned from %llu runtime launches entering the "
		      "driver: one trap per launch from now on", t->pid,
		      (unsigned long long)ps->learned, (unsigned long long)ps->nested);
	if (graphs)
		p_dbg("pid %d: %llu runtime graph replays entered the driver, none was refused "
		      "before it: one trap per replay from now on", t->pid,
		      (unsigned long long)ps->graph_nested);
	t->one_trap |= kernels;
	t->one_trap_graphs |= graphs;
	if (t->want.launch)
		session_want_probes(s, t, true);
}

/*
 * A hold's length, from BPF's stop to the SIGCONT: counted for t's next
 * trace (proc_cycles__hold) and the session's total, and said with -v with
 * what the scan that ended it found (f; NULL when it was answered without
 * one: cuprobe leaving, the process gone, the scan too slow).
 */
static void hold_done(struct session *s, struct target *t, const struct probe_facts *f)
{
	uint64_t now = clock_mono_ns(), ns = now > t->hold_ts ? now - t->hold_ts : 0;
	struct session_holds *h = &s->holds;
	char what[200] = "";

	if (f && f->scan_objs)
		snprintf(what, sizeof(what), " for %s (%u object%s, %u probed)", f->scan_slowest,
			 f->scan_objs, f->scan_objs == 1 ? "" : "s", f->scan_probed);
	else if (f)
		snprintf(what, sizeof(what), " (no new objects)");
	else
		snprintf(what, sizeof(what), " (continued before its libraries were probed)");
	p_dbg("pid %d: held %.2f ms%s", t->pid, ns / 1e6, what);
	if (t->cycles)
		proc_cycles__hold(t->cycles, ns);
	h->count++;
	h->total_ns += ns;
	if (ns >= h->max_ns) {
		h->max_ns = ns;
		h->max_pid = t->pid;
		snprintf(h->max_what, sizeof(h->max_what), "%s", what);
	}
}

void session_holds_report(const struct session *s)
{
	const struct session_holds *h = &s->holds;
	struct uprobe_warm_stats w;

	if (h->files_read || h->files_reused)
		p_dbg("object files: %lu read, %lu answered from the cache of earlier reads",
		      h->files_read, h->files_reused);
	if (!h->count)
		return;
	p_dbg("holds: %lu, %.2f ms in all, the longest %.2f ms (pid %d%s)", h->count,
	      h->total_ns / 1e6, h->max_ns / 1e6, h->max_pid, h->max_what);
	uprobe_warm__stats(s->warm, &w);
	if (w.off)
		p_dbg("holds: uprobe registration not kept warm (%s): a hold that attaches may wait "
		      "for an RCU grace period", w.why);
	else
		p_dbg("holds: uprobe registration kept warm for %.2f s in %lu stretches (%lu writes, "
		      "%lu of them waited for a grace period)%s", w.active_ns / 1e9,
		      (unsigned long)w.stretches, (unsigned long)w.writes, (unsigned long)w.slow,
		      w.own_tracefs ? "; no tracefs was mounted: cuprobe mounted one for its own "
				      "thread, in a mount namespace of its own" : "");
}

/*
 * The process is continued first and the answer written after: should
 * cuprobe die in between, the guardian sees the stop unanswered and sends
 * one SIGCONT too many, never one too few.
 */
static void answer_hold(struct session *s, struct target *t, const struct probe_facts *f)
{
	if (!t->hold_since)
		return;
	if (t->held) {
		kill(t->pid, SIGCONT);
		hold_done(s, t, f);
	}
	t->conf.holds_answered = t->hold_seq;
	if (bpfobj__set_conf(s->bpf, t->pid, &t->conf) && !t->exited)
		p_warn("pid %d: cannot record that its hold was answered: %s", t->pid,
		       strerror(errno));
	t->hold_since = 0;
	t->held = false;
}

void session_answer_hold(struct session *s, struct target *t)
{
	answer_hold(s, t, NULL);
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

void session_suggest_step(struct session *s, struct target *t, char *buf, size_t len)
{
	buf[0] = s->suggest[0] = '\0';
	if (!t->probes || session_submit(s, t, JOB_SUGGEST, 0, NULL))
		return;
	/* Ask and wait: the answer lands in s->suggest. */
	prober__drain(s->prober);
	snprintf(buf, len, "%s", s->suggest);
}
