// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The report's tables and rows, and how the report of one file joins the whole. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "report/graphs.h"
#include "report/model.h"
#include "trace/format.h"

const char *const gpu_count_keys[GPU__COUNT] = {
	[GPU_JOINED] = TRACE_GPU_JOINED,
	[GPU_WITHOUT_GPU] = TRACE_GPU_WITHOUT_GPU,
	[GPU_WITHOUT_API] = TRACE_GPU_WITHOUT_API,
	[GPU_WITHOUT_LAUNCH] = TRACE_GPU_WITHOUT_LAUNCH,
	[GPU_CLOCK_FAULTS] = TRACE_GPU_CLOCK_FAULTS,
	[GPU_DROPPED] = TRACE_GPU_DROPPED,
	[GPU_MISSING] = TRACE_GPU_MISSING,
	[GPU_RECORDS] = TRACE_GPU_RECORDS,
};

const struct section_desc section_descs[SEC__COUNT] = {
	[SEC_KERNEL] = { "kernel", "kernels", "launches", "launches_per_s", "Kernels",
			 "LAUNCHES", "LAUNCHES/S", "KERNEL", false },
	[SEC_API] = { "api", "apis", "calls", "calls_per_s", "APIs", "CALLS", "CALLS/S", "API",
		      false },
	[SEC_THREAD] = { "thread", "threads", "launches", "launches_per_s", "Threads",
			 "LAUNCHES", "LAUNCHES/S", "THREAD", true },
};

/* ---- count tables ---- */

static size_t row_hash(long key, void *ctx)
{
	const struct count_row *r = (const struct count_row *)key;
	size_t h = r->name ? hash_str(r->name) : 0;

	(void)ctx;
	h = hash_combine(h, (size_t)r->a);
	h = hash_combine(h, (size_t)r->b);
	return hash_combine(h, (size_t)r->c);
}

static bool row_equal(long key1, long key2, void *ctx)
{
	const struct count_row *x = (const struct count_row *)key1;
	const struct count_row *y = (const struct count_row *)key2;

	(void)ctx;
	if (x->a != y->a || x->b != y->b || x->c != y->c)
		return false;
	if (!x->name || !y->name)
		return !x->name && !y->name;
	return !strcmp(x->name, y->name);
}

static struct count_row *find_row(const struct count_table *t, const char *name, int64_t a,
				  int64_t b, int64_t c)
{
	const struct count_row key = { .name = name, .a = a, .b = b, .c = c };
	long row;

	if (!t->map || !hmap__find(t->map, (long)&key, &row))
		return NULL;
	return (struct count_row *)row;
}

static struct count_row *new_row(const char *name, int64_t a, int64_t b, int64_t c)
{
	size_t len = name ? strlen(name) + 1 : 0;
	struct count_row *row = calloc(1, sizeof(*row) + len);

	if (!row)
		return NULL;
	if (name) {
		memcpy(row->name_buf, name, len);
		row->name = row->name_buf;
	}
	row->a = a;
	row->b = b;
	row->c = c;
	return row;
}

struct count_row *count_table__get(struct count_table *t, const char *name, int64_t a, int64_t b,
				   int64_t c)
{
	struct count_row *row = find_row(t, name, a, b, c);

	if (row)
		return row;
	if (!t->map && !(t->map = hmap__new(row_hash, row_equal, NULL)))
		return NULL;
	row = new_row(name, a, b, c);
	if (!row)
		return NULL;
	if (hmap__add(t->map, (long)row, (long)row)) {
		free(row);
		return NULL;
	}
	return row;
}

int count_table__add(struct count_table *t, const char *name, int64_t a, int64_t b, int64_t c)
{
	return count_table__add_n(t, name, a, b, c, 1);
}

int count_table__add_n(struct count_table *t, const char *name, int64_t a, int64_t b, int64_t c,
		       uint64_t n)
{
	struct count_row *row = count_table__get(t, name, a, b, c);

	if (!row)
		return -ENOMEM;
	row->count = graphs__add(row->count, n);
	return 0;
}

uint64_t count_table__count(const struct count_table *t, const char *name, int64_t a, int64_t b,
			    int64_t c)
{
	const struct count_row *row = find_row(t, name, a, b, c);

	return row ? row->count : 0;
}

size_t count_table__size(const struct count_table *t)
{
	return t->map ? hmap__size(t->map) : 0;
}

struct count_row *count_table__iter(const struct count_table *t, size_t *bkt)
{
	const struct hmap_entry *e = t->map ? hmap__iter(t->map, bkt) : NULL;

	return e ? (struct count_row *)e->value : NULL;
}

int count_table__merge(struct count_table *dst, const struct count_table *src, bool max)
{
	const struct count_row *s;
	struct count_row *d;
	size_t bkt;

	for (bkt = 0; (s = count_table__iter(src, &bkt)); bkt++) {
		d = count_table__get(dst, s->name, s->a, s->b, s->c);
		if (!d)
			return -ENOMEM;
		if (!max)
			d->count = graphs__add(d->count, s->count);
		else if (s->count > d->count)
			d->count = s->count;
		/* The first name wins, as within a file. */
		if (s->label && !d->label && !(d->label = strdup(s->label)))
			return -ENOMEM;
	}
	return 0;
}

void count_table__free(struct count_table *t)
{
	struct count_row *row;
	size_t bkt;

	for (bkt = 0; (row = count_table__iter(t, &bkt)); bkt++) {
		free(row->label);
		free(row);
	}
	hmap__free(t->map);
	t->map = NULL;
}

/* ---- overhead ---- */

void overhead__add(struct overhead *sum, const struct overhead *o)
{
	if (o->has_hits) {
		sum->hits += o->hits;
		sum->has_hits = true;
	}
	if (o->has_cost) {
		sum->cost_ns += o->cost_ns;
		sum->cost_wall_ns += o->cost_wall_ns;
		sum->has_cost = true;
	}
	if (o->has_cupti) {
		sum->cupti_ns += o->cupti_ns;
		sum->has_cupti = true;
	}
	if (!o->has_per_hit)
		return;
	if (!sum->has_per_hit || o->per_hit_min < sum->per_hit_min)
		sum->per_hit_min = o->per_hit_min;
	if (!sum->has_per_hit || o->per_hit_max > sum->per_hit_max)
		sum->per_hit_max = o->per_hit_max;
	sum->has_per_hit = true;
}

bool overhead__share(const struct overhead *o, double *share)
{
	if (!o->has_cost || !o->cost_wall_ns)
		return false;
	*share = (double)o->cost_ns / (double)o->cost_wall_ns;
	return true;
}

/* ---- the report ---- */

void report__init(struct report *r)
{
	memset(r, 0, sizeof(*r));
	vec__init(&r->steps, sizeof(struct step_row));
	vec__init(&r->stats, sizeof(struct step_stat));
	vec__init(&r->cycles, sizeof(struct cycle_row));
	vec__init(&r->gpu_samples, sizeof(struct gpu_sample));
	vec__init(&r->gpu_intervals, sizeof(struct gpu_interval));
	vec__init(&r->gpu_kernels, sizeof(struct gpu_kernel_stat));
	vec__init(&r->annotations, sizeof(struct annotation_stat));
	vec__init(&r->part_spans, sizeof(struct part_span));
}

void report__free(struct report *r)
{
	for (int i = 0; i < SEC__COUNT; i++)
		count_table__free(&r->sections[i]);
	count_table__free(&r->pids);
	count_table__free(&r->files);
	count_table__free(&r->step_launches);
	count_table__free(&r->recording_drops);
	count_table__free(&r->gpu_names);
	count_table__free(&r->graph_kernels);
	count_table__free(&r->graph_contents);
	count_table__free(&r->annotation_calls);
	count_table__free(&r->annotation_ns);
	for (size_t i = 0; i < r->cycles.len; i++)
		free(vec_at(&r->cycles, struct cycle_row, i)->command);
	vec__free(&r->cycles);
	vec__free(&r->steps);
	vec__free(&r->stats);
	vec__free(&r->gpu_samples);
	vec__free(&r->gpu_intervals);
	vec__free(&r->gpu_kernels);
	vec__free(&r->annotations);
	vec__free(&r->part_spans);
	free(r->scratch);
	r->scratch = NULL;
	r->scratch_cap = 0;
}

const char *report__scratch(struct report *r, const char *fmt, ...)
{
	va_list ap;
	int len;

	for (;;) {
		va_start(ap, fmt);
		len = vsnprintf(r->scratch, r->scratch_cap, fmt, ap);
		va_end(ap);
		if (len < 0)
			return NULL;
		if ((size_t)len < r->scratch_cap)
			return r->scratch;
		free(r->scratch);
		r->scratch_cap = (size_t)len + 64;
		r->scratch = malloc(r->scratch_cap);
		if (!r->scratch) {
			r->scratch_cap = 0;
			return NULL;
		}
	}
}

/* Cycles take their commands from f; each gets its place in r's order. */
static int merge_cycles(struct report *r, struct report *f)
{
	size_t before = r->cycles.len;

	if (vec__append(&r->cycles, f->cycles.data, f->cycles.len))
		return -ENOMEM;
	for (size_t i = 0; i < f->cycles.len; i++)
		vec_at(&f->cycles, struct cycle_row, i)->command = NULL;
	for (size_t i = before; i < r->cycles.len; i++)
		vec_at(&r->cycles, struct cycle_row, i)->seq = i;
	return 0;
}

/* GPU samples name their kernel with a string of f's: they take r's instead. */
static int merge_gpu_samples(struct report *r, const struct report *f)
{
	struct count_row *row = NULL;
	size_t before = r->gpu_samples.len;

	if (vec__append(&r->gpu_samples, f->gpu_samples.data, f->gpu_samples.len))
		return -ENOMEM;
	for (size_t i = before; i < r->gpu_samples.len; i++) {
		struct gpu_sample *s = vec_at(&r->gpu_samples, struct gpu_sample, i);

		if (!row || strcmp(row->name, s->name))
			row = count_table__get(&r->gpu_names, s->name, 0, 0, 0);
		if (!row)
			return -ENOMEM;
		row->count++;
		s->name = row->name;
	}
	return 0;
}

static int merge_tables(struct report *r, struct report *f)
{
	int err = 0;

	for (int i = 0; !err && i < SEC__COUNT; i++)
		err = count_table__merge(&r->sections[i], &f->sections[i], false);
	if (!err)
		err = count_table__merge(&r->pids, &f->pids, false);
	if (!err)
		err = count_table__merge(&r->step_launches, &f->step_launches, false);
	if (!err)
		err = count_table__merge(&r->recording_drops, &f->recording_drops, true);
	if (!err)
		err = count_table__merge(&r->graph_kernels, &f->graph_kernels, false);
	if (!err)
		err = count_table__merge(&r->graph_contents, &f->graph_contents, false);
	if (!err)
		err = count_table__merge(&r->annotation_calls, &f->annotation_calls, false);
	if (!err)
		err = count_table__merge(&r->annotation_ns, &f->annotation_ns, false);
	return err;
}

/* no_driver: f is one file's, of a process where no driver could have built a graph. */
static void merge_graph_counts(struct graph_counts *g, const struct graph_counts *f,
			       bool no_driver)
{
	g->replays = graphs__add(g->replays, f->replays);
	g->unknown = graphs__add(g->unknown, f->unknown);
	g->unknown_no_driver = graphs__add(g->unknown_no_driver,
					   no_driver ? f->unknown : f->unknown_no_driver);
	g->kernels = graphs__add(g->kernels, f->kernels);
	g->copies = graphs__add(g->copies, f->copies);
	g->sets = graphs__add(g->sets, f->sets);
	g->gpu_kernels = graphs__add(g->gpu_kernels, f->gpu_kernels);
	g->mismatches = graphs__add(g->mismatches, f->mismatches);
	g->has_cupti |= f->has_cupti;
}

static void merge_counts(struct report *r, const struct report *f)
{
	r->launches += f->launches;
	r->wall_ns += f->wall_ns;
	r->drops += f->drops;
	r->late_launches += f->late_launches;
	r->lost_steps += f->lost_steps;
	r->unprobed_ns += f->unprobed_ns;
	r->nested_skipped += f->nested_skipped;
	r->unnamed_kernels += f->unnamed_kernels;
	r->captured += f->captured;
	r->malformed += f->malformed;
	overhead__add(&r->ovh, &f->ovh);
	for (int i = 0; i < GPU__COUNT; i++)
		r->gpu_counts[i] += f->gpu_counts[i];
	r->has_gpu_counts |= f->has_gpu_counts;
	merge_graph_counts(&r->graphs, &f->graphs, f->no_driver);
}

/* Each step of file f takes the ranges of its process that begin in it, by part. */
static void split_steps(struct report *f)
{
	for (size_t i = 0; i < f->steps.len && f->part_spans.len; i++) {
		struct step_row *s = vec_at(&f->steps, struct step_row, i);
		int64_t end = s->start_ns + (int64_t)s->wall_ns;

		s->has_parts = true;
		for (size_t j = 0; j < f->part_spans.len; j++) {
			const struct part_span *p = vec_at(&f->part_spans, struct part_span, j);
			uint64_t ns = (uint64_t)(p->end_ns - p->start_ns);

			if (p->pid != s->pid || p->start_ns < s->start_ns || p->start_ns >= end)
				continue;
			if (p->part == PART_DATA)
				s->data_ns += ns;
			else
				s->optimizer_ns += ns;
		}
	}
	vec__truncate(&f->part_spans, 0);
}

int report__merge(struct report *r, struct report *f)
{
	int err;

	split_steps(f);
	err = merge_tables(r, f);

	if (!err)
		err = vec__append(&r->steps, f->steps.data, f->steps.len);
	if (!err)
		err = merge_cycles(r, f);
	if (!err)
		err = merge_gpu_samples(r, f);
	if (!err)
		err = vec__append(&r->gpu_intervals, f->gpu_intervals.data, f->gpu_intervals.len);
	if (err)
		return err;
	merge_counts(r, f);
	return 0;
}

/* ---- what the writers share ---- */

static int cmp_count_desc(const struct count_row *x, const struct count_row *y)
{
	return (x->count < y->count) - (x->count > y->count);
}

static int cmp_by_name(const void *pa, const void *pb)
{
	const struct count_row *x = *(const struct count_row *const *)pa;
	const struct count_row *y = *(const struct count_row *const *)pb;
	int c = cmp_count_desc(x, y);

	return c ? c : strcmp(x->name, y->name);
}

static int cmp_by_thread(const void *pa, const void *pb)
{
	const struct count_row *x = *(const struct count_row *const *)pa;
	const struct count_row *y = *(const struct count_row *const *)pb;
	int c = cmp_count_desc(x, y);

	if (c)
		return c;
	if (x->a != y->a)
		return x->a < y->a ? -1 : 1;
	return (x->b > y->b) - (x->b < y->b);
}

/* Rows with a count, most first; threads that only had a name are left out. */
int report__sort_section(const struct report *r, enum section_id id, struct section_rows *out)
{
	const struct count_table *t = &r->sections[id];
	const struct count_row *row;
	size_t bkt, n = count_table__size(t);

	out->desc = &section_descs[id];
	out->n = 0;
	out->rows = calloc(n ? n : 1, sizeof(*out->rows));
	if (!out->rows)
		return -ENOMEM;
	for (bkt = 0; (row = count_table__iter(t, &bkt)); bkt++) {
		if (row->count)
			out->rows[out->n++] = row;
	}
	if (out->n > 1)
		qsort(out->rows, out->n, sizeof(*out->rows),
		      out->desc->by_thread ? cmp_by_thread : cmp_by_name);
	return 0;
}

double report__share_pct(const struct report *r, uint64_t count)
{
	return r->launches ? 100.0 * (double)count / (double)r->launches : 0.0;
}

double report__row_share_pct(const struct report *r, const struct section_desc *d,
			     uint64_t count)
{
	uint64_t total = graphs__add(r->launches, r->graphs.kernels);

	if (d != &section_descs[SEC_KERNEL])
		return report__share_pct(r, count);
	return total ? 100.0 * (double)count / (double)total : 0.0;
}

bool report__rate(uint64_t count, uint64_t ns, double *rate)
{
	if (!ns)
		return false;
	*rate = (double)count * 1e9 / (double)ns;
	return true;
}

bool report__per_second(const struct report *r, uint64_t count, double *rate)
{
	return report__rate(count, r->wall_ns, rate);
}

const char *report__row_name(const struct section_desc *d, const struct count_row *row)
{
	return d->by_thread ? row->label : row->name;
}

bool report__graph_column(const struct report *r, const struct section_desc *d)
{
	return d == &section_descs[SEC_KERNEL] && r->graphs.replays;
}

uint64_t report__from_graphs(const struct report *r, const struct count_row *row)
{
	return count_table__count(&r->graph_kernels, row->name, 0, 0, 0);
}
