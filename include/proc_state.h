/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What every BPF program shares per process, in the maps bpf/maps.bpf.h
 * defines: a process's conf (the loader's: its schedule, what to follow) and
 * its state (BPF's: its step and phase, its counters), the launch slot that
 * mirrors the state for the launch probe, and the counters of processes with
 * no state of their own.
 */
#ifndef CUPROBE_PROC_STATE_H
#define CUPROBE_PROC_STATE_H

#include "schedule.h"

/* Counters of processes with no state of their own (calibration), and session-wide ones. */
struct cuprobe_counters {
	__u64 hits;	   /* launch probe hits in processes without state (calibration) */
	__u64 nested;	   /* the same for nested entries */
	__u64 drops;	   /* the same for lost launches */
	__u64 lat_misses;  /* returns with no matching entry (calls begun before attach) */
	__u64 agent_bad;   /* agent chunks with a bad length or unreadable */
	__u64 agent_drops; /* agent chunks lost: the ring buffer was full */
};

/*
 * A process's entry in the BPF map proc_conf: written by the loader only.
 * The schedule counts steps from the first step hit after gen last changed
 * (from attach, for gen 0): a new schedule, such as a window opened on
 * demand, starts at the process's next step whatever step it is at.
 */
struct proc_conf {
	struct schedule sched;
	__u32 step_every;	/* one step per this many hits of the step probe */
	__u32 gen;		/* raised with each new schedule */
	__u64 holds_answered;	/* the last libmap_event.seq the loader answered */
	__u32 flags;		/* CONF_* */
	__u32 link_gen;		/* the launch links that may record: COOKIE_GEN of theirs */
	__u32 wake_ahead;	/* a step wakes the loader this near a window (WAKE_*) */
	__u32 pad;
};

/*
 * proc_conf.wake_ahead: a step record wakes the loader when its step is in a
 * window, leaves one, or is at most this many steps before the next one's
 * first step (schedule_to_window); the others wait for the loader's poll
 * (every 100 ms at most). A wakeup is a cross-CPU interrupt and a switch to
 * the loader on the trainer's step: a wait of a million steps need not pay
 * it a million times. WAKE_EVERY: every step wakes it (the step's length,
 * and so the lead, not yet known).
 */
#define WAKE_EVERY 0xffffffffu

/*
 * Follow the process's children: BPF gives each new process the parent's
 * entries at fork (a copy of this conf, then the loader's), and holds it at
 * exec until its new program is probed.
 */
#define CONF_FOLLOW (1u << 0)
/*
 * No launch probe of the process is in: a capture that begins holds it
 * (REC_CAPTURE) until they are, so that no node of the graph is missed.
 */
#define CONF_CAPTURE_HOLD (1u << 1)
/*
 * The schedule counts from the process's first step (step 0), not from the
 * step where BPF first sees it: a window placed at given step numbers
 * (session__window_at) lands there whatever the loader's lag.
 */
#define CONF_ABS_STEPS (1u << 2)

/*
 * A process's entry in the BPF map proc_state: the loader creates it, then
 * only BPF writes it (counters with atomics, state in one store).
 */
struct proc_state {
	__u64 step_hits;   /* hits of the step probe */
	__u64 state;	   /* pack_state(step, link_gen, phase), written in one store */
	__u64 launch_hits; /* hits of the launch probes, whatever the phase */
	__u64 drops;	   /* launches lost: the events ring was full */
	__u64 nested;	   /* driver entries skipped inside a runtime call */
	__u64 stops;	   /* holds (SIGSTOP) by the library-map probe */
	__u64 lost_ctrl;   /* step, library-map or thread events lost: ctrl ring full */
	__u64 last_stop_ns; /* CLOCK_MONOTONIC of the latest hold */
	__u64 holds_skipped; /* holds not made: the previous one went unanswered too long */
	__u64 base;	   /* the step the schedule counts from */
	__u32 gen;	   /* proc_conf.gen that base belongs to */
	__u32 slot;	   /* its launch_slots index + 1, set by the loader; 0: none */
	__u64 stale;	   /* hits of launch links of an older window, not yet closed */
	__u64 learned;	   /* CUfunctions whose host stub a runtime launch showed (one trap) */
	__u64 nested_at_learned; /* nested when the latest of them was learned */
	/* Stream capture (bpf/capture.bpf.c, capture.h): */
	__u32 captures_open;	 /* begun and not yet ended: launches look their stream up */
	__u32 captures_begun;	 /* since the loader created the entry */
	__u32 capture_joins;	 /* streams joined to a capture by waiting on its event */
	__u32 capture_mode_calls; /* cudaThreadExchangeStreamCaptureMode calls (counted only) */
	/* One trap per graph replay (session_one_trap): */
	__u64 graph_nested;	 /* runtime graph replays that entered a probed cuGraphLaunch */
	__u64 graph_unnested;	 /* runtime graph replays that did not (refused before it) */
};

/*
 * proc_state.state: the step, the generation of launch links that may record
 * in it (proc_conf.link_gen, as COOKIE_GEN of their cookies, launch.h), and its
 * phase, written in one store: step << 16 | (link_gen & 0xff) << 8 | phase.
 */
static inline __u64 pack_state(__u64 step, __u32 gen, __u32 phase)
{
	return step << 16 | (__u64)(gen & 0xff) << 8 | phase;
}

static inline __u32 state_step(__u64 st)
{
	return (__u32)(st >> 16);
}

static inline __u32 state_gen(__u64 st)
{
	return (st >> 8) & 0xff;
}

static inline __u32 state_phase(__u64 st)
{
	return st & 0xff;
}

/*
 * What the launch probe reads and counts on every hit, for a process the
 * loader gave a slot: the index comes in the attach cookie (COOKIE_SLOT), so
 * no map lookup is made per hit. state mirrors proc_state.state (the step
 * probe writes both); launch_hits adds to proc_state.launch_hits (the
 * process's hits are their sum). Rare counts (drops, nested, stale) still go
 * to proc_state. One cache line each. BPF global launch_slots[], in .bss.
 */
struct launch_slot {
	__u32 tgid;	   /* the process the slot is for; another's hits use proc_state */
	__u32 captures_open; /* as proc_state.captures_open (capture probes write both) */
	__u64 state;	   /* as proc_state.state */
	__u64 launch_hits; /* hits counted here, not in proc_state */
	__u64 pad2[5];
};

/* Entries of the per-process maps (proc_conf, proc_state, runtime_ranges), and launch slots. */
#define CUPROBE_MAX_PROCS 4096

_Static_assert(sizeof(struct proc_conf) == 56, "proc_conf layout");
_Static_assert(sizeof(struct proc_state) == 144, "proc_state layout");
_Static_assert(sizeof(struct launch_slot) == 64, "launch_slot layout");
_Static_assert((CUPROBE_MAX_PROCS & (CUPROBE_MAX_PROCS - 1)) == 0, "slots are masked");

#endif /* CUPROBE_PROC_STATE_H */
