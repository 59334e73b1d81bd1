/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Per-process schedule state, and the step probe that advances it. The
 * schedule is evaluated here, in the kernel, so a launch knows the phase of
 * its step at entry without a round trip to the loader.
 */
#ifndef SCHEDULE_BPF_H
#define SCHEDULE_BPF_H

#include "schedule.h"

/* --schedule; with no --step the loader creates no state: the run is one cycle. */
const volatile struct schedule sched = {};
/* Count one step every step_every hits of the step probe. */
const volatile __u32 step_every = 1;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct proc_state);
} proc_state SEC(".maps");

/*
 * The step and phase a launch belongs to, counting the hit. Without a step
 * probe a process has no entry: the whole run is step 0, recorded.
 */
static __always_inline void launch_phase(__u32 tgid, __u32 *step, __u32 *phase)
{
	struct proc_state *ps = bpf_map_lookup_elem(&proc_state, &tgid);
	__u64 st = PHASE_RECORD;

	/* One atomic per hit: a process's own count, else the shared one. */
	if (ps) {
		__sync_fetch_and_add(&ps->launch_hits, 1);
		st = ps->state;
	} else {
		__sync_fetch_and_add(&counters.hits, 1);
	}
	*step = st >> 8;
	*phase = st & 0xff;
}

SEC("uprobe")
int step_hit(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, every = step_every ?: 1;
	struct schedule s;
	struct step_event e;
	struct proc_state *ps;
	__u64 hits, step;

	ps = bpf_map_lookup_elem(&proc_state, &tgid);
	if (!ps)
		return 0;
	hits = __sync_fetch_and_add(&ps->hits, 1) + 1;
	if (hits % every)
		return 0;
	step = hits / every;
	/* Field by field: each read of the volatile rodata must stay a load. */
	s.skip_first = sched.skip_first;
	s.skip_first_wait = sched.skip_first_wait;
	s.wait = sched.wait;
	s.warmup = sched.warmup;
	s.active = sched.active;
	s.repeat = sched.repeat;

	e.type = REC_STEP;
	e.tgid = tgid;
	e.tid = (__u32)id;
	e.step = step;
	e.ts_ns = bpf_ktime_get_ns();
	e.phase = schedule_action(&s, step);
	e.pad = 0;
	e.launch_hits = ps->launch_hits;
	/*
	 * The boundary goes out before the new state is published, so that any
	 * launch that sees the new step follows it in the ring buffer.
	 */
	if (bpf_ringbuf_output(&events, &e, sizeof(e), BPF_RB_FORCE_WAKEUP))
		__sync_fetch_and_add(&counters.drops, 1);
	ps->state = pack_state(step, e.phase);
	return 0;
}

#endif /* SCHEDULE_BPF_H */
