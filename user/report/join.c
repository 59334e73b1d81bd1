// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * GPU work joined to its launch by correlation id, within one file. The
 * events themselves are freed as soon as they are read; what the join needs
 * of them is kept here until the file's last event, since a launch may come
 * after its GPU work.
 */
#include <errno.h>
#include <math.h>
#include <string.h>
#include "report/read.h"

/* A launch of the file being read that has a correlation id. */
struct corr_launch {
	int64_t correlation;
	double ts_us;
	int64_t pid, step;
	bool has_step;
	size_t seq; /* order read: when ids repeat, the first launch wins */
};

/* A GPU event that may join a launch. */
struct gpu_pending {
	size_t sample; /* index in report.gpu_samples */
	int64_t correlation;
	double ts_us;
	int64_t device;
};

void file_scan__init(struct file_scan *fs, const char *path)
{
	memset(fs, 0, sizeof(*fs));
	fs->path = path;
	vec__init(&fs->launches, sizeof(struct corr_launch));
	vec__init(&fs->gpu, sizeof(struct gpu_pending));
}

void file_scan__free(struct file_scan *fs)
{
	vec__free(&fs->launches);
	vec__free(&fs->gpu);
	count_table__free(&fs->replays);
}

void file_scan__extend(struct file_scan *fs, double start_us, double end_us)
{
	if (end_us < start_us)
		end_us = start_us;
	if (!fs->any_time || start_us < fs->first_us)
		fs->first_us = start_us;
	if (!fs->any_time || end_us > fs->last_us)
		fs->last_us = end_us;
	fs->any_time = true;
}

int file_scan__keep_launch(struct file_scan *fs, int64_t correlation, double ts_us, int64_t pid,
			   bool has_step, int64_t step)
{
	struct corr_launch *l = vec__push(&fs->launches);

	if (!l)
		return -ENOMEM;
	l->correlation = correlation;
	l->ts_us = ts_us;
	l->pid = pid;
	l->has_step = has_step;
	l->step = step;
	l->seq = fs->launches.len - 1;
	return 0;
}

int file_scan__keep_gpu(struct file_scan *fs, size_t sample, int64_t correlation, double ts_us,
			int64_t device)
{
	struct gpu_pending *p = vec__push(&fs->gpu);

	if (!p)
		return -ENOMEM;
	p->sample = sample;
	p->correlation = correlation;
	p->ts_us = ts_us;
	p->device = device;
	return 0;
}

/* A time, or a difference of times, in µs as whole ns; garbage cannot overflow. */
static int64_t us_to_ns_signed(double us)
{
	double ns = us * 1000.0;

	if (!(ns < 1e18))
		return (int64_t)1e18;
	return ns > -1e18 ? (int64_t)llround(ns) : (int64_t)-1e18;
}

static int cmp_corr_launch(const void *pa, const void *pb)
{
	const struct corr_launch *x = pa, *y = pb;

	if (x->correlation != y->correlation)
		return (x->correlation > y->correlation) - (x->correlation < y->correlation);
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* The first launch read with that correlation id; launches are sorted by it. */
static int cmp_key_launch(const void *key, const void *elem)
{
	int64_t k = *(const int64_t *)key, c = ((const struct corr_launch *)elem)->correlation;

	return (k > c) - (k < c);
}

static const struct corr_launch *find_launch(const struct vec *launches, int64_t corr)
{
	const struct corr_launch *l = launches->data;
	size_t i = lower_bound(l, launches->len, sizeof(*l), &corr, cmp_key_launch);

	return i < launches->len && l[i].correlation == corr ? &l[i] : NULL;
}

/* The interval of GPU work whose launch was made in a step, for the step's busy time. */
static int add_interval(struct report *r, const struct corr_launch *l,
			const struct gpu_pending *p, int64_t start_ns, uint64_t dur_ns)
{
	struct gpu_interval *iv = vec__push(&r->gpu_intervals);

	if (!iv)
		return -ENOMEM;
	iv->pid = l->pid;
	iv->step = l->step;
	iv->device = p->device;
	iv->start_ns = start_ns;
	iv->end_ns = start_ns + (int64_t)dur_ns;
	return 0;
}

/* A GPU event, joined to the launch of the same file with its correlation id. */
static int join_gpu(struct report *r, const struct gpu_pending *p, const struct vec *launches)
{
	const struct corr_launch *l = find_launch(launches, p->correlation);
	struct gpu_sample *s = vec_at(&r->gpu_samples, struct gpu_sample, p->sample);

	if (!l)
		return 0;
	/* The difference first: absolute times in µs lose nanoseconds in a double. */
	s->delay_ns = us_to_ns_signed(p->ts_us - l->ts_us);
	s->joined = true;
	if (!l->has_step)
		return 0;
	return add_interval(r, l, p, us_to_ns_signed(p->ts_us), s->dur_ns);
}

int file_scan__join(struct report *r, struct file_scan *fs)
{
	int err = 0;

	vec__sort(&fs->launches, cmp_corr_launch);
	for (size_t i = 0; !err && i < fs->gpu.len; i++)
		err = join_gpu(r, vec_at(&fs->gpu, struct gpu_pending, i), &fs->launches);
	return err;
}
