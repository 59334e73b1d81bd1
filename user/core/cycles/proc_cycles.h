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
#ifndef CORE_CYCLES_PROC_CYCLES_H
#define CORE_CYCLES_PROC_CYCLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "core/cycles/cycle_types.h"
#include "launch.h"
#include "schedule.h"
#include "step.h"

struct target;
struct proc_cycles;
struct graph_budget;

/*
 * What the mirror reads of its process, asked of the session (cycle_env.proc)
 * as it needs it: who it is for messages and traces, and the facts a trace
 * says. The session's struct target stays the session's.
 */
struct cycle_proc {
	pid_t pid;
	const char *comm;	/* kept by the session: read again at each message */
	int rank, world_size;	/* from RANK / WORLD_SIZE, -1 when unset */
	bool agent_found;	/* the agent is in the process (--cupti) */
	bool no_driver;		/* it has launch APIs but no CUDA driver's */
	/* An attach of launch probes is out (attaching) for the recording step warm_step,
	 * which began at warm_ts (0: none known). */
	bool attaching;
	uint64_t warm_step, warm_ts;
};

struct cycle_env {
	const char *host;
	int64_t mono_to_real;
	uint64_t grace_ns;		/* a finished cycle waits this long for stragglers */
	double probe_ns;		/* measured cost of one launch probe hit, < 0: unknown */
	uint64_t cupti_wait_ns;		/* how long a cupti cycle waits for its GPU records */
	/* The session's, called on its thread. */
	void *ctx;
	/* What the mirror reads of t (struct target is the session's, opaque here). */
	void (*proc)(void *ctx, const struct target *t, struct cycle_proc *p);
	/* The mode of cycle k, asked when it begins. */
	enum window_mode (*cycle_mode)(void *ctx, const struct target *t, uint32_t k);
	/* The folder for cycle k's trace (made by the mirror). 0 or -errno. */
	int (*cycle_dir)(void *ctx, const struct target *t, uint32_t k, char *buf, size_t len);
	void (*step_done)(void *ctx, const struct target *t, const struct cycle_step_info *si);
	void (*cycle_done)(void *ctx, const struct target *t, const struct cycle_info *ci);
	/* Cycle k reached a bound: nothing more is written in it; the window may end now. */
	void (*cycle_cut)(void *ctx, const struct target *t, uint32_t k);
	struct cycle_bounds bounds;
	struct out_mode out;
	struct stacks *stacks;		/* --stack: traces write launches' stacks; NULL without */
	struct graph_budget *graphs;	/* what all graph stores may hold (graph_store.h) */
};

/* A process's counters at a moment: a step boundary, or the stop. */
struct cycle_counts {
	uint64_t hits;		/* launch probe hits */
	uint64_t drops;		/* launches lost */
	uint64_t nested;	/* nested entries skipped */
	uint64_t stale;		/* hits of an earlier window's links */
};

/* What a process's steps are. */
enum cycle_clock {
	CLOCK_ONE,	/* none: the whole run is one cycle */
	CLOCK_STEPS,	/* hits of a step probe: launches are placed by their step */
	CLOCK_SLICES,	/* time slices stand in for steps: launches are placed by their time */
};

/*
 * t's comm, rank and world size are read when a trace opens (cycle_env.proc). Step 0 begins
 * at start_mono under sched (which also fills boundaries lost on the way).
 * With steps or slices, each is a span and a stop is partial.
 */
struct proc_cycles *proc_cycles__new(const struct cycle_env *env, const struct target *t,
				     uint64_t start_mono, const struct schedule *sched,
				     enum cycle_clock clock);
/* A new schedule, counted from step base. */
void proc_cycles__set_schedule(struct proc_cycles *pc, const struct schedule *sched,
			       uint64_t base);
/*
 * --step torch: a record_function range's begin or end. A range begun in a
 * recorded step is a user_annotation span in that step's trace when it ends
 * (torch.profiler's own ProfilerStep# ranges aside: cuprobe writes its own).
 */
void proc_cycles__range(struct proc_cycles *pc, const struct range_event *e);
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
/*
 * What the process's graphs hold (graph_store.h): a graph call's return, and
 * a launch made into a capture, whatever the phase; -ENOMEM.
 */
struct graph_event;
struct graph_store_stats;
int proc_cycles__graph(struct proc_cycles *pc, const struct graph_event *e, const char *kernel);
int proc_cycles__captured(struct proc_cycles *pc, const struct launch_event *e,
			  const char *kernel);
void proc_cycles__graph_stats(const struct proc_cycles *pc, struct graph_store_stats *st);
/* A chunk of the agent's records for this process (--cupti). */
void proc_cycles__agent_chunk(struct proc_cycles *pc, const void *data, size_t len);
/* Whether the process's agent sent anything (GPU records may be in its cycles). */
bool proc_cycles__agent_heard(const struct proc_cycles *pc);
/* The agent flushed a window at or after ts (its records are all in). */
bool proc_cycles__flushed_since(const struct proc_cycles *pc, uint64_t ts);
/*
 * A step boundary: spans, cycle ends and starts. Returns -errno when no more
 * cycles can be kept open; a trace that cannot be made loses its cycle (the
 * cycle_done hook hears err), and is no error here.
 */
int proc_cycles__step(struct proc_cycles *pc, const struct step_event *e);
/*
 * Writes finished cycles whose grace has passed (all of them when now is
 * UINT64_MAX). One that cannot be written is lost, told to cycle_done. 0.
 */
int proc_cycles__flush(struct proc_cycles *pc, uint64_t now);
/*
 * The recording stops: every open cycle is written, the running one marked
 * partial. c: the process's counters now (NULL: unknown, the process is gone).
 */
int proc_cycles__stop(struct proc_cycles *pc, uint64_t now, const struct cycle_counts *c);
void proc_cycles__status(const struct proc_cycles *pc, struct cycle_status *st);
/*
 * The cycle recording step, which began at ts, had no launch probes until
 * since (their attach came late): said in its trace (unprobed_ns). false when
 * that cycle is written already. Session's thread.
 */
bool proc_cycles__unprobed(struct proc_cycles *pc, uint64_t step, uint64_t ts, uint64_t since);
/* A hold of the process ended after ns: counted in its next trace. Session's thread. */
void proc_cycles__hold(struct proc_cycles *pc, uint64_t ns);
/* The running step's phase. */
uint32_t proc_cycles__phase(const struct proc_cycles *pc);
/* The phase of the step k steps after the running one, as the schedule says (steps only). */
uint32_t proc_cycles__phase_ahead(const struct proc_cycles *pc, uint64_t k);

#endif /* CORE_CYCLES_PROC_CYCLES_H */
