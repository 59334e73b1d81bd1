// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The library-map hold: a probe on the dynamic linker's _dl_debug_state, which
 * runs after each dlopen/dlclose has mapped its objects and before their
 * constructors. It stops the process so that the loader can probe the new
 * libraries before their first launch.
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
#include "maps.bpf.h"
#include <bpf/bpf_tracing.h>

#define SIGSTOP 19

SEC("uprobe")
int libmap(struct pt_regs *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct libmap_event *e;
	struct proc_state *ps;
	struct proc_conf *conf;
	__u64 now;

	(void)ctx;
	/* Never hold a process whose hold nobody could account for. */
	ps = bpf_map_lookup_elem(&proc_state, &tgid);
	if (!ps)
		return 0;
	e = bpf_ringbuf_reserve(&ctrl, sizeof(*e), 0);
	if (!e) {
		/* Not held: the loader sees lost_ctrl move and rescans the maps. */
		__sync_fetch_and_add(&ps->lost_ctrl, 1);
		return 0;
	}
	now = bpf_ktime_get_ns();
	e->type = REC_LIBMAP;
	e->tgid = tgid;
	e->ts_ns = now;
	e->held = 0;
	e->pad = 0;
	e->seq = ps->stops;
	conf = bpf_map_lookup_elem(&proc_conf, &tgid);
	if (hold_on_libmap && conf && ps->stops > conf->holds_answered &&
	    now - ps->last_stop_ns > HOLD_STALE_NS) {
		__sync_fetch_and_add(&ps->holds_skipped, 1);
	} else if (hold_on_libmap && conf) {
		ps->last_stop_ns = now;
		e->seq = __sync_fetch_and_add(&ps->stops, 1) + 1;
		e->held = !bpf_send_signal(SIGSTOP);
	}
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
	return 0;
}
