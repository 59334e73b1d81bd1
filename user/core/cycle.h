/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The loader's mirror of one process's schedule: which step and phase it is
 * in, which cycles have a trace open, and when each is written. The phases
 * come from BPF with each step boundary; a cycle begins with the first
 * warmup or active step after a step that did not record (or ended a cycle),
 * its trace opens when its first active step begins, and it is written when
 * its last active step ends (after a short grace for launches still in
 * flight). A stop during an active step writes the partial cycle. Launches
 * belong to the cycle whose steps hold theirs, so cycles never overlap.
 */
#ifndef CYCLE_H
#define CYCLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "cuprobe.h"
#include "schedule.h"

struct target;
struct proc_cycles;

struct cycle_env {
	const char *out;		/* -o folder */
	long run_base;			/* cycle k goes to OUT/run_<run_base + k> */
	const char *host;
	int64_t mono_to_real;
	struct schedule sched;		/* fills step boundaries lost on the way; no --schedule:
					 * one endless active window */
	bool steps;			/* --step given: steps are spans, stops are partial */
	uint64_t grace_ns;		/* a finished cycle waits this long for stragglers */
	double probe_ns;		/* measured cost of one launch probe hit, < 0: unknown */
	bool cupti;			/* join launches to the agent's GPU records */
	uint64_t cupti_wait_ns;		/* how long a cycle waits for its GPU records */
};

/* A process's counters at a moment: a step boundary, or the stop. */
struct cycle_counts {
	uint64_t hits;		/* launch probe hits */
	uint64_t drops;		/* launches lost */
	uint64_t nested;	/* nested entries skipped */
};

struct cycle_status {
	uint64_t step;
	uint32_t phase;
	uint32_t cycle;
	uint64_t launches;	/* in this process, all cycles */
	uint64_t written;	/* cycles written */
};

/* t's comm, rank and world size are read when a trace opens. Step 0 begins at start_mono. */
struct proc_cycles *proc_cycles__new(const struct cycle_env *env, const struct target *t,
				     uint64_t start_mono);
/* Frees; what is still open is dropped (proc_cycles__stop writes it). */
void proc_cycles__free(struct proc_cycles *pc);

/* Whether the launch's step is one this mirror has not seen begin yet. */
bool proc_cycles__ahead(const struct proc_cycles *pc, const struct launch_event *e);
/*
 * A launch, for the cycle whose steps hold its step. A launch whose step
 * boundary never came (it was lost) first brings the mirror to its step.
 */
int proc_cycles__launch(struct proc_cycles *pc, const struct launch_event *e, const char *kernel,
			bool unnamed, uint64_t correlation);
void proc_cycles__thread(struct proc_cycles *pc, const struct thread_event *e);
/* A chunk of the agent's records for this process (--cupti). */
void proc_cycles__agent_chunk(struct proc_cycles *pc, const void *data, size_t len);
/* The agent flushed a window at or after ts (its records are all in). */
bool proc_cycles__flushed_since(const struct proc_cycles *pc, uint64_t ts);
/* A step boundary: spans, cycle ends and starts. Returns -errno when a trace cannot be made. */
int proc_cycles__step(struct proc_cycles *pc, const struct step_event *e);
/* Writes finished cycles whose grace has passed (all of them when now is UINT64_MAX). */
int proc_cycles__flush(struct proc_cycles *pc, uint64_t now);
/*
 * The recording stops: every open cycle is written, the running one marked
 * partial. c: the process's counters now (NULL: unknown, the process is gone).
 */
int proc_cycles__stop(struct proc_cycles *pc, uint64_t now, const struct cycle_counts *c);
void proc_cycles__status(const struct proc_cycles *pc, struct cycle_status *st);

/* The phase wants launch probes attached: warmup absorbs the attach. */
static inline bool phase_probes(uint32_t phase)
{
	return phase == PHASE_WARMUP || phase_records(phase);
}

#endif /* CYCLE_H */
