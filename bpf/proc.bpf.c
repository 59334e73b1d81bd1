// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Process trees: a process that a target (or a descendant of one) forks is
 * told to the loader, in the kernel, so that no child goes unseen however
 * briefly it lives. Threads are not processes and are not told.
 */
#include "maps.bpf.h"
#include <bpf/bpf_tracing.h>

/* Descendants of targets, while they live: written here only. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CUPROBE_MAX_PROCS);
	__type(key, __u32);
	__type(value, __u32);	/* the parent's tgid */
} family SEC(".maps");

SEC("tp_btf/sched_process_fork")
int BPF_PROG(proc_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	struct fork_event *e;

	if (ptgid == ctgid)
		return 0;
	if (!bpf_map_lookup_elem(&proc_state, &ptgid) && !bpf_map_lookup_elem(&family, &ptgid))
		return 0;
	bpf_map_update_elem(&family, &ctgid, &ptgid, BPF_ANY);
	e = bpf_ringbuf_reserve(&ctrl, sizeof(*e), 0);
	if (!e)
		return 0;
	e->type = REC_FORK;
	e->tgid = ctgid;
	e->parent = ptgid;
	e->pad = 0;
	e->ts_ns = bpf_ktime_get_ns();
	bpf_ringbuf_submit(e, 0);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(proc_exit, struct task_struct *task)
{
	__u32 tgid = task->tgid;

	/* The last thread of the process: its place in the family goes with it. */
	if (task->pid == tgid)
		bpf_map_delete_elem(&family, &tgid);
	return 0;
}
