// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The text format: a header of totals, then tables whose numbers are
 * right-aligned, and whose name column, when there is one, comes last so
 * that it needs no width.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report/output.h"
#include "util/plural.h"

/* Longest name the text format prints whole; longer ones lose their middle. */
#define TEXT_NAME_MAX 80

#define TEXT_COLS 9

struct text_row {
	char c[TEXT_COLS][48];
	const char *name; /* NULL prints "-" */
};

struct text_table {
	const char *title;
	const char *heads[TEXT_COLS]; /* right-aligned columns, up to the first NULL */
	const char *name_head;	      /* NULL: no name column */
	size_t nrows;
	const void *ctx;
	void (*fill)(const struct report *r, const void *ctx, size_t i, struct text_row *row);
};

#define CELL(row, col, ...) snprintf((row)->c[col], sizeof((row)->c[col]), __VA_ARGS__)

static bool utf8_continuation(char c)
{
	return ((unsigned char)c & 0xc0) == 0x80;
}

/*
 * Long C++ signatures keep their start (return type and function) and their
 * end (last template arguments or parameters), so that a row stays one line.
 */
static void text_name(FILE *f, const char *name)
{
	size_t len = strlen(name), head, tail;

	if (len <= TEXT_NAME_MAX) {
		fprintf(f, "%s\n", name);
		return;
	}
	head = TEXT_NAME_MAX * 2 / 3;
	tail = len - (TEXT_NAME_MAX - head - 3);
	while (head > 0 && utf8_continuation(name[head]))
		head--;
	while (tail < len && utf8_continuation(name[tail]))
		tail++;
	fprintf(f, "%.*s...%s\n", (int)head, name, name + tail);
}

static int text_widths(const struct report *r, const struct text_table *t, int *width)
{
	struct text_row row;
	int ncols = 0;

	while (ncols < TEXT_COLS && t->heads[ncols]) {
		width[ncols] = (int)strlen(t->heads[ncols]);
		ncols++;
	}
	for (size_t i = 0; i < t->nrows; i++) {
		t->fill(r, t->ctx, i, &row);
		for (int c = 0; c < ncols; c++)
			if ((int)strlen(row.c[c]) > width[c])
				width[c] = (int)strlen(row.c[c]);
	}
	return ncols;
}

static void text_table(FILE *f, const struct report *r, const struct text_table *t)
{
	int width[TEXT_COLS], ncols = text_widths(r, t, width);
	struct text_row row;

	fprintf(f, "\n%s\n", t->title);
	for (int c = 0; c < ncols; c++)
		fprintf(f, "  %*s", width[c], t->heads[c]);
	if (t->name_head)
		fprintf(f, "  %s", t->name_head);
	fputc('\n', f);
	for (size_t i = 0; i < t->nrows; i++) {
		t->fill(r, t->ctx, i, &row);
		for (int c = 0; c < ncols; c++)
			fprintf(f, "  %*s", width[c], row.c[c]);
		if (!t->name_head) {
			fputc('\n', f);
			continue;
		}
		fputs("  ", f);
		text_name(f, row.name ? row.name : "-");
	}
}

static void fill_section(const struct report *r, const void *ctx, size_t i, struct text_row *row)
{
	const struct section_rows *s = ctx;
	const struct count_row *e = s->rows[i];
	double rate;
	int c = 0;

	if (s->desc->by_thread) {
		CELL(row, c++, "%" PRId64, e->a);
		CELL(row, c++, "%" PRId64, e->b);
	}
	CELL(row, c++, "%" PRIu64, e->count);
	CELL(row, c++, "%.2f%%", report__row_share_pct(r, s->desc, e->count));
	if (report__per_second(r, e->count, &rate))
		CELL(row, c++, "%.1f", rate);
	else
		CELL(row, c++, "-");
	if (report__graph_column(r, s->desc))
		CELL(row, c, "%" PRIu64, report__from_graphs(r, e));
	row->name = report__row_name(s->desc, e);
}

static void text_section(FILE *f, const struct report *r, const struct section_rows *s)
{
	const struct section_desc *d = s->desc;
	struct text_table t = { .title = d->title, .name_head = d->name_head, .nrows = s->n,
				.ctx = s, .fill = fill_section };
	int c = 0;

	if (d->by_thread) {
		t.heads[c++] = "PID";
		t.heads[c++] = "TID";
	}
	t.heads[c++] = d->count_head;
	t.heads[c++] = "SHARE";
	t.heads[c++] = d->rate_head;
	if (report__graph_column(r, d))
		t.heads[c] = "FROM GRAPHS";
	text_table(f, r, &t);
}

/* Overhead cells: "-" for what the traces did not say. */
static void cell_hits(struct text_row *row, int col, const struct overhead *o)
{
	if (o->has_hits)
		CELL(row, col, "%" PRIu64, o->hits);
	else
		CELL(row, col, "-");
}

static void cell_cost_pct(struct text_row *row, int col, const struct overhead *o)
{
	double share;

	if (overhead__share(o, &share))
		CELL(row, col, "%.2f", share * 100);
	else
		CELL(row, col, "-");
}

/* Whole ns per hit, or "min-max" when the traces measured different costs. */
static void per_hit_text(const struct overhead *o, char *buf, size_t size)
{
	char max[32];
	int n;

	if (!o->has_per_hit) {
		snprintf(buf, size, "-");
		return;
	}
	n = snprintf(buf, size, "%.0f", o->per_hit_min);
	snprintf(max, sizeof(max), "%.0f", o->per_hit_max);
	if (n > 0 && (size_t)n < size && strcmp(buf, max))
		snprintf(buf + n, size - (size_t)n, "-%s", max);
}

/* ctx points to a bool: whether the table has the GPU BUSY MS column. */
static void fill_step(const struct report *r, const void *ctx, size_t i, struct text_row *row)
{
	const struct step_row *s = vec_at(&r->steps, struct step_row, i);
	int c = 0;

	CELL(row, c++, "%" PRId64, s->pid);
	CELL(row, c++, "%" PRId64, s->step);
	CELL(row, c++, "%.3f", (double)s->wall_ns / 1e6);
	if (*(const bool *)ctx) {
		if (s->has_gpu)
			CELL(row, c++, "%.3f", (double)s->gpu_busy_ns / 1e6);
		else
			CELL(row, c++, "-");
	}
	CELL(row, c++, "%" PRIu64, s->launches);
	if (s->wall_ns)
		CELL(row, c++, "%.3f", (double)s->launches * 1e6 / (double)s->wall_ns);
	else
		CELL(row, c++, "-");
	cell_hits(row, c++, &s->ovh);
	cell_cost_pct(row, c++, &s->ovh);
	CELL(row, c, "%s", s->partial ? "yes" : "no");
}

static void fill_step_stat(const struct report *r, const void *ctx, size_t i,
			   struct text_row *row)
{
	const struct step_stat *st = vec_at(&r->stats, struct step_stat, i);

	(void)ctx;
	CELL(row, 0, "%" PRId64, st->pid);
	CELL(row, 1, "%" PRIu64, st->steps);
	CELL(row, 2, "%.3f", st->mean_ns / 1e6);
	CELL(row, 3, "%.3f", (double)st->p50_ns / 1e6);
	CELL(row, 4, "%.3f", (double)st->p99_ns / 1e6);
	CELL(row, 5, "%.3f", (double)st->max_ns / 1e6);
}

static void fill_cycle(const struct report *r, const void *ctx, size_t i, struct text_row *row)
{
	const struct cycle_row *c = vec_at(&r->cycles, struct cycle_row, i);

	(void)ctx;
	CELL(row, 0, "%" PRId64, c->cycle);
	CELL(row, 1, "%" PRId64, c->pid);
	if (c->has_steps)
		CELL(row, 2, "%" PRId64 "-%" PRId64, c->first_step, c->last_step);
	else
		CELL(row, 2, "-");
	CELL(row, 3, "%" PRIu64, c->launches);
	CELL(row, 4, "%.3f", (double)c->duration_ns / 1e9);
	CELL(row, 5, "%" PRIu64, c->late_launches);
	CELL(row, 6, "%s", c->partial ? "yes" : "no");
	row->name = c->command;
}

/* One row per cycle, then the total of them all. */
static void fill_overhead(const struct report *r, const void *ctx, size_t i,
			  struct text_row *row)
{
	const struct overhead *o = &r->ovh;

	(void)ctx;
	if (i < r->cycles.len) {
		const struct cycle_row *c = vec_at(&r->cycles, struct cycle_row, i);

		CELL(row, 0, "%" PRId64, c->cycle);
		CELL(row, 1, "%" PRId64, c->pid);
		o = &c->ovh;
	} else {
		CELL(row, 0, "total");
		CELL(row, 1, "-");
	}
	cell_hits(row, 2, o);
	per_hit_text(o, row->c[3], sizeof(row->c[3]));
	if (o->has_cost)
		CELL(row, 4, "%.3f", (double)o->cost_ns / 1e6);
	else
		CELL(row, 4, "-");
	cell_cost_pct(row, 5, o);
	if (o->has_cupti)
		CELL(row, 6, "%.3f", (double)o->cupti_ns / 1e6);
	else
		CELL(row, 6, "-");
}

/* A duration in ns as µs with 3 decimals: whole nanoseconds. */
static void cell_us(struct text_row *row, int col, double ns)
{
	CELL(row, col, "%.3f", ns / 1e3);
}

static void fill_gpu_kernel(const struct report *r, const void *ctx, size_t i,
			    struct text_row *row)
{
	const struct gpu_kernel_stat *k = vec_at(&r->gpu_kernels, struct gpu_kernel_stat, i);

	(void)ctx;
	CELL(row, 0, "%" PRIu64, k->count);
	CELL(row, 1, "%.3f", (double)k->total_ns / 1e6);
	cell_us(row, 2, k->mean_ns);
	cell_us(row, 3, (double)k->p50_ns);
	cell_us(row, 4, (double)k->p99_ns);
	if (k->delays) {
		cell_us(row, 5, k->delay_mean_ns);
		cell_us(row, 6, (double)k->delay_p50_ns);
		cell_us(row, 7, (double)k->delay_p99_ns);
	} else {
		for (int c = 5; c < 8; c++)
			CELL(row, c, "-");
	}
	row->name = k->name;
}

static void fill_annotation(const struct report *r, const void *ctx, size_t i,
			    struct text_row *row)
{
	const struct annotation_stat *a = vec_at(&r->annotations, struct annotation_stat, i);
	const uint64_t *steps_ns = ctx;

	CELL(row, 0, "%" PRIu64, a->calls);
	CELL(row, 1, "%.3f", (double)a->total_ns / 1e6);
	CELL(row, 2, "%.3f", (double)a->total_ns / 1e6 / (double)a->calls);
	if (*steps_ns)
		CELL(row, 3, "%.2f", 100.0 * (double)a->total_ns / (double)*steps_ns);
	else
		CELL(row, 3, "-");
	row->name = a->name;
}

/*
 * The record_function ranges (--step torch's, torch.profiler's), by the time
 * spent in them; STEP % is that time's share of the steps' wall time.
 */
static void text_annotations(FILE *f, const struct report *r)
{
	uint64_t steps_ns = 0;
	const struct text_table t = {
		.title = "Annotations (record_function ranges)",
		.heads = { "CALLS", "TOTAL MS", "MEAN MS", "STEP %" },
		.name_head = "NAME",
		.nrows = r->annotations.len,
		.ctx = &steps_ns,
		.fill = fill_annotation,
	};

	for (size_t i = 0; i < r->steps.len; i++)
		steps_ns += vec_at(&r->steps, struct step_row, i)->wall_ns;
	if (r->annotations.len)
		text_table(f, r, &t);
}

/* The steps with parts, in the Steps table's order: ctx holds their indexes. */
static void fill_step_parts(const struct report *r, const void *ctx, size_t i,
			    struct text_row *row)
{
	const struct step_row *s = vec_at(&r->steps, struct step_row, ((const size_t *)ctx)[i]);
	uint64_t parts = s->data_ns + s->optimizer_ns;

	CELL(row, 0, "%" PRId64, s->pid);
	CELL(row, 1, "%" PRId64, s->step);
	CELL(row, 2, "%.3f", (double)s->wall_ns / 1e6);
	CELL(row, 3, "%.3f", (double)s->data_ns / 1e6);
	CELL(row, 4, "%.3f", (double)s->optimizer_ns / 1e6);
	CELL(row, 5, "%.3f", parts < s->wall_ns ? (double)(s->wall_ns - parts) / 1e6 : 0.0);
}

/*
 * Each step split into what its record_function ranges say: the DataLoader's
 * batches, the optimizer's zero_grad and step, and the rest (forward, backward,
 * the loop's own code). Only steps whose traces have such ranges.
 */
static void text_step_parts(FILE *f, const struct report *r)
{
	size_t *rows = malloc((r->steps.len ? r->steps.len : 1) * sizeof(*rows)), n = 0;
	struct text_table t = {
		.title = "Step parts (record_function ranges)",
		.heads = { "PID", "STEP", "WALL MS", "DATA MS", "OPTIMIZER MS", "REST MS" },
		.ctx = rows,
		.fill = fill_step_parts,
	};

	for (size_t i = 0; rows && i < r->steps.len; i++)
		if (vec_at(&r->steps, struct step_row, i)->has_parts)
			rows[n++] = i;
	t.nrows = n;
	if (n)
		text_table(f, r, &t);
	free(rows);
}

/* Only for traces that carry GPU events. */
static void text_gpu_kernels(FILE *f, const struct report *r)
{
	const struct text_table t = {
		.title = "GPU kernels",
		.heads = { "COUNT", "TOTAL MS", "MEAN US", "P50 US", "P99 US", "DELAY MEAN US",
			   "DELAY P50 US", "DELAY P99 US" },
		.name_head = "KERNEL",
		.nrows = r->gpu_kernels.len,
		.fill = fill_gpu_kernel,
	};

	if (r->gpu_kernels.len)
		text_table(f, r, &t);
}

/* GPU work in the traces: GPU events, or a cuprobe.gpu object. */
static bool report_has_gpu(const struct report *r)
{
	return r->gpu_kernels.len || r->has_gpu_counts;
}

/* Steps and their stats only for traces that have steps; cycles for cuprobe's traces. */
static void text_steps_and_cycles(FILE *f, const struct report *r)
{
	const bool show_gpu = report_has_gpu(r);
	struct text_table steps = {
		.title = "Steps",
		.heads = { "PID", "STEP", "WALL MS", "LAUNCHES", "LAUNCHES/MS", "PROBE HITS",
			   "COST %", "PARTIAL" },
		.nrows = r->steps.len,
		.ctx = &show_gpu,
		.fill = fill_step,
	};
	const struct text_table stats = {
		.title = "Step wall time (complete steps)",
		.heads = { "PID", "STEPS", "MEAN MS", "P50 MS", "P99 MS", "MAX MS" },
		.nrows = r->stats.len,
		.fill = fill_step_stat,
	};
	const struct text_table cycles = {
		.title = "Cycles",
		.heads = { "CYCLE", "PID", "STEPS", "LAUNCHES", "WALL S", "LATE", "PARTIAL" },
		.name_head = "COMMAND",
		.nrows = r->cycles.len,
		.fill = fill_cycle,
	};
	const struct text_table overhead = {
		.title = "Overhead",
		.heads = { "CYCLE", "PID", "PROBE HITS", "NS/HIT", "COST MS", "COST %",
			   "CUPTI MS" },
		.nrows = r->cycles.len + 1,
		.fill = fill_overhead,
	};

	if (show_gpu) {
		/* After WALL MS, which it is best read against. */
		memmove(&steps.heads[4], &steps.heads[3], 5 * sizeof(steps.heads[0]));
		steps.heads[3] = "GPU BUSY MS";
	}
	if (r->steps.len)
		text_table(f, r, &steps);
	if (r->stats.len)
		text_table(f, r, &stats);
	if (r->cycles.len) {
		text_table(f, r, &cycles);
		text_table(f, r, &overhead);
	}
}

/* 1234567 as "1,234,567". */
static void group_digits(uint64_t v, char *buf, size_t size)
{
	char digits[24];
	size_t n = (size_t)snprintf(digits, sizeof(digits), "%" PRIu64, v), j = 0;

	for (size_t i = 0; i < n && j + 2 < size; i++) {
		if (i && (n - i) % 3 == 0)
			buf[j++] = ',';
		buf[j++] = digits[i];
	}
	buf[j] = '\0';
}

/* "Overhead   0.16% of wall time (1,234 probe hits x 1340 ns)", "-" for unknowns. */
static void text_overhead_line(FILE *f, const struct overhead *o)
{
	char hits[32], per_hit[64];
	double share;

	fputs("Overhead   ", f);
	if (overhead__share(o, &share))
		fprintf(f, "%.2f%% of wall time", share * 100);
	else
		fputc('-', f);
	if (o->has_hits) {
		group_digits(o->hits, hits, sizeof(hits));
		per_hit_text(o, per_hit, sizeof(per_hit));
		if (o->has_per_hit)
			fprintf(f, " (%s probe hits x %s ns)", hits, per_hit);
		else
			fprintf(f, " (%s probe hits, cost per hit not measured)", hits);
	}
	if (o->has_cupti)
		fprintf(f, ", CUPTI %.3f ms", (double)o->cupti_ns / 1e6);
	fputc('\n', f);
}

/* "GPU        1,234 records; 360 launches joined, ...": the join counts of cuprobe.gpu. */
static void text_gpu_line(FILE *f, const struct report *r)
{
	static const char *const what[GPU__COUNT] = {
		[GPU_JOINED] = "launches joined",
		[GPU_WITHOUT_GPU] = "without GPU work",
		[GPU_WITHOUT_API] = "without CUPTI record",
		[GPU_WITHOUT_LAUNCH] = "GPU records without launch",
		[GPU_CLOCK_FAULTS] = "clock faults",
		[GPU_DROPPED] = "dropped",
		[GPU_MISSING] = "missing at timeout",
	};
	char n[32];

	if (!r->has_gpu_counts)
		return;
	group_digits(r->gpu_counts[GPU_RECORDS], n, sizeof(n));
	fprintf(f, "GPU        %s records;", n);
	for (int i = 0; i < GPU_RECORDS; i++) {
		group_digits(r->gpu_counts[i], n, sizeof(n));
		fprintf(f, "%s %s %s", i ? "," : "", n, what[i]);
	}
	fputc('\n', f);
}

/*
 * "Graphs     40 replays of 2 graphs ran 4000 kernels, 200 copies; 3 replays
 * of graphs of unknown content": only for traces whose replays name their
 * content. A graph is a distinct content of one process.
 */
static void text_graphs_line(FILE *f, const struct report *r)
{
	const struct graph_counts *g = &r->graphs;
	uint64_t known = g->replays - g->unknown;
	size_t contents = count_table__size(&r->graph_contents);

	if (!g->replays)
		return;
	fputs("Graphs     ", f);
	if (known)
		fprintf(f, "%" PRIu64 " %s of %zu %s ran %" PRIu64 " %s", known,
			plural(known, "replay", "replays"), contents,
			plural(contents, "graph", "graphs"), g->kernels,
			plural(g->kernels, "kernel", "kernels"));
	if (known && g->copies)
		fprintf(f, ", %" PRIu64 " %s", g->copies, plural(g->copies, "copy", "copies"));
	if (known && g->sets)
		fprintf(f, ", %" PRIu64 " %s", g->sets, plural(g->sets, "set", "sets"));
	if (g->unknown)
		fprintf(f, "%s%" PRIu64 " %s", known ? "; " : "", g->unknown,
			plural(g->unknown, "replay of a graph of unknown content",
			       "replays of graphs of unknown content"));
	if (g->mismatches)
		fprintf(f, "; %" PRIu64 " %s", g->mismatches,
			plural(g->mismatches, "replay ran another number of kernels on the GPU",
			       "replays ran another number of kernels on the GPU"));
	fputc('\n', f);
}

/* What the traces miss: drops, late launches, lost step boundaries, events skipped. */
static void text_losses(FILE *f, const struct report *r)
{
	fprintf(f, "\nDrops      %" PRIu64 "%s\n", r->drops,
		r->drops ? " (the counts below miss at least this many)" : "");
	fprintf(f, "Late       %" PRIu64 "%s\n", r->late_launches,
		r->late_launches ? " (arrived after their cycle was written: in no trace)" : "");
	if (r->lost_steps)
		fprintf(f, "Lost steps %" PRIu64 " (step boundaries lost while recording)\n",
			r->lost_steps);
	if (r->unprobed_ns)
		fprintf(f, "Unprobed   %.1f ms (windows recorded before their launch probes were "
			"in: launches then are missed)\n", r->unprobed_ns / 1e6);
	if (r->unnamed_kernels)
		fprintf(f, "Unnamed    %" PRIu64 " kernel launches (no symbol, or a handle made "
			"before cuprobe attached)\n", r->unnamed_kernels);
	if (r->captured)
		fprintf(f, "Captured   %" PRIu64 " launches, copies and sets made into captured "
			"streams (graph nodes, not launches: in no table above)\n", r->captured);
	text_graphs_line(f, r);
	if (r->malformed)
		fprintf(f, "Malformed  %" PRIu64 " events skipped (missing or mistyped fields)\n",
			r->malformed);
}

int report_text__write(FILE *f, const struct report *r, const struct section_rows *secs)
{
	size_t procs = count_table__size(&r->pids);
	double rate;

	fprintf(f, "Traces     %" PRIu64 " file%s, %zu process%s\n", r->trace_files,
		r->trace_files == 1 ? "" : "s", procs, procs == 1 ? "" : "es");
	fprintf(f, "Launches   %" PRIu64 "\n", r->launches);
	fprintf(f, "Wall time  %.3f s", (double)r->wall_ns / 1e9);
	if (report__per_second(r, r->launches, &rate))
		fprintf(f, " (%.1f launches/s)", rate);
	text_losses(f, r);
	text_gpu_line(f, r);
	text_overhead_line(f, &r->ovh);
	for (int i = 0; i < SEC__COUNT; i++)
		text_section(f, r, &secs[i]);
	text_gpu_kernels(f, r);
	text_steps_and_cycles(f, r);
	text_annotations(f, r);
	text_step_parts(f, r);
	return 0;
}
