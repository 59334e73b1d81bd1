// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Holds answered: a process stopped by BPF (a library map, a followed
 * process's exec, a capture with no launch probe in) is continued once the
 * prober has probed what it needs (session_held.c asks), and the hold's
 * length counted for its trace and -v. Session's thread.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/probes/bpfobj.h"
#include "core/probes/uprobe_warm.h"
#include "core/cycles/proc_cycles.h"
#include "core/session/session_int.h"
#include "core/session/session_holds.h"
#include "proc_state.h"
#include "util/clock.h"
#include "util/log.h"

/* The library-map and exec holds answered, in every target (s->holds, this file's alone). */
struct session_holds {
	unsigned long count;
	uint64_t total_ns, max_ns;
	pid_t max_pid;			/* the longest one's */
	char max_what[200];		/* and what it was for */
	unsigned long files_read, files_reused;	/* object files read, and answered from the cache */
};

int session_holds_new(struct session *s)
{
	s->holds = calloc(1, sizeof(*s->holds));
	return s->holds ? 0 : -ENOMEM;
}

void session_holds_free(struct session *s)
{
	free(s->holds);
	s->holds = NULL;
}

void session_holds_files(struct session *s, const struct probe_facts *f)
{
	s->holds->files_read += f->scan_read;
	s->holds->files_reused += f->scan_objs - f->scan_read;
}

/* CONF_CAPTURE_HOLD as BPF reads it: set while a capture's probes of t are not all in. */
void session_capture_hold_flag(struct session *s, struct target *t, bool on)
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
void session_capture_hold_done(struct session *s, struct target *t, const struct probe_facts *f)
{
	t->capture_hold = false;
	session_answer_hold_facts(s, t, f);
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
	struct session_holds *h = s->holds;
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
	const struct session_holds *h = s->holds;
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
void session_answer_hold_facts(struct session *s, struct target *t, const struct probe_facts *f)
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
	session_answer_hold_facts(s, t, NULL);
}