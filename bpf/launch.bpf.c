// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Launch probes: one entry program for every launch API (the attach cookie
 * says which, and whether a return probe completes the call: --latency), and
 * the return program.
 *
 * A launch is written into its CPU's stage (struct launch_stage), and a full
 * stage goes to the events ring in one record: a ring reserve and commit per
 * LAUNCH_BATCH_N launches instead of per launch. The loader empties what the
 * stages hold on every turn. A launch that finds its stage busy (another
 * probe preempted on this CPU in the middle of a write, or the loader
 * emptying it) goes to the ring alone, as every launch did before stages.
 * This file is built with -mcpu=v3 (atomic exchange).
 */
#include "maps.bpf.h"
#include <bpf/bpf_tracing.h>
#include "launch.h"
#include "launch.bpf.h"
#include "stack.bpf.h"

#define barrier() asm volatile("" ::: "memory")

/* A call waiting for its return (latency cookie), one per thread. */
struct inflight {
	__u64 sp;	/* stack pointer at entry; 0 when the slot is free */
	struct launch_event ev;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct inflight);
} inflight SEC(".maps");


/* One stage per possible CPU: the loader sets max_entries and maps it. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct launch_stage);
} stages SEC(".maps");

/* Threads already named to the loader: task storage costs nothing measurable per launch. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u8);
} threads_seen SEC(".maps");

/*
 * What the entry decided before the record is filled: the launch as another
 * API sees it (the runtime's, for a driver entry: one trap), and whether a
 * capture is open in the process (its stream is then looked up).
 */
struct as_api {
	__u32 api;
	__u32 flags;
	__u64 func;
	__u32 captures;	/* captures open in the process (capture.bpf.c) */
	__u32 stk_ok;	/* stk was read */
	/*
	 * The words at the user stack pointer, read once for the return address
	 * (called_from_runtime): with them the 7th to 9th integer arguments,
	 * which fill_args then takes from here. Each read of user memory costs
	 * about what the ktime helper does.
	 */
	__u64 stk[4];
};

/*
 * The driver entry's return address is in a runtime's code; *flags: its RR_*
 * then. The stack's first words are kept in as (as_api.stk).
 */
static __always_inline bool called_from_runtime(struct pt_regs *ctx, __u32 tgid, __u32 *flags,
						struct as_api *as)
{
	struct runtime_ranges *rr;
	__u64 ret = 0;
	__u32 i;

	rr = bpf_map_lookup_elem(&runtime_ranges, &tgid);
	if (!rr)
		return false;
	if (!bpf_probe_read_user(as->stk, sizeof(as->stk), (void *)PT_REGS_SP(ctx))) {
		as->stk_ok = 1;
		ret = as->stk[0];
	} else if (bpf_probe_read_user(&ret, sizeof(ret), (void *)PT_REGS_SP(ctx))) {
		return false;
	}
	*flags = rr->flags;
	for (i = 0; i < MAX_RUNTIME_RANGES; i++) {
		if (i >= rr->n)
			break;
		if (ret >= rr->r[i].lo && ret < rr->r[i].hi)
			return true;
	}
	return false;
}

/*
 * One trap per launch. A runtime kernel launch enters a driver entry with
 * the CUfunction it made for its host stub. While both probes are on, the
 * runtime's probe notes the call in its thread (rt_open), and the driver's
 * learns handle -> stub from it (handle_stubs) and counts itself nested.
 * Once the loader leaves the runtime's launch probes out (RR_ONE_TRAP), a
 * driver entry from a runtime whose probe did not fire is recorded as that
 * runtime's launch: its learned stub and API, else the handle (LAUNCH_F_HANDLE).
 */
struct rt_call {
	__u64 sp;	/* the runtime entry's stack pointer; 0: none open */
	__u64 stub;	/* the host stub it was given */
	__u32 api;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct rt_call);
} rt_open SEC(".maps");

struct stub_key {
	__u32 tgid;
	__u32 drv_api;
	__u64 handle;
};

struct stub_val {
	__u64 stub;
	__u32 api;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct stub_key);
	__type(value, struct stub_val);
} handle_stubs SEC(".maps");


/* Runtime launches of kernels and graphs: each enters one probed driver entry. */
static __always_inline bool rt_enters_driver(__u32 api)
{
	return api <= API_cudaGraphLaunch_ptsz;
}

/* The runtime launch a driver kernel launch stands for when no stub was learned. */
static __always_inline __u32 rt_api_of(__u32 drv)
{
	switch (drv) {
	case API_cuLaunchKernel:
		return API_cudaLaunchKernel;
	case API_cuLaunchKernel_ptsz:
		return API_cudaLaunchKernel_ptsz;
	case API_cuLaunchKernelEx:
		return API_cudaLaunchKernelExC;
	case API_cuLaunchKernelEx_ptsz:
		return API_cudaLaunchKernelExC_ptsz;
	case API_cuGraphLaunch:
		return API_cudaGraphLaunch;
	case API_cuGraphLaunch_ptsz:
		return API_cudaGraphLaunch_ptsz;
	default:
		return API__COUNT;
	}
}

/* The runtime APIs the loader leaves out: their launches all enter a kernel launch entry. */
static __always_inline bool rt_left_out(__u32 api)
{
	return api <= API_cudaLaunchKernelExC_ptsz;
}

static __always_inline __u64 launch_func(struct pt_regs *ctx, __u32 api)
{
	bool second = api == API_cudaLaunchKernelExC || api == API_cudaLaunchKernelExC_ptsz ||
		      api == API_cuLaunchKernelEx || api == API_cuLaunchKernelEx_ptsz;

	/* Two loads, not a computed offset: the verifier wants fixed ctx offsets. */
	__u64 a = PT_REGS_PARM1(ctx), b = PT_REGS_PARM2(ctx);

	barrier();
	return second ? b : a;
}

static __always_inline bool rt_is_graph(__u32 api)
{
	return api == API_cudaGraphLaunch || api == API_cudaGraphLaunch_ptsz;
}

static __always_inline void rt_enter(struct pt_regs *ctx, __u32 tgid, __u32 api)
{
	struct rt_call *rc;

	rc = bpf_task_storage_get(&rt_open, bpf_get_current_task_btf(), 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!rc)
		return;
	/*
	 * The thread's last runtime replay is still open: it never entered the
	 * driver (a runtime that refuses it first). Its probe must then stay.
	 */
	if (rc->sp && rt_is_graph(rc->api)) {
		struct proc_state *ps = bpf_map_lookup_elem(&proc_state, &tgid);

		if (ps)
			__sync_fetch_and_add(&ps->graph_unnested, 1);
	}
	rc->sp = PT_REGS_SP(ctx);
	rc->stub = launch_func(ctx, api);
	rc->api = api;
}

/*
 * A cuGraphLaunch inside the thread's open runtime replay: closed and counted
 * here, whatever the phase, so that an open replay left at the next runtime
 * launch is one that never entered the driver (rt_enter).
 */
static __always_inline bool rt_graph_close(struct pt_regs *ctx, __u32 tgid)
{
	struct rt_call *rc = bpf_task_storage_get(&rt_open, bpf_get_current_task_btf(), 0, 0);
	struct proc_state *ps;

	if (!rc || rc->sp <= PT_REGS_SP(ctx) || !rt_is_graph(rc->api))
		return false;
	rc->sp = 0;
	ps = bpf_map_lookup_elem(&proc_state, &tgid);
	if (ps)
		__sync_fetch_and_add(&ps->graph_nested, 1);
	return true;
}

/*
 * A driver entry called from a runtime: true when it is part of a launch the
 * runtime's probe recorded (learned from, and closed), or when the runtime's
 * probes are on (the call is theirs); false when it is to be recorded, as as.
 */
static __always_inline bool rt_nested(struct pt_regs *ctx, __u32 tgid, __u32 api, __u32 flags,
				      struct as_api *as)
{
	struct rt_call *rc = bpf_task_storage_get(&rt_open, bpf_get_current_task_btf(), 0, 0);
	struct stub_key k = { .tgid = tgid, .drv_api = api, .handle = launch_func(ctx, api) };
	struct stub_val *v;

	if (rc && rc->sp > PT_REGS_SP(ctx)) {
		if (rt_left_out(rc->api) && rt_api_of(api) != API__COUNT) {
			struct stub_val nv = { .stub = rc->stub, .api = rc->api };

			if (!bpf_map_update_elem(&handle_stubs, &k, &nv, BPF_NOEXIST)) {
				struct proc_state *ps = bpf_map_lookup_elem(&proc_state, &tgid);

				if (ps) {
					__sync_fetch_and_add(&ps->learned, 1);
					ps->nested_at_learned = ps->nested;
				}
			}
		}
		rc->sp = 0;
		return true;
	}
	if (rt_api_of(api) == API__COUNT)
		return true;
	/* A replay: the executable graph is the runtime's and the driver's handle alike. */
	if (api == API_cuGraphLaunch || api == API_cuGraphLaunch_ptsz) {
		if (!(flags & RR_ONE_TRAP_GRAPHS))
			return true;
		as->api = rt_api_of(api);
		as->func = k.handle;
		return false;
	}
	if (!(flags & RR_ONE_TRAP))
		return true;
	v = bpf_map_lookup_elem(&handle_stubs, &k);
	if (v) {
		as->api = v->api;
		as->func = v->stub;
	} else {
		as->api = rt_api_of(api);
		as->func = k.handle;
		as->flags = LAUNCH_F_HANDLE;
	}
	return false;
}

/*
 * The 7th and 8th integer arguments, side by side on the stack: one read into
 * the stack is cheaper than two straight into ring-buffer memory.
 */
static __always_inline void stack_args2(struct pt_regs *ctx, __u64 *a, __u64 *b)
{
	__u64 v[2] = {};

	bpf_probe_read_user(v, sizeof(v), (void *)(PT_REGS_SP(ctx) + 8));
	*a = v[0];
	*b = v[1];
}

/* The 7th to 9th integer arguments in one read: each read of user memory costs ~100 ns. */
static __always_inline void stack_args3(struct pt_regs *ctx, __u32 *a, __u64 *b, __u64 *c)
{
	__u64 v[3] = {};

	bpf_probe_read_user(v, sizeof(v), (void *)(PT_REGS_SP(ctx) + 8));
	*a = (__u32)v[0];
	*b = (__u32)v[1];
	*c = v[2];
}

static __always_inline void fill_args(struct pt_regs *ctx, struct launch_event *e,
				      const struct as_api *as)
{
	struct cuda_launch_config rc;
	struct cu_launch_config dc;

	switch (e->api) {
	case API_cudaLaunchKernel:
	case API_cudaLaunchKernel_ptsz:
	case API_cudaLaunchCooperativeKernel:
	case API_cudaLaunchCooperativeKernel_ptsz:
		/* (func, dim3 grid, dim3 block, args, shmem, stream): each dim3 in two registers. */
		e->func = PT_REGS_PARM1(ctx);
		e->grid[0] = (__u32)PT_REGS_PARM2(ctx);
		e->grid[1] = (__u32)(PT_REGS_PARM2(ctx) >> 32);
		e->grid[2] = (__u32)PT_REGS_PARM3(ctx);
		e->block[0] = (__u32)PT_REGS_PARM4(ctx);
		e->block[1] = (__u32)(PT_REGS_PARM4(ctx) >> 32);
		e->block[2] = (__u32)PT_REGS_PARM5(ctx);
		stack_args2(ctx, &e->shmem, &e->stream);
		break;
	case API_cudaLaunchKernelExC:
	case API_cudaLaunchKernelExC_ptsz:
		/* (const cudaLaunchConfig_t *config, func, args) */
		e->func = PT_REGS_PARM2(ctx);
		if (bpf_probe_read_user(&rc, sizeof(rc), (void *)PT_REGS_PARM1(ctx)))
			break;
		__builtin_memcpy(e->grid, rc.grid, sizeof(e->grid));
		__builtin_memcpy(e->block, rc.block, sizeof(e->block));
		e->shmem = rc.shmem;
		e->stream = rc.stream;
		break;
	case API_cuLaunchKernel:
	case API_cuLaunchKernel_ptsz:
		/* (f, gx, gy, gz, bx, by, bz, shmem, stream, params, extra) */
		e->func = PT_REGS_PARM1(ctx);
		e->grid[0] = PT_REGS_PARM2(ctx);
		e->grid[1] = PT_REGS_PARM3(ctx);
		e->grid[2] = PT_REGS_PARM4(ctx);
		e->block[0] = PT_REGS_PARM5(ctx);
		e->block[1] = ctx->r9;
		if (as->stk_ok) {
			e->block[2] = (__u32)as->stk[1];
			e->shmem = (__u32)as->stk[2];
			e->stream = as->stk[3];
		} else {
			stack_args3(ctx, &e->block[2], &e->shmem, &e->stream);
		}
		break;
	case API_cuLaunchKernelEx:
	case API_cuLaunchKernelEx_ptsz:
		/* (const CUlaunchConfig *config, f, params, extra) */
		e->func = PT_REGS_PARM2(ctx);
		if (bpf_probe_read_user(&dc, sizeof(dc), (void *)PT_REGS_PARM1(ctx)))
			break;
		__builtin_memcpy(e->grid, dc.grid, sizeof(e->grid));
		__builtin_memcpy(e->block, dc.block, sizeof(e->block));
		e->shmem = dc.shmem;
		e->stream = dc.stream;
		break;
	case API_cudaGraphLaunch:
	case API_cudaGraphLaunch_ptsz:
	case API_cuGraphLaunch:
	case API_cuGraphLaunch_ptsz:
		/* (exec, stream) */
		e->func = PT_REGS_PARM1(ctx);
		e->stream = PT_REGS_PARM2(ctx);
		break;
	case API_cudaMemcpyAsync:
	case API_cudaMemcpyAsync_ptsz:
		/* (dst, src, count, kind, stream) */
		e->bytes = PT_REGS_PARM3(ctx);
		e->kind = PT_REGS_PARM4(ctx);
		e->stream = PT_REGS_PARM5(ctx);
		break;
	case API_cudaMemsetAsync:
	case API_cudaMemsetAsync_ptsz:
		/* (ptr, value, count, stream) */
		e->kind = (__u32)PT_REGS_PARM2(ctx);
		e->bytes = PT_REGS_PARM3(ctx);
		e->stream = PT_REGS_PARM4(ctx);
		break;
	}
}

/*
 * A launch into a captured stream adds a node to a graph: marked, with the
 * capture's id. The stream is keyed as the probed API sees it (a _ptsz
 * entry's stream 0 is its thread's default stream).
 */
static __always_inline void capture_mark(struct launch_event *e, __u32 api)
{
	struct capture_stream *cs;
	struct capture_key k;

	if (!capture_key_of(&k, e->tgid, e->tid, e->stream, launch_api_ptsz(api)))
		return;
	cs = bpf_map_lookup_elem(&capture_streams, &k);
	if (!cs)
		return;
	e->flags |= LAUNCH_F_CAPTURED;
	e->capture = cs->id;
}

static __u64 last_wakeup_ns;

static __always_inline __u64 wakeup_flag(void *rb)
{
	__u64 now, avail = bpf_ringbuf_query(rb, BPF_RB_AVAIL_DATA);

	/* The fill the loader sizes the ring by (session_ring.c). */
	if (avail > events_high)
		events_high = avail;
	/* A wakeup per event costs ~2 us; the loader also polls on a timer. */
	if (avail < wakeup_bytes)
		return BPF_RB_NO_WAKEUP;
	/*
	 * The backlog stays above the mark while the loader drains it: a wakeup
	 * per event then would be an interrupt per launch. Once per ms is enough.
	 */
	now = bpf_ktime_get_ns();
	if (now - last_wakeup_ns < 1000000)
		return BPF_RB_NO_WAKEUP;
	last_wakeup_ns = now;
	return BPF_RB_FORCE_WAKEUP;
}

/* Counts into the process's own state, or the shared counters (calibration). */
#define COUNT(ps, field)                                                                           \
	do {                                                                                       \
		if (ps)                                                                            \
			__sync_fetch_and_add(&(ps)->field, 1);                                     \
		else                                                                               \
			__sync_fetch_and_add(&counters.field, 1);                                  \
	} while (0)

/*
 * A rare count (drops, nested, stale, lost ctrl) of a hit: a hit that came
 * by its process's slot looked up no proc_state, so it is looked up now.
 */
#define COUNT_RARE(ps, sl, tgid, field)                                                            \
	do {                                                                                       \
		struct proc_state *p_ = (ps);                                                      \
		if (!p_ && (sl))                                                                   \
			p_ = bpf_map_lookup_elem(&proc_state, &(tgid));                            \
		COUNT(p_, field);                                                                  \
	} while (0)

/*
 * Threads are named in BPF on first sight: by the time the loader reads, they
 * may be gone. A name that does not fit in the ring is asked for again.
 */
static __always_inline bool name_thread(struct proc_state *ps, struct launch_slot *sl, __u32 tgid,
					__u32 tid)
{
	struct thread_event *t;
	__u8 *seen;

	seen = bpf_task_storage_get(&threads_seen, bpf_get_current_task_btf(), 0,
				    BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!seen)
		return false;
	if (*seen)
		return true;
	t = bpf_ringbuf_reserve(&ctrl, sizeof(*t), 0);
	if (!t) {
		if (!ps && sl)
			ps = bpf_map_lookup_elem(&proc_state, &tgid);
		if (ps)
			__sync_fetch_and_add(&ps->lost_ctrl, 1);
		return false;
	}
	*seen = 1;
	t->type = REC_THREAD;
	t->tgid = tgid;
	t->tid = tid;
	t->pad = 0;
	bpf_get_current_comm(t->comm, sizeof(t->comm));
	bpf_ringbuf_submit(t, BPF_RB_NO_WAKEUP);
	return true;
}

static __always_inline void fill(struct pt_regs *ctx, struct launch_event *e, __u32 api,
				 __u32 tgid, __u32 tid, __u32 step, __u32 phase,
				 const struct as_api *as)
{
	e->type = REC_LAUNCH;
	e->api = api;
	e->tgid = tgid;
	e->tid = tid;
	e->ts_ns = bpf_ktime_get_ns();
	e->dur_ns = 0;
	e->bytes = 0;
	e->kind = 0;
	e->flags = 0;
	e->func = 0;
	e->stream = 0;
	e->shmem = 0;
	__builtin_memset(e->grid, 0, sizeof(e->grid));
	__builtin_memset(e->block, 0, sizeof(e->block));
	e->step = step;
	e->phase = phase;
	e->ustack = 0;
	e->pystack = 0;
	e->capture = 0;
	e->pad = 0;
	fill_args(ctx, e, as);
	if (as->api < API__COUNT) {
		e->api = as->api;
		e->func = as->func;
		e->flags = as->flags;
	}
	if (as->captures)
		capture_mark(e, api);
	if (stack_on)
		stack_take(ctx, e);
}

/* A full stage to the ring, as one record; false when the ring has no room. */
static __always_inline bool stage_flush(struct launch_stage *sg)
{
	void *rb = events_ring();

	if (!rb)
		return false;
	sg->b.type = REC_LAUNCH_BATCH;
	sg->b.n = LAUNCH_BATCH_N;
	return !bpf_ringbuf_output(rb, &sg->b, sizeof(sg->b), wakeup_flag(rb));
}

/*
 * The launch into the CPU's stage, which the caller holds (busy). A stage
 * left full by a ring with no room is flushed first; if it still cannot
 * go, this launch is the one lost, and counted.
 */
static __always_inline void stage_launch(struct pt_regs *ctx, struct launch_stage *sg,
					 struct proc_state *ps, struct launch_slot *sl, __u32 api,
					 __u32 tgid, __u32 tid, __u32 step, __u32 phase,
					 const struct as_api *as)
{
	__u32 n = sg->b.n;

	if (n >= LAUNCH_BATCH_N) {
		if (!stage_flush(sg)) {
			COUNT_RARE(ps, sl, tgid, drops);
			__sync_fetch_and_add(&events_lost, 1);
			return;
		}
		n = 0;
	}
	fill(ctx, &sg->b.ev[n & (LAUNCH_BATCH_N - 1)], api, tgid, tid, step, phase, as);
	sg->b.n = ++n;
	if (n == LAUNCH_BATCH_N && stage_flush(sg))
		sg->b.n = 0;
}

/*
 * --latency: the entry waits in the thread's slot for its return. A slot
 * still taken by a call further up this stack (sp above ours) is an outer
 * launch API calling an inner one: the outer call is the launch. A slot left
 * by a call whose return was never seen (sp at or below ours) is lost.
 */
static __always_inline void hold_for_return(struct pt_regs *ctx, struct proc_state *ps,
					    struct launch_slot *sl, __u32 api, __u32 tgid, __u32 tid,
					    __u32 step, __u32 phase, const struct as_api *as)
{
	struct inflight *in;
	__u64 sp = PT_REGS_SP(ctx);

	in = bpf_task_storage_get(&inflight, bpf_get_current_task_btf(), 0,
				  BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!in) {
		COUNT_RARE(ps, sl, tgid, drops);
		return;
	}
	if (in->sp && in->sp > sp)
		return;
	if (in->sp)
		COUNT_RARE(ps, sl, tgid, drops);
	fill(ctx, &in->ev, api, tgid, tid, step, phase, as);
	in->sp = sp;
}

/*
 * A launch outside the window's active steps while a capture is open: sent
 * alone, and only when it is made into a captured stream (the ring record
 * is dropped otherwise). Runs only while graphs are being captured.
 */
static __always_inline void out_of_window(struct pt_regs *ctx, struct proc_state *ps,
					  struct launch_slot *sl, __u32 api, __u32 tgid, __u32 tid,
					  __u32 step, __u32 phase, const struct as_api *as)
{
	struct launch_event *e;
	void *rb;

	rb = events_ring();
	e = rb ? bpf_ringbuf_reserve(rb, sizeof(*e), 0) : NULL;
	if (!e) {
		COUNT_RARE(ps, sl, tgid, drops);
		__sync_fetch_and_add(&events_lost, 1);
		return;
	}
	fill(ctx, e, api, tgid, tid, step, phase, as);
	if (!(e->flags & LAUNCH_F_CAPTURED)) {
		bpf_ringbuf_discard(e, BPF_RB_NO_WAKEUP);
		return;
	}
	bpf_ringbuf_submit(e, wakeup_flag(rb));
}

SEC("uprobe")
int launch_entry(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), cookie = bpf_get_attach_cookie(ctx);
	__u32 tgid = id >> 32, tid = (__u32)id, api = cookie & COOKIE_API_MASK, step, phase;
	struct launch_slot *sl = slot_at((cookie >> COOKIE_SLOT_SHIFT) & COOKIE_SLOT_MASK);
	struct proc_state *ps = NULL;
	struct as_api as = { .api = API__COUNT };
	struct launch_stage *sg;
	struct launch_event *e;
	__u64 st = PHASE_RECORD;
	__u32 rr_flags = 0;
	bool graph_nested = false;
	void *rb;
	__u32 cpu;

	if (api < API_FIRST_DRIVER && rt_enters_driver(api))
		rt_enter(ctx, tgid, api);
	else if (api == API_cuGraphLaunch || api == API_cuGraphLaunch_ptsz)
		graph_nested = rt_graph_close(ctx, tgid);

	/*
	 * One atomic per hit, and no lookup where the cookie names the process's
	 * slot; else its proc_state, else the shared counters (calibration).
	 */
	if (sl && sl->tgid != tgid)
		sl = NULL;
	if (sl) {
		__sync_fetch_and_add(&sl->launch_hits, 1);
		st = sl->state;
	} else {
		ps = bpf_map_lookup_elem(&proc_state, &tgid);
		if (ps) {
			__sync_fetch_and_add(&ps->launch_hits, 1);
			st = ps->state;
		} else {
			__sync_fetch_and_add(&counters.hits, 1);
		}
	}
	step = state_step(st);
	phase = state_phase(st);
	/*
	 * Probes stay attached from warmup to the window's end: record only its
	 * active steps. Outside them, a launch into a capture is a graph's node,
	 * which the loader keeps whatever the phase (out_of_window).
	 */
	if (!phase_records(phase) && !(sl ? sl->captures_open : ps ? ps->captures_open : 0))
		return 0;
	/* A link of an earlier window, still closing: its launches are the current links' too. */
	if ((ps || sl) && ((cookie >> COOKIE_GEN_SHIFT) & 0xff) != state_gen(st)) {
		if (!ps)
			ps = bpf_map_lookup_elem(&proc_state, &tgid);
		if (ps)
			__sync_fetch_and_add(&ps->stale, 1);
		return 0;
	}
	if (graph_nested || (api >= API_FIRST_DRIVER && called_from_runtime(ctx, tgid, &rr_flags, &as) &&
			     rt_nested(ctx, tgid, api, rr_flags, &as))) {
		COUNT_RARE(ps, sl, tgid, nested);
		return 0;
	}
	/* A load from the line the state came from: no lookup while no capture is open. */
	as.captures = sl ? sl->captures_open : ps ? ps->captures_open : 0;
	if (!phase_records(phase)) {
		out_of_window(ctx, ps, sl, api, tgid, tid, step, phase, &as);
		return 0;
	}
	cpu = bpf_get_smp_processor_id();
	sg = bpf_map_lookup_elem(&stages, &cpu);
	/* The stage remembers its latest thread: no task-storage lookup for the next launch. */
	if (!sg || sg->last_tid != tid) {
		if (name_thread(ps, sl, tgid, tid) && sg)
			sg->last_tid = tid;
	}
	if (cookie & COOKIE_LATENCY) {
		hold_for_return(ctx, ps, sl, api, tgid, tid, step, phase, &as);
		return 0;
	}
	if (sg && __sync_lock_test_and_set(&sg->busy, STAGE_PROBE) == STAGE_FREE) {
		stage_launch(ctx, sg, ps, sl, api, tgid, tid, step, phase, &as);
		/*
		 * A plain store lets go: x86 keeps stores in order, so the loader's
		 * compare-and-exchange that sees it free sees the launch too. An
		 * exchange here cost ~15 ns a launch.
		 */
		barrier();
		*(volatile __u32 *)&sg->busy = STAGE_FREE;
		return 0;
	}
	rb = events_ring();
	e = rb ? bpf_ringbuf_reserve(rb, sizeof(*e), 0) : NULL;
	if (!e) {
		COUNT_RARE(ps, sl, tgid, drops);
		__sync_fetch_and_add(&events_lost, 1);
		return 0;
	}
	fill(ctx, e, api, tgid, tid, step, phase, &as);
	bpf_ringbuf_submit(e, wakeup_flag(rb));
	return 0;
}

SEC("uretprobe")
int launch_return(struct pt_regs *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32, cpu, n;
	struct launch_stage *sg;
	struct proc_state *ps;
	struct inflight *in;
	bool stored = false;

	in = bpf_task_storage_get(&inflight, bpf_get_current_task_btf(), 0, 0);
	if (!in || !in->sp) {
		__sync_fetch_and_add(&counters.lat_misses, 1);
		return 0;
	}
	/* After `ret`, sp is one slot above where it was at entry: a nested return differs. */
	if (PT_REGS_SP(ctx) != in->sp + 8)
		return 0;
	in->sp = 0;
	in->ev.dur_ns = bpf_ktime_get_ns() - in->ev.ts_ns;
	in->ev.flags |= LAUNCH_F_HAS_DUR;
	/* The completed launch into the CPU's stage, as an entry's; the ring alone if busy. */
	cpu = bpf_get_smp_processor_id();
	sg = bpf_map_lookup_elem(&stages, &cpu);
	if (sg && __sync_lock_test_and_set(&sg->busy, STAGE_PROBE) == STAGE_FREE) {
		n = sg->b.n;
		if (n < LAUNCH_BATCH_N || stage_flush(sg)) {
			n = n < LAUNCH_BATCH_N ? n : 0;
			sg->b.ev[n & (LAUNCH_BATCH_N - 1)] = in->ev;
			sg->b.n = ++n;
			if (n == LAUNCH_BATCH_N && stage_flush(sg))
				sg->b.n = 0;
			stored = true;
		}
		barrier();
		*(volatile __u32 *)&sg->busy = STAGE_FREE;
	} else {
		void *rb = events_ring();

		stored = rb && !bpf_ringbuf_output(rb, &in->ev, sizeof(in->ev), wakeup_flag(rb));
	}
	if (!stored) {
		ps = bpf_map_lookup_elem(&proc_state, &tgid);
		COUNT(ps, drops);
		__sync_fetch_and_add(&events_lost, 1);
	}
	return 0;
}
