// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The daemon's job API (docs/daemon.md, "Jobs"): GET /targets lists the
 * processes it samples with their jobs, ranks and steps; POST /capture with
 * job= opens a window in every rank of that job sampled here, at the same
 * step numbers when start_step is given, and answers once every rank has
 * its trace or its reason for none. The daemon's thread's.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "daemon/service_int.h"
#include "trace/capture_result.h"
#include "util/clock.h"
#include "util/json_writer.h"
#include "util/log.h"

/* One rank of a job capture: its answer once it has one. */
struct jobcap_rank {
	pid_t pid;
	int rank;
	char comm[64];
	bool done;
	char result[16];	/* ok, partial, cut, error, missed, busy, exited, timeout, ... */
	char why[200];		/* "" for ok */
	char *trace;		/* NULL: none */
	int64_t first_step, last_step;
	uint64_t launches, drops;
};

struct jobcap {
	struct dreq *r;
	uint64_t deadline;
	size_t n, pending;
	struct jobcap_rank v[];
};

static void host_name(char *buf, size_t len)
{
	if (gethostname(buf, len))
		snprintf(buf, len, "unknown");
	buf[len - 1] = '\0';
}

/* Steps a second over the latest steps the probe saw, 0 with fewer than two. */
static double step_rate(const struct dproc *p)
{
	unsigned int n = p->nrate < STEP_RATE_N ? p->nrate : STEP_RATE_N;
	unsigned int last = (p->nrate - 1) % STEP_RATE_N;
	unsigned int first = p->nrate <= STEP_RATE_N ? 0 : p->nrate % STEP_RATE_N;
	uint64_t dt;

	if (n < 2)
		return 0;
	dt = p->rate_mono[last] - p->rate_mono[first];
	return dt ? (double)(p->rate_step[last] - p->rate_step[first]) * 1e9 / (double)dt : 0;
}

static void put_target(struct json_writer *w, const struct dproc *p, const char *host,
		       int64_t mono_to_real)
{
	json_writer__start_object(w);
	json_writer__field_i64(w, "pid", p->pid);
	json_writer__field_string(w, "comm", p->pi.comm);
	json_writer__field_string(w, "job", p->job.job);
	json_writer__field_string(w, "job_source", p->job.source ? p->job.source : "");
	json_writer__field_i64_or_null(w, "rank", p->job.rank >= 0, p->job.rank);
	json_writer__field_i64_or_null(w, "local_rank", p->job.local_rank >= 0, p->job.local_rank);
	json_writer__field_i64_or_null(w, "world_size", p->job.world_size >= 0, p->job.world_size);
	json_writer__field_string(w, "namespace", p->job.ns);
	json_writer__field_string(w, "pod", p->job.pod);
	json_writer__field_string(w, "pod_uid", p->job.pod_uid);
	json_writer__field_string(w, "host", host);
	json_writer__field_bool(w, "step_probe", p->rule != NULL);
	json_writer__field_u64(w, "step", p->step);
	json_writer__field_u64(w, "step_at_ns", p->step_mono ? p->step_mono +
			       (uint64_t)mono_to_real : 0);
	json_writer__field_double(w, "steps_per_second", step_rate(p), 3);
	/* Steps count from when the daemon found it: at its exec, or later by the scan. */
	json_writer__field_string(w, "found", p->from_exec ? "exec" : "scan");
	json_writer__field_u64(w, "found_at_ns", p->found_real);
	json_writer__field_bool(w, "in_window", p->in_window);
	json_writer__end_object(w);
}

struct targets_arg {
	struct daemon *d;
	const char *job;
};

static void fill_targets(struct json_writer *w, void *arg)
{
	const struct targets_arg *a = arg;
	int64_t off = clock_mono_to_real_offset();
	char host[256];

	host_name(host, sizeof(host));
	json_writer__start_object(w);
	json_writer__field_string(w, "host", host);
	json_writer__name(w, "targets");
	json_writer__start_array(w);
	for (size_t i = 0; i < a->d->nprocs; i++) {
		const struct dproc *p = a->d->procs[i];

		if (!*a->job || !strcmp(p->job.job, a->job))
			put_target(w, p, host, off);
	}
	json_writer__end_array(w);
	json_writer__end_object(w);
}

void jobs__targets(struct daemon *d, struct dreq *r)
{
	struct targets_arg a = { .d = d, .job = r->job };

	service_answer_json(r, 200, fill_targets, &a);
}

/* ---- job captures ---- */

static void fill_capture(struct json_writer *w, void *arg)
{
	const struct jobcap *jc = arg;
	char host[256];

	host_name(host, sizeof(host));
	json_writer__start_object(w);
	json_writer__field_string(w, "job", jc->r->job);
	json_writer__field_string(w, "host", host);
	json_writer__field_u64(w, "steps", jc->r->steps);
	json_writer__field_i64_or_null(w, "start_step", jc->r->start_step >= 0, jc->r->start_step);
	json_writer__name(w, "ranks");
	json_writer__start_array(w);
	for (size_t i = 0; i < jc->n; i++) {
		const struct jobcap_rank *k = &jc->v[i];
		const struct capture_result cr = {
			.result = k->result, .why = k->why, .first_step = k->first_step,
			.last_step = k->last_step, .launches = k->launches,
		};

		json_writer__start_object(w);
		json_writer__field_i64(w, "pid", k->pid);
		json_writer__field_i64_or_null(w, "rank", k->rank >= 0, k->rank);
		json_writer__field_string(w, "comm", k->comm);
		json_writer__field_string(w, "trace", k->trace ? k->trace : "");
		capture_result__write(w, &cr);
		json_writer__field_u64(w, "drops", k->drops);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
	json_writer__end_object(w);
}

/* The capture is answered and goes; its ranks' processes let go of it. */
static void jobcap_answer(struct daemon *d, struct jobcap *jc)
{
	service_answer_json(jc->r, 200, fill_capture, jc);
	for (size_t i = 0; i < jc->n; i++) {
		struct dproc *p = service_find(d, jc->v[i].pid);

		if (p && p->jc == jc) {
			p->jc = NULL;
			p->jc_waiting = false;
		}
		free(jc->v[i].trace);
	}
	for (size_t i = 0; i < d->njcs; i++)
		if (d->jcs[i] == jc) {
			d->jcs[i] = d->jcs[--d->njcs];
			break;
		}
	free(jc);
}

static bool rank_done(struct daemon *d, struct jobcap *jc, size_t i, const char *result,
		      const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/*
 * Rank i has its answer; the capture is answered when it was the last:
 * true then, and jc is gone.
 */
static bool rank_done(struct daemon *d, struct jobcap *jc, size_t i, const char *result,
		      const char *fmt, ...)
{
	struct jobcap_rank *k = &jc->v[i];
	va_list ap;

	if (k->done)
		return false;
	k->done = true;
	snprintf(k->result, sizeof(k->result), "%s", result);
	va_start(ap, fmt);
	vsnprintf(k->why, sizeof(k->why), fmt, ap);
	va_end(ap);
	if (--jc->pending)
		return false;
	jobcap_answer(d, jc);
	return true;
}

/* Rank i's window opens now: at start_step, or at its next steps. True: jc was answered. */
static bool rank_start(struct daemon *d, struct dproc *p, struct jobcap *jc, size_t i)
{
	int64_t first = jc->r->start_step;
	uint64_t now = 0;
	int err;

	p->jc = jc;
	p->jc_slot = i;
	p->jc_waiting = false;
	err = service_open_window(d, p, jc->r->steps, service_mode(d, p, jc->r->mode), first, &now);
	if (!err)
		return false;
	p->jc = NULL;
	if (err == -ERANGE)
		return rank_done(d, jc, i, "missed", "it is at step %llu: step %lld comes too soon for a "
			  "warmup of %u steps and its probes' attach", (unsigned long long)now,
			  (long long)first, d->conf.warmup);
	if (err == -ENOSPC)
		return rank_done(d, jc, i, "skipped_disk", "no room under capture-retention");
	return rank_done(d, jc, i, "error", "cannot open a window: %s", strerror(-err));
}

/* Each rank of the job: started, waiting for its sampled window, or answered now. */
static void jobcap_begin(struct daemon *d, struct jobcap *jc)
{
	for (size_t i = 0, n = jc->n; i < n; i++) {
		struct dproc *p = service_find(d, jc->v[i].pid);
		bool answered = false;

		if (jc->r->start_step >= 0 && !p->rule) {
			answered = rank_done(d, jc, i, "no_step_probe", "it has no step probe (no "
					     "step rule matches it): its steps are time slices");
		} else if (p->capture || p->waiting || p->jc) {
			answered = rank_done(d, jc, i, "busy", "another capture of it is in progress");
		} else if (!strcmp(jc->r->mode, "cupti") && !p->pi.agent) {
			answered = rank_done(d, jc, i, "no_agent", "it has no cuprobe agent loaded");
		} else if (p->in_window) {
			p->jc = jc;
			p->jc_slot = i;
			p->jc_waiting = true;
		} else {
			answered = rank_start(d, p, jc, i);
		}
		if (answered)
			return;	/* every rank is done, jc is gone */
	}
}

void jobs__capture(struct daemon *d, struct dreq *r)
{
	struct jobcap *jc, **v;
	size_t n = 0;

	for (size_t i = 0; i < d->nprocs; i++)
		n += !strcmp(d->procs[i]->job.job, r->job);
	if (!n) {
		http__answer_text(r, 404, "capture: no process of job '%s' is sampled here "
				  "(GET /targets lists the jobs)\n", r->job);
		return;
	}
	jc = calloc(1, sizeof(*jc) + n * sizeof(jc->v[0]));
	v = realloc(d->jcs, (d->njcs + 1) * sizeof(*v));
	if (!jc || !v) {
		free(jc);
		if (v)
			d->jcs = v;
		http__answer_text(r, 500, "capture: out of memory\n");
		return;
	}
	d->jcs = v;
	d->jcs[d->njcs++] = jc;
	jc->r = r;
	jc->deadline = clock_mono_ns() + (uint64_t)((r->timeout_s ? r->timeout_s :
						      d->conf.capture_timeout) * NS);
	for (size_t i = 0; i < d->nprocs; i++) {
		struct dproc *p = d->procs[i];

		if (strcmp(p->job.job, r->job))
			continue;
		jc->v[jc->n] = (struct jobcap_rank){ .pid = p->pid, .rank = p->job.rank,
						     .first_step = -1, .last_step = -1 };
		snprintf(jc->v[jc->n].comm, sizeof(jc->v[jc->n].comm), "%s", p->pi.comm);
		jc->n++;
	}
	jc->pending = jc->n;
	jobcap_begin(d, jc);
}

void jobs__window_done(struct daemon *d, struct dproc *p, const struct cycle_info *ci,
		       const char *result)
{
	struct jobcap *jc = p->jc;
	struct jobcap_rank *k;
	int64_t s;

	if (!jc)
		return;
	k = &jc->v[p->jc_slot];
	p->jc = NULL;
	p->jc_waiting = false;
	if (!ci) {
		rank_done(d, jc, p->jc_slot, "exited", "the process exited first");
		return;
	}
	k->trace = ci->path ? strdup(ci->path) : NULL;
	k->first_step = ci->first_step;
	k->last_step = ci->last_step;
	k->launches = ci->launches;
	k->drops = ci->drops;
	s = jc->r->start_step;
	if (ci->path && s >= 0 && !strcmp(result, "ok") &&
	    (ci->first_step != s || ci->last_step != s + (int64_t)jc->r->steps - 1))
		rank_done(d, jc, p->jc_slot, "missed", "its window held steps %lld to %lld",
			  (long long)ci->first_step, (long long)ci->last_step);
	else
		rank_done(d, jc, p->jc_slot, result, "%s", ci->path ? "" : "no trace was written");
}

void jobs__resume(struct daemon *d, struct dproc *p)
{
	struct jobcap *jc = p->jc;

	if (jc)
		rank_start(d, p, jc, p->jc_slot);
}

/* The ranks not answered yet read timeout; their windows, if open, go on as sampled ones. */
static void jobcap_expire(struct daemon *d, struct jobcap *jc)
{
	for (size_t i = 0, n = jc->n; i < n; i++) {
		struct dproc *p = service_find(d, jc->v[i].pid);

		if (jc->v[i].done)
			continue;
		if (p && p->jc == jc) {
			p->jc = NULL;
			p->jc_waiting = false;
		}
		if (rank_done(d, jc, i, "timeout", "its steps did not come within the timeout"))
			return;
	}
}

void jobs__tick(struct daemon *d, uint64_t now)
{
	for (size_t i = 0; i < d->njcs;) {
		if (now > d->jcs[i]->deadline)
			jobcap_expire(d, d->jcs[i]);	/* answered: it left the list */
		else
			i++;
	}
}

void jobs__stop(struct daemon *d)
{
	while (d->njcs) {
		struct jobcap *jc = d->jcs[0];

		for (size_t i = 0; i < jc->n; i++) {
			struct dproc *p = service_find(d, jc->v[i].pid);

			if (p && p->jc == jc)
				p->jc = NULL;
		}
		for (size_t i = 0, n = jc->n; i < n; i++)
			if (rank_done(d, jc, i, "stopped", "the daemon is stopping"))
				break;
	}
	free(d->jcs);
	d->jcs = NULL;
}
