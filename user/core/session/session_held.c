// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A process held by BPF: a library map (REC_LIBMAP: its maps scanned again),
 * a followed process's exec (REC_EXEC: the new program probed), a capture
 * begun with no launch probe in (REC_CAPTURE: the capture's probes asked
 * for), continued once that is done (session_holds.c); and capture probes
 * let go once captures are over. Session's thread.
 */
#include <signal.h>
#include "core/probes/uprobe_warm.h"
#include "core/session/session_int.h"
#include "core/session/session_exec.h"
#include "core/session/session_held.h"
#include "core/session/session_holds.h"
#include "core/session/session_jobs.h"
#include "core/session/session_targets.h"
#include "hold.h"
#include "proc_state.h"
#include "records.h"
#include "util/clock.h"
#include "util/log.h"

/* A capture began with no launch probe in: they go in, then it goes on. */
static void capture_hold(struct session *s, struct target *t)
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
 * REC_LIBMAP, REC_EXEC, REC_CAPTURE: a hold. The dynamic linker changed the
 * map (REC_LIBMAP), a followed process ran a new program (REC_EXEC), or a
 * capture began before its probes were in (REC_CAPTURE). The process is
 * probed while held and continued when that is done (session_answer_hold);
 * while cuprobe is leaving, or for a process it no longer follows, at once.
 */
int session_on_hold(struct session *s, void *data, size_t size)
{
	const struct libmap_event *e = data;
	struct target *t = session_find(s, e->tgid);

	(void)size;
	if (!t || t->gone) {
		if (e->held)
			kill(e->tgid, SIGCONT);
		return 0;
	}
	t->hold_seq = e->seq;
	/* More holds are likely to follow: their attaches should not wait for a grace period. */
	uprobe_warm__hold(s->warm);
	/* A hold lasts from its first stop to the SIGCONT that answers them all. */
	if (e->held && !t->held)
		t->hold_ts = e->ts_ns;
	t->held |= e->held;
	t->hold_since = clock_mono_ns();
	if (s->leaving || !t->probes)
		session_answer_hold(s, t);
	else if (e->type == REC_CAPTURE)
		capture_hold(s, t);
	else if (e->type == REC_EXEC)
		session_exec(s, t);
	else
		session_rescan(s, t);
	return 0;
}
