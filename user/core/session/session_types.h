/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The engine's public vocabulary: what a front-end gives a session (a plan,
 * bounds, how files are made) and what the session's hooks hand back (a
 * target's public view, a step, a cycle). session.h includes it; the
 * engine's own headers (proc_cycles.h, target.h) build on it, so that each of
 * these is defined once. A front-end fills the plan, the bounds and the
 * out_mode, which the session copies; the session fills the others, on its
 * thread, for the hook (or the call) that hands them out.
 */
#ifndef CORE_SESSION_SESSION_TYPES_H
#define CORE_SESSION_SESSION_TYPES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "schedule.h"

struct step_spec;

/* What a window attaches from its warmup step to its end. */
enum window_mode {
	MODE_OFF,	/* the step probe only: a baseline */
	MODE_BPF,	/* launch probes */
	MODE_CUPTI,	/* launch probes and the agent's CUPTI records */
	MODE_LATENCY,	/* launch and return probes */
	MODE__COUNT,
};

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

/* A step that ended (the step_done hook). */
struct cycle_step_info {
	uint64_t step;
	uint32_t phase;
	uint32_t cycle;		/* the cycle it belongs to, when it is not NONE */
	enum window_mode mode;	/* that cycle's */
	uint64_t start_mono, end_mono;
	int64_t hits;		/* launch probe hits in it, -1 when not known */
	bool partial;		/* cut short by the end of the recording */
};

/* A cycle that was written, or failed to be (the cycle_done hook). */
struct cycle_info {
	uint32_t k;
	enum window_mode mode;
	const char *path;	/* the trace, valid during the hook; NULL when none was written
				 * (MODE_OFF, or err) */
	int err;		/* -errno: the trace could not be made or written, the cycle
				 * is lost (nothing of it stays); its launches are counted */
	const char *failed_path;	/* with err: the folder or file, valid during the hook */
	uint64_t launches, drops, hits;
	uint64_t captured;		/* made into a captured stream: graph nodes, not launches */
	uint64_t start_mono, end_mono;
	int64_t first_step, last_step;	/* -1 without steps */
	bool partial;
	const char *cut;		/* NULL, or the bound it reached ("launches", "bytes") */
	uint64_t cut_launches;		/* launches after the cut: counted, not written */
};

/* Where a target's schedule stands (the step hook). */
struct cycle_status {
	uint64_t step;
	uint32_t phase;
	uint32_t cycle;
	uint32_t next_cycle;	/* the cycle the next warmup begins */
	enum window_mode mode;	/* the cycle's */
	uint64_t launches;	/* in this process, all cycles */
	uint64_t written;	/* cycles written */
};

/* How run folders and traces are made: private (0700, 0600) unless said otherwise. */
struct out_mode {
	mode_t file, dir;	/* 0: 0600 and 0700 */
	gid_t gid;		/* their group, when share_group */
	bool share_group;
};

/* A cycle's size bounds; 0: none. A cycle that reaches one is cut there. */
struct cycle_bounds {
	uint64_t launches;	/* launches written */
	uint64_t bytes;		/* bytes of trace written (modes that write as they go) */
};

/* The phase wants launch probes attached: warmup absorbs the attach. */
static inline bool phase_probes(uint32_t phase)
{
	return phase == PHASE_WARMUP || phase_records(phase);
}

#endif /* CORE_SESSION_SESSION_TYPES_H */
