// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The JSON format, through util/json_writer, indented by two spaces a level;
 * the README's report section documents the schema. Unknown values are
 * null, never left out. These are the report's own keys, stable for its
 * readers, not the trace's (trace/format.h), even where the names agree.
 */
#include <errno.h>
#include <stdio.h>
#include "report/output.h"
#include "util/json_writer.h"

#define REPORT_SCHEMA_VERSION 1
/* Reals as jansson wrote them: 17 significant digits, always with a '.' or an 'e'. */
#define REAL_DIGITS 17

static void real(struct json_writer *w, const char *name, double v)
{
	json_writer__name(w, name);
	json_writer__double_sig(w, v, REAL_DIGITS);
}

/* The report's reals, with its digits, null when unknown (json_writer's rule). */
static void real_or_null(struct json_writer *w, const char *name, bool known, double v)
{
	json_writer__field_sig_or_null(w, name, known, v, REAL_DIGITS);
}

static void rate(struct json_writer *w, const char *name, const struct report *r,
		 uint64_t count)
{
	double per_s = 0;
	bool known = report__per_second(r, count, &per_s);

	real_or_null(w, name, known, per_s);
}

static void share(struct json_writer *w, const char *name, const struct overhead *o)
{
	double v = 0;
	bool known = overhead__share(o, &v);

	real_or_null(w, name, known, v);
}

static void section_row(struct json_writer *w, const struct report *r,
			const struct section_desc *d, const struct count_row *row)
{
	json_writer__start_object(w);
	if (d->by_thread) {
		json_writer__field_i64(w, "pid", row->a);
		json_writer__field_i64(w, "tid", row->b);
		json_writer__field_string(w, "name", row->label);
	} else {
		json_writer__field_string(w, "name", row->name);
	}
	json_writer__field_u64(w, d->count_key, row->count);
	if (report__graph_column(r, d))
		json_writer__field_u64(w, "from_graphs", report__from_graphs(r, row));
	real(w, "share_pct", report__row_share_pct(r, d, row->count));
	rate(w, d->rate_key, r, row->count);
	json_writer__end_object(w);
}

static void section(struct json_writer *w, const struct report *r, const struct section_rows *s)
{
	json_writer__name(w, s->desc->json_key);
	json_writer__start_array(w);
	for (size_t i = 0; i < s->n; i++)
		section_row(w, r, s->desc, s->rows[i]);
	json_writer__end_array(w);
}

/* The report's overhead object: the sums over all cycles. */
static void overhead(struct json_writer *w, const struct overhead *o)
{
	json_writer__name(w, "overhead");
	json_writer__start_object(w);
	json_writer__field_u64_or_null(w, "probe_hits", o->has_hits, o->hits);
	json_writer__field_u64_or_null(w, "probe_cost_ns", o->has_cost, o->cost_ns);
	share(w, "share", o);
	real_or_null(w, "probe_ns_per_hit_min", o->has_per_hit, o->per_hit_min);
	real_or_null(w, "probe_ns_per_hit_max", o->has_per_hit, o->per_hit_max);
	json_writer__field_u64_or_null(w, "cupti_overhead_ns", o->has_cupti, o->cupti_ns);
	json_writer__end_object(w);
}

/* The summed cuprobe.gpu counts; null when no trace has them. */
static void gpu_counts(struct json_writer *w, const struct report *r)
{
	if (!r->has_gpu_counts) {
		json_writer__field_null(w, "gpu");
		return;
	}
	json_writer__name(w, "gpu");
	json_writer__start_object(w);
	for (int i = 0; i < GPU__COUNT; i++)
		json_writer__field_u64(w, gpu_count_keys[i], r->gpu_counts[i]);
	json_writer__end_object(w);
}

/* What graph replays ran; only for traces whose replays name their content. */
static void graphs(struct json_writer *w, const struct report *r)
{
	const struct graph_counts *g = &r->graphs;

	if (!g->replays)
		return;
	json_writer__name(w, "graphs");
	json_writer__start_object(w);
	json_writer__field_u64(w, "replays", g->replays);
	json_writer__field_u64(w, "unknown_replays", g->unknown);
	json_writer__field_u64(w, "contents", count_table__size(&r->graph_contents));
	json_writer__field_u64(w, "kernels", g->kernels);
	json_writer__field_u64(w, "copies", g->copies);
	json_writer__field_u64(w, "sets", g->sets);
	json_writer__field_u64_or_null(w, "gpu_kernels", g->has_cupti, g->gpu_kernels);
	json_writer__field_u64_or_null(w, "mismatches", g->has_cupti, g->mismatches);
	json_writer__end_object(w);
}

static void gpu_kernel(struct json_writer *w, const struct gpu_kernel_stat *k)
{
	json_writer__start_object(w);
	json_writer__field_string(w, "name", k->name);
	json_writer__field_u64(w, "count", k->count);
	json_writer__field_u64(w, "total_ns", k->total_ns);
	real(w, "mean_ns", k->mean_ns);
	json_writer__field_u64(w, "p50_ns", k->p50_ns);
	json_writer__field_u64(w, "p99_ns", k->p99_ns);
	real_or_null(w, "delay_mean_ns", k->delays != 0, k->delay_mean_ns);
	json_writer__field_i64_or_null(w, "delay_p50_ns", k->delays != 0, k->delay_p50_ns);
	json_writer__field_i64_or_null(w, "delay_p99_ns", k->delays != 0, k->delay_p99_ns);
	json_writer__end_object(w);
}

static void step(struct json_writer *w, const struct step_row *s)
{
	json_writer__start_object(w);
	json_writer__field_i64(w, "pid", s->pid);
	json_writer__field_i64(w, "step", s->step);
	json_writer__field_u64(w, "wall_ns", s->wall_ns);
	json_writer__field_u64_or_null(w, "gpu_busy_ns", s->has_gpu, s->gpu_busy_ns);
	json_writer__field_u64(w, "launches", s->launches);
	real_or_null(w, "launches_per_ms", s->wall_ns != 0,
		     s->wall_ns ? (double)s->launches * 1e6 / (double)s->wall_ns : 0);
	json_writer__field_bool(w, "partial", s->partial);
	json_writer__field_u64_or_null(w, "data_ns", s->has_parts, s->data_ns);
	json_writer__field_u64_or_null(w, "optimizer_ns", s->has_parts, s->optimizer_ns);
	json_writer__field_u64_or_null(w, "probe_hits", s->ovh.has_hits, s->ovh.hits);
	json_writer__field_u64_or_null(w, "probe_cost_ns", s->ovh.has_cost, s->ovh.cost_ns);
	share(w, "probe_cost_share", &s->ovh);
	json_writer__end_object(w);
}

static void step_stat(struct json_writer *w, const struct step_stat *st)
{
	json_writer__start_object(w);
	json_writer__field_i64(w, "pid", st->pid);
	json_writer__field_u64(w, "steps", st->steps);
	real(w, "mean_ns", st->mean_ns);
	json_writer__field_u64(w, "p50_ns", st->p50_ns);
	json_writer__field_u64(w, "p99_ns", st->p99_ns);
	json_writer__field_u64(w, "max_ns", st->max_ns);
	json_writer__end_object(w);
}

static void cycle(struct json_writer *w, const struct cycle_row *c)
{
	const struct overhead *o = &c->ovh;

	json_writer__start_object(w);
	json_writer__field_i64(w, "cycle", c->cycle);
	json_writer__field_i64(w, "pid", c->pid);
	json_writer__field_string(w, "command", c->command);
	json_writer__field_i64_or_null(w, "first_step", c->has_steps, c->first_step);
	json_writer__field_i64_or_null(w, "last_step", c->has_steps, c->last_step);
	json_writer__field_u64(w, "launches", c->launches);
	json_writer__field_u64(w, "duration_ns", c->duration_ns);
	json_writer__field_bool(w, "partial", c->partial);
	json_writer__field_u64(w, "late_launches", c->late_launches);
	json_writer__field_u64_or_null(w, "probe_hits", o->has_hits, o->hits);
	real_or_null(w, "probe_ns_per_hit", o->has_per_hit, o->per_hit_min);
	json_writer__field_u64_or_null(w, "probe_cost_ns", o->has_cost, o->cost_ns);
	share(w, "probe_cost_share", o);
	json_writer__field_u64_or_null(w, "cupti_overhead_ns", o->has_cupti, o->cupti_ns);
	json_writer__end_object(w);
}

static void annotation(struct json_writer *w, const struct annotation_stat *a)
{
	json_writer__start_object(w);
	json_writer__field_string(w, "name", a->name);
	json_writer__field_u64(w, "calls", a->calls);
	json_writer__field_u64(w, "total_ns", a->total_ns);
	json_writer__end_object(w);
}

/* The arrays of rows after the sections: GPU kernels, steps, their stats, cycles, annotations. */
static void row_arrays(struct json_writer *w, const struct report *r)
{
	json_writer__name(w, "gpu_kernels");
	json_writer__start_array(w);
	for (size_t i = 0; i < r->gpu_kernels.len; i++)
		gpu_kernel(w, vec_at(&r->gpu_kernels, struct gpu_kernel_stat, i));
	json_writer__end_array(w);
	json_writer__name(w, "steps");
	json_writer__start_array(w);
	for (size_t i = 0; i < r->steps.len; i++)
		step(w, vec_at(&r->steps, struct step_row, i));
	json_writer__end_array(w);
	json_writer__name(w, "step_stats");
	json_writer__start_array(w);
	for (size_t i = 0; i < r->stats.len; i++)
		step_stat(w, vec_at(&r->stats, struct step_stat, i));
	json_writer__end_array(w);
	json_writer__name(w, "cycles");
	json_writer__start_array(w);
	for (size_t i = 0; i < r->cycles.len; i++)
		cycle(w, vec_at(&r->cycles, struct cycle_row, i));
	json_writer__end_array(w);
	json_writer__name(w, "annotations");
	json_writer__start_array(w);
	for (size_t i = 0; i < r->annotations.len; i++)
		annotation(w, vec_at(&r->annotations, struct annotation_stat, i));
	json_writer__end_array(w);
}

/* The totals at the top of the report. */
static void totals(struct json_writer *w, const struct report *r)
{
	json_writer__field_i64(w, "schema_version", REPORT_SCHEMA_VERSION);
	json_writer__field_u64(w, "trace_files", r->trace_files);
	json_writer__field_u64(w, "processes", count_table__size(&r->pids));
	json_writer__field_u64(w, "launches", r->launches);
	json_writer__field_u64(w, "wall_ns", r->wall_ns);
	rate(w, "launches_per_s", r, r->launches);
	json_writer__field_u64(w, "drops", r->drops);
	json_writer__field_u64(w, "late_launches", r->late_launches);
	json_writer__field_u64(w, "lost_steps", r->lost_steps);
	json_writer__field_u64(w, "unprobed_ns", r->unprobed_ns);
	json_writer__field_u64(w, "nested_skipped", r->nested_skipped);
	json_writer__field_u64(w, "unnamed_kernels", r->unnamed_kernels);
	json_writer__field_u64(w, "captured", r->captured);
	json_writer__field_u64(w, "malformed_events", r->malformed);
}

int report_json__write(FILE *f, const struct report *r, const struct section_rows *secs)
{
	struct json_writer *w = json_writer__new(f);
	int err;

	if (!w)
		return -ENOMEM;
	json_writer__pretty(w, 2);
	json_writer__start_object(w);
	totals(w, r);
	overhead(w, &r->ovh);
	gpu_counts(w, r);
	graphs(w, r);
	for (int i = 0; i < SEC__COUNT; i++)
		section(w, r, &secs[i]);
	row_arrays(w, r);
	json_writer__end_object(w);
	err = json_writer__flush(w);
	json_writer__free(w);
	if (!err && fputc('\n', f) == EOF)
		err = errno ? -errno : -EIO;
	return err;
}
