// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <grp.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "daemon/service.h"
#include "daemon/service_int.h"
#include "daemon/store.h"
#include "daemon/trace_get.h"
#include "daemon/webconf.h"
#include "util/clock.h"
#include "util/json_writer.h"
#include "util/log.h"
#include "util/plural.h"

static double rnd(struct daemon *d)
{
	return (double)rand_r(&d->rng) / ((double)RAND_MAX + 1);
}

static struct dproc *find(struct daemon *d, pid_t pid)
{
	for (size_t i = 0; i < d->nprocs; i++)
		if (d->procs[i]->pid == pid)
			return d->procs[i];
	return NULL;
}

struct dproc *service_find(struct daemon *d, pid_t pid)
{
	return find(d, pid);
}

static double probe_ns(struct daemon *d)
{
	double ns = session__probe_ns(d->s);

	/* Unknown: a uprobe trap's usual cost, so that the budget still holds. */
	return ns > 0 ? ns : 1000;
}

/* ---- the budget ---- */

static void budget_add(struct dproc *p, uint64_t cost)
{
	if (p->nb)
		p->b[(p->head + p->nb - 1) % NBUCKETS].cost += cost;
}

/* A new bucket when the last is full; the oldest goes when all are. */
static void budget_tick(struct daemon *d, struct dproc *p, uint64_t now, uint64_t cpu)
{
	uint64_t len = (uint64_t)(d->conf.budget_window * NS) / NBUCKETS;
	struct bucket *last = p->nb ? &p->b[(p->head + p->nb - 1) % NBUCKETS] : NULL;

	if (last && now - last->t < len)
		return;
	if (p->nb == NBUCKETS) {
		p->head = (p->head + 1) % NBUCKETS;
		p->nb--;
	}
	p->b[(p->head + p->nb) % NBUCKETS] = (struct bucket){ .t = now, .cpu = cpu };
	p->nb++;
}

/* Cost over the window and the CPU time the process used in it. */
static void budget_sum(const struct dproc *p, uint64_t cpu, uint64_t *cost, uint64_t *used)
{
	*cost = 0;
	for (unsigned int i = 0; i < p->nb; i++)
		*cost += p->b[(p->head + i) % NBUCKETS].cost;
	*used = p->nb && cpu > p->b[p->head].cpu ? cpu - p->b[p->head].cpu : 0;
}

static double ratio(uint64_t cost, uint64_t used)
{
	return used ? (double)cost / (double)used : cost ? 1.0 : 0.0;
}

/* ---- processes ---- */

static void answer_capture(struct dreq **r, unsigned int status, const char *msg, pid_t pid)
{
	if (*r)
		http__answer_text(*r, status, "capture of pid %d: %s\n", (int)pid, msg);
	*r = NULL;
}

static void drop_proc(struct daemon *d, size_t i)
{
	struct dproc *p = d->procs[i];

	if (p->wstore)
		store__release(p->wstore, p->reserved);
	jobs__window_done(d, p, NULL, "exited");
	answer_capture(&p->capture, 410, "the process exited", p->pid);
	answer_capture(&p->waiting, 410, "the process exited", p->pid);
	if (p->pm)
		metrics__gone(d->m, p->pm, clock_mono_ns());
	free(p);
	d->procs[i] = d->procs[--d->nprocs];
}

static void read_job(const struct daemon *d, pid_t pid, const struct procinfo *pi,
		     struct jobinfo *j)
{
	const struct jobinfo_conf jc = {
		.job_env = d->conf.job_env, .rank_env = d->conf.rank_env,
		.kubelet_root = d->conf.kubelet_root, .pod_labels = d->conf.pod_labels,
	};

	jobinfo__read(pid, pi->cgroup, &jc, j);
}

int service_add_proc(struct daemon *d, pid_t pid, const struct procinfo *pi, bool from_exec)
{
	const struct step_rule *rule = dconf__match(&d->conf, pi->comm, pi->exe) ?:
				       (d->conf.torch_steps && pi->torch ? &d->torch : NULL);
	struct target_plan plan = {
		.step = rule ? &rule->spec : NULL,
		.slice_ns = rule ? 0 : (uint64_t)(d->conf.slice * NS),
		/* Nothing is recorded until the daemon asks for a window. */
		.sched = { .skip_first = UINT32_MAX, .active = 1 },
		.mode = MODE_BPF,
	};
	struct session_target t;
	struct plabels l;
	struct dproc *p;
	int err;

	if (d->nprocs >= d->conf.max_targets) {
		if (!d->told_full)
			p_warn("%u processes sampled already (--max-targets): pid %d (%s) and later "
			       "ones are not", d->conf.max_targets, (int)pid, pi->comm);
		d->told_full = true;
		return -ENOSPC;
	}
	if (d->nprocs == d->cap) {
		size_t cap = d->cap ? d->cap * 2 : 16;
		struct dproc **nv = realloc(d->procs, cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		d->procs = nv;
		d->cap = cap;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	/* The environment read once, at its finding: the rank its traces say is the same. */
	read_job(d, pid, pi, &p->job);
	plan.identity = true;
	plan.rank = p->job.rank;
	plan.world_size = p->job.world_size;
	err = session__attach_plan(d->s, pid, &plan);
	if (!err)
		err = session__target(d->s, pid, &t);
	if (err) {
		p_dbg("pid %d (%s) not sampled: %s", (int)pid, pi->comm, strerror(-err));
		free(p);
		return err;
	}
	p->pid = pid;
	p->pi = *pi;
	p->from_exec = from_exec;
	p->found_real = clock_real_ns();
	/* The budget's first bucket holds the CPU time the process used before it was found. */
	p->b[0] = (struct bucket){ .t = clock_mono_ns(), .cpu = 0 };
	p->nb = 1;
	p->rule = rule;
	l = (struct plabels){ .pid = pid, .comm = pi->comm, .rank = t.rank,
			      .cgroup = pi->cgroup, .container = pi->container, .job = &p->job };
	p->pm = metrics__proc(d->m, &l);
	/* Spread over the interval, so that a fleet started together does not sample together. */
	p->next_sample = clock_mono_ns() + (uint64_t)(d->conf.interval * rnd(d) * NS);
	d->procs[d->nprocs++] = p;
	p_info("sampling pid %d (%s%s%s) with %s%s", (int)pid, pi->comm, *pi->container ?
	       ", container " : "", pi->container, rule ? "step probe " : "time slices",
	       rule ? step_spec__str(&rule->spec) : "");
	return 0;
}

/* ---- windows ---- */

static enum window_mode default_mode(const struct daemon *d, const struct dproc *p)
{
	return d->conf.cupti && p->pi.agent ? MODE_CUPTI : MODE_BPF;
}

/* The mode a capture asked for ("" the daemon's choice, "bpf", "cupti"). */
enum window_mode service_mode(const struct daemon *d, const struct dproc *p, const char *asked)
{
	return !asked[0] ? default_mode(d, p) : !strcmp(asked, "cupti") ? MODE_CUPTI : MODE_BPF;
}

/*
 * A window of steps in mode, with room for its trace reserved under the
 * retention limit first. 0, -ENOSPC (windows being written hold the
 * retention), or session__window's error.
 */
int service_open_window(struct daemon *d, struct dproc *p, uint32_t steps, enum window_mode mode,
			int64_t first, uint64_t *now)
{
	uint64_t room = d->conf.window_max_bytes;
	/* A capture's trace is kept apart: captures cannot push sampled windows out, nor these them. */
	bool capture = p->capture || p->jc;
	struct store *st = capture ? d->captures : d->store;
	int err;

	if (store__reserve(st, room)) {
		if (capture)
			return -ENOSPC; /* said to the one who asked */
		if (!d->told_disk)
			p_warn("no room under --retention %llu for another window of up to %llu bytes "
			       "(%llu held by windows being written): windows wait; raise retention "
			       "or lower window-max-bytes", (unsigned long long)d->conf.retention,
			       (unsigned long long)room,
			       (unsigned long long)store__reserved(d->store));
		d->told_disk = true;
		return -ENOSPC;
	}
	if (first >= 0)
		err = session__window_at(d->s, p->pid, d->conf.warmup, steps, mode,
					 (uint64_t)first, now);
	else
		err = session__window(d->s, p->pid, d->conf.warmup, steps, mode);
	if (err) {
		store__release(st, room);
		return err;
	}
	d->told_disk &= capture;
	p->wstore = st;
	p->reserved = room;
	p->in_window = true;
	p->wmode = mode;
	return 0;
}

static int open_window(struct daemon *d, struct dproc *p, uint32_t steps, enum window_mode mode)
{
	return service_open_window(d, p, steps, mode, -1, NULL);
}

static void sample(struct daemon *d, struct dproc *p, uint64_t now, uint64_t cpu)
{
	uint64_t cost, used;
	enum window_mode mode = default_mode(d, p);
	int err;

	p->next_sample = now + (uint64_t)(d->conf.interval * (0.9 + 0.2 * rnd(d)) * NS);
	if (rnd(d) >= d->conf.probability)
		return;
	budget_sum(p, cpu, &cost, &used);
	if (ratio(cost + p->last_window_cost, used) * 100 > d->conf.budget) {
		if (!p->backoff)
			p_info("pid %d (%s): sampling held back: a window would bring the probes' "
			       "cost to %.3f%% of its CPU time (--budget %g%%)", (int)p->pid,
			       p->pi.comm, ratio(cost + p->last_window_cost, used) * 100,
			       d->conf.budget);
		p->backoff = true;
		pmetrics__window(p->pm, mode, WIN_BUDGET);
		return;
	}
	p->backoff = false;
	err = open_window(d, p, d->conf.window_steps, mode);
	if (err == -EBUSY || err == -ENOSPC) {
		pmetrics__window(p->pm, mode, err == -EBUSY ? WIN_BUSY : WIN_DISK);
		return;
	}
	if (err)
		p_dbg("pid %d: no window: %s", (int)p->pid, strerror(-err));
}

static void start_capture(struct daemon *d, struct dproc *p, struct dreq *r)
{
	int err;

	p->capture = r; /* the window is a capture's: its room is capture-retention's */
	err = open_window(d, p, r->steps, service_mode(d, p, r->mode));
	if (err)
		p->capture = NULL;
	if (err == -ENOSPC) {
		http__answer_text(r, 507, "capture of pid %d: no room under capture-retention "
				  "(%llu bytes) for a window of up to %llu bytes: captures being "
				  "written hold %llu; try again later, or raise capture-retention\n",
				  (int)p->pid, (unsigned long long)d->conf.capture_retention,
				  (unsigned long long)d->conf.window_max_bytes,
				  (unsigned long long)store__reserved(d->captures));
		return;
	}
	if (err) {
		http__answer_text(r, 500, "capture of pid %d: cannot open a window: %s\n",
				  (int)p->pid, strerror(-err));
		return;
	}
	p->capture = r;
	p->capture_deadline = clock_mono_ns() + (uint64_t)(d->conf.capture_timeout * NS);
}

/* The process a thread id belongs to, or 0 (not a thread of another process, or gone). */
static pid_t process_of(pid_t tid)
{
	char path[64], line[128];
	FILE *f;
	int tgid = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid != tid ? tgid : 0;
}

static void on_capture(struct daemon *d, struct dreq *r)
{
	struct dproc *p = find(d, r->pid);
	pid_t tgid;

	if (!p && (tgid = process_of(r->pid)) > 0) {
		http__answer_text(r, 404, "capture: %d is a thread of process %d: give its process "
				  "id, pid=%d\n", (int)r->pid, (int)tgid, (int)tgid);
		return;
	}
	if (!p) {
		http__answer_text(r, 404, "capture: pid %d is not a CUDA process this daemon samples "
				  "(cuprobe_targets and the pid labels of /metrics list them)\n",
				  (int)r->pid);
		return;
	}
	if (!strcmp(r->mode, "cupti") && !p->pi.agent) {
		http__answer_text(r, 409, "capture: pid %d has no cuprobe agent loaded: start it with "
				  "CUDA_INJECTION64_PATH=<prefix>/lib/cuprobe/libcuprobe-agent.so, "
				  "or use mode=bpf\n", (int)r->pid);
		return;
	}
	if (p->capture || p->waiting || p->jc) {
		r->retry_after = 5;
		http__answer_text(r, 429, "capture: pid %d has a capture in progress (one a process): "
				  "try again when it is answered\n", (int)r->pid);
		return;
	}
	if (p->in_window) {
		/* After the sampled window that runs now. */
		p->waiting = r;
		p->capture_deadline = clock_mono_ns() + (uint64_t)(d->conf.capture_timeout * NS);
		return;
	}
	start_capture(d, p, r);
}

/* The JSON made by fill as r's answer, with status; a 500 when it could not be made. */
void service_answer_json(struct dreq *r, int status,
			 void (*fill)(struct json_writer *w, void *arg), void *arg)
{
	char *body = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&body, &len);
	struct json_writer *w = f ? json_writer__new(f) : NULL;
	int err = -ENOMEM;

	if (w) {
		fill(w, arg);
		err = json_writer__flush(w);
		json_writer__free(w);
	}
	if (f && fputc('\n', f) == EOF && !err)
		err = -EIO;
	if (f && fclose(f) && !err)
		err = -EIO;
	if (err) {
		free(body);
		http__answer_text(r, 500, "cuprobe daemon: cannot make the answer: %s\n",
				  strerror(-err));
		return;
	}
	http__answer(r, status, "application/json", body, len);
}

struct done_arg {
	const struct dproc *p;
	const struct cycle_info *ci;
	const char *result, *dir;
};

static void fill_done(struct json_writer *w, void *arg)
{
	const struct done_arg *a = arg;
	const struct cycle_info *ci = a->ci;

	json_writer__start_object(w);
	json_writer__field_i64(w, "pid", a->p->pid);
	json_writer__field_string(w, "comm", a->p->pi.comm);
	json_writer__field_string(w, "dir", a->dir);
	json_writer__field_string(w, "trace", ci->path ? ci->path : "");
	json_writer__field_string(w, "mode", ci->mode == MODE_CUPTI ? "cupti" : "bpf");
	json_writer__field_string(w, "result", a->result);
	json_writer__field_u64(w, "launches", ci->launches);
	json_writer__field_u64(w, "drops", ci->drops);
	json_writer__field_i64(w, "first_step", ci->first_step);
	json_writer__field_i64(w, "last_step", ci->last_step);
	json_writer__field_bool(w, "cut", ci->cut != NULL);
	json_writer__field_u64(w, "cut_launches", ci->cut_launches);
	json_writer__end_object(w);
}

/* The capture's answer, a JSON object through the one JSON writer (names may hold any byte). */
static void answer_done(struct dproc *p, const struct cycle_info *ci, const char *result)
{
	char dir[PATH_MAX + 32];
	struct done_arg a = { .p = p, .ci = ci, .result = result, .dir = dir };

	store__name(p->wstore, p->run, dir, sizeof(dir));
	service_answer_json(p->capture, ci->path ? 200 : 500, fill_done, &a);
	p->capture = NULL;
}

/* A sampled window's trace, counted into the process's series. */
static void count_window(struct daemon *d, struct dproc *p, const struct cycle_info *ci,
			 enum window_result res)
{
	struct trace_counts tc;

	(void)d;
	pmetrics__window(p->pm, ci->mode, res);
	pmetrics__drops(p->pm, ci->drops);
	if (!ci->path || trace_counts__read(ci->path, &tc))
		return;
	for (size_t i = 0; i < tc.nk; i++)
		pmetrics__launches(p->pm, tc.k[i].kernel, tc.k[i].api, tc.k[i].n);
	for (size_t i = 0; i < tc.ngpu; i++)
		pmetrics__gpu_kernel(p->pm, tc.gpu_kernel_s[i]);
	pmetrics__captured(p->pm, tc.captured);
	for (size_t i = 0; i < tc.ngk; i++)
		pmetrics__graph_kernels(p->pm, tc.gk[i].kernel, tc.gk[i].api, tc.gk[i].n);
	pmetrics__graph_replays(p->pm, tc.replays_known, tc.replays_unknown);
	if (tc.launches != ci->launches)
		p_warn("pid %d: the window's trace %s holds %llu launches, the window %llu",
		       (int)p->pid, ci->path, (unsigned long long)tc.launches,
		       (unsigned long long)ci->launches);
	trace_counts__free(&tc);
}

static int hook_dir(void *ctx, const struct session_target *t, uint32_t k, char *buf,
		    size_t len)
{
	struct daemon *d = ctx;
	struct dproc *p = find(d, t->pid);
	int err;

	(void)k;
	long n;

	err = store__next_dir(p && p->wstore ? p->wstore : d->store, buf, len, &n);
	if (!err && p)
		p->run = n;
	return err;
}

static void hook_cycle(void *ctx, const struct session_target *t, const struct cycle_info *ci)
{
	struct daemon *d = ctx;
	struct dproc *p = find(d, t->pid);
	enum window_result res = ci->err ? WIN_ERROR : ci->cut ? WIN_CUT :
				 ci->partial ? WIN_PARTIAL : WIN_OK;

	if (!p)
		return;
	if (ci->mode == MODE_OFF) {
		/* The mode's programs are not loaded: the window attached nothing and wrote nothing. */
		answer_capture(&p->capture, 500, "the window's mode could not be used (its BPF "
			       "programs are not loaded): see the daemon's log", p->pid);
		p->in_window = false;
		if (p->wstore)
			store__release(p->wstore, p->reserved);
		p->reserved = 0;
		p->wstore = NULL;
		return;
	}
	p->last_window_cost = (uint64_t)((double)ci->hits * probe_ns(d));
	budget_add(p, p->last_window_cost);
	if (p->wstore && ci->path)
		store__written(p->wstore, p->run, p->reserved);
	else if (p->wstore)
		store__release(p->wstore, p->reserved);
	p->reserved = 0;
	if (p->capture)
		answer_done(p, ci, metrics__result_name(res));
	else if (p->jc && !p->jc_waiting)
		jobs__window_done(d, p, ci, metrics__result_name(res));
	else
		count_window(d, p, ci, res);
	p->wstore = NULL;
	p_dbg("pid %d: window %s, %llu launches, %s", (int)p->pid, metrics__result_name(res),
	      (unsigned long long)ci->launches, ci->path ? ci->path : "no trace");
	p->in_window = false;
	if (p->jc && p->jc_waiting)
		jobs__resume(d, p);
	if (p->waiting) {
		struct dreq *r = p->waiting;

		p->waiting = NULL;
		start_capture(d, p, r);
	}
}

static void hook_step(void *ctx, const struct session_target *t,
		      const struct cycle_step_info *si)
{
	struct daemon *d = ctx;
	struct dproc *p = find(d, t->pid);

	if (!p)
		return;
	/* The step probe is always in: each hit is a trap the process pays for. */
	if (p->rule) {
		unsigned int k = p->nrate++ % STEP_RATE_N;

		/* The step that ended is followed by the next one, beginning as it ends. */
		p->step = si->step + 1;
		p->step_mono = si->end_mono;
		p->rate_step[k] = p->step;
		p->rate_mono[k] = si->end_mono;
		pmetrics__target_step(p->pm, p->step);
		budget_add(p, (uint64_t)probe_ns(d));
		if (!si->partial && si->end_mono > si->start_mono)
			pmetrics__step(p->pm, (double)(si->end_mono - si->start_mono) / NS);
	}
}

static void hook_exited(void *ctx, const struct session_target *t)
{
	struct daemon *d = ctx;

	for (size_t i = 0; i < d->nprocs; i++)
		if (d->procs[i]->pid == t->pid) {
			p_dbg("pid %d (%s) exited", (int)t->pid, d->procs[i]->pi.comm);
			drop_proc(d, i);
			return;
		}
}

static void hook_exec(void *ctx, pid_t pid)
{
	candidates__exec(ctx, pid);
}

/* ---- the loop ---- */

/* The loop's tick, every TICK_NS: candidates, budgets, captures' deadlines, samples. */
static void tick(void *ctx, uint64_t now)
{
	struct daemon *d = ctx;

	candidates__tick(d, now);
	jobs__tick(d, now);
	for (size_t i = 0; i < d->nprocs; i++) {
		struct dproc *p = d->procs[i];
		uint64_t cpu = 0, cost, used;

		if (procinfo__cpu_ns(p->pid, &cpu))
			continue;
		budget_tick(d, p, now, cpu);
		budget_sum(p, cpu, &cost, &used);
		pmetrics__overhead(p->pm, ratio(cost, used), p->backoff);
		if ((p->capture || p->waiting) && now > p->capture_deadline) {
			answer_capture(p->capture ? &p->capture : &p->waiting, 504,
				       "the steps did not come within --capture-timeout: does the "
				       "process still step?", p->pid);
		}
		if (!p->in_window && !p->waiting && !p->jc && now >= p->next_sample)
			sample(d, p, now, cpu);
	}
	metrics__expire(d->m, now, (uint64_t)(d->conf.linger * NS));
}

static void on_metrics(struct daemon *d, struct dreq *r)
{
	struct metrics_host h = {
		.targets = (unsigned int)d->nprocs,
		.candidates = (unsigned int)d->ncands,
		.probe_seconds = session__probe_ns(d->s) > 0 ? session__probe_ns(d->s) / 1e9 : -1,
		.traces_bytes = store__bytes(d->store) + store__bytes(d->captures),
		.traces_removed = store__removed(d->store) + store__removed(d->captures),
		.reloads = d->reloads,
		.reload_errors = d->reload_errors,
		.http_errors = http__refused(d->http),
	};
	char *body = NULL;
	size_t len = 0;

	h.dropped_exec = session__lost_exec(d->s);
	h.dropped_other = session__lost_other(d->s);
	if (metrics__render(d->m, &h, &body, &len)) {
		http__answer_text(r, 500, "cuprobe daemon: out of memory\n");
		return;
	}
	http__answer(r, 200, NULL, body, len);
}

/* GET /trace: a trace of the output folder, streamed; refusals say why (trace_get.h). */
static void on_trace(struct daemon *d, struct dreq *r)
{
	char why[PATH_MAX + 256];
	uint64_t size = 0;
	int fd = trace_get__open(store__dirfd(d->store), store__out(d->store), r->path, &size, why,
				 sizeof(why));

	if (fd >= 0)
		http__answer_file(r, "application/json", fd, size);
	else
		http__answer_text(r, fd == -EINVAL ? 400 : fd == -ENOENT ? 404 : 403,
				  "trace: %s\n", why);
}

/* The HTTP queue's fd is readable: every request waiting is taken. */
static void serve_http(void *ctx)
{
	struct daemon *d = ctx;
	struct dreq *r;

	while ((r = http__next(d->http))) {
		if (r->kind == DREQ_METRICS)
			on_metrics(d, r);
		else if (r->kind == DREQ_TARGETS)
			jobs__targets(d, r);
		else if (r->kind == DREQ_TRACE)
			on_trace(d, r);
		else if (r->job[0])
			jobs__capture(d, r);
		else
			on_capture(d, r);
	}
}

/* The window bound the daemon started with, which a reload keeps, fits the new retentions. */
static int window_fits(const struct dconf *c, uint64_t window, char *err, size_t len)
{
	uint64_t least = c->retention < c->capture_retention ? c->retention : c->capture_retention;

	if (window <= least)
		return 0;
	snprintf(err, len, "retention %llu or capture-retention %llu is less than the "
		 "window-max-bytes the daemon started with (%llu), which changes only with a "
		 "restart: restart the daemon, or keep the retentions at %llu or more",
		 (unsigned long long)c->retention, (unsigned long long)c->capture_retention,
		 (unsigned long long)window, (unsigned long long)window);
	return -EINVAL;
}

/* SIGHUP: the file and the command line again; a config that fails changes nothing. */
static void reload(void *ctx, int signo)
{
	struct daemon *d = ctx;
	struct dconf c, *old;
	char err[512] = "";
	int rc;

	(void)signo;
	dconf__defaults(&c);
	rc = d->conf_path ? dconf__load(&c, d->conf_path, err, sizeof(err)) : 0;
	if (!rc && d->reparse)
		rc = d->reparse(&c, d->arg);
	if (!rc)
		rc = dconf__finish(&c, err, sizeof(err));
	if (!rc)
		rc = window_fits(&c, d->conf.window_max_bytes, err, sizeof(err));
	if (rc) {
		p_err("config not reloaded, the daemon keeps its settings: %s", err[0] ? err :
		      "bad command line");
		dconf__free(&c);
		d->reload_errors++;
		return;
	}
	if (strcmp(c.listen, d->conf.listen) || strcmp(c.output, d->conf.output))
		p_warn("config reloaded: listen and output change only with a restart");
	if (c.stack != d->conf.stack || strcmp(c.group, d->conf.group) ||
	    c.window_max_bytes != d->conf.window_max_bytes ||
	    c.window_max_launches != d->conf.window_max_launches)
		p_warn("config reloaded: stack, group and window-max-* change only with a restart");
	c.stack = d->conf.stack;
	c.window_max_bytes = d->conf.window_max_bytes;
	c.window_max_launches = d->conf.window_max_launches;
	snprintf(c.group, sizeof(c.group), "%s", d->conf.group);
	snprintf(c.listen, sizeof(c.listen), "%s", d->conf.listen);
	snprintf(c.output, sizeof(c.output), "%s", d->conf.output);
	/* Targets' plans point at the old rules: they are kept until the end. */
	old = realloc(d->old, (d->nold + 1) * sizeof(*old));
	if (!old) {
		dconf__free(&c);
		return;
	}
	d->old = old;
	d->old[d->nold++] = d->conf;
	d->conf = c;
	metrics__set_top(d->m, c.top_kernels);
	metrics__set_max_jobs(d->m, c.max_jobs);
	store__set_limit(d->store, c.retention);
	store__set_limit(d->captures, c.capture_retention);
	d->reloads++;
	p_info("config reloaded: %zu step rules; rules apply to processes found from now on",
	       c.nrules);
}

/*
 * The loop, with the signals blocked before any thread exists (the HTTP
 * server's, the prober's): threads inherit the mask, so that the signals
 * reach only the loop's signalfd. SIGHUP reloads; SIGINT and SIGTERM stop.
 */
static int make_loop(struct daemon *d)
{
	signal(SIGPIPE, SIG_IGN);
	d->loop = cmd_loop__new(NULL);
	if (!d->loop)
		return -errno;
	cmd_loop__keep_running(d->loop);
	return cmd_loop__on_signal(d->loop, SIGHUP, reload, d);
}

/* The session's crank, the HTTP queue and the tick, all turned by the loop. */
static int setup_loop(struct daemon *d)
{
	int err = cmd_loop__set_session(d->loop, d->s);

	if (!err)
		err = cmd_loop__add_fd(d->loop, http__fd(d->http), serve_http, d);
	if (!err)
		cmd_loop__set_tick(d->loop, TICK_NS, tick, d);
	return err;
}

/* Traces root's only, or readable by the configured group. 0, or -ENOENT (said). */
static int output_mode(const struct dconf *c, struct out_mode *om)
{
	struct group *g;

	*om = (struct out_mode){ .file = 0600, .dir = 0700 };
	if (!c->group[0])
		return 0;
	g = getgrnam(c->group);
	if (!g) {
		p_err("group %s: no such group: make it (groupadd %s) or give another with --group",
		      c->group, c->group);
		return -ENOENT;
	}
	*om = (struct out_mode){ .file = 0640, .dir = 0750, .gid = g->gr_gid, .share_group = true };
	return 0;
}

static int start(struct daemon *d)
{
	struct session_opts so = {
		.ringbuf_bytes = 4 << 20,
		.modes = 1u << MODE_OFF | 1u << MODE_BPF | 1u << MODE_CUPTI,
		.steps = true,
		.cupti_wait = 2.0,
		.watch_exec = true,
		.stack = d->conf.stack,
		.bounds = { .launches = d->conf.window_max_launches,
			    .bytes = d->conf.window_max_bytes },
		.plan = { .slice_ns = (uint64_t)(d->conf.slice * NS), .mode = MODE_BPF,
			  .sched = { .skip_first = UINT32_MAX, .active = 1 } },
	};
	struct session_hooks h = {
		.ctx = d, .cycle_dir = hook_dir, .cycle_done = hook_cycle, .step_done = hook_step,
		.exited = hook_exited, .exec = hook_exec,
	};
	char err[512] = "", cap_out[PATH_MAX + 16];
	int rc;

	rc = make_loop(d);
	if (rc)
		return rc;
	rc = output_mode(&d->conf, &so.out);
	if (rc)
		return rc;
	d->store = store__new(d->conf.output, d->conf.retention, &so.out, err, sizeof(err));
	if (!d->store) {
		p_err("%s", err);
		return -errno;
	}
	snprintf(cap_out, sizeof(cap_out), "%s/captures", d->conf.output);
	d->captures = store__new(cap_out, d->conf.capture_retention, &so.out, err, sizeof(err));
	if (!d->captures) {
		p_err("%s", err);
		return -errno;
	}
	d->http = http__start(&(struct http_opts){ .listen = d->conf.listen, .web = d->web,
						   .max_captures = d->conf.max_captures },
			      err, sizeof(err));
	if (!d->http) {
		p_err("%s", err);
		return -errno;
	}
	d->m = metrics__new(d->conf.top_kernels);
	d->cands = calloc(MAX_CANDIDATES, sizeof(*d->cands));
	if (!d->m || !d->cands)
		return -ENOMEM;
	metrics__set_max_jobs(d->m, d->conf.max_jobs);
	d->s = session__new(&so, &h);
	if (!d->s)
		return -errno;
	return setup_loop(d);
}

static void finish(struct daemon *d)
{
	if (d->s) {
		/* Windows in progress are written (partial) and their captures answered. */
		session__finish(d->s);
		for (size_t i = 0; i < d->nprocs; i++) {
			answer_capture(&d->procs[i]->capture, 503, "the daemon is stopping",
				       d->procs[i]->pid);
			answer_capture(&d->procs[i]->waiting, 503, "the daemon is stopping",
				       d->procs[i]->pid);
		}
		jobs__stop(d);
	}
	http__stop(d->http);
	session__free(d->s);
	while (d->nprocs)
		drop_proc(d, d->nprocs - 1);
	free(d->procs);
	free(d->cands);
	metrics__free(d->m);
	store__free(d->store);
	store__free(d->captures);
	for (size_t i = 0; i < d->nold; i++)
		dconf__free(&d->old[i]);
	free(d->old);
	cmd_loop__free(d->loop);
}

int service__run(const struct dconf *conf, const struct webconf *web, const char *conf_path,
		 int (*reparse)(struct dconf *c, void *arg), void *arg)
{
	struct daemon d = {
		.conf = *conf, .web = web, .conf_path = conf_path, .reparse = reparse, .arg = arg,
		.self = getpid(),
	};
	int err;

	d.rng = (unsigned int)clock_mono_ns() ^ (unsigned int)getpid();
	err = step_spec__parse("torch", &d.torch.spec, d.torch.match, sizeof(d.torch.match));
	if (!err)
		err = start(&d);
	if (!err) {
		candidates__scan(&d);
		p_info("listening on %s://%s/metrics%s; %zu CUDA %s found; traces in %s",
		       web && web->tls ? "https" : "http", d.conf.listen,
		       web ? " (web-config)" : "", d.nprocs,
		       plural(d.nprocs, "process", "processes"), d.conf.output);
		err = cmd_loop__run(d.loop, 0);
		if (err)
			p_err("the daemon stops: %s", strerror(-err));
	}
	finish(&d);
	dconf__free(&d.conf);
	step_spec__free(&d.torch.spec);
	if (!err)
		p_info("stopped");
	return err ? 1 : 0;
}
