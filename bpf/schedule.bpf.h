/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Per-process schedule state. Launch probes read the step and phase of the
 * calling process here, decided when the call begins.
 */
#ifndef SCHEDULE_BPF_H
#define SCHEDULE_BPF_H

struct proc_state {
	__u32 step;
	__u32 phase; /* enum cuprobe_phase */
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct proc_state);
} proc_state SEC(".maps");

/* Without a step probe a process has no entry: the whole run is step 0, recorded. */
static __always_inline void launch_phase(__u32 tgid, __u32 *step, __u32 *phase)
{
	struct proc_state *ps = bpf_map_lookup_elem(&proc_state, &tgid);

	*step = ps ? ps->step : 0;
	*phase = ps ? ps->phase : PHASE_RECORD;
}

#endif /* SCHEDULE_BPF_H */
