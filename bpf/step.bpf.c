// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The step probe: advances a process's step and evaluates its schedule here,
 * in the kernel, so that a launch knows the phase of its step at entry
 * without a round trip to the loader.
 */
#include "maps.bpf.h"
#include <bpf/bpf_tracing.h>
#include "step.h"

/* Step records told, and those of them that woke the loader (proc_conf.wake_ahead). */
__u64 steps_told = 0;
__u64 steps_woke = 0;

/* Whether the step's record wakes the loader: in, leaving or near a window. */
static __always_inline bool step_wakes(const struct proc_conf *conf, __u64 rel, __u32 phase,
				       __u32 was)
{
	if (phase != PHASE_NONE || was != PHASE_NONE || conf->wake_ahead == WAKE_EVERY)
		return true;
	return schedule_to_window(&conf->sched, rel) <= conf->wake_ahead;
}

/* Counts one hit of the process's step source. */
static __always_inline int count_step(void)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, phase;
	struct proc_state *ps;
	struct proc_conf *conf;
	struct launch_slot *sl;
	struct step_event *e;
	__u64 hits, step, state, rel;
	bool wake;

	ps = bpf_map_lookup_elem(&proc_state, &tgid);
	conf = bpf_map_lookup_elem(&proc_conf, &tgid);
	if (!ps || !conf)
		return 0;
	hits = __sync_fetch_and_add(&ps->step_hits, 1) + 1;
	if (conf->step_every > 1 && hits % conf->step_every)
		return 0;
	step = conf->step_every > 1 ? hits / conf->step_every : hits;
	/* A new schedule counts from this step (it is step 0 of the new plan), or from 0. */
	if (ps->gen != conf->gen) {
		ps->gen = conf->gen;
		ps->base = conf->flags & CONF_ABS_STEPS ? 0 : step;
	}
	rel = step - ps->base;
	phase = schedule_action(&conf->sched, rel);
	/*
	 * The boundary goes out before the new state is published, so that any
	 * launch that sees the new step was made after its boundary was in the
	 * ctrl ring. A lost boundary shows as a gap in the step numbers.
	 */
	e = bpf_ringbuf_reserve(&ctrl, sizeof(*e), 0);
	if (e) {
		e->type = REC_STEP;
		e->tgid = tgid;
		e->tid = (__u32)id;
		e->step = step;
		e->ts_ns = bpf_ktime_get_ns();
		e->phase = phase;
		e->pad = 0;
		e->launch_hits = ps->launch_hits;
		sl = slot_at(ps->slot);
		if (sl && sl->tgid == tgid)
			e->launch_hits += sl->launch_hits;
		e->drops = ps->drops;
		e->nested = ps->nested;
		e->stale = ps->stale;
		wake = step_wakes(conf, rel, phase, state_phase(ps->state));
		__sync_fetch_and_add(&steps_told, 1);
		if (wake)
			__sync_fetch_and_add(&steps_woke, 1);
		bpf_ringbuf_submit(e, wake ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	} else {
		__sync_fetch_and_add(&ps->lost_ctrl, 1);
	}
	state = pack_state(step, conf->link_gen, phase);
	ps->state = state;
	sl = slot_at(ps->slot);
	if (sl && sl->tgid == tgid)
		sl->state = state;
	return 0;
}

SEC("uprobe")
int step_hit(struct pt_regs *ctx)
{
	return count_step();
}

/*
 * --step torch: the step ends where a thread leaves a record_function range
 * whose name begins with its process's prefix (torch_prefixes).
 * record_function_enter_new(name, args) returns a class, so the name is the
 * second argument: a std::string, data pointer at +0, length at +8 (C++11's)
 * or before the characters (the old ABI's, TORCH_STRING_COW). Ranges nest
 * (Python's with blocks): each thread keeps whether each open range matched,
 * one bit per depth.
 */

/* Each stepped process's prefix, set by the loader before its range probes go in. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CUPROBE_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct torch_prefix);
} torch_prefixes SEC(".maps");
/* Ranges deeper than TORCH_DEPTH_MAX: not matched, counted here. */
__u64 torch_too_deep = 0;

struct torch_ranges {
	__u64 matched;	/* bit d: the open range at depth d matched */
	__u64 told;	/* bit d: its begin went out (REC_RANGE), so its end goes too */
	__u32 depth;	/* open ranges seen entered */
	__u32 pad;
};

/* LRU: a thread that ends inside a range ages out. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct torch_ranges);
} torch_threads SEC(".maps");

struct torch_string {
	const char *data;
	__u64 len;
};

static __always_inline bool torch_name_matches(const struct torch_prefix *p,
						const struct torch_string *s)
{
	char name[RANGE_NAME_LEN];
	__u32 n;

	if (!p)
		return false;
	n = p->len & (RANGE_NAME_LEN - 1);
	if (s->len < n || bpf_probe_read_user(name, n, s->data))
		return false;
	for (__u32 i = 0; i < RANGE_NAME_LEN; i++) {
		if (i >= n)
			break;
		if (name[i] != p->s[i])
			return false;
	}
	return true;
}

/* The range's name, as the process's torch holds a std::string (TORCH_STRING_*). */
static __always_inline void torch_read_name(const struct torch_prefix *p, const void *arg,
					    struct torch_string *s)
{
	if (bpf_probe_read_user(s, sizeof(*s), arg))
		s->len = 0;
	else if (p && p->string_abi == TORCH_STRING_COW &&
		 bpf_probe_read_user(&s->len, sizeof(s->len), s->data - TORCH_COW_LEN_AT))
		s->len = 0;
}

/*
 * A range's begin or end, for the trace's user_annotation spans: begins only
 * while the process's step records. Returns whether it went out.
 */
static __always_inline bool torch_tell(__u64 id, __u32 depth, const struct torch_string *s)
{
	__u32 tgid = id >> 32, n;
	struct proc_state *ps = bpf_map_lookup_elem(&proc_state, &tgid);
	struct range_event *e;

	if (!ps || (s && !phase_records(state_phase(ps->state))))
		return false;
	e = bpf_ringbuf_reserve(&ctrl, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&ps->lost_ctrl, 1);
		return false;
	}
	e->type = REC_RANGE;
	e->tgid = tgid;
	e->tid = (__u32)id;
	e->depth = depth;
	e->ts_ns = bpf_ktime_get_ns();
	e->step = state_step(ps->state);
	e->end = !s;
	e->name[0] = '\0';
	if (s) {
		n = s->len < RANGE_NAME_LEN - 1 ? s->len : RANGE_NAME_LEN - 1;
		if (bpf_probe_read_user(e->name, n & (RANGE_NAME_LEN - 1), s->data))
			n = 0;
		e->name[n & (RANGE_NAME_LEN - 1)] = '\0';
	}
	bpf_ringbuf_submit(e, 0);
	return true;
}

SEC("uprobe")
int torch_enter(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct torch_ranges *r = bpf_map_lookup_elem(&torch_threads, &tid), zero = {};
	__u32 tgid = id >> 32;
	struct torch_prefix *p = bpf_map_lookup_elem(&torch_prefixes, &tgid);
	struct torch_string s;
	bool match;

	torch_read_name(p, (const void *)PT_REGS_PARM2(ctx), &s);
	match = s.len && torch_name_matches(p, &s);
	if (!r) {
		bpf_map_update_elem(&torch_threads, &tid, &zero, BPF_NOEXIST);
		r = bpf_map_lookup_elem(&torch_threads, &tid);
		if (!r)
			return 0;
	}
	if (r->depth >= TORCH_DEPTH_MAX) {
		__sync_fetch_and_add(&torch_too_deep, 1);
		r->depth++;
		return 0;
	}
	if (match)
		r->matched |= 1ull << r->depth;
	else
		r->matched &= ~(1ull << r->depth);
	if (s.len && torch_tell(id, r->depth, &s))
		r->told |= 1ull << r->depth;
	else
		r->told &= ~(1ull << r->depth);
	r->depth++;
	return 0;
}

/* A range left that was entered before the probes were in: no depth to pop. */
SEC("uprobe")
int torch_exit(struct pt_regs *ctx)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct torch_ranges *r = bpf_map_lookup_elem(&torch_threads, &tid);

	if (!r || !r->depth)
		return 0;
	r->depth--;
	if (r->depth >= TORCH_DEPTH_MAX)
		return 0;
	/* The end before the boundary: a range that ends a step is in that step. */
	if (r->told >> r->depth & 1)
		torch_tell(bpf_get_current_pid_tgid(), r->depth, NULL);
	if (r->matched >> r->depth & 1)
		return count_step();
	return 0;
}
