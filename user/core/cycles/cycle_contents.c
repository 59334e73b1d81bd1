// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include "core/cycles/cycles_int.h"
#include "core/gpu/gpu_store.h"
#include "core/graphs/graph_store.h"
#include "cuda/launch_api.h"
#include "trace/format.h"
#include "util/log.h"

static int hold_launch(struct open_cycle *oc, const struct launch_event *e, const char *kernel,
		       bool unnamed, uint64_t correlation, const struct graph_content *graph)
{
	struct gpu_launch *l = vec__push(&oc->pending);

	if (!l)
		return -ENOMEM;
	*l = (struct gpu_launch){
		.e = *e, .kernel = kernel, .own_correlation = correlation, .unnamed = unnamed,
		.graph = graph,
	};
	return 0;
}

/*
 * Whether oc is cut (now, or before): a cycle that reached a size bound
 * writes no more launches; they are counted, and the trace says where it was
 * cut. The front-end hears of it once, so that the window can end there.
 */
static bool cut(struct proc_cycles *pc, struct open_cycle *oc, const struct launch_event *e)
{
	const struct cycle_env *env = pc->env;
	const struct cycle_bounds *b = &env->bounds;

	if (!oc->cut) {
		if (b->launches && oc->launches >= b->launches)
			oc->cut = "launches";
		else if (b->bytes && oc->t && trace__bytes(oc->t) >= b->bytes)
			oc->cut = "bytes";
		else
			return false;
		oc->cut_step = pc->steps ? (int64_t)e->step : -1;
		oc->cut_mono = e->ts_ns;
		p_warn("pid %d (%s): cycle %u reached its bound of %llu %s: cut at step %lld, its later "
		       "launches are counted, not written", pc->who.pid, pc->who.comm, oc->k,
		       (unsigned long long)(oc->cut[0] == 'l' ? b->launches : b->bytes), oc->cut,
		       (long long)oc->cut_step);
		if (env->cycle_cut)
			env->cycle_cut(env->ctx, pc->t, oc->k);
	}
	oc->cut_launches++;
	return true;
}

bool proc_cycles__ahead(const struct proc_cycles *pc, const struct launch_event *e)
{
	return !pc->by_time && e->step > pc->step;
}

/*
 * A launch made into a captured stream: a graph's node, written as such and
 * counted apart, never a launch. It is not held for the GPU join (it ran
 * nothing, so CUPTI has no GPU record of it), and a cut cycle counts it only.
 */
static void captured_launch(struct proc_cycles *pc, struct open_cycle *oc,
			    const struct launch_event *e, const char *kernel, uint64_t correlation)
{
	if (oc->mode != MODE_OFF && !oc->cut && cycle_trace(pc, oc))
		trace__launch(oc->t, e, kernel, correlation, NULL);
	oc->captured++;
}

int proc_cycles__launch(struct proc_cycles *pc, const struct launch_event *e, const char *kernel,
			bool unnamed, uint64_t correlation)
{
	const struct graph_content *graph = NULL;
	struct open_cycle *oc;
	int err;

	if (!phase_records(e->phase))
		return 0;
	/* Its boundary was lost on the way (the caller looked for it first). */
	if (!pc->by_time && e->step > pc->step) {
		err = cycle_advance(pc, e->step, e->phase, e->ts_ns, e->tid);
		if (err)
			return err;
	}
	oc = pc->by_time ? cycle_of_time(pc, e->ts_ns) : cycle_of_step(pc, e->step);
	/* Time slices: a launch of a warmup slice belongs to no cycle, and is not late. */
	if (!oc && pc->by_time && !phase_records(pc->phase))
		return 0;
	if (!oc) {
		/* Its cycle was written already: say so in the next one. */
		pc->late++;
		return 0;
	}
	if (e->flags & LAUNCH_F_CAPTURED) {
		captured_launch(pc, oc, e, kernel, correlation);
		return 0;
	}
	if (oc->mode != MODE_OFF && cut(pc, oc, e))
		return 0;
	/* A replay: what the executable graph ran then, when its making was seen. */
	if (launch_api_what(e->api) == LAUNCH_GRAPH)
		graph = graph_store__replay(pc->graphs, e->func, e->ts_ns);
	if (oc->mode == MODE_OFF) {
		/* Probes still in from the last window: counted, never written. */
	} else if (oc->mode == MODE_CUPTI) {
		if (hold_launch(oc, e, kernel, unnamed, correlation, graph)) {
			p_err("pid %d (%s): out of memory for a launch of cycle %u", pc->who.pid,
			      pc->who.comm, oc->k);
			return -ENOMEM;
		}
	} else if (cycle_trace(pc, oc)) {
		trace__launch(oc->t, e, kernel, correlation, graph);
	} /* else the cycle is lost: its launches are counted, and said when it ends */
	oc->launches++;
	oc->unnamed += unnamed;
	pc->launches++;
	return 0;
}

void proc_cycles__thread(struct proc_cycles *pc, const struct thread_event *e)
{
	struct thread_name *tn;

	for (size_t i = pc->threads.len; i > 0; i--)
		if (vec_at(&pc->threads, struct thread_name, i - 1)->tid == (pid_t)e->tid)
			return;
	tn = vec__push(&pc->threads);
	if (!tn)
		return; /* the thread only misses its name */
	tn->tid = e->tid;
	memcpy(tn->name, e->comm, sizeof(tn->name));
	tn->name[sizeof(tn->name) - 1] = '\0';
}

static void range_ends(struct proc_cycles *pc, const struct range_event *e)
{
	struct open_range *r = NULL;
	struct open_cycle *oc;

	for (size_t i = pc->ranges.len; i > 0 && !r; i--) {
		struct open_range *o = vec_at(&pc->ranges, struct open_range, i - 1);

		if (o->tid == (pid_t)e->tid && o->depth == e->depth)
			r = o;
	}
	if (!r)
		return;
	oc = cycle_of_step(pc, r->step);
	if (oc && oc->mode != MODE_OFF && !oc->cut && cycle_trace(pc, oc))
		trace__annotation(oc->t, r->tid, r->name, r->start_mono, e->ts_ns);
	/* The last of the vector takes its place: the order of open ranges does not matter. */
	*r = *vec_at(&pc->ranges, struct open_range, pc->ranges.len - 1);
	vec__truncate(&pc->ranges, pc->ranges.len - 1);
}

void proc_cycles__range(struct proc_cycles *pc, const struct range_event *e)
{
	struct open_range *r;

	if (e->end) {
		range_ends(pc, e);
		return;
	}
	if (!strncmp(e->name, TRACE_STEP_PREFIX, strlen(TRACE_STEP_PREFIX)) ||
	    pc->ranges.len >= MAX_OPEN_RANGES || !(r = vec__push(&pc->ranges)))
		return;
	*r = (struct open_range){ .tid = (pid_t)e->tid, .depth = e->depth, .step = e->step,
				  .start_mono = e->ts_ns };
	memcpy(r->name, e->name, sizeof(r->name));
	r->name[sizeof(r->name) - 1] = '\0';
}

void proc_cycles__agent_chunk(struct proc_cycles *pc, const void *data, size_t len)
{
	if (pc->gpu)
		gpu_store__add_chunk(pc->gpu, data, len);
}

bool proc_cycles__agent_heard(const struct proc_cycles *pc)
{
	return gpu_store__chunks(pc->gpu) > 0;
}

bool proc_cycles__flushed_since(const struct proc_cycles *pc, uint64_t ts)
{
	return !pc->gpu || gpu_store__flushed_at(pc->gpu) >= ts;
}

int proc_cycles__graph(struct proc_cycles *pc, const struct graph_event *e, const char *kernel)
{
	return graph_store__event(pc->graphs, e, kernel);
}

int proc_cycles__captured(struct proc_cycles *pc, const struct launch_event *e,
			  const char *kernel)
{
	return graph_store__captured(pc->graphs, e, kernel);
}

void proc_cycles__graph_stats(const struct proc_cycles *pc, struct graph_store_stats *st)
{
	graph_store__stats(pc->graphs, st);
}
