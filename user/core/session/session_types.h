/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The engine's public vocabulary: what a front-end gives a session (a plan,
 * bounds, how files are made) and what the session's hooks hand back (a
 * target's public view, a step, a cycle). session.h includes it; the cycles'
 * half (window modes, bounds, what a step and a cycle report) is
 * core/cycles/cycle_types.h's, which the mirror builds on without looking up
 * into the session. A front-end fills the plan, the bounds and the
 * out_mode, which the session copies; the session fills the others, on its
 * thread, for the hook (or the call) that hands them out.
 */
#ifndef CORE_SESSION_SESSION_TYPES_H
#define CORE_SESSION_SESSION_TYPES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "core/cycles/cycle_types.h"
#include "schedule.h"

struct step_spec;

/*
 * A target as a front-end sees it: a copy the session makes, holding no
 * pointer into the engine (a hook's lives during the hook, session__target's
 * as long as the caller keeps it). The engine's struct target stays inside.
 */
struct session_target {
	pid_t pid;
	int rank;		/* RANK (or MPI's, Slurm's) in its environment, -1: none */
	bool agent;		/* the agent library is mapped in it and its probes found */
};

/* How a target's steps and windows go; given by the front-end, copied by the session. */
struct target_plan {
	const struct step_spec *step;	/* the step probe; NULL: time slices or one cycle */
	uint64_t slice_ns;		/* without a step probe: slices this long stand in for
					 * steps; 0: the whole run is one cycle */
	struct schedule sched;		/* over steps (or slices); ignored for one cycle */
	uint32_t step_every;
	enum window_mode mode;		/* what windows attach, unless the cycle_mode hook says */
	bool follow;			/* its children are targets too, with this plan */
	/*
	 * The rank and world size its traces' distributedInfo says, where the
	 * front-end knows them better than the engine's own reading of RANK,
	 * WORLD_SIZE, MPI's, PMI's and Slurm's variables (-1: unknown).
	 */
	bool identity;
	int rank, world_size;
};

/* The phase wants launch probes attached: warmup absorbs the attach. */
static inline bool phase_probes(uint32_t phase)
{
	return phase == PHASE_WARMUP || phase_records(phase);
}

#endif /* CORE_SESSION_SESSION_TYPES_H */
