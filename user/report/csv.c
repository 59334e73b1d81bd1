// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The CSV format (RFC 4180): one table, the `section` column says which.
 * Steps and cycles fill the columns after per_s, GPU kernels and steps the
 * GPU columns at the end; other rows leave them empty.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "report/output.h"

#define CSV_HEAD                                                                               \
	"section,name,pid,tid,count,share_pct,per_s,"                                          \
	"step,cycle,first_step,last_step,wall_ns,partial,late_launches,"                       \
	"probe_hits,probe_cost_ns,probe_cost_share,cupti_overhead_ns,"                         \
	"gpu_total_ns,gpu_mean_ns,gpu_p50_ns,gpu_p99_ns,"                                      \
	"delay_mean_ns,delay_p50_ns,delay_p99_ns,gpu_busy_ns\n"
/* The step .. cupti_overhead_ns columns of a kernel, API, thread or GPU kernel row. */
#define CSV_NO_STEP ",,,,,,,,,,,"
/* The gpu_total_ns .. gpu_busy_ns columns of a kernel, API, thread or cycle row. */
#define CSV_NO_GPU ",,,,,,,,"

static void csv_field(FILE *f, const char *s)
{
	if (!s[strcspn(s, ",\"\r\n")]) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void csv_row(FILE *f, const struct report *r, const struct section_desc *d,
		    const struct count_row *e)
{
	const char *name = report__row_name(d, e);
	double rate;

	fprintf(f, "%s,", d->id);
	csv_field(f, name ? name : "");
	if (d->by_thread)
		fprintf(f, ",%" PRId64 ",%" PRId64, e->a, e->b);
	else
		fputs(",,", f);
	fprintf(f, ",%" PRIu64 ",%.3f,", e->count, report__row_share_pct(r, d, e->count));
	if (report__per_second(r, e->count, &rate))
		fprintf(f, "%.3f", rate);
	fputs(CSV_NO_STEP CSV_NO_GPU "\n", f);
}

/* Of a kernel row, the launches graph replays ran, in the Kernels table's order. */
static void csv_graph_kernels(FILE *f, const struct report *r, const struct section_rows *s)
{
	uint64_t n;
	double rate;

	if (!report__graph_column(r, s->desc))
		return;
	for (size_t i = 0; i < s->n; i++) {
		n = report__from_graphs(r, s->rows[i]);
		if (!n)
			continue;
		fputs("graph_kernel,", f);
		csv_field(f, s->rows[i]->name);
		fprintf(f, ",,,%" PRIu64 ",%.3f,", n, report__row_share_pct(r, s->desc, n));
		if (report__per_second(r, n, &rate))
			fprintf(f, "%.3f", rate);
		fputs(CSV_NO_STEP CSV_NO_GPU "\n", f);
	}
}

/* count is the GPU events; share_pct and per_s, which are of launches, stay empty. */
static void csv_gpu_kernel(FILE *f, const struct gpu_kernel_stat *k)
{
	fputs("gpu_kernel,", f);
	csv_field(f, k->name);
	fprintf(f, ",,,%" PRIu64 ",," CSV_NO_STEP, k->count);
	fprintf(f, ",%" PRIu64 ",%.3f,%" PRIu64 ",%" PRIu64, k->total_ns, k->mean_ns, k->p50_ns,
		k->p99_ns);
	if (k->delays)
		fprintf(f, ",%.3f,%" PRId64 ",%" PRId64, k->delay_mean_ns, k->delay_p50_ns,
			k->delay_p99_ns);
	else
		fputs(",,,", f);
	fputs(",\n", f);
}

/* count, share_pct and per_s: per second of the row's own wall time. */
static void csv_counts(FILE *f, const struct report *r, uint64_t count, uint64_t ns)
{
	double rate;

	fprintf(f, ",%" PRIu64 ",%.3f,", count, report__share_pct(r, count));
	if (report__rate(count, ns, &rate))
		fprintf(f, "%.3f", rate);
}

/* ",probe_hits,probe_cost_ns,probe_cost_share,cupti_overhead_ns", empty when unknown. */
static void csv_overhead(FILE *f, const struct overhead *o)
{
	double share;

	fputc(',', f);
	if (o->has_hits)
		fprintf(f, "%" PRIu64, o->hits);
	fputc(',', f);
	if (o->has_cost)
		fprintf(f, "%" PRIu64, o->cost_ns);
	fputc(',', f);
	if (overhead__share(o, &share))
		fprintf(f, "%.6f", share);
	fputc(',', f);
	if (o->has_cupti)
		fprintf(f, "%" PRIu64, o->cupti_ns);
}

static void csv_step(FILE *f, const struct report *r, const struct step_row *s)
{
	fprintf(f, "step,,%" PRId64 ",", s->pid);
	csv_counts(f, r, s->launches, s->wall_ns);
	fprintf(f, ",%" PRId64 ",,,,%" PRIu64 ",%s,", s->step, s->wall_ns,
		s->partial ? "true" : "false");
	csv_overhead(f, &s->ovh);
	/* gpu_total_ns .. delay_p99_ns are empty, then gpu_busy_ns. */
	fputs(",,,,,,,,", f);
	if (s->has_gpu)
		fprintf(f, "%" PRIu64, s->gpu_busy_ns);
	fputc('\n', f);
}

static void csv_cycle(FILE *f, const struct report *r, const struct cycle_row *c)
{
	fputs("cycle,", f);
	csv_field(f, c->command ? c->command : "");
	fprintf(f, ",%" PRId64 ",", c->pid);
	csv_counts(f, r, c->launches, c->duration_ns);
	fprintf(f, ",,%" PRId64 ",", c->cycle);
	if (c->has_steps)
		fprintf(f, "%" PRId64 ",%" PRId64, c->first_step, c->last_step);
	else
		fputc(',', f);
	fprintf(f, ",%" PRIu64 ",%s,%" PRIu64, c->duration_ns, c->partial ? "true" : "false",
		c->late_launches);
	csv_overhead(f, &c->ovh);
	fputs(CSV_NO_GPU "\n", f);
}

/* A record_function range's name: calls in count, their time in wall_ns. */
static void csv_annotation(FILE *f, const struct annotation_stat *a)
{
	fputs("annotation,", f);
	csv_field(f, a->name);
	fprintf(f, ",,,%" PRIu64 ",,,,,,,%" PRIu64 ",,,,,," CSV_NO_GPU "\n", a->calls, a->total_ns);
}

/*
 * What the traces miss and the report could not use, a row each when not 0,
 * the count in the count column: the header's lines of the text format.
 */
static void csv_summary(FILE *f, const struct report *r)
{
	const struct {
		const char *name;
		uint64_t count;
	} rows[] = {
		{ "malformed_events", r->malformed },
		{ "lost_steps", r->lost_steps },
		{ "unprobed_ns", r->unprobed_ns },
		{ "nested_skipped", r->nested_skipped },
		{ "unnamed_kernels", r->unnamed_kernels },
		{ "captured", r->captured },
		{ "graph_replays", r->graphs.replays },
		{ "graph_unknown_replays", r->graphs.unknown },
		{ "graph_contents", r->graphs.replays ? count_table__size(&r->graph_contents) : 0 },
		{ "graph_kernels", r->graphs.kernels },
		{ "graph_copies", r->graphs.copies },
		{ "graph_sets", r->graphs.sets },
		{ "graph_gpu_kernels", r->graphs.gpu_kernels },
		{ "graph_mismatches", r->graphs.mismatches },
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		if (rows[i].count)
			fprintf(f, "summary,%s,,,%" PRIu64 ",," CSV_NO_STEP CSV_NO_GPU "\n",
				rows[i].name, rows[i].count);
}

int report_csv__write(FILE *f, const struct report *r, const struct section_rows *secs)
{
	fputs(CSV_HEAD, f);
	for (int i = 0; i < SEC__COUNT; i++) {
		for (size_t j = 0; j < secs[i].n; j++)
			csv_row(f, r, secs[i].desc, secs[i].rows[j]);
		csv_graph_kernels(f, r, &secs[i]);
	}
	for (size_t i = 0; i < r->gpu_kernels.len; i++)
		csv_gpu_kernel(f, vec_at(&r->gpu_kernels, struct gpu_kernel_stat, i));
	for (size_t i = 0; i < r->steps.len; i++)
		csv_step(f, r, vec_at(&r->steps, struct step_row, i));
	for (size_t i = 0; i < r->cycles.len; i++)
		csv_cycle(f, r, vec_at(&r->cycles, struct cycle_row, i));
	for (size_t i = 0; i < r->annotations.len; i++)
		csv_annotation(f, vec_at(&r->annotations, struct annotation_stat, i));
	csv_summary(f, r);
	return 0;
}
