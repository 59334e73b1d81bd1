/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What a cycle is in the engine's public vocabulary (session_types.h
 * includes it): what a window attaches, a cycle's bounds, how its files are
 * made, and what the hooks hand back of a step, a cycle and where a target's
 * schedule stands. Filled by the front-end (bounds, out_mode) or by the
 * mirror, on the session's thread.
 */
#ifndef CORE_CYCLES_CYCLE_TYPES_H
#define CORE_CYCLES_CYCLE_TYPES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* What a window attaches from its warmup step to its end. */
enum window_mode {
	MODE_OFF,	/* the step probe only: a baseline */
	MODE_BPF,	/* launch probes */
	MODE_CUPTI,	/* launch probes and the agent's CUPTI records */
	MODE_LATENCY,	/* launch and return probes */
	MODE__COUNT,
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

#endif /* CORE_CYCLES_CYCLE_TYPES_H */
