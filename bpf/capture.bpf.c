// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Capture probes (capture.h): the calls that begin and end stream capture,
 * and the event calls that join another stream to one. They keep, per
 * process, which streams are captured (capture_streams) and which events
 * were recorded into them (capture_events), and the count of captures open
 * that gates the launch probe's lookup: a process with none open pays a load
 * and a branch per launch, no map lookup. These calls are made where graphs
 * are built, not per replay, so the probes stay on for the whole session,
 * like the handle probes; a process with no capture open returns at once
 * from an event probe.
 *
 * A runtime call enters its driver entry, and both are probed: every
 * update is made so that the second changes nothing (a begin whose stream
 * is captured already, an end whose stream is not), with no nested check.
 * This file is built with -mcpu=v3 (32-bit atomics).
 */
#include "maps.bpf.h"
#include <bpf/bpf_tracing.h>

/* A begin in flight, by thread and stack pointer: nested calls keep their own. */
struct begin_key {
	__u32 tid;
	__u32 pad;
	__u64 sp;	/* at entry; the return sees sp + 8 */
};

/* LRU: a begin whose return never came (longjmp, a thread killed) ages out. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, struct begin_key);
	__type(value, struct capture_key);
} begin_calls SEC(".maps");

/* Capture ids handed out, the session's; captured streams or events not kept (map full). */
__u32 capture_seq;
__u64 capture_full;

/* The process's launch slot, when it has one: the launch probe reads the count there. */
static __always_inline struct launch_slot *proc_slot(const struct proc_state *ps, __u32 tgid)
{
	struct launch_slot *sl = slot_at(ps->slot);

	return sl && sl->tgid == tgid ? sl : NULL;
}

/* Adds d to the captures open, where the launch probe may read them: both places. */
static __always_inline void open_add(struct proc_state *ps, __u32 tgid, __s32 d)
{
	struct launch_slot *sl = proc_slot(ps, tgid);

	__sync_fetch_and_add(&ps->captures_open, (__u32)d);
	if (sl)
		__sync_fetch_and_add(&sl->captures_open, (__u32)d);
}

/* A begin's stream, kept for its return: only a call that succeeded begins a capture. */
static __always_inline void begin_enter(struct pt_regs *ctx, __u32 api, __u32 tgid, __u32 tid)
{
	struct begin_key bk = { .tid = tid, .sp = PT_REGS_SP(ctx) };
	struct capture_key k;

	if (capture_key_of(&k, tgid, tid, PT_REGS_PARM1(ctx), capture_api_ptsz(api)))
		bpf_map_update_elem(&begin_calls, &bk, &k, BPF_ANY);
}

struct end_ctx {
	__u32 tgid;
	__u32 id;
};

static long end_stream(struct bpf_map *map, struct capture_key *k, struct capture_stream *v,
		       struct end_ctx *c)
{
	if (k->tgid == c->tgid && v->id == c->id)
		bpf_map_delete_elem(&capture_streams, k);
	return 0;
}

static long end_event(struct bpf_map *map, struct capture_key *k, struct capture_event_mark *v,
		      struct end_ctx *c)
{
	if (k->tgid == c->tgid && v->id == c->id)
		bpf_map_delete_elem(&capture_events, k);
	return 0;
}

/*
 * The end of the capture that began on the stream: every stream joined to
 * it and every event recorded in it leave with it. An end on a joined
 * stream ends nothing (CUDA refuses it), nor one on a stream not captured.
 * Ended at entry: the thread that ends it launches nothing into it meanwhile.
 */
static __always_inline void end_capture(struct pt_regs *ctx, struct proc_state *ps, __u32 api,
					__u32 tgid, __u32 tid)
{
	struct capture_stream *cs;
	struct capture_key k;
	struct end_ctx c = { .tgid = tgid };

	if (!capture_key_of(&k, tgid, tid, PT_REGS_PARM1(ctx), capture_api_ptsz(api)))
		return;
	cs = bpf_map_lookup_elem(&capture_streams, &k);
	if (!cs || !(cs->flags & CAPTURE_F_ORIGIN))
		return;
	c.id = cs->id;
	bpf_for_each_map_elem(&capture_streams, end_stream, &c, 0);
	bpf_for_each_map_elem(&capture_events, end_event, &c, 0);
	open_add(ps, tgid, -1);
}

/* (event, stream): the event is its capture's while the stream is captured; else no one's. */
static __always_inline void record_event(struct pt_regs *ctx, __u32 api, __u32 tgid, __u32 tid)
{
	struct capture_key ek = { .tgid = tgid, .stream = PT_REGS_PARM1(ctx) }, sk;
	struct capture_stream *cs = NULL;

	if (capture_key_of(&sk, tgid, tid, PT_REGS_PARM2(ctx), capture_api_ptsz(api)))
		cs = bpf_map_lookup_elem(&capture_streams, &sk);
	if (cs) {
		struct capture_event_mark m = { .id = cs->id };

		if (bpf_map_update_elem(&capture_events, &ek, &m, BPF_ANY))
			__sync_fetch_and_add(&capture_full, 1);
	} else {
		bpf_map_delete_elem(&capture_events, &ek);
	}
}

/* (stream, event): a stream that waits on an event of a capture joins that capture. */
static __always_inline void wait_event(struct pt_regs *ctx, struct proc_state *ps, __u32 api,
				       __u32 tgid, __u32 tid)
{
	struct capture_key ek = { .tgid = tgid, .stream = PT_REGS_PARM2(ctx) }, sk;
	struct capture_event_mark *m;
	struct capture_stream cs = {};
	long err;

	m = bpf_map_lookup_elem(&capture_events, &ek);
	if (!m || !capture_key_of(&sk, tgid, tid, PT_REGS_PARM1(ctx), capture_api_ptsz(api)))
		return;
	cs.id = m->id;
	err = bpf_map_update_elem(&capture_streams, &sk, &cs, BPF_NOEXIST);
	if (!err)
		__sync_fetch_and_add(&ps->capture_joins, 1);
	else if (err != -17 /* EEXIST: captured already */)
		__sync_fetch_and_add(&capture_full, 1);
}

SEC("uprobe")
int capture_entry(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 api = bpf_get_attach_cookie(ctx), tgid = id >> 32, tid = (__u32)id;
	struct proc_state *ps = bpf_map_lookup_elem(&proc_state, &tgid);

	if (!ps)
		return 0;
	switch (capture_api_kind(api)) {
	case CAPTURE_BEGIN:
		begin_enter(ctx, api, tgid, tid);
		break;
	case CAPTURE_END:
		end_capture(ctx, ps, api, tgid, tid);
		break;
	case CAPTURE_RECORD:
		if (ps->captures_open)
			record_event(ctx, api, tgid, tid);
		break;
	case CAPTURE_WAIT:
		if (ps->captures_open)
			wait_event(ctx, ps, api, tgid, tid);
		break;
	case CAPTURE_MODE:
		__sync_fetch_and_add(&ps->capture_mode_calls, 1);
		break;
	}
	return 0;
}

/* A begin's return: the capture is open once the call succeeded, with a new id. */
SEC("uretprobe")
int capture_return(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	struct begin_key bk = { .tid = (__u32)id, .sp = PT_REGS_SP(ctx) - 8 };
	struct capture_stream cs = { .flags = CAPTURE_F_ORIGIN };
	struct capture_key *in, k;
	struct proc_state *ps;

	in = bpf_map_lookup_elem(&begin_calls, &bk);
	if (!in)
		return 0; /* entered before the probes were in */
	k = *in;
	bpf_map_delete_elem(&begin_calls, &bk);
	/* cudaSuccess and CUDA_SUCCESS are 0: a failed begin captures nothing. */
	if ((__u32)PT_REGS_RC(ctx) != 0)
		return 0;
	ps = bpf_map_lookup_elem(&proc_state, &tgid);
	/* The runtime's return after its driver's: the capture is open already. */
	if (!ps || bpf_map_lookup_elem(&capture_streams, &k))
		return 0;
	cs.id = __sync_fetch_and_add(&capture_seq, 1) + 1;
	if (bpf_map_update_elem(&capture_streams, &k, &cs, BPF_NOEXIST)) {
		__sync_fetch_and_add(&capture_full, 1);
		return 0;
	}
	__sync_fetch_and_add(&ps->captures_begun, 1);
	open_add(ps, tgid, 1);
	return 0;
}
