/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * torch.profiler.schedule, defined once for the BPF step probe and the
 * loader. Semantics are torch's exactly (torch/profiler/profiler.py,
 * schedule()): steps count from 0; repeat == 0 repeats until the end.
 */
#ifndef CUPROBE_SCHEDULE_H
#define CUPROBE_SCHEDULE_H

#include "cuprobe.h"
#ifndef __VMLINUX_H__
#include <stdbool.h>
#endif

/*
 * proc_state.state: the step, the generation of launch links that may record
 * in it, and its phase, written in one store.
 */
static inline __u64 pack_state(__u64 step, __u32 gen, __u32 phase)
{
	return step << 16 | (__u64)(gen & 0xff) << 8 | phase;
}

static inline __u32 state_step(__u64 st)
{
	return (__u32)(st >> 16);
}

static inline __u32 state_gen(__u64 st)
{
	return (st >> 8) & 0xff;
}

static inline __u32 state_phase(__u64 st)
{
	return st & 0xff;
}

/* The step counted from the start of the first cycle's wait, or -1 before it. */
static inline long long schedule_pos(const struct schedule *s, __u64 step)
{
	if (step < s->skip_first)
		return -1;
	step -= s->skip_first;
	if (s->skip_first_wait)
		step += s->wait;
	return (long long)step;
}

static inline __u32 schedule_action(const struct schedule *s, __u64 step)
{
	long long pos = schedule_pos(s, step);
	__u64 n = (__u64)s->wait + s->warmup + s->active, m;

	if (pos < 0 || n == 0)
		return PHASE_NONE;
	/* torch: repeat > 0 and step / n >= repeat, in true division. */
	if (s->repeat > 0 && (__u64)pos >= (__u64)s->repeat * n)
		return PHASE_NONE;
	m = (__u64)pos % n;
	if (m < s->wait)
		return PHASE_NONE;
	if (m < (__u64)s->wait + s->warmup)
		return PHASE_WARMUP;
	return m < n - 1 ? PHASE_RECORD : PHASE_RECORD_AND_SAVE;
}

/* Launches of this phase are recorded. */
static inline bool phase_records(__u32 phase)
{
	return phase == PHASE_RECORD || phase == PHASE_RECORD_AND_SAVE;
}

/* The cycle a step belongs to (meaningful for WARMUP and RECORD steps). */
static inline __u32 schedule_cycle(const struct schedule *s, __u64 step)
{
	long long pos = schedule_pos(s, step);
	__u64 n = (__u64)s->wait + s->warmup + s->active;

	return pos < 0 || n == 0 ? 0 : (__u32)((__u64)pos / n);
}

#endif /* CUPROBE_SCHEDULE_H */
