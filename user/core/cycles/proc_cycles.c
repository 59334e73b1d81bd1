// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include "core/cycles/cycles_int.h"
#include "core/gpu/gpu_store.h"
#include "core/graphs/graph_store.h"
#include "core/schedule/schedule_parse.h"
#include "util/log.h"

/*
 * MAX_OPEN cycles wait: the oldest is written now with what it has, as its
 * wait running out would write it (said once), so that the run goes on.
 */
static int write_oldest(struct proc_cycles *pc, uint64_t now)
{
	struct open_cycle *oc = open_at(pc, 0);

	if (!pc->told_full) {
		pc->told_full = true;
		p_warn("pid %d (%s): %d finished cycles wait to be written (for their launches "
		       "still in the ring, or their GPU records within --cupti-wait %.1f s): from "
		       "cycle %u on, the oldest is written early with what it has; longer windows "
		       "or a shorter --cupti-wait avoid it", pc->who.pid, pc->who.comm, MAX_OPEN,
		       (double)pc->env->cupti_wait_ns / 1e9, oc->k);
	}
	return cycle_write(pc, 0, oc->end_mono ? oc->end_mono : now, !oc->end_mono, true);
}

/* The running step records: it belongs to cycle pc->cycle, opened here at its first such step. */
static int open_cycle(struct proc_cycles *pc, uint64_t start_mono)
{
	struct open_cycle *oc;
	int err;

	if (find_open(pc, (uint32_t)pc->cycle))
		return 0;
	if (pc->open.len == MAX_OPEN && (err = write_oldest(pc, start_mono)))
		return err;
	oc = vec__push(&pc->open);
	if (!oc) {
		p_err("pid %d (%s): out of memory for cycle %lld", pc->who.pid, pc->who.comm,
		      (long long)pc->cycle);
		return -ENOMEM;
	}
	oc->pending = VEC_INIT(struct gpu_launch);
	oc->k = (uint32_t)pc->cycle;
	oc->mode = pc->mode;
	oc->start_mono = start_mono;
	oc->lo = pc->step;
	oc->hi = UINT64_MAX;
	return 0;
}

/* A cycle begins with a step that does something after one that did nothing or ended one. */
static bool begins_cycle(uint32_t prev, uint32_t phase)
{
	return phase != PHASE_NONE && (prev == PHASE_NONE || prev == PHASE_RECORD_AND_SAVE);
}

/* A cycle begins: its mode is asked for now, before its probes are. */
static void begin_cycle(struct proc_cycles *pc)
{
	pc->cycle++;
	pc->mode = pc->env->cycle_mode(pc->env->ctx, pc->t, (uint32_t)pc->cycle);
}

struct proc_cycles *proc_cycles__new(const struct cycle_env *env, const struct target *t,
				     uint64_t start_mono, const struct schedule *sched,
				     enum cycle_clock clock)
{
	struct proc_cycles *pc = calloc(1, sizeof(*pc));

	if (!pc)
		return NULL;
	pc->threads = VEC_INIT(struct thread_name);
	pc->open = VEC_INIT(struct open_cycle);
	pc->ranges = VEC_INIT(struct open_range);
	pc->env = env;
	pc->t = t;
	env->proc(env->ctx, t, &pc->who);
	pc->sched = *sched;
	pc->by_time = clock == CLOCK_SLICES;
	pc->steps = clock != CLOCK_ONE;
	/* Step 0 starts at attach. */
	pc->phase = schedule_action(sched, 0);
	pc->cycle = -1;
	if (pc->phase != PHASE_NONE)
		begin_cycle(pc);
	pc->step_start = start_mono;
	pc->step_tid = pc->who.pid;
	pc->gpu = gpu_store__new();
	pc->graphs = graph_store__new(env->graphs);
	if (!pc->gpu || !pc->graphs || (phase_records(pc->phase) && open_cycle(pc, start_mono))) {
		gpu_store__free(pc->gpu);
		graph_store__free(pc->graphs);
		free(pc);
		return NULL;
	}
	return pc;
}

static void add_counts(struct cycle_counts *sum, const struct cycle_counts *a,
		       const struct cycle_counts *b)
{
	sum->hits += b->hits - a->hits;
	sum->drops += b->drops - a->drops;
	sum->nested += b->nested - a->nested;
	sum->stale += b->stale - a->stale;
}

/*
 * Ends the running step at end: its span and counts go to its cycle, if it
 * records. c: the counters at end (NULL when not known: no span counts).
 */
static void end_step(struct proc_cycles *pc, pid_t tid, uint64_t end,
		     const struct cycle_counts *c, bool partial)
{
	struct open_cycle *oc;
	bool known = c != NULL;
	struct trace_step st = {
		.tid = tid,
		.step = pc->step,
		.start_mono = pc->step_start,
		.end_mono = end,
		.probe_hits = known ? (int64_t)(c->hits - pc->at.hits) : -1,
		.probe_ns = pc->env->probe_ns,
		.partial = partial,
	};

	struct cycle_step_info si = {
		.step = pc->step, .phase = pc->phase, .cycle = pc->cycle < 0 ? 0 : (uint32_t)pc->cycle,
		.mode = pc->mode, .start_mono = pc->step_start, .end_mono = end,
		.hits = st.probe_hits, .partial = partial,
	};

	p_dbg("pid %d: step %lu (%s) ended: %ld launch probe hits", pc->who.pid,
	      (unsigned long)pc->step, schedule_phase_name(pc->phase), (long)st.probe_hits);
	if (pc->env->step_done)
		pc->env->step_done(pc->env->ctx, pc->t, &si);
	if (!phase_records(pc->phase) || !(oc = cycle_of_step(pc, pc->step)))
		return;
	if (known)
		add_counts(&oc->c, &pc->at, c);
	oc->last_step = pc->step;
	if (pc->steps && oc->mode != MODE_OFF && cycle_trace(pc, oc))
		trace__step(oc->t, &st);
}

/*
 * Moves the mirror to step, which begins at ts with phase: the running
 * cycle closes when its last active step ended, or when the new step does
 * not record; a new cycle begins when the new step starts one.
 */
static int begin_step(struct proc_cycles *pc, uint64_t step, uint32_t phase, uint64_t ts,
		      pid_t tid)
{
	bool begins = begins_cycle(pc->phase, phase);
	struct open_cycle *oc;

	if (phase_records(pc->phase) && (pc->phase == PHASE_RECORD_AND_SAVE ||
					 !phase_records(phase) || begins) &&
	    (oc = cycle_of_step(pc, pc->step)) && oc->hi == UINT64_MAX) {
		oc->hi = pc->step;
		oc->end_mono = ts;
	}
	if (begins)
		begin_cycle(pc);
	pc->step = step;
	pc->phase = phase;
	pc->step_start = ts;
	pc->step_tid = tid;
	return phase_records(phase) ? open_cycle(pc, ts) : 0;
}

/*
 * Boundaries lost on the way (a gap in the step numbers): the steps up to
 * step are passed at ts with the phases the schedule gives them, and counted.
 * The counters of the next boundary then cover all of them: totals stay
 * exact, and the trace says boundaries were lost.
 */
int cycle_advance(struct proc_cycles *pc, uint64_t step, uint32_t phase, uint64_t ts, pid_t tid)
{
	int err = 0;

	end_step(pc, pc->step_tid, ts, NULL, false);
	for (uint64_t s = pc->step + 1; s < step && !err; s++) {
		err = begin_step(pc, s, schedule_action(&pc->sched, s - pc->base), ts, tid);
		end_step(pc, tid, ts, NULL, false);
		pc->lost_steps++;
	}
	pc->lost_steps++;
	return err ?: begin_step(pc, step, phase, ts, tid);
}

int proc_cycles__step(struct proc_cycles *pc, const struct step_event *e)
{
	struct cycle_counts c = { e->launch_hits, e->drops, e->nested, e->stale };
	int err;

	if (e->step <= pc->step)
		return 0; /* not a later boundary */
	if (e->step > pc->step + 1) {
		/* The boundaries between were lost: the counts since cover them all. */
		err = cycle_advance(pc, e->step - 1,
				    schedule_action(&pc->sched, e->step - 1 - pc->base), e->ts_ns,
				    e->tid);
		if (err)
			return err;
	}
	end_step(pc, e->tid, e->ts_ns, &c, false);
	pc->at = c;
	return begin_step(pc, e->step, e->phase, e->ts_ns, e->tid);
}

/*
 * No agent was found in the process and none was heard from by the end of
 * the cycle's grace: no GPU record of the cycle can come (the agent's probe,
 * which carries them, is attached only once the agent is found).
 */
static bool no_agent(const struct proc_cycles *pc)
{
	return !cycle_proc_now(pc).agent_found && !gpu_store__chunks(pc->gpu);
}

/*
 * Whether a finished cycle can be written: its grace has passed and, with
 * --cupti, its GPU records are in (the agent flushed after the cycle ended,
 * or every launch has its records), none can come, or the wait for them ran
 * out.
 */
static bool ready(struct proc_cycles *pc, struct open_cycle *oc, uint64_t now, bool *timed_out)
{
	*timed_out = false;
	if (now == UINT64_MAX)
		return true;
	if (now < oc->end_mono + pc->env->grace_ns)
		return false;
	if (oc->mode != MODE_CUPTI || gpu_store__flushed_at(pc->gpu) >= oc->end_mono ||
	    no_agent(pc))
		return true;
	/* A full join is costly: try it only when new records came in. */
	if (gpu_store__chunks(pc->gpu) != oc->checked_chunks) {
		oc->checked_chunks = gpu_store__chunks(pc->gpu);
		if (gpu_store__complete(pc->gpu, oc->pending.data, oc->pending.len))
			return true;
	}
	*timed_out = now >= oc->end_mono + pc->env->cupti_wait_ns;
	return *timed_out;
}

/*
 * Cycles are written oldest first, and none before an older one: writing a
 * cycle lets go of the GPU records that began before its end (gpu_store.c), which
 * an older cycle still waiting for its own would lose.
 */
int proc_cycles__flush(struct proc_cycles *pc, uint64_t now)
{
	int ret = 0;

	while (pc->open.len) {
		struct open_cycle *oc = open_at(pc, 0);
		bool timed_out;

		if (!oc->end_mono || !ready(pc, oc, now, &timed_out))
			break;
		ret = cycle_write(pc, 0, oc->end_mono, false, timed_out) ?: ret;
	}
	return ret;
}

int proc_cycles__stop(struct proc_cycles *pc, uint64_t now, const struct cycle_counts *c)
{
	int ret;

	/* The step that was running when the recording stopped. */
	end_step(pc, pc->step_tid, now, c, true);
	ret = proc_cycles__flush(pc, UINT64_MAX);
	while (pc->open.len)
		ret = cycle_write(pc, 0, now, pc->steps, false) ?: ret;
	return ret;
}

uint32_t proc_cycles__phase(const struct proc_cycles *pc)
{
	return pc->phase;
}

uint32_t proc_cycles__phase_ahead(const struct proc_cycles *pc, uint64_t k)
{
	if (pc->by_time)
		return pc->phase;
	return schedule_action(&pc->sched, pc->step + k - pc->base);
}

void proc_cycles__status(const struct proc_cycles *pc, struct cycle_status *st)
{
	st->step = pc->step;
	st->phase = pc->phase;
	st->cycle = pc->cycle < 0 ? 0 : (uint32_t)pc->cycle;
	st->next_cycle = (uint32_t)(pc->cycle + 1);
	st->mode = pc->mode;
	st->launches = pc->launches;
	st->written = pc->written;
}

void proc_cycles__set_schedule(struct proc_cycles *pc, const struct schedule *sched,
			       uint64_t base)
{
	pc->sched = *sched;
	pc->base = base;
}

void proc_cycles__free(struct proc_cycles *pc)
{
	if (!pc)
		return;
	for (size_t i = 0; i < pc->open.len; i++) {
		trace__free(open_at(pc, i)->t);
		vec__free(&open_at(pc, i)->pending);
		free(open_at(pc, i)->failed_path);
	}
	vec__free(&pc->open);
	gpu_store__free(pc->gpu);
	graph_store__free(pc->graphs);
	vec__free(&pc->threads);
	vec__free(&pc->ranges);
	free(pc);
}

void proc_cycles__hold(struct proc_cycles *pc, uint64_t ns)
{
	pc->holds.count++;
	pc->holds.total_ns += ns;
	if (ns > pc->holds.max_ns)
		pc->holds.max_ns = ns;
}
