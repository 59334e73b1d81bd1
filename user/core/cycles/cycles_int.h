/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Inside the cycle mirror (proc_cycles.h), for its three files only: the
 * open cycles and what waits in them. proc_cycles.c moves the mirror from
 * step to step, cycle_contents.c puts launches, ranges, thread names, graphs
 * and the agent's records where they belong, cycle_write.c writes a cycle's
 * trace. Session's thread.
 */
#ifndef CORE_CYCLES_CYCLES_INT_H
#define CORE_CYCLES_CYCLES_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "core/cycles/proc_cycles.h"
#include "trace/writer.h"
#include "util/vec.h"

/*
 * Finished cycles wait for their grace and, in cupti windows, for their GPU
 * records (up to --cupti-wait) while the next ones run: windows that follow
 * each other with no step between them (compare's) end one every few steps.
 * Past this many, the oldest is written at once, as if its wait had run out.
 */
#define MAX_OPEN 64

struct open_cycle {
	uint32_t k;
	enum window_mode mode;
	struct trace *t;	/* made at its first event: a failed start leaves nothing */
	uint64_t start_mono;
	uint64_t launches, unnamed;
	uint64_t captured;	/* launch records made into a captured stream: not launches */
	uint64_t unprobed_ns;	/* it recorded this long before its launch probes were in */
	struct cycle_counts c;	/* over its recorded steps */
	uint64_t lo, hi;	/* its recorded steps; hi is UINT64_MAX while it runs */
	uint64_t last_step;	/* the latest of them that ended */
	uint64_t end_mono;	/* when its last active step ended; 0 while it runs */
	/* --cupti: the launches wait here for their GPU records. */
	struct vec pending;	/* struct gpu_launch */
	uint64_t checked_chunks;	/* the store's chunk count at the last completeness check */
	/* Cut at a size bound: where, and what came after. */
	const char *cut;
	int64_t cut_step;
	uint64_t cut_mono, cut_launches;
	/*
	 * Its trace could not be made or written (-errno), and where: the cycle
	 * is lost, its launches only counted, and it is not tried again.
	 */
	int write_err;
	char *failed_path;
};

struct thread_name {
	pid_t tid;
	char name[16];
};

/* A record_function range begun in a recorded step, waiting for its end. */
struct open_range {
	pid_t tid;
	uint32_t depth;
	uint64_t step, start_mono;
	char name[RANGE_NAME_LEN];
};

/* Ranges open at once in a process, all threads together: past it, a begin is dropped. */
#define MAX_OPEN_RANGES 4096

struct proc_cycles {
	const struct cycle_env *env;
	const struct target *t;	/* the session's, handed back to its hooks */
	struct cycle_proc who;	/* pid and comm as at the start (cycle_proc_now for the rest) */
	uint64_t step;
	uint32_t phase;
	uint64_t step_start;
	pid_t step_tid;		/* the thread whose hit began the step */
	struct cycle_counts at;	/* the counters when the step began */
	int64_t cycle;		/* the cycle of the running (or latest) step; -1 before any */
	enum window_mode mode;	/* that cycle's */
	struct schedule sched;	/* fills boundaries lost on the way */
	uint64_t base;		/* the step sched counts from */
	bool by_time;		/* launches are placed by time, not step */
	bool steps;		/* steps (or slices) are spans; a stop is partial */
	struct vec open;	/* struct open_cycle, oldest first */
	bool told_full;		/* said that too many cycles waited */
	uint64_t late;		/* not yet written in a trace: goes into the next */
	uint64_t lost_steps;	/* boundaries lost since the last trace: go into the next */
	struct trace_holds holds;	/* holds since the last trace: go into the next */
	bool told_silent;	/* said that no agent answered (--cupti) */
	uint64_t launches;
	uint64_t written;
	struct gpu_store *gpu;	/* --cupti */
	struct graph_store *graphs;	/* what its graphs hold: replays are expanded */
	struct vec threads;	/* struct thread_name */
	struct vec ranges;	/* struct open_range: --step torch's, begun and not ended */
};

/* Open cycle i, oldest first. */
static inline struct open_cycle *open_at(struct proc_cycles *pc, size_t i)
{
	return vec_at(&pc->open, struct open_cycle, i);
}

static inline struct open_cycle *find_open(struct proc_cycles *pc, uint32_t k)
{
	for (size_t i = 0; i < pc->open.len; i++)
		if (open_at(pc, i)->k == k)
			return open_at(pc, i);
	return NULL;
}

/* The open cycle whose recorded steps hold step. */
static inline struct open_cycle *cycle_of_step(struct proc_cycles *pc, uint64_t step)
{
	for (size_t i = 0; i < pc->open.len; i++)
		if (open_at(pc, i)->lo <= step && step <= open_at(pc, i)->hi)
			return open_at(pc, i);
	return NULL;
}

/* The open cycle whose recorded time holds ts (time slices). */
static inline struct open_cycle *cycle_of_time(struct proc_cycles *pc, uint64_t ts)
{
	for (size_t i = 0; i < pc->open.len; i++) {
		struct open_cycle *oc = open_at(pc, i);

		if (oc->start_mono <= ts && (oc->hi == UINT64_MAX || ts < oc->end_mono))
			return oc;
	}
	return NULL;
}

/* What the session says of the process now. */
static inline struct cycle_proc cycle_proc_now(const struct proc_cycles *pc)
{
	struct cycle_proc p = pc->who;

	pc->env->proc(pc->env->ctx, pc->t, &p);
	return p;
}

/* The cycle's trace file made, its first launch's (cycle_write.c); NULL: the cycle is lost. */
struct trace *cycle_trace_open(struct proc_cycles *pc, struct open_cycle *oc);

/*
 * The cycle's trace file, made when first needed; NULL once the cycle is lost.
 * Inline: every launch asks, and only its cycle's first makes the file.
 */
static inline struct trace *cycle_trace(struct proc_cycles *pc, struct open_cycle *oc)
{
	if (oc->t || oc->write_err)
		return oc->t;
	return cycle_trace_open(pc, oc);
}
/*
 * Writes open cycle i and lets it go; partial: a stop cut its last step
 * short; timed_out: its wait for GPU records ran out (cycle_write.c). 0.
 */
int cycle_write(struct proc_cycles *pc, size_t i, uint64_t end_mono, bool partial,
		bool timed_out);
/* Brings the mirror to step at ts, past steps whose boundaries were lost (proc_cycles.c). */
int cycle_advance(struct proc_cycles *pc, uint64_t step, uint32_t phase, uint64_t ts, pid_t tid);

#endif /* CORE_CYCLES_CYCLES_INT_H */
