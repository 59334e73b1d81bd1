// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The compare model and its analysis. Step times come from the step probe,
 * which stays on in every mode, so every mode's steps are timed the same
 * way; launch counts come from the windows' cycle counts; per-kernel and
 * per-API figures and the costs that traces record come from reading each
 * probed window's trace with the report model, after the run, so that no
 * reading competes with the target while it is measured.
 */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "compare/compare_model.h"
#include "report/read.h"
#include "trace/format.h"
#include "util/log.h"

void compare__init(struct compare *c, const struct compare_config *cfg)
{
	memset(c, 0, sizeof(*c));
	c->cfg = *cfg;
	c->steps = VEC_INIT(struct compare_step);
	c->windows = VEC_INIT(struct compare_window);
	c->notes = VEC_INIT(char *);
	c->pid_windows = VEC_INIT(struct compare_pid_windows);
	c->kernels = VEC_INIT(struct compare_kernel);
	c->norder = compare_order(cfg->modes, cfg->nmodes, cfg->rounds, c->order);
	for (int m = 0; m < MODE__COUNT; m++) {
		c->res[m].apis = VEC_INIT(struct compare_api);
		c->res[m].explained = -1;
	}
	for (size_t i = 0; i < cfg->nmodes; i++) {
		c->res[cfg->modes[i]].selected = true;
		c->res[cfg->modes[i]].windows_planned = cfg->rounds;
	}
}

void compare__free(struct compare *c)
{
	for (size_t i = 0; i < c->windows.len; i++)
		free(vec_at(&c->windows, struct compare_window, i)->path);
	for (size_t i = 0; i < c->notes.len; i++)
		free(*vec_at(&c->notes, char *, i));
	for (size_t i = 0; i < c->kernels.len; i++)
		free(vec_at(&c->kernels, struct compare_kernel, i)->name);
	for (int m = 0; m < MODE__COUNT; m++)
		vec__free(&c->res[m].apis);
	vec__free(&c->steps);
	vec__free(&c->windows);
	vec__free(&c->notes);
	vec__free(&c->pid_windows);
	vec__free(&c->kernels);
}

void compare__note(struct compare *c, const char *fmt, ...)
{
	char *s, **slot;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (!s)
		return;
	for (size_t i = 0; i < c->notes.len; i++) {
		if (!strcmp(*vec_at(&c->notes, char *, i), s)) {
			free(s);
			return;
		}
	}
	slot = vec__push(&c->notes);
	if (slot)
		*slot = s;
	else
		free(s);
}

int compare__step(struct compare *c, pid_t pid, const struct cycle_step_info *si)
{
	struct compare_step *st;

	if (si->end_mono < si->start_mono)
		return 0;
	st = vec__push(&c->steps);
	if (!st)
		return -ENOMEM;
	*st = (struct compare_step){
		.pid = pid, .step = si->step, .start_mono = si->start_mono,
		.dur_ns = si->end_mono - si->start_mono,
		.mode = phase_records(si->phase) ? (int)si->mode : -1,
		.window = si->cycle, .partial = si->partial,
	};
	if (!c->t0 || si->start_mono < c->t0)
		c->t0 = si->start_mono;
	return 0;
}

/* One more window of pid ended. 0 or -ENOMEM. */
static int count_window(struct compare *c, pid_t pid)
{
	struct compare_pid_windows *p;

	for (size_t i = 0; i < c->pid_windows.len; i++) {
		p = vec_at(&c->pid_windows, struct compare_pid_windows, i);
		if (p->pid == pid) {
			p->n++;
			return 0;
		}
	}
	p = vec__push(&c->pid_windows);
	if (!p)
		return -ENOMEM;
	*p = (struct compare_pid_windows){ .pid = pid, .n = 1 };
	return 0;
}

int compare__window(struct compare *c, pid_t pid, const struct cycle_info *ci, bool agent)
{
	struct compare_window *w;

	if (count_window(c, pid))
		return -ENOMEM;
	w = vec__push(&c->windows);
	if (!w)
		return -ENOMEM;
	*w = (struct compare_window){
		.k = ci->k, .mode = ci->mode, .pid = pid, .launches = ci->launches,
		.drops = ci->drops, .hits = ci->hits, .first_step = ci->first_step,
		.last_step = ci->last_step, .partial = ci->partial, .agent = agent, .err = ci->err,
	};
	if (ci->path && !(w->path = strdup(ci->path)))
		return -ENOMEM;
	return 0;
}

uint32_t compare__mode_index(const struct compare *c, uint32_t k)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < k && i < c->norder; i++)
		n += c->order[i] == c->order[k];
	return n;
}

bool compare__complete(const struct compare *c)
{
	for (size_t i = 0; i < c->pid_windows.len; i++)
		if (vec_at(&c->pid_windows, struct compare_pid_windows, i)->n < c->norder)
			return false;
	return c->pid_windows.len > 0;
}

/* The complete measured steps of mode m, in ns. */
static double *mode_samples(const struct compare *c, int m, size_t *n)
{
	double *x = malloc((c->steps.len ? c->steps.len : 1) * sizeof(*x));

	*n = 0;
	if (!x)
		return NULL;
	for (size_t i = 0; i < c->steps.len; i++) {
		const struct compare_step *s = vec_at(&c->steps, struct compare_step, i);

		if (s->mode == m && !s->partial)
			x[(*n)++] = (double)s->dur_ns;
	}
	return x;
}

static int analyse_steps(struct compare *c)
{
	size_t n_off = 0, n;
	double *off = mode_samples(c, MODE_OFF, &n_off);
	int err = 0;

	if (!off)
		return -ENOMEM;
	for (int m = 0; m < MODE__COUNT && !err; m++) {
		struct compare_result *r = &c->res[m];
		double *x;

		if (!r->selected)
			continue;
		x = mode_samples(c, m, &n);
		if (!x) {
			err = -ENOMEM;
			break;
		}
		r->steps = n;
		r->has_steps = n && !dist__of(x, n, &r->step_ns);
		if (r->has_steps && m != MODE_OFF && n_off &&
		    !median_cmp__of(off, n_off, x, n, 0.95, COMPARE_BOOTSTRAP_ITERS,
				    COMPARE_BOOTSTRAP_SEED, &r->vs_off))
			r->has_vs_off = true;
		if (r->has_steps && (n < COMPARE_MIN_CI_SAMPLES ||
				     (m != MODE_OFF && n_off && n_off < COMPARE_MIN_CI_SAMPLES)))
			compare__note(c, "%s: too few steps for a confidence interval (%zu here, %zu "
				      "in off; %d each are needed): raise --steps-per-mode or --rounds",
				      compare_mode_name(m), n, n_off, COMPARE_MIN_CI_SAMPLES);
		free(x);
	}
	free(off);
	return err;
}

static void analyse_windows(struct compare *c)
{
	for (size_t i = 0; i < c->windows.len; i++) {
		const struct compare_window *w = vec_at(&c->windows, struct compare_window, i);
		struct compare_result *r = &c->res[w->mode];

		r->windows_run++;
		r->windows_partial += w->partial;
		if (w->mode == MODE_OFF)
			continue;
		r->has_launches = true;
		r->launches += w->launches;
		r->drops += w->drops;
		r->hits += w->hits;
		/* Per step: complete windows only, whose steps all ended. */
		if (!w->partial && w->first_step >= 0 && w->last_step >= w->first_step) {
			r->window_steps += (uint64_t)(w->last_step - w->first_step + 1);
			r->step_launches += w->launches + w->drops;
			r->step_hits += w->hits;
		}
		if (w->mode == MODE_CUPTI && !w->agent && c->cfg.cmd)
			compare__note(c, "cupti: pid %ld has no cuprobe agent loaded, so its cupti "
				      "windows recorded launches only: the CUDA driver did not load "
				      "CUDA_INJECTION64_PATH (no GPU or driver here?)", (long)w->pid);
		else if (w->mode == MODE_CUPTI && !w->agent)
			compare__note(c, "cupti: pid %ld has no cuprobe agent loaded, so its cupti "
				      "windows recorded launches only (start the process with "
				      "CUDA_INJECTION64_PATH=libcuprobe-agent.so, or compare -- COMMAND)",
				      (long)w->pid);
		if (w->err)
			compare__note(c, "%s: window %u of pid %ld could not be written: %s",
				      compare_mode_name(w->mode), w->k, (long)w->pid, strerror(-w->err));
	}
}

struct api_acc {
	char name[64];
	struct vec durs; /* double */
};

/* Per-API durations of a --latency trace: its launch events' dur. */
static int read_latencies(const char *path, struct vec *accs)
{
	json_error_t jerr;
	json_t *root = json_load_file(path, 0, &jerr), *evs, *ev;
	size_t i;

	if (!root)
		return -EINVAL;
	evs = json_object_get(root, TRACE_KEY_EVENTS);
	json_array_foreach(evs, i, ev) {
		const char *cat = json_string_value(json_object_get(ev, TRACE_KEY_CAT));
		const char *name = json_string_value(json_object_get(ev, TRACE_KEY_NAME));
		json_t *dur = json_object_get(ev, TRACE_KEY_DUR);
		struct api_acc *a = NULL;
		double *d;

		if (!cat || !name || !json_is_number(dur) ||
		    (strcmp(cat, TRACE_CAT_RUNTIME) && strcmp(cat, TRACE_CAT_DRIVER)))
			continue;
		for (size_t j = 0; j < accs->len && !a; j++)
			if (!strcmp(vec_at(accs, struct api_acc, j)->name, name))
				a = vec_at(accs, struct api_acc, j);
		if (!a) {
			if (!(a = vec__push(accs)))
				break;
			snprintf(a->name, sizeof(a->name), "%s", name);
			a->durs = VEC_INIT(double);
		}
		if ((d = vec__push(&a->durs)))
			*d = json_number_value(dur) * 1000.0;
	}
	json_decref(root);
	return 0;
}

static struct compare_kernel *kernel_row(struct compare *c, const char *name)
{
	struct compare_kernel *k;

	for (size_t i = 0; i < c->kernels.len; i++) {
		k = vec_at(&c->kernels, struct compare_kernel, i);
		if (!strcmp(k->name, name))
			return k;
	}
	k = vec__push(&c->kernels);
	if (!k)
		return NULL;
	memset(k, 0, sizeof(*k));
	if (!(k->name = strdup(name))) {
		c->kernels.len--;
		return NULL;
	}
	return k;
}

/* What a mode's traces say: per kernel, per API, the costs they recorded. */
static int analyse_traces(struct compare *c, int m, struct report *rep)
{
	struct compare_result *r = &c->res[m];
	const struct count_row *row;
	struct compare_kernel *k;
	struct vec lat = VEC_INIT(struct api_acc);
	size_t bkt, files = 0;
	int err = 0;

	for (size_t i = 0; i < c->windows.len && !err; i++) {
		const struct compare_window *w = vec_at(&c->windows, struct compare_window, i);

		if ((int)w->mode != m || !w->path)
			continue;
		err = report__read_file(rep, w->path);
		if (err == -ENOMEM)
			return err;
		if (err)
			compare__note(c, "%s: cannot read the trace %s", compare_mode_name(m), w->path);
		err = 0;
		files++;
		if (m == MODE_LATENCY)
			read_latencies(w->path, &lat);
	}
	if (!files)
		goto out;
	err = report__finish(rep);
	if (err)
		goto out;
	for (bkt = 0; (row = count_table__iter(&rep->sections[SEC_KERNEL], &bkt)); bkt++) {
		if (!row->name || !(k = kernel_row(c, row->name)))
			continue;
		k->launches[m] += row->count;
	}
	for (size_t i = 0; i < rep->gpu_kernels.len; i++) {
		const struct gpu_kernel_stat *g = vec_at(&rep->gpu_kernels, struct gpu_kernel_stat, i);

		if (m == MODE_CUPTI && g->name && (k = kernel_row(c, g->name))) {
			k->gpu_count += g->count;
			k->gpu_ns += g->total_ns;
		}
	}
	for (bkt = 0; (row = count_table__iter(&rep->sections[SEC_API], &bkt)); bkt++) {
		struct compare_api *a;

		if (!row->name || !(a = vec__push(&r->apis)))
			continue;
		memset(a, 0, sizeof(*a));
		snprintf(a->name, sizeof(a->name), "%s", row->name);
		a->calls = row->count;
		for (size_t j = 0; j < lat.len; j++) {
			struct api_acc *l = vec_at(&lat, struct api_acc, j);

			if (!strcmp(l->name, a->name) && l->durs.len)
				a->has_latency = !dist__of(l->durs.data, l->durs.len, &a->latency_ns);
		}
	}
	if (rep->ovh.has_per_hit) {
		r->has_probe_cost = true;
		r->probe_ns_per_hit = (rep->ovh.per_hit_min + rep->ovh.per_hit_max) / 2;
	}
	if (m == MODE_CUPTI) {
		r->gpu_records = rep->gpu_counts[GPU_RECORDS];
		r->has_gpu = rep->has_gpu_counts && r->gpu_records > 0;
		r->has_cupti_overhead = rep->ovh.has_cupti;
		if (r->has_cupti_overhead && r->window_steps)
			r->cupti_overhead_per_step_ns = (double)rep->ovh.cupti_ns / (double)r->window_steps;
	}
out:
	for (size_t j = 0; j < lat.len; j++)
		vec__free(&vec_at(&lat, struct api_acc, j)->durs);
	vec__free(&lat);
	return err;
}

static int cmp_kernel(const void *a, const void *b)
{
	const struct compare_kernel *x = a, *y = b;
	uint64_t lx = 0, ly = 0;

	if (x->gpu_ns != y->gpu_ns)
		return x->gpu_ns < y->gpu_ns ? 1 : -1;
	for (int m = 0; m < MODE__COUNT; m++) {
		lx += x->launches[m];
		ly += y->launches[m];
	}
	if (lx != ly)
		return lx < ly ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* Whether the costs cuprobe and CUPTI record explain the step time a mode adds. */
static void analyse_costs(struct compare *c, int m)
{
	struct compare_result *r = &c->res[m];
	bool known = r->has_probe_cost;

	r->explained = -1;
	if (!r->has_launches || !r->window_steps) {
		r->has_probe_cost = r->has_cupti_overhead = false;
		return;
	}
	r->launches_per_step = (double)r->step_launches / (double)r->window_steps;
	r->hits_per_step = (double)r->step_hits / (double)r->window_steps;
	if (r->has_probe_cost) {
		/* A return probe is not calibrated on its own: taken to cost what an entry does. */
		r->probe_cost_per_step_ns =
			r->hits_per_step * r->probe_ns_per_hit * (m == MODE_LATENCY ? 2 : 1);
	}
	r->predicted_ns = r->probe_cost_per_step_ns;
	if (m == MODE_CUPTI) {
		known = known && r->has_cupti_overhead;
		r->predicted_ns += r->cupti_overhead_per_step_ns;
	}
	if (known && r->has_vs_off && r->vs_off.has_ci)
		r->explained = r->predicted_ns >= r->vs_off.diff_lo && r->predicted_ns <= r->vs_off.diff_hi;
}

static void note_schedule(struct compare *c)
{
	if (c->cfg.nmodes == 1)
		compare__note(c, "one mode: there is nothing to rotate or to compare it with; "
			      "give --modes off,%s", c->cfg.modes[0] == MODE_OFF ? "bpf" :
			      compare_mode_name(c->cfg.modes[0]));
	if (c->cfg.nmodes > 1 && c->cfg.rounds < 2)
		compare__note(c, "one round: the order does not come back (A B C C B A), so a drift "
			      "during the run weighs on the modes unevenly; use --rounds 2 or more");
	for (size_t i = 0; i < c->cfg.nmodes; i++) {
		const struct compare_result *r = &c->res[c->cfg.modes[i]];
		const char *name = compare_mode_name(c->cfg.modes[i]);

		if (!r->windows_run)
			compare__note(c, "%s: never ran: the run ended first (%zu of %zu windows ran)",
				      name, c->windows.len, c->norder);
		else if (c->cfg.step && !r->steps)
			compare__note(c, "%s: never measured: the run ended before a step of its "
				      "windows was complete", name);
		else if (r->windows_run < r->windows_planned)
			compare__note(c, "%s: %u of %u windows ran before the run ended", name,
				      r->windows_run, r->windows_planned);
		if (r->windows_partial)
			compare__note(c, "%s: %u window(s) cut short by the end of the run; their last "
				      "step is not measured", name, r->windows_partial);
	}
	if (!c->cfg.step)
		compare__note(c, "no --step: time slices of %.0f ms stand in for steps, so the "
			      "step-time figures measure nothing (each slice lasts what it lasts); "
			      "launches per slice and the costs stand", (double)c->cfg.slice_ns / 1e6);
	if (c->cfg.step && !c->steps.len)
		compare__note(c, "the step probe %s was never hit: no step was timed", c->cfg.step);
}

int compare__analyse(struct compare *c)
{
	int err = analyse_steps(c);

	analyse_windows(c);
	for (int m = 1; m < MODE__COUNT && !err; m++) {
		struct report rep;

		if (!c->res[m].selected)
			continue;
		report__init(&rep);
		err = analyse_traces(c, m, &rep);
		report__free(&rep);
		analyse_costs(c, m);
	}
	if (err)
		return err;
	if (c->res[MODE_CUPTI].selected && c->res[MODE_CUPTI].windows_run &&
	    !c->res[MODE_CUPTI].has_gpu)
		compare__note(c, "cupti: no usable CUPTI: its windows brought no GPU record (no "
			      "agent in the target, no CUPTI, or no GPU); GPU times are missing and "
			      "the cupti row measures the launch probes only");
	vec__sort(&c->kernels, cmp_kernel);
	note_schedule(c);
	return 0;
}

/* Text: one row per mode, then the notes, as hyperfine and nsys stats print. */
static void fmt_ms(char *buf, size_t len, bool known, double ns)
{
	if (known)
		snprintf(buf, len, "%.3f", ns / 1e6);
	else
		snprintf(buf, len, "-");
}

static void fmt_us(char *buf, size_t len, bool known, double ns)
{
	if (known)
		snprintf(buf, len, "%.1f", ns / 1e3);
	else
		snprintf(buf, len, "-");
}

static const char *explained_word(int e)
{
	return e > 0 ? "yes" : e == 0 ? "no" : "-";
}

void compare__write_text(const struct compare *c, FILE *f)
{
	fprintf(f, "cuprobe compare: %zu modes x %u rounds x %u %s per window; order:",
		c->cfg.nmodes, c->cfg.rounds, c->cfg.steps_per_mode,
		c->cfg.step ? "steps" : "slices");
	for (size_t i = 0; i < c->norder; i++)
		fprintf(f, " %s", compare_mode_name(c->order[i]));
	fprintf(f, "\n\n%-8s %6s %10s %10s %24s %10s %10s %10s %12s %9s\n", "MODE", "STEPS",
		"MEDIAN_MS", "P95_MS", "VS_OFF (95% CI)", "LAUNCH/ST", "PROBE_US", "CUPTI_US",
		"ADDED_US", "EXPLAINED");
	for (size_t i = 0; i < c->cfg.nmodes; i++) {
		int m = c->cfg.modes[i];
		const struct compare_result *r = &c->res[m];
		char med[32], p95[32], vs[64], lps[32], probe[32], cupti[32], added[48];

		fmt_ms(med, sizeof(med), r->has_steps, r->step_ns.median);
		fmt_ms(p95, sizeof(p95), r->has_steps, r->step_ns.p95);
		if (m == MODE_OFF)
			snprintf(vs, sizeof(vs), "1 (baseline)");
		else if (r->has_vs_off && r->vs_off.has_ci)
			snprintf(vs, sizeof(vs), "%.3f [%.3f, %.3f]", r->vs_off.ratio, r->vs_off.ratio_lo,
				 r->vs_off.ratio_hi);
		else if (r->has_vs_off)
			snprintf(vs, sizeof(vs), "%.3f [no CI]", r->vs_off.ratio);
		else
			snprintf(vs, sizeof(vs), "-");
		if (r->has_launches && r->window_steps)
			snprintf(lps, sizeof(lps), "%.1f", r->launches_per_step);
		else
			snprintf(lps, sizeof(lps), "-");
		fmt_us(probe, sizeof(probe), r->has_launches && r->has_probe_cost,
		       r->probe_cost_per_step_ns);
		fmt_us(cupti, sizeof(cupti), m == MODE_CUPTI && r->has_cupti_overhead,
		       r->cupti_overhead_per_step_ns);
		fmt_us(added, sizeof(added), r->has_vs_off && m != MODE_OFF, r->vs_off.diff);
		fprintf(f, "%-8s %6lu %10s %10s %24s %10s %10s %10s %12s %9s\n",
			compare_mode_name(m), (unsigned long)r->steps, med, p95, vs, lps, probe, cupti,
			added, explained_word(r->explained));
	}
	fputs("\nVS_OFF: median step time over off's; ADDED_US: the median step's added time;\n"
	      "PROBE_US and CUPTI_US: what probe hits (x the calibrated per-hit cost) and CUPTI's\n"
	      "OVERHEAD records cost per step; EXPLAINED: their sum lies in ADDED_US's 95% CI.\n", f);
	for (size_t i = 0; i < c->notes.len; i++)
		fprintf(f, "note: %s\n", *vec_at(&c->notes, char *, i));
}
