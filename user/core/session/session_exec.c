// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A followed process ran a new program: its probeset kept where it serves
 * the new one, else dropped and the program probed anew. Session's thread.
 */
#include "core/probes/probeset.h"
#include "core/cycles/proc_cycles.h"
#include "core/session/session_int.h"
#include "core/session/session_exec.h"
#include "core/session/session_holds.h"
#include "core/session/session_jobs.h"
#include "core/session/session_lead.h"
#include "schedule.h"
#include "util/log.h"

void session_exec(struct session *s, struct target *t)
{
	t->scan_due = 0;
	/*
	 * The files its program's processes had launch probes in (in this
	 * session: torchrun's ranks, Python's multiprocessing spawn; or in an
	 * earlier one, through the cache) are probed before it maps them, once
	 * the exec's scan is done (probeset__preregister). Any other program
	 * (a shell, git, ldconfig) has none to probe.
	 */
	t->prereg = true;
	/*
	 * The command's own exec: its probeset was made for this very program,
	 * so it stays, and the scan adds what the exec mapped. Dropping it would
	 * hold the process for the close of its links (100-150 ms here).
	 */
	if (t->exec_prepared && t->probes) {
		t->exec_prepared = false;
		session_rescan(s, t);
		return;
	}
	t->exec_prepared = false;
	/*
	 * Closing the old program's links takes 100-700 ms here, and the
	 * process waits: where the probeset serves the new program as it is,
	 * it stays (the prober answers, JOB_KEEP). No scan of the old one runs
	 * meanwhile (scanning): the answer may be to free it.
	 */
	if (t->probes && t->scanning) {
		t->exec_pending = true;
		probeset__interrupt(t->probes);
		return;
	}
	if (t->probes && !session_submit(s, t, JOB_KEEP, 0, NULL)) {
		t->scanning = true;
		return;
	}
	session_exec_anew(s, t);
}

void session_exec_anew(struct session *s, struct target *t)
{
	if (t->probes)
		session_submit(s, t, JOB_DROP, 0, NULL);
	t->probes = probeset__new(&s->penv, t->pid, t->plan.step);
	if (!t->probes) {
		session_answer_hold(s, t);
		return;
	}
	/* What the old program wanted stands: the new probeset is told. The old links go
	 * first, closed at once (JOB_DROP): no generation is needed to tell them apart. */
	t->want = (struct probe_want){};
	t->had_links = false;
	if (t->plan.step) {
		struct cycle_status st;

		proc_cycles__status(t->cycles, &st);
		session_want_ahead(s, t, st.phase, st.next_cycle);
	} else {
		session_want_probes(s, t, t->mode != MODE_OFF &&
						  phase_probes(proc_cycles__phase(t->cycles)));
	}
	session_rescan(s, t);
	p_dbg("pid %d (%s): new program, probed anew", t->pid, t->comm);
}
