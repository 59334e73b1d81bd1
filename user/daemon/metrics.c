// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "daemon/metrics.h"
#include "util/utf8.h"

/* Step times: from a millisecond to a minute. */
static const double step_bounds[] = { 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
				      0.5, 1, 2.5, 5, 10, 30, 60 };
/* GPU kernels: from a microsecond to ten seconds. */
static const double gpu_bounds[] = { 1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4,
				     5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 0.1, 1, 10 };
#define NBOUNDS_MAX 16

struct histo {
	uint64_t bucket[NBOUNDS_MAX + 1];	/* not cumulative; the last is +Inf */
	uint64_t count;
	double sum;
};

/* A (kernel, api) series; kernel "other" takes what the top slots do not. */
struct kseries {
	char *kernel;
	char *api;
	uint64_t n;
};

/* The (kernel, api) series of one metric of a process, with their top-K slots. */
struct kset {
	struct kseries *ks;
	size_t nks;
	size_t named;			/* distinct kernel names with slots of their own */
};

/* A job label value and how many processes' series carry it. */
struct job_slot {
	char *name;
	size_t refs;
};

struct pmetrics {
	pid_t pid;
	char comm[64];
	int rank;
	char *cgroup, *container;
	/* cuprobe_target_info's: the job's value (a job_slot's name, "" none), the pod's. */
	const char *job;
	int world_size, local_rank;
	char *ns, *pod, *labels;
	bool has_step;
	uint64_t cur_step;
	bool gone;
	uint64_t gone_at;
	struct kset launch_ks;		/* cuprobe_launches_total */
	struct kset graph_ks;		/* cuprobe_graph_kernels_total */
	uint32_t top;			/* how many kernels of each may have a slot */
	struct histo step, gpu;
	uint64_t windows[MODE__COUNT][WIN_RESULT__COUNT];
	uint64_t drops;
	double overhead;
	bool backoff;
	uint64_t launches;
	uint64_t captured;
	uint64_t replays_known, replays_unknown;
};

struct metrics {
	struct pmetrics **v;
	size_t n, cap;
	uint32_t top;
	struct job_slot *jobs;
	size_t njobs;
	uint32_t max_jobs;
	uint64_t jobs_other;		/* processes whose job got "other" */
};

static const char OTHER_JOB[] = "other";

static const char *const mode_names[MODE__COUNT] = { "off", "bpf", "cupti", "latency" };
static const char *const result_names[WIN_RESULT__COUNT] = { "ok", "partial", "error",
							     "skipped_budget", "skipped_busy", "cut",
							     "skipped_disk" };

const char *metrics__result_name(enum window_result r)
{
	return r < WIN_RESULT__COUNT ? result_names[r] : "?";
}

struct metrics *metrics__new(uint32_t top_kernels)
{
	struct metrics *m = calloc(1, sizeof(*m));

	if (m) {
		m->top = top_kernels;
		m->max_jobs = 64;
	}
	return m;
}

void metrics__set_max_jobs(struct metrics *m, uint32_t max_jobs)
{
	m->max_jobs = max_jobs;
}

/* The job's label value for a new process: its own slot, or "other" past the bound. */
static const char *job_take(struct metrics *m, const char *name)
{
	struct job_slot *nj;

	if (!name || !*name)
		return "";
	for (size_t i = 0; i < m->njobs; i++)
		if (!strcmp(m->jobs[i].name, name)) {
			m->jobs[i].refs++;
			return m->jobs[i].name;
		}
	if (m->njobs >= m->max_jobs || !(nj = realloc(m->jobs, (m->njobs + 1) * sizeof(*nj)))) {
		m->jobs_other++;
		return OTHER_JOB;
	}
	m->jobs = nj;
	nj[m->njobs].name = strdup(name);
	if (!nj[m->njobs].name) {
		m->jobs_other++;
		return OTHER_JOB;
	}
	nj[m->njobs].refs = 1;
	return nj[m->njobs++].name;
}

static void job_drop(struct metrics *m, const char *name)
{
	for (size_t i = 0; i < m->njobs; i++) {
		if (m->jobs[i].name != name || --m->jobs[i].refs)
			continue;
		free(m->jobs[i].name);
		m->jobs[i] = m->jobs[--m->njobs];
		return;
	}
}

static void kset_free(struct kset *s)
{
	for (size_t i = 0; i < s->nks; i++) {
		free(s->ks[i].kernel);
		free(s->ks[i].api);
	}
	free(s->ks);
}

static void pm_free(struct pmetrics *pm)
{
	kset_free(&pm->launch_ks);
	kset_free(&pm->graph_ks);
	free(pm->cgroup);
	free(pm->container);
	free(pm->ns);
	free(pm->pod);
	free(pm->labels);
	free(pm);
}

void metrics__free(struct metrics *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		pm_free(m->v[i]);
	free(m->v);
	for (size_t i = 0; i < m->njobs; i++)
		free(m->jobs[i].name);
	free(m->jobs);
	free(m);
}

void metrics__set_top(struct metrics *m, uint32_t top_kernels)
{
	m->top = top_kernels;
}

static void remove_at(struct metrics *m, size_t i)
{
	job_drop(m, m->v[i]->job);
	pm_free(m->v[i]);
	m->v[i] = m->v[--m->n];
}

struct pmetrics *metrics__proc(struct metrics *m, const struct plabels *l)
{
	struct pmetrics *pm;

	for (size_t i = 0; i < m->n; i++) {
		if (m->v[i]->pid != l->pid)
			continue;
		if (!m->v[i]->gone)
			return m->v[i];
		/* The pid was reused: the old process's series go now. */
		remove_at(m, i);
		break;
	}
	if (m->n == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 16;
		struct pmetrics **nv = realloc(m->v, cap * sizeof(*nv));

		if (!nv)
			return NULL;
		m->v = nv;
		m->cap = cap;
	}
	pm = calloc(1, sizeof(*pm));
	if (!pm)
		return NULL;
	pm->pid = l->pid;
	pm->top = m->top;
	snprintf(pm->comm, sizeof(pm->comm), "%s", l->comm);
	pm->rank = l->rank;
	pm->cgroup = strdup(l->cgroup ? l->cgroup : "");
	pm->container = strdup(l->container ? l->container : "");
	pm->world_size = pm->local_rank = -1;
	pm->ns = strdup(l->job ? l->job->ns : "");
	pm->pod = strdup(l->job ? l->job->pod : "");
	pm->labels = strdup(l->job ? l->job->labels : "");
	if (!pm->cgroup || !pm->container || !pm->ns || !pm->pod || !pm->labels) {
		pm_free(pm);
		return NULL;
	}
	if (l->job) {
		pm->world_size = l->job->world_size;
		pm->local_rank = l->job->local_rank;
	}
	pm->job = job_take(m, l->job ? l->job->job : NULL);
	m->v[m->n++] = pm;
	return pm;
}

void metrics__gone(struct metrics *m, struct pmetrics *pm, uint64_t now)
{
	(void)m;
	pm->gone = true;
	pm->gone_at = now;
	pm->overhead = 0;
	pm->backoff = false;
}

void metrics__expire(struct metrics *m, uint64_t now, uint64_t linger_ns)
{
	for (size_t i = 0; i < m->n;) {
		if (m->v[i]->gone && now - m->v[i]->gone_at >= linger_ns)
			remove_at(m, i);
		else
			i++;
	}
}

size_t metrics__count(const struct metrics *m)
{
	return m->n;
}

static struct kseries *find_ks(struct kset *s, const char *kernel, const char *api)
{
	for (size_t i = 0; i < s->nks; i++)
		if (!strcmp(s->ks[i].kernel, kernel) && !strcmp(s->ks[i].api, api))
			return &s->ks[i];
	return NULL;
}

static bool has_kernel(const struct kset *s, const char *kernel)
{
	for (size_t i = 0; i < s->nks; i++)
		if (!strcmp(s->ks[i].kernel, kernel))
			return true;
	return false;
}

/*
 * A kernel keeps the slot it got first, so that counters only grow: the
 * first top-K distinct names a process launches get series of their own
 * (the daemon hands each window's kernels over busiest first), the rest
 * count as kernel="other".
 */
static int kset_add(struct kset *s, uint32_t top, const char *kernel, const char *api,
		    uint64_t n)
{
	struct kseries *k, *nks;
	const char *name = kernel ? kernel : "";

	if (kernel && !has_kernel(s, kernel)) {
		if (s->named >= top)
			name = "other";
		else
			s->named++;
	}
	k = find_ks(s, name, api);
	if (k) {
		k->n += n;
		return 0;
	}
	nks = realloc(s->ks, (s->nks + 1) * sizeof(*nks));
	if (!nks)
		return -ENOMEM;
	s->ks = nks;
	k = &s->ks[s->nks];
	k->kernel = strdup(name);
	k->api = strdup(api);
	if (!k->kernel || !k->api) {
		free(k->kernel);
		free(k->api);
		return -ENOMEM;
	}
	k->n = n;
	s->nks++;
	return 0;
}

int pmetrics__launches(struct pmetrics *pm, const char *kernel, const char *api, uint64_t n)
{
	pm->launches += n;
	return kset_add(&pm->launch_ks, pm->top, kernel, api, n);
}

int pmetrics__graph_kernels(struct pmetrics *pm, const char *kernel, const char *api, uint64_t n)
{
	return kset_add(&pm->graph_ks, pm->top, kernel, api, n);
}

void pmetrics__graph_replays(struct pmetrics *pm, uint64_t known, uint64_t unknown)
{
	pm->replays_known += known;
	pm->replays_unknown += unknown;
}

static void histo_add(struct histo *h, const double *bounds, size_t nb, double v)
{
	size_t i = 0;

	while (i < nb && v > bounds[i])
		i++;
	h->bucket[i]++;
	h->count++;
	h->sum += v;
}

void pmetrics__step(struct pmetrics *pm, double seconds)
{
	histo_add(&pm->step, step_bounds, sizeof(step_bounds) / sizeof(step_bounds[0]), seconds);
}

void pmetrics__gpu_kernel(struct pmetrics *pm, double seconds)
{
	histo_add(&pm->gpu, gpu_bounds, sizeof(gpu_bounds) / sizeof(gpu_bounds[0]), seconds);
}

void pmetrics__window(struct pmetrics *pm, enum window_mode mode, enum window_result r)
{
	pm->windows[mode][r]++;
}

void pmetrics__captured(struct pmetrics *pm, uint64_t n)
{
	pm->captured += n;
}

void pmetrics__drops(struct pmetrics *pm, uint64_t n)
{
	pm->drops += n;
}

void pmetrics__overhead(struct pmetrics *pm, double ratio, bool backoff)
{
	pm->overhead = ratio;
	pm->backoff = backoff;
}

void pmetrics__target_step(struct pmetrics *pm, uint64_t step)
{
	pm->has_step = true;
	pm->cur_step = step;
}

const char *pmetrics__job(const struct pmetrics *pm)
{
	return pm->job;
}

uint64_t pmetrics__launch_total(const struct pmetrics *pm)
{
	return pm->launches;
}

/*
 * A label value, escaped as the text format wants, and valid UTF-8 whatever
 * the bytes (a binary named with invalid UTF-8 must not make the whole page
 * unreadable to Prometheus): each byte of a broken sequence becomes U+FFFD.
 */
static void put_value(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	int n;

	fputc('"', f);
	for (; *s; s += n) {
		n = utf8__len(s);
		if (*s == '\\' || *s == '"')
			fprintf(f, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", f);
		else if (n)
			fwrite(s, 1, (size_t)n, f);
		else
			fputs("\xef\xbf\xbd", f);
		n = n ? n : 1;
	}
	fputc('"', f);
}

/* pid, comm, and rank, cgroup and container where known. */
static void put_labels(FILE *f, const struct pmetrics *pm)
{
	fprintf(f, "pid=\"%d\",comm=", (int)pm->pid);
	put_value(f, pm->comm);
	if (pm->rank >= 0)
		fprintf(f, ",rank=\"%d\"", pm->rank);
	if (*pm->cgroup) {
		fputs(",cgroup=", f);
		put_value(f, pm->cgroup);
	}
	if (*pm->container) {
		fputs(",container=", f);
		put_value(f, pm->container);
	}
}

static void head(FILE *f, const char *name, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void put_histo(FILE *f, const char *name, const struct pmetrics *pm, const struct histo *h,
		      const double *bounds, size_t nb)
{
	uint64_t cum = 0;

	for (size_t i = 0; i <= nb; i++) {
		cum += h->bucket[i];
		fprintf(f, "%s_bucket{", name);
		put_labels(f, pm);
		if (i < nb)
			fprintf(f, ",le=\"%g\"} %llu\n", bounds[i], (unsigned long long)cum);
		else
			fprintf(f, ",le=\"+Inf\"} %llu\n", (unsigned long long)cum);
	}
	fprintf(f, "%s_sum{", name);
	put_labels(f, pm);
	fprintf(f, "} %.9g\n%s_count{", h->sum, name);
	put_labels(f, pm);
	fprintf(f, "} %llu\n", (unsigned long long)h->count);
}

static const struct kset *launch_set(const struct pmetrics *pm)
{
	return &pm->launch_ks;
}

static const struct kset *graph_set(const struct pmetrics *pm)
{
	return &pm->graph_ks;
}

/* The (kernel, api) series of every process's set of one metric. */
static void render_kset(FILE *f, const struct metrics *m, const char *name,
			const struct kset *(*set)(const struct pmetrics *pm))
{
	for (size_t i = 0; i < m->n; i++) {
		const struct pmetrics *pm = m->v[i];
		const struct kset *s = set(pm);

		for (size_t k = 0; k < s->nks; k++) {
			fprintf(f, "%s{", name);
			put_labels(f, pm);
			fputs(",kernel=", f);
			put_value(f, s->ks[k].kernel);
			fputs(",api=", f);
			put_value(f, s->ks[k].api);
			fprintf(f, "} %llu\n", (unsigned long long)s->ks[k].n);
		}
	}
}

static void render_launches(FILE *f, const struct metrics *m)
{
	head(f, "cuprobe_launches_total", "counter",
	     "Launches recorded in sampled windows, by kernel (top-K per process, the rest "
	     "\"other\") and API.");
	render_kset(f, m, "cuprobe_launches_total", launch_set);
}

/* What graph replays ran, apart from the launches: a replay is one launch there. */
static void render_graphs(FILE *f, const struct metrics *m)
{
	head(f, "cuprobe_graph_kernels_total", "counter",
	     "Kernels run by graph replays of known content in sampled windows, by kernel "
	     "(top-K per process, the rest \"other\") and the graph launch's API.");
	render_kset(f, m, "cuprobe_graph_kernels_total", graph_set);
	head(f, "cuprobe_graph_replays_total", "counter",
	     "Graph replays in sampled windows, by whether cuprobe knew what the graph holds "
	     "(content=\"unknown\": made before cuprobe attached).");
	for (size_t i = 0; i < m->n; i++) {
		fputs("cuprobe_graph_replays_total{", f);
		put_labels(f, m->v[i]);
		fprintf(f, ",content=\"known\"} %llu\n", (unsigned long long)m->v[i]->replays_known);
		fputs("cuprobe_graph_replays_total{", f);
		put_labels(f, m->v[i]);
		fprintf(f, ",content=\"unknown\"} %llu\n",
			(unsigned long long)m->v[i]->replays_unknown);
	}
}

static void render_captured(FILE *f, const struct metrics *m)
{
	head(f, "cuprobe_captured_launches_total", "counter",
	     "Launches, copies and sets of sampled windows made into captured streams: "
	     "graph nodes, not work run, and not in cuprobe_launches_total.");
	for (size_t i = 0; i < m->n; i++) {
		fputs("cuprobe_captured_launches_total{", f);
		put_labels(f, m->v[i]);
		fprintf(f, "} %llu\n", (unsigned long long)m->v[i]->captured);
	}
}

static void render_histos(FILE *f, const struct metrics *m)
{
	size_t nstep = sizeof(step_bounds) / sizeof(step_bounds[0]);
	size_t ngpu = sizeof(gpu_bounds) / sizeof(gpu_bounds[0]);

	head(f, "cuprobe_step_seconds", "histogram",
	     "Wall time of each step the step probe saw (processes with a step rule).");
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i]->step.count)
			put_histo(f, "cuprobe_step_seconds", m->v[i], &m->v[i]->step, step_bounds,
				  nstep);
	head(f, "cuprobe_gpu_kernel_seconds", "histogram",
	     "GPU time of each kernel of cupti windows.");
	for (size_t i = 0; i < m->n; i++)
		if (m->v[i]->gpu.count)
			put_histo(f, "cuprobe_gpu_kernel_seconds", m->v[i], &m->v[i]->gpu, gpu_bounds,
				  ngpu);
}

static void render_windows(FILE *f, const struct metrics *m)
{
	head(f, "cuprobe_windows_total", "counter",
	     "Sampled windows by mode and result (ok, partial, error, skipped_budget, "
	     "skipped_busy, cut at window-max-bytes or -launches, skipped_disk: no room "
	     "under retention).");
	for (size_t i = 0; i < m->n; i++)
		for (int md = 0; md < MODE__COUNT; md++)
			for (int r = 0; r < WIN_RESULT__COUNT; r++) {
				if (!m->v[i]->windows[md][r])
					continue;
				fputs("cuprobe_windows_total{", f);
				put_labels(f, m->v[i]);
				fprintf(f, ",mode=\"%s\",result=\"%s\"} %llu\n", mode_names[md],
					result_names[r],
					(unsigned long long)m->v[i]->windows[md][r]);
			}
}

static void render_proc_gauges(FILE *f, const struct metrics *m, const struct metrics_host *h)
{
	head(f, "cuprobe_dropped_events_total", "counter",
	     "Events lost: launches of sampled windows (kind=\"launch\"), exec events "
	     "(kind=\"exec\"), launches outside any target (kind=\"other\").");
	for (size_t i = 0; i < m->n; i++) {
		fputs("cuprobe_dropped_events_total{", f);
		put_labels(f, m->v[i]);
		fprintf(f, ",kind=\"launch\"} %llu\n", (unsigned long long)m->v[i]->drops);
	}
	fprintf(f, "cuprobe_dropped_events_total{kind=\"exec\"} %llu\n",
		(unsigned long long)h->dropped_exec);
	fprintf(f, "cuprobe_dropped_events_total{kind=\"other\"} %llu\n",
		(unsigned long long)h->dropped_other);
	head(f, "cuprobe_overhead_ratio", "gauge",
	     "Estimated probe cost over the process's CPU time, over the budget window.");
	for (size_t i = 0; i < m->n; i++) {
		if (m->v[i]->gone)
			continue;
		fputs("cuprobe_overhead_ratio{", f);
		put_labels(f, m->v[i]);
		fprintf(f, "} %.9g\n", m->v[i]->overhead);
	}
	head(f, "cuprobe_budget_backoff", "gauge",
	     "1 while sampling of the process is held back to keep within --budget.");
	for (size_t i = 0; i < m->n; i++) {
		if (m->v[i]->gone)
			continue;
		fputs("cuprobe_budget_backoff{", f);
		put_labels(f, m->v[i]);
		fprintf(f, "} %d\n", m->v[i]->backoff);
	}
}

/* label_<key> as kube-state-metrics names a pod label: what is not [a-zA-Z0-9_] is '_'. */
static void put_pod_labels(FILE *f, const char *labels)
{
	for (const char *p = labels; *p;) {
		size_t n = strcspn(p, "\n");
		const char *eq = memchr(p, '=', n);
		char val[JOBINFO_VALUE_MAX];

		if (eq) {
			fputs(",label_", f);
			for (const char *k = p; k < eq; k++)
				fputc(isalnum((unsigned char)*k) ? *k : '_', f);
			fputc('=', f);
			snprintf(val, sizeof(val), "%.*s", (int)(p + n - eq - 1), eq + 1);
			put_value(f, val);
		}
		p += n + (p[n] == '\n');
	}
}

/*
 * The job and pod of each live process, once, in an info metric
 * (node_exporter's *_info): joined on pid, so that no other series'
 * cardinality grows with them.
 */
static void render_targets(FILE *f, const struct metrics *m)
{
	head(f, "cuprobe_target_info", "gauge",
	     "1 per sampled process, with its job, rank, world size and pod: join on pid.");
	for (size_t i = 0; i < m->n; i++) {
		const struct pmetrics *pm = m->v[i];

		if (pm->gone)
			continue;
		fputs("cuprobe_target_info{", f);
		put_labels(f, pm);
		fputs(",job=", f);
		put_value(f, pm->job);
		if (pm->world_size >= 0)
			fprintf(f, ",world_size=\"%d\"", pm->world_size);
		if (pm->local_rank >= 0)
			fprintf(f, ",local_rank=\"%d\"", pm->local_rank);
		fputs(",namespace=", f);
		put_value(f, pm->ns);
		fputs(",pod=", f);
		put_value(f, pm->pod);
		put_pod_labels(f, pm->labels);
		fputs("} 1\n", f);
	}
	head(f, "cuprobe_job_ranks", "gauge", "Processes of each job the daemon samples.");
	for (size_t j = 0; j < m->njobs + 1; j++) {
		const char *name = j < m->njobs ? m->jobs[j].name : OTHER_JOB;
		size_t n = 0;

		for (size_t i = 0; i < m->n; i++)
			n += !m->v[i]->gone && m->v[i]->job == name;
		if (j == m->njobs && !n)
			continue;
		fputs("cuprobe_job_ranks{job=", f);
		put_value(f, name);
		fprintf(f, "} %zu\n", n);
	}
	head(f, "cuprobe_jobs_other_total", "counter",
	     "Processes labelled job=\"other\": their job came past --max-jobs.");
	fprintf(f, "cuprobe_jobs_other_total %llu\n", (unsigned long long)m->jobs_other);
	head(f, "cuprobe_target_step", "gauge",
	     "The step a process with a step probe is in: hits of its step probe since the daemon "
	     "found it.");
	for (size_t i = 0; i < m->n; i++) {
		if (m->v[i]->gone || !m->v[i]->has_step)
			continue;
		fputs("cuprobe_target_step{", f);
		put_labels(f, m->v[i]);
		fputs(",job=", f);
		put_value(f, m->v[i]->job);
		fprintf(f, "} %llu\n", (unsigned long long)m->v[i]->cur_step);
	}
}

static void render_host(FILE *f, const struct metrics_host *h)
{
	head(f, "cuprobe_targets", "gauge", "CUDA processes the daemon samples.");
	fprintf(f, "cuprobe_targets %u\n", h->targets);
	head(f, "cuprobe_candidates", "gauge",
	     "Processes that ran a new program, still being checked for CUDA.");
	fprintf(f, "cuprobe_candidates %u\n", h->candidates);
	head(f, "cuprobe_probe_hit_seconds", "gauge",
	     "What one launch probe hit costs here, measured at start (-1: unknown).");
	fprintf(f, "cuprobe_probe_hit_seconds %.9g\n", h->probe_seconds);
	head(f, "cuprobe_traces_bytes", "gauge", "Bytes of traces kept under the output folder.");
	fprintf(f, "cuprobe_traces_bytes %llu\n", (unsigned long long)h->traces_bytes);
	head(f, "cuprobe_traces_removed_total", "counter",
	     "Window folders removed to keep within --retention.");
	fprintf(f, "cuprobe_traces_removed_total %llu\n", (unsigned long long)h->traces_removed);
	head(f, "cuprobe_config_reloads_total", "counter", "Config reloads (SIGHUP), by result.");
	fprintf(f, "cuprobe_config_reloads_total{result=\"ok\"} %llu\n",
		(unsigned long long)h->reloads);
	fprintf(f, "cuprobe_config_reloads_total{result=\"error\"} %llu\n",
		(unsigned long long)h->reload_errors);
	head(f, "cuprobe_http_errors_total", "counter", "HTTP requests refused (4xx or 5xx).");
	fprintf(f, "cuprobe_http_errors_total %llu\n", (unsigned long long)h->http_errors);
}

int metrics__render(const struct metrics *m, const struct metrics_host *h, char **out,
		    size_t *len)
{
	FILE *f = open_memstream(out, len);

	if (!f)
		return -ENOMEM;
	render_launches(f, m);
	render_captured(f, m);
	render_graphs(f, m);
	render_histos(f, m);
	render_windows(f, m);
	render_proc_gauges(f, m, h);
	render_targets(f, m);
	render_host(f, h);
	return fclose(f) ? -ENOMEM : 0;
}
