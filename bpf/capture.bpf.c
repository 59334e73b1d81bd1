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
 * The graph calls (graph.h) and the ends are told to the loader at their
 * return, when they succeeded, with what they made: it keeps what each
 * graph holds. A capture that begins in a process with no launch probe in
 * holds it (hold.bpf.h) until the loader has put them in: the launches
 * into the capture are the graph's nodes.
 *
 * This file is built with -mcpu=v3 (32-bit atomics).
 */
#include "maps.bpf.h"
#include <bpf/bpf_tracing.h>
#include "graph.h"
#include "hold.bpf.h"

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

/* A graph call (or an end) in flight, by thread and stack pointer: filled at entry. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 1024);
	__type(key, struct begin_key);
	__type(value, struct graph_event);
} graph_calls SEC(".maps");

/* Capture ids handed out, the session's; captured streams or events not kept (map full). */
__u32 capture_seq;
__u64 capture_full;
/* Graph calls that succeeded and could not be told: the events ring was full. */
__u64 graph_lost;

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
static __always_inline __u32 end_capture(struct pt_regs *ctx, struct proc_state *ps, __u32 api,
					 __u32 tgid, __u32 tid)
{
	struct capture_stream *cs;
	struct capture_key k;
	struct end_ctx c = { .tgid = tgid };

	if (!capture_key_of(&k, tgid, tid, PT_REGS_PARM1(ctx), capture_api_ptsz(api)))
		return 0;
	cs = bpf_map_lookup_elem(&capture_streams, &k);
	if (!cs || !(cs->flags & CAPTURE_F_ORIGIN))
		return 0;
	c.id = cs->id;
	bpf_for_each_map_elem(&capture_streams, end_stream, &c, 0);
	bpf_for_each_map_elem(&capture_events, end_event, &c, 0);
	open_add(ps, tgid, -1);
	return c.id;
}

/* A kernel node's params at p, as the API's struct has them (graph.h). */
static __always_inline void kernel_params(struct graph_event *ev, __u32 api, __u64 p)
{
	struct graph_kernel_params kp = {};
	bool v2 = api == CAP_cuGraphAddKernelNode_v2 || api == CAP_cuGraphKernelNodeSetParams_v2 ||
		  api == CAP_cuGraphExecKernelNodeSetParams_v2;

	if (v2 ? bpf_probe_read_user(&kp, sizeof(kp), (void *)p) :
		 bpf_probe_read_user(&kp, __builtin_offsetof(struct graph_kernel_params, kern), (void *)p))
		return;
	ev->func = kp.func;
	if (!kp.func && kp.kern) {
		ev->func = kp.kern;
		ev->flags |= GRAPH_F_KERNEL_HANDLE;
	}
	__builtin_memcpy(ev->grid, kp.grid, sizeof(ev->grid));
	__builtin_memcpy(ev->block, kp.block, sizeof(ev->block));
	ev->shmem = kp.shmem;
}

/* A copy node's bytes and kind, as its API gives them. */
static __always_inline void copy_args(struct pt_regs *ctx, struct graph_event *ev, __u32 api)
{
	__u64 v[3] = {};

	switch (capture_graph_copy(api)) {
	case GCOPY_3D_RT:
		/* cudaExtent { width, height, depth } at 128, the kind at 152 */
		if (!bpf_probe_read_user(v, sizeof(v), (void *)(PT_REGS_PARM5(ctx) + 128))) {
			ev->bytes = v[0] * v[1] * v[2];
			bpf_probe_read_user(&ev->kind, sizeof(ev->kind),
					    (void *)(PT_REGS_PARM5(ctx) + 152));
		}
		break;
	case GCOPY_3D_DRV:
		if (!bpf_probe_read_user(v, sizeof(v), (void *)(PT_REGS_PARM5(ctx) + 176)))
			ev->bytes = v[0] * v[1] * v[2];
		break;
	case GCOPY_1D:
		/* count is the 7th argument, on the stack; the kind the 8th, or the 9th past an offset */
		if (!bpf_probe_read_user(v, sizeof(v), (void *)(PT_REGS_SP(ctx) + 8))) {
			ev->bytes = v[0];
			ev->kind = api == CAP_cudaGraphAddMemcpyNode1D ? (__u32)v[1] : (__u32)v[2];
		}
		break;
	default:
		break;
	}
}

/* A memset node's bytes: elementSize at 20, width at 24, height at 32, in both APIs' struct. */
static __always_inline void set_args(struct graph_event *ev, __u64 p)
{
	__u64 v[3] = {};

	if (!bpf_probe_read_user(v, sizeof(v), (void *)(p + 16)))
		ev->bytes = (v[0] >> 32) * v[1] * (v[2] ? v[2] : 1);
}

/* A graph call's arguments, kept for its return. */
static __always_inline void graph_enter(struct pt_regs *ctx, __u32 api, __u32 tgid, __u32 tid,
					__u32 capture)
{
	struct begin_key bk = { .tid = tid, .sp = PT_REGS_SP(ctx) };
	enum graph_op op = capture_graph_op(api);
	struct graph_event ev = {};

	ev.type = REC_GRAPH;
	ev.api = api;
	ev.tgid = tgid;
	ev.tid = tid;
	switch (op) {
	case GOP_CAPTURED:
		if (!capture)
			return; /* the runtime's end ended it already, or nothing was captured */
		ev.capture = capture;
		ev.out_ptr = PT_REGS_PARM2(ctx);
		break;
	case GOP_CREATE:
	case GOP_CLONE:
	case GOP_INSTANTIATE:
		ev.out_ptr = PT_REGS_PARM1(ctx);
		ev.a = PT_REGS_PARM2(ctx);
		break;
	case GOP_ADD_KERNEL:
	case GOP_ADD_COPY:
	case GOP_ADD_SET:
	case GOP_ADD_CHILD:
	case GOP_ADD_OTHER:
		ev.out_ptr = PT_REGS_PARM1(ctx);
		ev.a = PT_REGS_PARM2(ctx);
		if (op == GOP_ADD_KERNEL)
			kernel_params(&ev, api, PT_REGS_PARM5(ctx));
		else if (op == GOP_ADD_COPY)
			copy_args(ctx, &ev, api);
		else if (op == GOP_ADD_SET)
			set_args(&ev, PT_REGS_PARM5(ctx));
		else if (op == GOP_ADD_CHILD)
			ev.b = PT_REGS_PARM5(ctx);
		break;
	case GOP_NODE_PARAMS:
		ev.b = PT_REGS_PARM1(ctx);
		kernel_params(&ev, api, PT_REGS_PARM2(ctx));
		break;
	case GOP_EXEC_PARAMS:
		ev.a = PT_REGS_PARM1(ctx);
		ev.b = PT_REGS_PARM2(ctx);
		kernel_params(&ev, api, PT_REGS_PARM3(ctx));
		break;
	case GOP_UPDATE:
		ev.a = PT_REGS_PARM1(ctx);
		ev.b = PT_REGS_PARM2(ctx);
		break;
	case GOP_DESTROY:
	case GOP_EXEC_DESTROY:
		ev.a = PT_REGS_PARM1(ctx);
		break;
	default:
		return;
	}
	bpf_map_update_elem(&graph_calls, &bk, &ev, BPF_ANY);
}

/* A graph call's return: told when it succeeded, with what it made. */
static __always_inline void graph_return(struct pt_regs *ctx, __u32 tid)
{
	struct begin_key bk = { .tid = tid, .sp = PT_REGS_SP(ctx) - 8 };
	struct graph_event *in, *ev;
	void *rb;

	in = bpf_map_lookup_elem(&graph_calls, &bk);
	if (!in)
		return; /* entered before the probes were in */
	/* cudaSuccess and CUDA_SUCCESS are 0: a failed call made and changed nothing. */
	if ((__u32)PT_REGS_RC(ctx) != 0) {
		bpf_map_delete_elem(&graph_calls, &bk);
		return;
	}
	/* The events ring: in order with the handle names its kernels need, and the replays. */
	rb = events_ring();
	ev = rb ? bpf_ringbuf_reserve(rb, sizeof(*ev), 0) : NULL;
	if (!ev) {
		__sync_fetch_and_add(&graph_lost, 1);
		bpf_map_delete_elem(&graph_calls, &bk);
		return;
	}
	__builtin_memcpy(ev, in, sizeof(*ev));
	bpf_map_delete_elem(&graph_calls, &bk);
	ev->ts_ns = bpf_ktime_get_ns();
	if (ev->out_ptr && bpf_probe_read_user(&ev->out, sizeof(ev->out), (void *)ev->out_ptr))
		ev->out = 0;
	bpf_ringbuf_submit(ev, BPF_RB_NO_WAKEUP);
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
		graph_enter(ctx, api, tgid, tid, end_capture(ctx, ps, api, tgid, tid));
		break;
	case CAPTURE_GRAPH:
		graph_enter(ctx, api, tgid, tid, 0);
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

/*
 * A begin's return: the capture is open once the call succeeded, with a new
 * id; the process is held while its launch probes go in, if they are out.
 * An end's or a graph call's: told to the loader.
 */
SEC("uretprobe")
int capture_return(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, api = bpf_get_attach_cookie(ctx);
	struct begin_key bk = { .tid = (__u32)id, .sp = PT_REGS_SP(ctx) - 8 };
	struct capture_stream cs = { .flags = CAPTURE_F_ORIGIN };
	struct capture_key *in, k;
	struct proc_conf *conf;
	struct proc_state *ps;

	if (capture_api_kind(api) != CAPTURE_BEGIN) {
		graph_return(ctx, (__u32)id);
		return 0;
	}
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
	conf = bpf_map_lookup_elem(&proc_conf, &tgid);
	if (conf && conf->flags & CONF_CAPTURE_HOLD)
		hold_and_tell(tgid, REC_CAPTURE);
	return 0;
}
