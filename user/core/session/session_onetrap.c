// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The one-trap switch: once the driver's probe has seen a process's host
 * stubs (or its graph replays) enter the driver, its runtime's launch probes
 * go and each launch traps once. Session's thread.
 */
#include <stdbool.h>
#include "core/session/session_int.h"
#include "core/session/session_jobs.h"
#include "core/session/session_onetrap.h"
#include "proc_state.h"
#include "util/log.h"

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
