// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The step probe: advances a process's step and evaluates its schedule here,
 * in the kernel, so that a launch knows the phase of its step at entry
 * without a round trip to the loader.
 */
#include "maps.bpf.h"
#include <bpf/bpf_tracing.h>

SEC("uprobe")
int step_hit(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, phase;
	struct proc_state *ps;
	struct proc_conf *conf;
	struct launch_slot *sl;
	struct step_event *e;
	__u64 hits, step, state;

	ps = bpf_map_lookup_elem(&proc_state, &tgid);
	conf = bpf_map_lookup_elem(&proc_conf, &tgid);
	if (!ps || !conf)
		return 0;
	hits = __sync_fetch_and_add(&ps->step_hits, 1) + 1;
	if (conf->step_every > 1 && hits % conf->step_every)
		return 0;
	step = conf->step_every > 1 ? hits / conf->step_every : hits;
	/* A new schedule counts from this step (it is step 0 of the new plan), or from 0. */
	if (ps->gen != conf->gen) {
		ps->gen = conf->gen;
		ps->base = conf->flags & CONF_ABS_STEPS ? 0 : step;
	}
	phase = schedule_action(&conf->sched, step - ps->base);
	/*
	 * The boundary goes out before the new state is published, so that any
	 * launch that sees the new step was made after its boundary was in the
	 * ctrl ring. A lost boundary shows as a gap in the step numbers.
	 */
	e = bpf_ringbuf_reserve(&ctrl, sizeof(*e), 0);
	if (e) {
		e->type = REC_STEP;
		e->tgid = tgid;
		e->tid = (__u32)id;
		e->step = step;
		e->ts_ns = bpf_ktime_get_ns();
		e->phase = phase;
		e->pad = 0;
		e->launch_hits = ps->launch_hits;
		sl = slot_at(ps->slot);
		if (sl && sl->tgid == tgid)
			e->launch_hits += sl->launch_hits;
		e->drops = ps->drops;
		e->nested = ps->nested;
		e->stale = ps->stale;
		bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
	} else {
		__sync_fetch_and_add(&ps->lost_ctrl, 1);
	}
	state = pack_state(step, conf->link_gen, phase);
	ps->state = state;
	sl = slot_at(ps->slot);
	if (sl && sl->tgid == tgid)
		sl->state = state;
	return 0;
}
