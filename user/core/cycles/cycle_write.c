// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/cycles/cycles_int.h"
#include "core/gpu/gpu_store.h"
#include "core/proc/stacks.h"
#include "util/log.h"
#include "util/safe_file.h"

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
struct trace *cycle_trace_open(struct proc_cycles *pc, struct open_cycle *oc)
{
	const struct cycle_env *env = pc->env;
	struct cycle_proc p = cycle_proc_now(pc);
	struct trace_meta m = {
		.pid = p.pid,
		.host = env->host,
		.command = p.comm,
		.rank = p.rank,
		.world_size = p.world_size,
		.cycle = oc->k,
		.mono_to_real = env->mono_to_real,
		.start_mono = oc->start_mono,
		.file_mode = env->out.file,
		.gid = env->out.gid,
		.share_group = env->out.share_group,
	};
	char dir[4096];
	int fd, err;

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
		trace__set_stacks(oc->t, stacks__trace_stack, env->stacks);
	return oc->t;
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
	if (!cycle_proc_now(pc).agent_found)
		p_warn("pid %d (%s): --cupti: no agent in the process by the end of cycle %u, so no "
		       "GPU times: the CUDA driver did not load CUDA_INJECTION64_PATH (no GPU or "
		       "driver here, or a driver that ignores it), or the process was not started "
		       "with the agent; launches are recorded", pc->who.pid, pc->who.comm, oc->k);
	else
		p_warn("pid %d (%s): --cupti: the agent is loaded but said nothing by the end of "
		       "cycle %u, so no GPU times: CUPTI never started in it (is the process using "
		       "the GPU?); launches are recorded", pc->who.pid, pc->who.comm, oc->k);
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
		p_err("pid %d: cannot join cycle %u to its GPU records: out of memory", pc->who.pid,
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
		p_warn("pid %d: %s; cycle %u has launches without GPU times", pc->who.pid, err, oc->k);
	if (st.graph_mismatches)
		p_warn("pid %d: cycle %u: %lu graph replays ran other kernels than cuprobe expanded "
		       "them into (CUPTI's records of them differ): a node changed unseen",
		       pc->who.pid, oc->k, (unsigned long)st.graph_mismatches);
	if (sum.missing)
		p_warn("pid %d: cycle %u written after waiting for its GPU records: %lu launches "
		       "still without them", pc->who.pid, oc->k, (unsigned long)sum.missing);
	if (st.clock_faults)
		p_warn("pid %d: cycle %u: %lu GPU records start before their launch (clock fault)",
		       pc->who.pid, oc->k, (unsigned long)st.clock_faults);
	if (st.dropped)
		p_warn("pid %d: cycle %u: CUPTI or the agent dropped %lu records", pc->who.pid, oc->k,
		       (unsigned long)st.dropped);
	if (st.bad_chunks)
		p_warn("pid %d: cycle %u: %lu malformed agent chunks refused (is the agent of this "
		       "cuprobe version?)", pc->who.pid, oc->k, (unsigned long)st.bad_chunks);
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
	p_info("pid %d (%s): cycle %u%s: %lu launches -> %s", pc->who.pid, pc->who.comm, oc->k,
	       partial ? " (partial)" : "", (unsigned long)oc->launches, trace__path(oc->t));
	if (oc->captured)
		p_info("pid %d: cycle %u: %lu more made into captured streams: graph nodes, not "
		       "launches", pc->who.pid, oc->k, (unsigned long)oc->captured);
	if (oc->c.drops)
		p_warn("pid %d: cycle %u lost %lu launches: the ring buffer was full; raise "
		       "--ringbuf-size", pc->who.pid, oc->k, (unsigned long)oc->c.drops);
	if (pc->lost_steps)
		p_warn("pid %d: %lu step boundaries were lost before cycle %u was written: their "
		       "spans are missing", pc->who.pid, (unsigned long)pc->lost_steps, oc->k);
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
	struct cycle_proc p = cycle_proc_now(pc);

	if (p.warm_ts && p.attaching && oc->lo <= p.warm_step && p.warm_step <= oc->last_step)
		oc->unprobed_ns = unprobed_span(oc, p.warm_ts, end_mono);
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
		.no_driver = cycle_proc_now(pc).no_driver,
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
int cycle_write(struct proc_cycles *pc, size_t i, uint64_t end_mono, bool partial,
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

bool proc_cycles__unprobed(struct proc_cycles *pc, uint64_t step, uint64_t ts, uint64_t since)
{
	struct open_cycle *oc = cycle_of_step(pc, step);

	if (!oc)
		return false;
	oc->unprobed_ns = unprobed_span(oc, ts, since);
	return true;
}
