// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "compare/compare_stats.h"

static const char *const mode_names[MODE__COUNT] = {
	[MODE_OFF] = "off", [MODE_BPF] = "bpf", [MODE_CUPTI] = "cupti", [MODE_LATENCY] = "latency",
};

const char *compare_mode_name(enum window_mode m)
{
	return (unsigned int)m < MODE__COUNT ? mode_names[m] : "?";
}

int compare_mode_parse(const char *name)
{
	for (int m = 0; m < MODE__COUNT; m++)
		if (!strcmp(name, mode_names[m]))
			return m;
	return -1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

int dist__of(const double *x, size_t n, struct dist *d)
{
	double *s, sum = 0, ss = 0;

	memset(d, 0, sizeof(*d));
	if (!n)
		return -EINVAL;
	s = malloc(n * sizeof(*s));
	if (!s)
		return -ENOMEM;
	memcpy(s, x, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	for (size_t i = 0; i < n; i++)
		sum += s[i];
	d->n = n;
	d->mean = sum / (double)n;
	for (size_t i = 0; i < n; i++)
		ss += (s[i] - d->mean) * (s[i] - d->mean);
	d->stddev = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
	d->min = s[0];
	d->max = s[n - 1];
	d->p25 = quantile_sorted(s, n, 0.25);
	d->median = quantile_sorted(s, n, 0.5);
	d->p75 = quantile_sorted(s, n, 0.75);
	d->p95 = quantile_sorted(s, n, 0.95);
	free(s);
	return 0;
}

/* splitmix64: small, fast, and the same sequence everywhere. */
static uint64_t next_rand(uint64_t *st)
{
	uint64_t z = (*st += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* The median of a resample of x (n values) drawn into buf. */
static double resample_median(const double *x, size_t n, double *buf, uint64_t *st)
{
	for (size_t i = 0; i < n; i++)
		buf[i] = x[next_rand(st) % n];
	qsort(buf, n, sizeof(*buf), cmp_double);
	return quantile_sorted(buf, n, 0.5);
}

static double median_of(const double *x, size_t n, double *buf)
{
	memcpy(buf, x, n * sizeof(*buf));
	qsort(buf, n, sizeof(*buf), cmp_double);
	return quantile_sorted(buf, n, 0.5);
}

int median_cmp__of(const double *a, size_t na, const double *b, size_t nb, double level,
		   unsigned int iters, uint64_t seed, struct median_cmp *out)
{
	double *buf, *ratios = NULL, *diffs = NULL, ma, mb, alpha = (1 - level) / 2;
	uint64_t st = seed;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (!na || !nb || !(level > 0 && level < 1))
		return -EINVAL;
	buf = malloc((na > nb ? na : nb) * sizeof(*buf));
	if (!buf)
		return -ENOMEM;
	ma = median_of(a, na, buf);
	mb = median_of(b, nb, buf);
	if (ma == 0) {
		err = -EINVAL;
		goto out;
	}
	out->ratio = mb / ma;
	out->diff = mb - ma;
	if (na < COMPARE_MIN_CI_SAMPLES || nb < COMPARE_MIN_CI_SAMPLES || iters < 2)
		goto out;
	ratios = malloc(iters * sizeof(*ratios));
	diffs = malloc(iters * sizeof(*diffs));
	if (!ratios || !diffs) {
		err = -ENOMEM;
		goto out;
	}
	for (unsigned int i = 0; i < iters; i++) {
		double ra = resample_median(a, na, buf, &st);
		double rb = resample_median(b, nb, buf, &st);

		/* A resampled baseline median of 0 is as extreme as ratios go. */
		ratios[i] = ra > 0 ? rb / ra : INFINITY;
		diffs[i] = rb - ra;
	}
	qsort(ratios, iters, sizeof(*ratios), cmp_double);
	qsort(diffs, iters, sizeof(*diffs), cmp_double);
	out->ratio_lo = quantile_sorted(ratios, iters, alpha);
	out->ratio_hi = quantile_sorted(ratios, iters, 1 - alpha);
	out->diff_lo = quantile_sorted(diffs, iters, alpha);
	out->diff_hi = quantile_sorted(diffs, iters, 1 - alpha);
	out->has_ci = true;
out:
	free(ratios);
	free(diffs);
	free(buf);
	return err;
}

size_t compare_order(const enum window_mode *modes, size_t n, uint32_t rounds,
		     enum window_mode *out)
{
	size_t k = 0;

	for (uint32_t r = 0; r < rounds; r++)
		for (size_t i = 0; i < n; i++)
			out[k++] = r % 2 ? modes[n - 1 - i] : modes[i];
	return k;
}
