// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cycle.h"
#include "gpu.h"
#include "log.h"
#include "schedule_parse.h"
#include "target.h"
#include "trace/writer.h"

/* A finished cycle waiting for its grace, and the next one already running. */
#define MAX_OPEN 4

struct open_cycle {
	uint32_t k;
	struct trace *t;	/* made at its first event: a failed start leaves nothing */
	uint64_t start_mono;
	uint64_t launches, unnamed;
	uint64_t hits;		/* launch probe hits in its recorded steps */
	int64_t first_step, last_step;
	uint64_t end_mono;	/* when its last active step ended; 0 while it runs */
	/* --cupti: the launches wait here for their GPU records. */
	struct gpu_launch *pending;
	size_t npending, cap;
	uint64_t checked_chunks;	/* the store's chunk count at the last completeness check */
};

struct thread_name {
	pid_t tid;
	char name[16];
};

struct proc_cycles {
	const struct cycle_env *env;
	const struct target *t;
	uint64_t step;
	uint32_t phase;
	uint64_t step_start;
	pid_t step_tid;		/* the thread whose hit began the step */
	uint64_t step_hits;	/* launch probe hits when the step began */
	struct open_cycle oc[MAX_OPEN];
	size_t noc;
	uint64_t late;		/* not yet written in a trace: goes into the next */
	uint64_t launches;
	uint64_t written;
	struct gpu_store *gpu;	/* --cupti */
	struct thread_name *threads;
	size_t nthreads, cap;
};

static uint32_t cycle_of(const struct proc_cycles *pc, uint64_t step)
{
	return schedule_cycle(&pc->env->sched, step);
}

static struct open_cycle *find_open(struct proc_cycles *pc, uint32_t k)
{
	for (size_t i = 0; i < pc->noc; i++)
		if (pc->oc[i].k == k)
			return &pc->oc[i];
	return NULL;
}

static int open_cycle(struct proc_cycles *pc, uint32_t k, uint64_t start_mono)
{
	struct open_cycle *oc;

	if (find_open(pc, k))
		return 0;
	if (pc->noc == MAX_OPEN)
		return -EBUSY;
	oc = &pc->oc[pc->noc++];
	memset(oc, 0, sizeof(*oc));
	oc->k = k;
	oc->start_mono = start_mono;
	oc->first_step = oc->last_step = pc->env->steps ? (int64_t)pc->step : -1;
	return 0;
}

/* The cycle's trace file, made when first needed. */
static struct trace *cycle_trace(struct proc_cycles *pc, struct open_cycle *oc)
{
	const struct cycle_env *env = pc->env;
	struct trace_meta m = {
		.pid = pc->t->pid,
		.host = env->host,
		.command = pc->t->comm,
		.rank = pc->t->rank,
		.world_size = pc->t->world_size,
		.cycle = oc->k,
		.mono_to_real = env->mono_to_real,
		.start_mono = oc->start_mono,
	};
	char dir[4096];

	if (oc->t)
		return oc->t;
	snprintf(dir, sizeof(dir), "%s/run_%ld", env->out, env->run_base + (long)oc->k);
	/* Another process of this session may have made it already. */
	if (mkdir(dir, 0755) && errno != EEXIST) {
		p_err("cannot create %s: %s", dir, strerror(errno));
		return NULL;
	}
	oc->t = trace__open(dir, &m);
	if (!oc->t)
		p_err("cannot create a trace in %s: %s", dir, strerror(errno));
	return oc->t;
}

struct proc_cycles *proc_cycles__new(const struct cycle_env *env, const struct target *t,
				     uint64_t start_mono)
{
	struct proc_cycles *pc = calloc(1, sizeof(*pc));

	if (!pc)
		return NULL;
	pc->env = env;
	pc->t = t;
	/* Step 0 starts at attach. */
	pc->phase = schedule_action(&env->sched, 0);
	pc->step_start = start_mono;
	pc->step_tid = t->pid;
	if (env->cupti && !(pc->gpu = gpu_store__new())) {
		free(pc);
		return NULL;
	}
	if (phase_records(pc->phase) && open_cycle(pc, cycle_of(pc, 0), start_mono)) {
		free(pc);
		return NULL;
	}
	return pc;
}

static int hold_launch(struct open_cycle *oc, const struct launch_event *e, const char *kernel,
		       bool unnamed, uint64_t correlation)
{
	if (oc->npending == oc->cap) {
		size_t cap = oc->cap ? oc->cap * 2 : 1024;
		struct gpu_launch *v = realloc(oc->pending, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		oc->pending = v;
		oc->cap = cap;
	}
	oc->pending[oc->npending++] = (struct gpu_launch){
		.e = *e, .kernel = kernel, .own_correlation = correlation, .unnamed = unnamed,
	};
	return 0;
}

int proc_cycles__launch(struct proc_cycles *pc, const struct launch_event *e, const char *kernel,
			bool unnamed, uint64_t correlation)
{
	struct open_cycle *oc;

	if (!phase_records(e->phase))
		return 0;
	oc = find_open(pc, cycle_of(pc, e->step));
	if (!oc) {
		/* Its cycle was written already: say so in the next one. */
		pc->late++;
		return 0;
	}
	if (pc->env->cupti) {
		if (hold_launch(oc, e, kernel, unnamed, correlation))
			return -ENOMEM;
	} else {
		if (!cycle_trace(pc, oc))
			return -EIO;
		trace__launch(oc->t, e, kernel, correlation);
	}
	oc->launches++;
	oc->unnamed += unnamed;
	pc->launches++;
	return 0;
}

void proc_cycles__thread(struct proc_cycles *pc, const struct thread_event *e)
{
	struct thread_name *tn;

	for (size_t i = pc->nthreads; i > 0; i--)
		if (pc->threads[i - 1].tid == (pid_t)e->tid)
			return;
	if (pc->nthreads == pc->cap) {
		size_t cap = pc->cap ? pc->cap * 2 : 16;
		struct thread_name *v = realloc(pc->threads, cap * sizeof(*v));

		if (!v)
			return; /* the thread only misses its name */
		pc->threads = v;
		pc->cap = cap;
	}
	tn = &pc->threads[pc->nthreads++];
	tn->tid = e->tid;
	memcpy(tn->name, e->comm, sizeof(tn->name));
	tn->name[sizeof(tn->name) - 1] = '\0';
}

/* A run folder that a failed write left empty goes too: nothing half-written stays. */
static void remove_empty_dir(const char *file)
{
	char dir[4096];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", file);
	slash = strrchr(dir, '/');
	if (!slash)
		return;
	*slash = '\0';
	rmdir(dir); /* fails, as it should, while another process's trace is in it */
}

/* --cupti: the cycle's launches with their GPU work, and what the join found. */
static void join_gpu(struct proc_cycles *pc, struct open_cycle *oc, uint64_t end_mono,
		     bool timed_out)
{
	struct gpu_join_stats st;
	struct trace_gpu_summary sum;
	const char *err;

	if (gpu_store__join(pc->gpu, oc->pending, oc->npending, oc->start_mono, end_mono, oc->t,
			    &st)) {
		p_err("pid %d: cannot join cycle %u to its GPU records: out of memory", pc->t->pid,
		      oc->k);
		return;
	}
	sum = (struct trace_gpu_summary){
		.matched = st.matched, .without_gpu = st.without_gpu,
		.unmatched_launches = st.unmatched_launches,
		.gpu_without_launch = st.gpu_without_launch, .clock_faults = st.clock_faults,
		.dropped = st.dropped, .bad_chunks = st.bad_chunks, .overhead_ns = st.overhead_ns,
		.gpu_records = st.gpu_records,
		.missing = timed_out ? st.without_gpu + st.unmatched_launches : 0,
	};
	trace__set_gpu(oc->t, &sum);
	while ((err = gpu_store__take_error(pc->gpu)))
		p_warn("pid %d: %s; cycle %u has launches without GPU times", pc->t->pid, err, oc->k);
	if (sum.missing)
		p_warn("pid %d: cycle %u written after waiting for its GPU records: %lu launches "
		       "still without them", pc->t->pid, oc->k, (unsigned long)sum.missing);
	if (st.clock_faults)
		p_warn("pid %d: cycle %u: %lu GPU records start before their launch (clock fault)",
		       pc->t->pid, oc->k, (unsigned long)st.clock_faults);
	if (st.dropped)
		p_warn("pid %d: cycle %u: CUPTI or the agent dropped %lu records", pc->t->pid, oc->k,
		       (unsigned long)st.dropped);
	if (st.bad_chunks)
		p_warn("pid %d: cycle %u: %lu malformed agent chunks refused (is the agent of this "
		       "cuprobe version?)", pc->t->pid, oc->k, (unsigned long)st.bad_chunks);
}

static int write_cycle(struct proc_cycles *pc, size_t i, uint64_t end_mono, bool partial,
		       bool timed_out)
{
	struct open_cycle *oc = &pc->oc[i];
	const struct cuprobe_counters *c = pc->env->counters;
	struct trace_summary sum = {
		.end_mono = end_mono,
		.launches = oc->launches,
		.unnamed = oc->unnamed,
		.late = pc->late,
		.probe_hits = oc->hits,
		.probe_ns = pc->env->probe_ns,
		.drops = c ? c->drops : 0,
		.first_step = oc->first_step,
		.last_step = oc->last_step,
		.partial = partial,
	};
	int err = -EIO;

	if (!cycle_trace(pc, oc))
		goto out;
	if (pc->env->cupti)
		join_gpu(pc, oc, end_mono, timed_out);
	for (size_t k = 0; k < pc->nthreads; k++)
		trace__thread(oc->t, pc->threads[k].tid, pc->threads[k].name);
	err = trace__close(oc->t, &sum);
	if (err) {
		p_err("cannot write %s: %s; the traces written before it are whole",
		      trace__path(oc->t), strerror(-err));
		remove_empty_dir(trace__path(oc->t));
	}
	else
		p_info("pid %d (%s): cycle %u%s: %lu launches -> %s", pc->t->pid, pc->t->comm, oc->k,
		       partial ? " (partial)" : "", (unsigned long)oc->launches, trace__path(oc->t));
	pc->late = 0;
	pc->written += !err;
out:
	trace__free(oc->t);
	free(oc->pending);
	pc->oc[i] = pc->oc[--pc->noc];
	return err;
}

/* Ends the running step at end: its span and hits go to its cycle, if it records. */
static void end_step(struct proc_cycles *pc, pid_t tid, uint64_t end, uint64_t hits, bool partial)
{
	struct open_cycle *oc;
	struct trace_step st = {
		.tid = tid,
		.step = pc->step,
		.start_mono = pc->step_start,
		.end_mono = end,
		.probe_hits = hits == UINT64_MAX ? -1 : (int64_t)(hits - pc->step_hits),
		.probe_ns = pc->env->probe_ns,
		.partial = partial,
	};

	p_dbg("pid %d: step %lu (%s) ended: %ld launch probe hits", pc->t->pid,
	      (unsigned long)pc->step, schedule_phase_name(pc->phase), (long)st.probe_hits);
	if (!phase_records(pc->phase) || !(oc = find_open(pc, cycle_of(pc, pc->step))))
		return;
	if (st.probe_hits > 0)
		oc->hits += st.probe_hits;
	if (!pc->env->steps || !cycle_trace(pc, oc))
		return;
	trace__step(oc->t, &st);
	oc->last_step = pc->step;
	if (pc->phase == PHASE_RECORD_AND_SAVE && !partial)
		oc->end_mono = end;
}

int proc_cycles__step(struct proc_cycles *pc, const struct step_event *e)
{
	if (e->step <= pc->step)
		return 0; /* not a later boundary */
	end_step(pc, e->tid, e->ts_ns, e->launch_hits, false);
	pc->step = e->step;
	pc->phase = e->phase;
	pc->step_start = e->ts_ns;
	pc->step_tid = e->tid;
	pc->step_hits = e->launch_hits;
	if (phase_records(e->phase))
		return open_cycle(pc, cycle_of(pc, e->step), e->ts_ns);
	return 0;
}

/*
 * Whether a finished cycle can be written: its grace has passed and, with
 * --cupti, its GPU records are in (the agent flushed after the cycle ended,
 * or every launch has its records), or the wait for them ran out.
 */
static bool ready(struct proc_cycles *pc, struct open_cycle *oc, uint64_t now, bool *timed_out)
{
	*timed_out = false;
	if (now == UINT64_MAX)
		return true;
	if (now < oc->end_mono + pc->env->grace_ns)
		return false;
	if (!pc->env->cupti || gpu_store__flushed_at(pc->gpu) >= oc->end_mono)
		return true;
	/* A full join is costly: try it only when new records came in. */
	if (gpu_store__chunks(pc->gpu) != oc->checked_chunks) {
		oc->checked_chunks = gpu_store__chunks(pc->gpu);
		if (gpu_store__complete(pc->gpu, oc->pending, oc->npending))
			return true;
	}
	*timed_out = now >= oc->end_mono + pc->env->cupti_wait_ns;
	return *timed_out;
}

int proc_cycles__flush(struct proc_cycles *pc, uint64_t now)
{
	int ret = 0;

	for (size_t i = pc->noc; i > 0; i--) {
		struct open_cycle *oc = &pc->oc[i - 1];
		bool timed_out;

		if (oc->end_mono && ready(pc, oc, now, &timed_out))
			ret = write_cycle(pc, i - 1, oc->end_mono, false, timed_out) ?: ret;
	}
	return ret;
}

int proc_cycles__stop(struct proc_cycles *pc, uint64_t now, uint64_t hits)
{
	int ret;

	/* The step that was running when the recording stopped. */
	end_step(pc, pc->step_tid, now, hits, true);
	ret = proc_cycles__flush(pc, UINT64_MAX);
	while (pc->noc)
		ret = write_cycle(pc, pc->noc - 1, now, pc->env->steps, false) ?: ret;
	return ret;
}

void proc_cycles__status(const struct proc_cycles *pc, struct cycle_status *st)
{
	st->step = pc->step;
	st->phase = pc->phase;
	st->cycle = cycle_of(pc, pc->step);
	st->launches = pc->launches;
	st->written = pc->written;
}

void proc_cycles__agent_chunk(struct proc_cycles *pc, const void *data, size_t len)
{
	if (pc->gpu)
		gpu_store__add_chunk(pc->gpu, data, len);
}

bool proc_cycles__flushed_since(const struct proc_cycles *pc, uint64_t ts)
{
	return !pc->gpu || gpu_store__flushed_at(pc->gpu) >= ts;
}

void proc_cycles__free(struct proc_cycles *pc)
{
	if (!pc)
		return;
	for (size_t i = 0; i < pc->noc; i++) {
		trace__free(pc->oc[i].t);
		free(pc->oc[i].pending);
	}
	gpu_store__free(pc->gpu);
	free(pc->threads);
	free(pc);
}
