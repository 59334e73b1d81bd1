/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * torch.profiler.schedule, defined once for the BPF step probe and the
 * loader. Semantics are torch's exactly (torch/profiler/profiler.py,
 * schedule()): steps count from 0; repeat == 0 repeats until the end. The
 * loader gives a process its schedule in proc_conf (proc_state.h); the step
 * probe evaluates it there. Nothing here is a record: front-ends, which give
 * --schedule and are told phases, may use it.
 */
#ifndef CUPROBE_SCHEDULE_H
#define CUPROBE_SCHEDULE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#include <stdbool.h>
#endif

/* Phases of the schedule, torch.profiler's ProfilerAction plus "off". */
enum cuprobe_phase {
	PHASE_NONE = 0,
	PHASE_WARMUP = 1,
	PHASE_RECORD = 2,
	PHASE_RECORD_AND_SAVE = 3,
};

/* torch.profiler.schedule's parameters, evaluated below. */
struct schedule {
	__u32 skip_first;
	__u32 skip_first_wait;	/* 1: skip only the first wait phase */
	__u32 wait;
	__u32 warmup;
	__u32 active;		/* > 0 */
	__u32 repeat;		/* 0: forever */
};

_Static_assert(sizeof(struct schedule) == 24, "schedule layout");

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

/*
 * Steps from step to the next step whose phase is not PHASE_NONE: 0 in a
 * window, ~0 when no window comes (repeat done, or no schedule).
 */
static inline __u64 schedule_to_window(const struct schedule *s, __u64 step)
{
	long long pos = schedule_pos(s, step);
	__u64 n = (__u64)s->wait + s->warmup + s->active, m;

	if (n == 0)
		return ~0ull;
	/* Before skip_first: the first window's first step is its wait's end. */
	if (pos < 0)
		return s->skip_first + (s->skip_first_wait ? 0 : (__u64)s->wait) - step;
	if (s->repeat > 0 && (__u64)pos >= (__u64)s->repeat * n)
		return ~0ull;
	m = (__u64)pos % n;
	return m < s->wait ? s->wait - m : 0;
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
