// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/gpu/gpu_store.h"
#include "core/graphs/graph_store.h"
#include "cuda/launch_api.h"
#include "core/schedule/proc_cycles.h"
#include "core/schedule/schedule_parse.h"
#include "core/session/target.h"
#include "trace/format.h"
#include "trace/writer.h"
#include "util/log.h"
#include "util/safe_file.h"
#include "util/vec.h"

/*
 * Finished cycles wait for their grace and, in cupti windows, for their GPU
 * records (up to --cupti-wait) while the next ones run: windows that follow
 * each other with no step between them (compare's) end one every few steps.
 * Past this many, the oldest is written at once, as if its wait had run out.
 */
#define MAX_OPEN 64

struct open_cycle {
	uint32_t k;
	enum window_mode mode;
	struct trace *t;	/* made at its first event: a failed start leaves nothing */
	uint64_t start_mono;
	uint64_t launches, unnamed;
	uint64_t captured;	/* launch records made into a captured stream: not launches */
	uint64_t unprobed_ns;	/* it recorded this long before its launch probes were in */
	struct cycle_counts c;	/* over its recorded steps */
	uint64_t lo, hi;	/* its recorded steps; hi is UINT64_MAX while it runs */
	uint64_t last_step;	/* the latest of them that ended */
	uint64_t end_mono;	/* when its last active step ended; 0 while it runs */
	/* --cupti: the launches wait here for their GPU records. */
	struct vec pending;	/* struct gpu_launch */
	uint64_t checked_chunks;	/* the store's chunk count at the last completeness check */
	/* Cut at a size bound: where, and what came after. */
	const char *cut;
	int64_t cut_step;
	uint64_t cut_mono, cut_launches;
	/*
	 * Its trace could not be made or written (-errno), and where: the cycle
	 * is lost, its launches only counted, and it is not tried again.
	 */
	int write_err;
	char *failed_path;
};

struct thread_name {
	pid_t tid;
	char name[16];
};

/* A record_function range begun in a recorded step, waiting for its end. */
struct open_range {
	pid_t tid;
	uint32_t depth;
	uint64_t step, start_mono;
	char name[RANGE_NAME_LEN];
};

/* Ranges open at once in a process, all threads together: past it, a begin is dropped. */
#define MAX_OPEN_RANGES 4096

struct proc_cycles {
	const struct cycle_env *env;
	const struct target *t;
	uint64_t step;
	uint32_t phase;
	uint64_t step_start;
	pid_t step_tid;		/* the thread whose hit began the step */
	struct cycle_counts at;	/* the counters when the step began */
	int64_t cycle;		/* the cycle of the running (or latest) step; -1 before any */
	enum window_mode mode;	/* that cycle's */
	struct schedule sched;	/* fills boundaries lost on the way */
	uint64_t base;		/* the step sched counts from */
	bool by_time;		/* launches are placed by time, not step */
	bool steps;		/* steps (or slices) are spans; a stop is partial */
	struct vec open;	/* struct open_cycle, oldest first */
	bool told_full;		/* said that too many cycles waited */
	uint64_t late;		/* not yet written in a trace: goes into the next */
	uint64_t lost_steps;	/* boundaries lost since the last trace: go into the next */
	struct trace_holds holds;	/* holds since the last trace: go into the next */
	bool told_silent;	/* said that no agent answered (--cupti) */
	uint64_t launches;
	uint64_t written;
	struct gpu_store *gpu;	/* --cupti */
	struct graph_store *graphs;	/* what its graphs hold: replays are expanded */
	struct vec threads;	/* struct thread_name */
	struct vec ranges;	/* struct open_range: --step torch's, begun and not ended */
};

/* Open cycle i, oldest first. */
static struct open_cycle *open_at(struct proc_cycles *pc, size_t i)
{
	return vec_at(&pc->open, struct open_cycle, i);
}

static struct open_cycle *find_open(struct proc_cycles *pc, uint32_t k)
{
	for (size_t i = 0; i < pc->open.len; i++)
		if (open_at(pc, i)->k == k)
			return open_at(pc, i);
	return NULL;
}

/* The open cycle whose recorded steps hold step. */
static struct open_cycle *cycle_of_step(struct proc_cycles *pc, uint64_t step)
{
	for (size_t i = 0; i < pc->open.len; i++)
		if (open_at(pc, i)->lo <= step && step <= open_at(pc, i)->hi)
			return open_at(pc, i);
	return NULL;
}

/* The open cycle whose recorded time holds ts (time slices). */
static struct open_cycle *cycle_of_time(struct proc_cycles *pc, uint64_t ts)
{
	for (size_t i = 0; i < pc->open.len; i++) {
		struct open_cycle *oc = open_at(pc, i);

		if (oc->start_mono <= ts && (oc->hi == UINT64_MAX || ts < oc->end_mono))
			return oc;
	}
	return NULL;
}

static int write_cycle(struct proc_cycles *pc, size_t i, uint64_t end_mono, bool partial,
		       bool timed_out);

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
		       "or a shorter --cupti-wait avoid it", pc->t->pid, pc->t->comm, MAX_OPEN,
		       (double)pc->env->cupti_wait_ns / 1e9, oc->k);
	}
	return write_cycle(pc, 0, oc->end_mono ? oc->end_mono : now, !oc->end_mono, true);
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
		p_err("pid %d (%s): out of memory for cycle %lld", pc->t->pid, pc->t->comm,
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

/*
 * A run folder, made now or already by another process of this session,
 * opened as a folder of this user's: never a symlink, never one that someone
 * else made (in a folder others can write to, they could point run_<k>
 * anywhere). The folder above it is the user's choice (-o) and is followed.
 */
static int open_run_dir(const char *dir, const struct out_mode *om)
{
	char parent[4096];
	const char *name = strrchr(dir, '/');
	bool created;
	int pfd, fd;

	snprintf(parent, sizeof(parent), "%.*s", name ? (int)(name - dir) : 1, name ? dir : ".");
	name = name ? name + 1 : dir;
	/* A failure loses the cycle: the session says it, once per cause. */
	pfd = open(parent[0] ? parent : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		return -errno;
	fd = safe_file__child_dir(pfd, name, om->dir ? om->dir : 0700, &created);
	close(pfd);
	if (fd >= 0 && created && om->share_group && fchown(fd, (uid_t)-1, om->gid))
		p_warn("cannot give %s the group %u: %s", dir, (unsigned)om->gid, strerror(errno));
	return fd;
}

/* The cycle is lost: err and where are kept for what the front-end hears. */
static void lose_cycle(struct open_cycle *oc, int err, const char *where)
{
	if (oc->write_err)
		return;
	oc->write_err = err ?: -EIO;
	free(oc->failed_path);
	oc->failed_path = strdup(where);
}

/* The cycle's trace file, made when first needed; NULL once the cycle is lost. */
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
		.file_mode = env->out.file,
		.gid = env->out.gid,
		.share_group = env->out.share_group,
	};
	char dir[4096];
	int fd, err;

	if (oc->t || oc->write_err)
		return oc->t;
	err = env->cycle_dir(env->ctx, pc->t, oc->k, dir, sizeof(dir));
	if (err) {
		lose_cycle(oc, err, "the output folder");
		return NULL;
	}
	fd = open_run_dir(dir, &env->out);
	if (fd < 0) {
		lose_cycle(oc, fd, dir);
		return NULL;
	}
	oc->t = trace__openat(fd, &m);
	err = -errno;
	close(fd);
	if (!oc->t) {
		lose_cycle(oc, err, dir);
		return NULL;
	}
	if (env->stacks)
		trace__set_stacks(oc->t, env->stacks);
	return oc->t;
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
	pc->sched = *sched;
	pc->by_time = clock == CLOCK_SLICES;
	pc->steps = clock != CLOCK_ONE;
	/* Step 0 starts at attach. */
	pc->phase = schedule_action(sched, 0);
	pc->cycle = -1;
	if (pc->phase != PHASE_NONE)
		begin_cycle(pc);
	pc->step_start = start_mono;
	pc->step_tid = t->pid;
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

static int advance(struct proc_cycles *pc, uint64_t step, uint32_t phase, uint64_t ts, pid_t tid);

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
		       "launches are counted, not written", pc->t->pid, pc->t->comm, oc->k,
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
		err = advance(pc, e->step, e->phase, e->ts_ns, e->tid);
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
			p_err("pid %d (%s): out of memory for a launch of cycle %u", pc->t->pid,
			      pc->t->comm, oc->k);
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

/*
 * --cupti with not one word from an agent by the end of a window: said once,
 * with the likely cause, rather than left to a count in the trace.
 */
static void tell_silent_agent(struct proc_cycles *pc, const struct open_cycle *oc)
{
	if (gpu_store__chunks(pc->gpu) || pc->told_silent)
		return;
	pc->told_silent = true;
	if (!pc->t->facts.agent_found)
		p_warn("pid %d (%s): --cupti: no agent in the process by the end of cycle %u, so no "
		       "GPU times: the CUDA driver did not load CUDA_INJECTION64_PATH (no GPU or "
		       "driver here, or a driver that ignores it), or the process was not started "
		       "with the agent; launches are recorded", pc->t->pid, pc->t->comm, oc->k);
	else
		p_warn("pid %d (%s): --cupti: the agent is loaded but said nothing by the end of "
		       "cycle %u, so no GPU times: CUPTI never started in it (is the process using "
		       "the GPU?); launches are recorded", pc->t->pid, pc->t->comm, oc->k);
}

/* --cupti: the cycle's launches with their GPU work, and what the join found. */
/* Joins and writes the GPU side; returns how many unnamed launches CUPTI named. */
static uint64_t join_gpu(struct proc_cycles *pc, struct open_cycle *oc, uint64_t end_mono,
			 bool timed_out)
{
	struct gpu_join_stats st;
	struct trace_gpu_summary sum;
	const char *err;

	if (gpu_store__join(pc->gpu, oc->pending.data, oc->pending.len, oc->start_mono, end_mono, oc->t,
			    &st)) {
		p_err("pid %d: cannot join cycle %u to its GPU records: out of memory", pc->t->pid,
		      oc->k);
		return 0;
	}
	tell_silent_agent(pc, oc);
	sum = (struct trace_gpu_summary){
		.matched = st.matched, .without_gpu = st.without_gpu,
		.unmatched_launches = st.unmatched_launches,
		.gpu_without_launch = st.gpu_without_launch, .clock_faults = st.clock_faults,
		.dropped = st.dropped, .bad_chunks = st.bad_chunks, .overhead_ns = st.overhead_ns,
		.gpu_records = st.gpu_records,
		.missing = timed_out ? st.without_gpu + st.unmatched_launches : 0,
		.graph_gpu_kernels = st.graph_gpu_kernels, .graph_mismatches = st.graph_mismatches,
	};
	trace__set_gpu(oc->t, &sum);
	while ((err = gpu_store__take_error(pc->gpu)))
		p_warn("pid %d: %s; cycle %u has launches without GPU times", pc->t->pid, err, oc->k);
	if (st.graph_mismatches)
		p_warn("pid %d: cycle %u: %lu graph replays ran other kernels than cuprobe expanded "
		       "them into (CUPTI's records of them differ): a node changed unseen",
		       pc->t->pid, oc->k, (unsigned long)st.graph_mismatches);
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
	return st.named_by_cupti;
}

/* What the front-end hears of a cycle, written or not. */
static void tell_cycle(struct proc_cycles *pc, const struct open_cycle *oc, uint64_t end_mono,
		       bool partial, int err)
{
	struct cycle_info ci = {
		.k = oc->k,
		.mode = oc->mode,
		.path = oc->t && !err ? trace__path(oc->t) : NULL,
		.err = err,
		.failed_path = err ? oc->failed_path : NULL,
		.launches = oc->launches,
		.captured = oc->captured,
		.drops = oc->c.drops,
		.hits = oc->c.hits,
		.start_mono = oc->start_mono,
		.end_mono = end_mono,
		.first_step = pc->steps ? (int64_t)oc->lo : -1,
		.last_step = pc->steps ? (int64_t)oc->last_step : -1,
		.partial = partial,
		.cut = oc->cut,
		.cut_launches = oc->cut_launches,
	};

	if (pc->env->cycle_done)
		pc->env->cycle_done(pc->env->ctx, pc->t, &ci);
}

static void tell_written(struct proc_cycles *pc, const struct open_cycle *oc, bool partial)
{
	p_info("pid %d (%s): cycle %u%s: %lu launches -> %s", pc->t->pid, pc->t->comm, oc->k,
	       partial ? " (partial)" : "", (unsigned long)oc->launches, trace__path(oc->t));
	if (oc->captured)
		p_info("pid %d: cycle %u: %lu more made into captured streams: graph nodes, not "
		       "launches", pc->t->pid, oc->k, (unsigned long)oc->captured);
	if (oc->c.drops)
		p_warn("pid %d: cycle %u lost %lu launches: the ring buffer was full; raise "
		       "--ringbuf-size", pc->t->pid, oc->k, (unsigned long)oc->c.drops);
	if (pc->lost_steps)
		p_warn("pid %d: %lu step boundaries were lost before cycle %u was written: their "
		       "spans are missing", pc->t->pid, (unsigned long)pc->lost_steps, oc->k);
}

/* From ts (a recording step's start) to since, within the window's recorded time. */
static uint64_t unprobed_span(const struct open_cycle *oc, uint64_t ts, uint64_t since)
{
	uint64_t end = oc->end_mono && oc->end_mono < since ? oc->end_mono : since;

	return end > ts ? end - ts : 0;
}

/*
 * A cycle written while the attach its warmup asked for is still out
 * (session_check_warmup decides once it is in): it recorded without its
 * launch probes from that step on.
 */
static void unprobed_at_write(const struct proc_cycles *pc, struct open_cycle *oc,
			      uint64_t end_mono)
{
	const struct target *t = pc->t;

	if (t->warm_ts && t->attaching && oc->lo <= t->warm_step && t->warm_step <= oc->last_step)
		oc->unprobed_ns = unprobed_span(oc, t->warm_ts, end_mono);
}

static int write_trace(struct proc_cycles *pc, struct open_cycle *oc, uint64_t end_mono,
		       bool partial, bool timed_out)
{
	struct trace_summary sum = {
		.end_mono = end_mono,
		.launches = oc->launches,
		.captured = oc->captured,
		.unnamed = oc->unnamed,
		.late = pc->late,
		.probe_hits = oc->c.hits,
		.probe_ns = pc->env->probe_ns,
		.drops = oc->c.drops,
		.nested = oc->c.nested,
		.stale = oc->c.stale,
		.lost_steps = pc->lost_steps,
		.holds = pc->holds,
		.no_driver = pc->t->facts.has_launch_apis && !pc->t->facts.has_driver,
		.first_step = pc->steps ? (int64_t)oc->lo : -1,
		.last_step = pc->steps ? (int64_t)oc->last_step : -1,
		.partial = partial,
		.cut_reason = oc->cut,
		.cut_step = oc->cut_step,
		.cut_mono = oc->cut_mono,
		.cut_launches = oc->cut_launches,
	};
	int err;

	if (!cycle_trace(pc, oc))
		return oc->write_err;
	unprobed_at_write(pc, oc, end_mono);
	sum.unprobed_ns = oc->unprobed_ns;
	if (oc->mode == MODE_CUPTI)
		sum.unnamed -= join_gpu(pc, oc, end_mono, timed_out);
	for (size_t k = 0; k < pc->threads.len; k++) {
		const struct thread_name *tn = vec_at(&pc->threads, struct thread_name, k);

		trace__thread(oc->t, tn->tid, tn->name);
	}
	err = trace__close(oc->t, &sum);
	if (err) {
		/* Nothing of it stays (safe_file): the cycle is lost, said by the session. */
		lose_cycle(oc, err, trace__path(oc->t));
		remove_empty_dir(trace__path(oc->t));
	} else {
		tell_written(pc, oc, partial);
	}
	return err;
}

/*
 * A window with no probes (MODE_OFF) has no trace: only what the front-end
 * hears. A trace that cannot be written loses its cycle, which the front-end
 * hears (ci->err); it is no error of the recording, which goes on.
 */
static int write_cycle(struct proc_cycles *pc, size_t i, uint64_t end_mono, bool partial,
		       bool timed_out)
{
	struct open_cycle *oc = open_at(pc, i);
	int err = 0;

	if (oc->mode != MODE_OFF)
		err = write_trace(pc, oc, end_mono, partial, timed_out);
	tell_cycle(pc, oc, end_mono, partial, err);
	pc->late = 0;
	pc->lost_steps = 0;
	if (oc->mode != MODE_OFF && !err)
		pc->holds = (struct trace_holds){};
	pc->written += !err;
	trace__free(oc->t);
	vec__free(&oc->pending);
	free(oc->failed_path);
	/* The rest keep their order, oldest first (proc_cycles__flush relies on it). */
	memmove(oc, oc + 1, (pc->open.len - i - 1) * sizeof(*oc));
	vec__truncate(&pc->open, pc->open.len - 1);
	return 0;
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

	p_dbg("pid %d: step %lu (%s) ended: %ld launch probe hits", pc->t->pid,
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
static int advance(struct proc_cycles *pc, uint64_t step, uint32_t phase, uint64_t ts, pid_t tid)
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
		err = advance(pc, e->step - 1, schedule_action(&pc->sched, e->step - 1 - pc->base),
			      e->ts_ns, e->tid);
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
	return !pc->t->facts.agent_found && !gpu_store__chunks(pc->gpu);
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
		ret = write_cycle(pc, 0, oc->end_mono, false, timed_out) ?: ret;
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
		ret = write_cycle(pc, 0, now, pc->steps, false) ?: ret;
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

bool proc_cycles__unprobed(struct proc_cycles *pc, uint64_t step, uint64_t ts, uint64_t since)
{
	struct open_cycle *oc = cycle_of_step(pc, step);

	if (!oc)
		return false;
	oc->unprobed_ns = unprobed_span(oc, ts, since);
	return true;
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

void proc_cycles__hold(struct proc_cycles *pc, uint64_t ns)
{
	pc->holds.count++;
	pc->holds.total_ns += ns;
	if (ns > pc->holds.max_ns)
		pc->holds.max_ns = ns;
}
