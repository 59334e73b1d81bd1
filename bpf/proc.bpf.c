// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Process trees, in the kernel so that no child goes unseen however briefly
 * it lives. A followed process's child gets its parent's entries at fork (a
 * copy of its conf, a fresh state at step 0) and is held at exec until its
 * new program is probed. Children of processes that are not followed are
 * only told (the family map tracks their descendants), so that the loader
 * can say which of them took up CUDA. Threads are not processes.
 */
#include "maps.bpf.h"
#include <bpf/bpf_tracing.h>
#include "hold.bpf.h"
#include "proc.h"

/* Descendants of targets that are not followed, while they live: written here only. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CUPROBE_MAX_PROCS);
	__type(key, __u32);
	__type(value, __u32);	/* the parent's tgid */
} family SEC(".maps");

/* The daemon watches the host: every exec of a process it does not follow is told. */
const volatile bool watch_exec = false;
/* REC_EXEC_SEEN events lost: the ctrl ring was full. */
__u64 lost_exec = 0;

/* The child's entries, as its parent's at step 0 of the same plan. */
static __always_inline void adopt(__u32 child, const struct proc_conf *pconf)
{
	struct proc_conf conf = *pconf;
	struct proc_state ps = {};

	conf.holds_answered = 0;
	ps.gen = conf.gen;
	ps.state = pack_state(0, conf.link_gen, schedule_action(&conf.sched, 0));
	bpf_map_update_elem(&proc_conf, &child, &conf, BPF_NOEXIST);
	bpf_map_update_elem(&proc_state, &child, &ps, BPF_NOEXIST);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(proc_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	struct proc_conf *pconf;
	struct fork_event *e;

	if (ptgid == ctgid)
		return 0;
	pconf = bpf_map_lookup_elem(&proc_conf, &ptgid);
	if (pconf && (pconf->flags & CONF_FOLLOW))
		adopt(ctgid, pconf);
	else if (pconf || bpf_map_lookup_elem(&family, &ptgid))
		bpf_map_update_elem(&family, &ctgid, &ptgid, BPF_ANY);
	else
		return 0;
	e = bpf_ringbuf_reserve(&ctrl, sizeof(*e), 0);
	if (!e)
		return 0;
	e->type = REC_FORK;
	e->tgid = ctgid;
	e->parent = ptgid;
	e->flags = child->mm == parent->mm ? FORK_F_SHARED_MM : 0;
	e->ts_ns = bpf_ktime_get_ns();
	/* Forced: step records that woke no one may be waiting (proc_conf.wake_ahead). */
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(proc_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = p->tgid;
	struct proc_conf *conf = bpf_map_lookup_elem(&proc_conf, &tgid);
	struct fork_event *e;

	if (conf && (conf->flags & CONF_FOLLOW)) {
		hold_and_tell(tgid, REC_EXEC);
		return 0;
	}
	if (!watch_exec)
		return 0;
	e = bpf_ringbuf_reserve(&ctrl, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&lost_exec, 1);
		return 0;
	}
	e->type = REC_EXEC_SEEN;
	e->tgid = tgid;
	e->parent = 0;
	e->flags = 0;
	e->ts_ns = bpf_ktime_get_ns();
	/* Forced: step records that woke no one may be waiting (proc_conf.wake_ahead). */
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
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
