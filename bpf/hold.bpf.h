/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The hold: stop the calling process until the loader has probed what it
 * just mapped, for the library-map probe and for exec of a followed process.
 *
 * A stop is sent only when the event that asks for the matching SIGCONT is
 * certain to reach the loader: the ring record is reserved first, and a
 * reserved record cannot fail to submit. Each stop is counted in
 * proc_state.stops before it is sent and answered by the loader in
 * proc_conf.holds_answered, so that whoever outlives the loader (the
 * guardian) can tell which processes are still held. A hold left unanswered
 * for HOLD_STALE_NS means the loader is not running (stopped, starved): no
 * new hold is made until it has caught up, so a stalled cuprobe cannot keep
 * a process stopped; the event still tells the loader to look.
 */
#ifndef HOLD_BPF_H
#define HOLD_BPF_H

#include "maps.bpf.h"
#include "hold.h"

#define SIGSTOP 19

/* type: REC_LIBMAP, REC_EXEC or REC_CAPTURE. Never holds a process nobody could account for. */
static __always_inline void hold_and_tell(__u32 tgid, __u32 type)
{
	struct proc_state *ps = bpf_map_lookup_elem(&proc_state, &tgid);
	struct proc_conf *conf = bpf_map_lookup_elem(&proc_conf, &tgid);
	struct libmap_event *e;
	__u64 now;

	if (!ps)
		return;
	e = bpf_ringbuf_reserve(&ctrl, sizeof(*e), 0);
	if (!e) {
		/* Not held: the loader sees lost_ctrl move and rescans the maps. */
		__sync_fetch_and_add(&ps->lost_ctrl, 1);
		return;
	}
	now = bpf_ktime_get_ns();
	e->type = type;
	e->tgid = tgid;
	e->ts_ns = now;
	e->held = 0;
	e->pad = 0;
	e->seq = ps->stops;
	if (hold_on_libmap && conf && ps->stops > conf->holds_answered &&
	    now - ps->last_stop_ns > HOLD_STALE_NS) {
		__sync_fetch_and_add(&ps->holds_skipped, 1);
	} else if (hold_on_libmap && conf) {
		ps->last_stop_ns = now;
		e->seq = __sync_fetch_and_add(&ps->stops, 1) + 1;
		e->held = !bpf_send_signal(SIGSTOP);
	}
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
}

#endif /* HOLD_BPF_H */
