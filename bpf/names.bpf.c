// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Handle probes: the driver and runtime calls that hand out kernel handles
 * (cuModuleGetFunction, cuLibraryGetKernel, cuKernelGetFunction,
 * cudaGetFuncBySymbol, ...) and load the modules they come from. The entry
 * keeps the call's arguments; the return, once the call succeeded, reads the
 * handle it wrote through its first argument and the name or path it was
 * given, and tells the loader (struct name_event) in the events ring, where it
 * comes before every launch by that handle. Not in ctrl: a burst of them (a
 * library taking its kernels) must not crowd out the holds and step
 * boundaries there. These calls are rare (once per kernel, not per launch),
 * so the probes stay on for the whole session and cost the launches nothing.
 */
#include "maps.bpf.h"
#include <bpf/bpf_tracing.h>
#include "names.h"

/* A call in flight, by thread and stack pointer: nested calls keep their own. */
struct name_call_key {
	__u32 tid;
	__u32 pad;
	__u64 sp;	/* at entry; the return sees sp + 8 */
};

struct name_call {
	__u64 out;	/* the first argument: where the handle goes */
	__u64 ref;	/* the second */
	__u64 str;	/* the name or path, when the API has one */
};

/* LRU: an entry whose return never came (longjmp, a thread killed) ages out. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct name_call_key);
	__type(value, struct name_call);
} name_calls SEC(".maps");

/* Records lost (events ring full) and names cut short, read by the loader at exit. */
__u64 names_lost;
__u64 names_truncated;

SEC("uprobe")
int name_entry(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 api = bpf_get_attach_cookie(ctx), tgid = id >> 32;
	struct name_call_key k = { .tid = (__u32)id, .sp = PT_REGS_SP(ctx) };
	struct name_call c = { .out = PT_REGS_PARM1(ctx), .ref = PT_REGS_PARM2(ctx) };

	if (!bpf_map_lookup_elem(&proc_state, &tgid))
		return 0;
	if (api <= NAME_LAST_BY_NAME)
		c.str = PT_REGS_PARM3(ctx);
	else if (api >= NAME_FIRST_LOAD_FILE && api < NAME_FIRST_LOAD_DATA)
		c.str = c.ref;
	bpf_map_update_elem(&name_calls, &k, &c, BPF_ANY);
	return 0;
}

/* Reads the string at str into e; a string that fills the buffer may go on. */
static __always_inline void read_str(struct name_event *e, __u64 str)
{
	char next = 0;
	long n;

	n = bpf_probe_read_user_str(e->str, sizeof(e->str), (void *)str);
	if (n <= 0)
		return;
	e->flags |= NAME_F_STR;
	if (n == sizeof(e->str) &&
	    !bpf_probe_read_user(&next, 1, (void *)(str + sizeof(e->str) - 1)) && next) {
		e->flags |= NAME_F_TRUNCATED;
		__sync_fetch_and_add(&names_truncated, 1);
	}
}

SEC("uretprobe")
int name_return(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), handle = 0;
	__u32 api = bpf_get_attach_cookie(ctx);
	struct name_call_key k = { .tid = (__u32)id, .sp = PT_REGS_SP(ctx) - 8 };
	struct name_call *in, c;
	struct name_event *e;
	void *rb;

	in = bpf_map_lookup_elem(&name_calls, &k);
	if (!in)
		return 0; /* entered before the probes were in */
	c = *in;
	bpf_map_delete_elem(&name_calls, &k);
	/* CUDA_SUCCESS and cudaSuccess are 0; a failed call wrote no handle. */
	if ((__u32)PT_REGS_RC(ctx) != 0)
		return 0;
	if (bpf_probe_read_user(&handle, sizeof(handle), (void *)c.out) || !handle)
		return 0;
	rb = events_ring();
	e = rb ? bpf_ringbuf_reserve(rb, sizeof(*e), 0) : NULL;
	if (!e) {
		__sync_fetch_and_add(&names_lost, 1);
		return 0;
	}
	e->type = REC_NAME;
	e->api = api;
	e->tgid = id >> 32;
	e->flags = 0;
	e->handle = handle;
	e->ref = c.ref;
	e->str[0] = 0;
	if (c.str)
		read_str(e, c.str);
	/* No wakeup: the launches after it wake the loader, or its timer does. */
	bpf_ringbuf_submit(e, BPF_RB_NO_WAKEUP);
	return 0;
}
