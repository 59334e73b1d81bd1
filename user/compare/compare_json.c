// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* compare.json: every figure of a compare run, with null where it was not measured. */
#include <errno.h>
#include "compare/compare_model.h"
#include "util/json_writer.h"

#define COMPARE_JSON_VERSION 1

/* compare.json's numbers, to 9 significant digits, null when unknown (json_writer's rule). */
static void field_num(struct json_writer *w, const char *name, bool known, double v)
{
	json_writer__field_sig_or_null(w, name, known, v, 9);
}

static void write_dist(struct json_writer *w, const char *name, bool known, const struct dist *d)
{
	json_writer__name(w, name);
	if (!known) {
		json_writer__null(w);
		return;
	}
	json_writer__start_object(w);
	json_writer__field_u64(w, "n", d->n);
	field_num(w, "min", true, d->min);
	field_num(w, "p25", true, d->p25);
	field_num(w, "median", true, d->median);
	field_num(w, "p75", true, d->p75);
	field_num(w, "p95", true, d->p95);
	field_num(w, "max", true, d->max);
	field_num(w, "mean", true, d->mean);
	field_num(w, "stddev", true, d->stddev);
	json_writer__end_object(w);
}

static void write_ci(struct json_writer *w, const char *name, bool known, double v, bool ci,
		     double lo, double hi)
{
	json_writer__name(w, name);
	if (!known) {
		json_writer__null(w);
		return;
	}
	json_writer__start_object(w);
	field_num(w, "value", true, v);
	field_num(w, "ci95_low", ci, lo);
	field_num(w, "ci95_high", ci, hi);
	json_writer__end_object(w);
}

static void write_apis(struct json_writer *w, const struct compare_result *r)
{
	json_writer__name(w, "apis");
	json_writer__start_array(w);
	for (size_t i = 0; i < r->apis.len; i++) {
		const struct compare_api *a = vec_at(&r->apis, struct compare_api, i);

		json_writer__start_object(w);
		json_writer__field_string(w, "name", a->name);
		json_writer__field_u64(w, "calls", a->calls);
		write_dist(w, "latency_ns", a->has_latency, &a->latency_ns);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
}

static void write_result(struct json_writer *w, const struct compare *c, int m)
{
	const struct compare_result *r = &c->res[m];
	bool probes = m != MODE_OFF && r->has_launches;

	json_writer__start_object(w);
	json_writer__field_string(w, "mode", compare_mode_name(m));
	json_writer__field_u64(w, "windows_planned", r->windows_planned);
	json_writer__field_u64(w, "windows_run", r->windows_run);
	json_writer__field_u64(w, "windows_partial", r->windows_partial);
	json_writer__field_u64(w, "steps", r->steps);
	write_dist(w, "step_ns", r->has_steps, &r->step_ns);
	write_ci(w, "ratio_to_off", r->has_vs_off, r->vs_off.ratio, r->vs_off.has_ci,
		 r->vs_off.ratio_lo, r->vs_off.ratio_hi);
	write_ci(w, "added_ns_per_step", r->has_vs_off, r->vs_off.diff, r->vs_off.has_ci,
		 r->vs_off.diff_lo, r->vs_off.diff_hi);
	json_writer__name(w, "launches");
	if (probes)
		json_writer__u64(w, r->launches);
	else
		json_writer__null(w);
	json_writer__name(w, "drops");
	if (probes)
		json_writer__u64(w, r->drops);
	else
		json_writer__null(w);
	json_writer__name(w, "probe_hits");
	if (probes)
		json_writer__u64(w, r->hits);
	else
		json_writer__null(w);
	json_writer__field_u64(w, "window_steps", r->window_steps);
	field_num(w, "launches_per_step", probes && r->window_steps, r->launches_per_step);
	field_num(w, "probe_ns_per_hit", probes && r->has_probe_cost, r->probe_ns_per_hit);
	field_num(w, "probe_cost_ns_per_step", probes && r->has_probe_cost,
		  r->probe_cost_per_step_ns);
	field_num(w, "cupti_overhead_ns_per_step", m == MODE_CUPTI && r->has_cupti_overhead,
		  r->cupti_overhead_per_step_ns);
	field_num(w, "predicted_ns_per_step", r->explained >= 0, r->predicted_ns);
	json_writer__name(w, "explained");
	if (r->explained >= 0)
		json_writer__bool(w, r->explained > 0);
	else
		json_writer__null(w);
	if (m == MODE_CUPTI) {
		json_writer__field_bool(w, "cupti_usable", r->has_gpu);
		json_writer__field_u64(w, "gpu_records", r->gpu_records);
	}
	write_apis(w, r);
	json_writer__end_object(w);
}

static void write_config(struct json_writer *w, const struct compare *c)
{
	json_writer__field_u64(w, "version", COMPARE_JSON_VERSION);
	json_writer__name(w, "command");
	if (c->cfg.cmd) {
		json_writer__start_array(w);
		for (char **a = c->cfg.cmd; *a; a++)
			json_writer__string(w, *a);
		json_writer__end_array(w);
	} else {
		json_writer__null(w);
	}
	json_writer__name(w, "pids");
	json_writer__start_array(w);
	for (size_t i = 0; i < c->cfg.npids; i++)
		json_writer__i64(w, c->cfg.pids[i]);
	json_writer__end_array(w);
	json_writer__field_string(w, "step", c->cfg.step);
	json_writer__field_string(w, "clock", c->cfg.step ? "steps" : "slices");
	json_writer__name(w, "slice_ns");
	if (c->cfg.step)
		json_writer__null(w);
	else
		json_writer__u64(w, c->cfg.slice_ns);
	json_writer__field_u64(w, "steps_per_mode", c->cfg.steps_per_mode);
	json_writer__field_u64(w, "rounds", c->cfg.rounds);
	json_writer__field_u64(w, "skip_first", c->cfg.skip_first);
	json_writer__field_u64(w, "bootstrap_resamples", COMPARE_BOOTSTRAP_ITERS);
	json_writer__name(w, "modes");
	json_writer__start_array(w);
	for (size_t i = 0; i < c->cfg.nmodes; i++)
		json_writer__string(w, compare_mode_name(c->cfg.modes[i]));
	json_writer__end_array(w);
	json_writer__name(w, "order");
	json_writer__start_array(w);
	for (size_t i = 0; i < c->norder; i++)
		json_writer__string(w, compare_mode_name(c->order[i]));
	json_writer__end_array(w);
	json_writer__field_bool(w, "complete", !c->ended_early);
}

static void write_kernels(struct json_writer *w, const struct compare *c)
{
	json_writer__name(w, "kernels");
	json_writer__start_array(w);
	for (size_t i = 0; i < c->kernels.len; i++) {
		const struct compare_kernel *k = vec_at(&c->kernels, struct compare_kernel, i);

		json_writer__start_object(w);
		json_writer__field_string(w, "name", k->name);
		json_writer__name(w, "launches");
		json_writer__start_object(w);
		for (int m = 1; m < MODE__COUNT; m++)
			if (c->res[m].selected)
				json_writer__field_u64(w, compare_mode_name(m), k->launches[m]);
		json_writer__end_object(w);
		json_writer__field_u64(w, "gpu_count", k->gpu_count);
		json_writer__field_u64(w, "gpu_ns", k->gpu_ns);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
}

static void write_runs(struct json_writer *w, const struct compare *c)
{
	json_writer__name(w, "windows");
	json_writer__start_array(w);
	for (size_t i = 0; i < c->windows.len; i++) {
		const struct compare_window *win = vec_at(&c->windows, struct compare_window, i);

		json_writer__start_object(w);
		json_writer__field_u64(w, "window", win->k);
		json_writer__field_string(w, "mode", compare_mode_name(win->mode));
		json_writer__field_i64(w, "pid", win->pid);
		json_writer__field_i64(w, "first_step", win->first_step);
		json_writer__field_i64(w, "last_step", win->last_step);
		json_writer__field_u64(w, "launches", win->launches);
		json_writer__field_u64(w, "drops", win->drops);
		json_writer__field_bool(w, "partial", win->partial);
		json_writer__field_string(w, "trace", win->path);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
	json_writer__name(w, "timeline");
	json_writer__start_array(w);
	for (size_t i = 0; i < c->steps.len; i++) {
		const struct compare_step *s = vec_at(&c->steps, struct compare_step, i);

		json_writer__start_object(w);
		json_writer__field_i64(w, "pid", s->pid);
		json_writer__field_u64(w, "step", s->step);
		json_writer__field_string(w, "mode", s->mode >= 0 ? compare_mode_name(s->mode) : NULL);
		json_writer__field_u64(w, "window", s->window);
		json_writer__field_u64(w, "start_ns", s->start_mono - c->t0);
		json_writer__field_u64(w, "dur_ns", s->dur_ns);
		json_writer__field_bool(w, "partial", s->partial);
		json_writer__end_object(w);
	}
	json_writer__end_array(w);
}

int compare__write_json(const struct compare *c, FILE *f)
{
	struct json_writer *w = json_writer__new(f);
	int err;

	if (!w)
		return -ENOMEM;
	json_writer__pretty(w, 2);
	json_writer__start_object(w);
	write_config(w, c);
	json_writer__name(w, "results");
	json_writer__start_array(w);
	for (size_t i = 0; i < c->cfg.nmodes; i++)
		write_result(w, c, c->cfg.modes[i]);
	json_writer__end_array(w);
	write_kernels(w, c);
	json_writer__name(w, "notes");
	json_writer__start_array(w);
	for (size_t i = 0; i < c->notes.len; i++)
		json_writer__string(w, *vec_at(&c->notes, char *, i));
	json_writer__end_array(w);
	write_runs(w, c);
	json_writer__end_object(w);
	err = json_writer__flush(w) ?: json_writer__error(w);
	json_writer__free(w);
	if (!err && (fputc('\n', f) == EOF || fflush(f)))
		err = -EIO;
	return err;
}
