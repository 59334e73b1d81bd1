/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A process cuprobe records, as the session's thread knows it: who it is,
 * whether it lives, its schedule and cycles, its holds, and the facts the
 * prober last reported about its probes. Written by the session's thread
 * only; the probes themselves (probeset.h) belong to the prober.
 */
#ifndef CORE_SESSION_TARGET_H
#define CORE_SESSION_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "core/probes/probeset.h"
#include "core/session/session_types.h"
#include "core/steps/step_slices.h"
#include "proc_state.h"

struct proc_cycles;

struct target {
	pid_t pid;
	int pidfd;		/* readable once the process exits */
	char comm[64];
	int rank, world_size;	/* from RANK / WORLD_SIZE, -1 when unset */
	bool child;		/* started by cuprobe: reap it */
	bool exec_prepared;	/* its probeset was made for the program it is about to exec */
	bool exec_pending;	/* it ran a new program while a scan was out: decided after it */
	bool adopted;		/* a followed process's child */
	uint64_t scan_due;	/* a vfork child: scanned then, had it run no program; 0: none */
	bool prereg;		/* after its exec's scan: its program's launch files, before it maps them */
	bool exited;
	bool gone;		/* exited or detached: its cycles are written, its probes going */
	int status;		/* wait status when child */
	struct target_plan plan;
	struct proc_conf conf;	/* what BPF runs for it */
	enum window_mode mode;	/* the running window's */
	bool asked;		/* session__window asked for the next window, in asked_mode */
	enum window_mode asked_mode;
	struct step_slices slices;	/* time slices: without a step probe (plan.slice_ns) */
	struct proc_cycles *cycles;
	struct probeset *probes;	/* the prober's: handed over in jobs, never read here */
	struct probe_facts facts;	/* the prober's last report */
	struct probe_want want;	/* what the schedule asks the prober for */
	bool had_links;		/* launch links were attached before (their generation) */
	bool one_trap;		/* its runtime's kernel launches are recorded at the driver's probe */
	bool one_trap_graphs;	/* and its runtime's graph replays */
	bool told_waiting;	/* said that no CUDA library is mapped yet */
	bool told_step;		/* said while it runs that its step probe is not found */
	bool asking_step;	/* that is said when the prober answers with the close names */
	size_t step_nobjs;	/* its objects searched for it, at step_nobjs_at */
	uint64_t step_nobjs_at;
	unsigned int jobs;	/* jobs about it still with the prober */
	unsigned int attaching;	/* of them, attaches of launch probes */
	bool scanning;		/* a scan is with the prober */
	bool walking;		/* a JOB_WALK is with the prober */
	bool rescan;		/* and another is wanted after it */
	uint64_t warm_step, warm_ts;	/* an active step to check against the attach, once known */
	/* The library-map hold: the latest stop BPF counted, and whether it is answered. */
	uint64_t hold_seq;
	uint64_t hold_since;	/* CLOCK_MONOTONIC of the stop; 0 when none waits */
	bool held;		/* that stop was sent (not only counted) */
	uint64_t hold_ts;	/* BPF's CLOCK_MONOTONIC of the first stop not yet answered */
	uint64_t lost_ctrl;	/* proc_state.lost_ctrl last seen */
	/* Early attach (session_lead.c): the attach's and the step's measured lengths. */
	uint64_t attach_ns;	/* the longest launch attach seen, submit to answer; 0: none yet */
	uint64_t attach_sent;	/* when the launch attach with the prober was submitted */
	uint64_t step_ns;	/* the latest step's length */
	uint64_t step_ts;	/* when the latest step began */
	uint32_t lead;		/* steps before warmup the launch probes go in */
	bool told_lead;		/* said once */
	bool leading;		/* probes in ahead of a cycle whose mode is not yet asked */
	enum window_mode lead_mode; /* then: the mode that cycle is expected to have */
	/*
	 * Graphs: launch probes stay in while captures are open, and a while
	 * after the latest ended (session_holds.c), for the nodes of the graphs.
	 */
	bool window_on;		/* the schedule wants launch probes (session_want_probes' on) */
	bool capture_probes;	/* they are in for captures too */
	bool capture_hold;	/* a capture's hold waits for them */
	uint64_t capture_last;	/* when the latest capture began or ended */
	bool python;		/* --stack: BPF walks its CPython frames */
	bool python_told;	/* said that its Python cannot be walked */
};

/*
 * Checks that pid names a process cuprobe may record: one that exists, is
 * not a kernel thread, is a process and not one of its threads, and is not
 * cuprobe itself. 0, or -errno with a message in msg that says what to do.
 */
int target_check_pid(pid_t pid, char *msg, size_t len);

/* Fills t for pid: opens a pidfd, reads comm and rank. 0 or -errno (-ESRCH: no such process). */
int target__init(struct target *t, pid_t pid, bool child);
/* Re-reads comm, rank and world size (after exec). */
void target__refresh_identity(struct target *t);
/* What the mirror reads of t (cycle_env's proc hook; cycles/ does not see struct target). */
struct cycle_proc;
void target__cycle_proc(void *ctx, const struct target *t, struct cycle_proc *p);
/* What front-ends see of t (session_types.h), copied into v. Session's thread. */
void target__view(const struct target *t, struct session_target *v);
void target__release(struct target *t);

#endif /* CORE_SESSION_TARGET_H */
