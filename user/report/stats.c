// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Once every file is read: steps merged and given their launches, step wall
 * time and GPU kernel statistics (percentiles by util/percentile.h's rule,
 * compare's and numpy's: linear between the closest ranks), GPU busy time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report/model.h"
#include "util/percentile.h"

static int cmp_i64(int64_t x, int64_t y)
{
	return (x > y) - (x < y);
}

static int cmp_step(const void *pa, const void *pb)
{
	const struct step_row *x = pa, *y = pb;

	return x->pid != y->pid ? cmp_i64(x->pid, y->pid) : cmp_i64(x->step, y->step);
}

static int cmp_cycle(const void *pa, const void *pb)
{
	const struct cycle_row *x = pa, *y = pb;

	if (x->cycle != y->cycle)
		return cmp_i64(x->cycle, y->cycle);
	if (x->pid != y->pid)
		return cmp_i64(x->pid, y->pid);
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/*
 * Sorts the steps by pid and step and gives each its launches. A step met
 * twice (one pid in two recordings) is one row whose times add up, as its
 * launches do.
 */
static void merge_steps(struct report *r)
{
	struct step_row *s = r->steps.data;
	size_t n = 0;

	vec__sort(&r->steps, cmp_step);
	for (size_t i = 0; i < r->steps.len; i++) {
		if (n && !cmp_step(&s[n - 1], &s[i])) {
			s[n - 1].wall_ns += s[i].wall_ns;
			s[n - 1].partial |= s[i].partial;
			s[n - 1].has_gpu |= s[i].has_gpu;
			s[n - 1].has_parts |= s[i].has_parts;
			s[n - 1].data_ns += s[i].data_ns;
			s[n - 1].optimizer_ns += s[i].optimizer_ns;
			overhead__add(&s[n - 1].ovh, &s[i].ovh);
			continue;
		}
		s[n++] = s[i];
	}
	vec__truncate(&r->steps, n);
	for (size_t i = 0; i < n; i++)
		s[i].launches = count_table__count(&r->step_launches, NULL, s[i].pid, s[i].step, 0);
}

static int cmp_u64(const void *pa, const void *pb)
{
	uint64_t x = *(const uint64_t *)pa, y = *(const uint64_t *)pb;

	return (x > y) - (x < y);
}

/* Adds the stats of one process's complete steps (none: no row); tmp holds n values. */
static int add_step_stat(struct report *r, const struct step_row *s, size_t n, uint64_t *tmp)
{
	struct step_stat *st;
	double sum = 0;
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		if (!s[i].partial)
			tmp[m++] = s[i].wall_ns;
	}
	if (!m)
		return 0;
	st = vec__push(&r->stats);
	if (!st)
		return -ENOMEM;
	qsort(tmp, m, sizeof(*tmp), cmp_u64);
	for (size_t i = 0; i < m; i++)
		sum += (double)tmp[i];
	st->pid = s[0].pid;
	st->steps = m;
	st->mean_ns = sum / (double)m;
	st->p50_ns = quantile_sorted_u64(tmp, m, 0.50);
	st->p99_ns = quantile_sorted_u64(tmp, m, 0.99);
	st->max_ns = tmp[m - 1];
	return 0;
}

/* A partial step was cut short by the recording, not by the program: it is left out. */
static int step_stats(struct report *r)
{
	const struct step_row *s = r->steps.data;
	uint64_t *tmp;
	size_t i, j;
	int err = 0;

	if (!r->steps.len)
		return 0;
	tmp = malloc(r->steps.len * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	/* The steps are sorted by pid: [i, j) are one process's. */
	for (i = 0; !err && i < r->steps.len; i = j) {
		for (j = i + 1; j < r->steps.len && s[j].pid == s[i].pid; j++)
			;
		err = add_step_stat(r, s + i, j - i, tmp);
	}
	free(tmp);
	return err;
}

static int cmp_interval(const void *pa, const void *pb)
{
	const struct gpu_interval *x = pa, *y = pb;

	if (x->pid != y->pid)
		return cmp_i64(x->pid, y->pid);
	if (x->step != y->step)
		return cmp_i64(x->step, y->step);
	if (x->device != y->device)
		return cmp_i64(x->device, y->device);
	return cmp_i64(x->start_ns, y->start_ns);
}

static struct step_row *find_step(const struct report *r, int64_t pid, int64_t step)
{
	const struct step_row key = { .pid = pid, .step = step };

	if (!r->steps.len)
		return NULL;
	return bsearch(&key, r->steps.data, r->steps.len, sizeof(key), cmp_step);
}

/* The time covered by sorted intervals of one step on one device: overlaps count once. */
static uint64_t interval_union(const struct gpu_interval *iv, size_t n)
{
	int64_t start = iv[0].start_ns, end = iv[0].end_ns;
	uint64_t covered = 0;

	for (size_t i = 1; i < n; i++) {
		if (iv[i].start_ns > end) {
			covered += (uint64_t)(end - start);
			start = iv[i].start_ns;
			end = iv[i].end_ns;
		} else if (iv[i].end_ns > end) {
			end = iv[i].end_ns;
		}
	}
	return covered + (uint64_t)(end - start);
}

static bool same_step_device(const struct gpu_interval *x, const struct gpu_interval *y)
{
	return x->pid == y->pid && x->step == y->step && x->device == y->device;
}

/*
 * Each step's GPU busy time: the union of its GPU work's intervals on each
 * device, so that streams running at once count once, summed over devices.
 * Work of a step without a span (a step outside every saved cycle) is left out.
 */
static void gpu_busy(struct report *r)
{
	const struct gpu_interval *iv = r->gpu_intervals.data;
	size_t n = r->gpu_intervals.len, i, j;
	struct step_row *s;

	vec__sort(&r->gpu_intervals, cmp_interval);
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && same_step_device(&iv[i], &iv[j]); j++)
			;
		s = find_step(r, iv[i].pid, iv[i].step);
		if (s)
			s->gpu_busy_ns += interval_union(iv + i, j - i);
	}
}

static int cmp_sample(const void *pa, const void *pb)
{
	const struct gpu_sample *x = pa, *y = pb;
	/* Samples of one name share its string: most comparisons need no strcmp. */
	int c = x->name == y->name ? 0 : strcmp(x->name, y->name);

	return c ? c : (x->dur_ns > y->dur_ns) - (x->dur_ns < y->dur_ns);
}

static int cmp_i64p(const void *pa, const void *pb)
{
	return cmp_i64(*(const int64_t *)pa, *(const int64_t *)pb);
}

/* The stats of n samples of one name, sorted by duration; tmp holds n delays. */
static int add_gpu_kernel(struct report *r, const struct gpu_sample *s, size_t n, int64_t *tmp)
{
	struct gpu_kernel_stat *k = vec__push(&r->gpu_kernels);
	double delay_sum = 0;
	size_t m = 0;

	if (!k)
		return -ENOMEM;
	k->name = s[0].name;
	k->count = n;
	for (size_t i = 0; i < n; i++) {
		k->total_ns += s[i].dur_ns;
		if (s[i].joined)
			tmp[m++] = s[i].delay_ns;
	}
	k->mean_ns = (double)k->total_ns / (double)n;
	k->p50_ns = quantile_sorted_u64_field(&s[0].dur_ns, n, sizeof(*s), 0.50);
	k->p99_ns = quantile_sorted_u64_field(&s[0].dur_ns, n, sizeof(*s), 0.99);
	k->delays = m;
	if (!m)
		return 0;
	qsort(tmp, m, sizeof(*tmp), cmp_i64p);
	for (size_t i = 0; i < m; i++)
		delay_sum += (double)tmp[i];
	k->delay_mean_ns = delay_sum / (double)m;
	k->delay_p50_ns = quantile_sorted_i64(tmp, m, 0.50);
	k->delay_p99_ns = quantile_sorted_i64(tmp, m, 0.99);
	return 0;
}

/* Most GPU time first; equal times by name in byte order. */
static int cmp_gpu_kernel(const void *pa, const void *pb)
{
	const struct gpu_kernel_stat *x = pa, *y = pb;

	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* One row per GPU event name: GPU time and launch-to-start delay. */
static int gpu_kernel_stats(struct report *r)
{
	const struct gpu_sample *s = r->gpu_samples.data;
	size_t n = r->gpu_samples.len, i, j;
	int64_t *tmp;
	int err = 0;

	if (!n)
		return 0;
	tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	vec__sort(&r->gpu_samples, cmp_sample);
	for (i = 0; !err && i < n; i = j) {
		for (j = i + 1; j < n && s[j].name == s[i].name; j++)
			;
		err = add_gpu_kernel(r, s + i, j - i, tmp);
	}
	free(tmp);
	if (!err)
		vec__sort(&r->gpu_kernels, cmp_gpu_kernel);
	return err;
}

/* Traces before 0.2.0 repeat a recording's drops: each recording counts once (read.c). */
static void add_recording_drops(struct report *r)
{
	const struct count_row *row;
	size_t bkt;

	for (bkt = 0; (row = count_table__iter(&r->recording_drops, &bkt)); bkt++)
		r->drops += row->count;
	count_table__free(&r->recording_drops);
}

/* The most time first, then by name. */
static int cmp_annotation(const void *pa, const void *pb)
{
	const struct annotation_stat *x = pa, *y = pb;

	if (x->total_ns != y->total_ns)
		return (x->total_ns < y->total_ns) - (x->total_ns > y->total_ns);
	return strcmp(x->name, y->name);
}

static int annotation_stats(struct report *r)
{
	const struct count_row *row;
	struct annotation_stat *a;
	size_t bkt;

	for (bkt = 0; (row = count_table__iter(&r->annotation_calls, &bkt)); bkt++) {
		a = vec__push(&r->annotations);
		if (!a)
			return -ENOMEM;
		*a = (struct annotation_stat){
			.name = row->name, .calls = row->count,
			.total_ns = count_table__count(&r->annotation_ns, row->name, 0, 0, 0),
		};
	}
	vec__sort(&r->annotations, cmp_annotation);
	return 0;
}

int report__finish(struct report *r)
{
	int err;

	add_recording_drops(r);
	merge_steps(r);
	gpu_busy(r);
	vec__sort(&r->cycles, cmp_cycle);
	err = step_stats(r);
	if (!err)
		err = gpu_kernel_stats(r);
	if (!err)
		err = annotation_stats(r);
	return err;
}
