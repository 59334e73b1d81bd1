// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <math.h>
#include <string.h>
#include "util/percentile.h"

void quantile_rank(size_t n, double q, size_t *lo, double *frac)
{
	double h = (double)(n - 1) * (q < 0 ? 0 : q > 1 ? 1 : q);
	double f = floor(h);

	*lo = (size_t)f;
	*frac = h - f;
	if (*lo + 1 >= n) {
		*lo = n - 1;
		*frac = 0;
	}
}

double quantile_sorted(const double *sorted, size_t n, double q)
{
	double frac;
	size_t i;

	if (!n)
		return NAN;
	quantile_rank(n, q, &i, &frac);
	return frac ? sorted[i] + frac * (sorted[i + 1] - sorted[i]) : sorted[i];
}

static uint64_t u64_at(const void *first, size_t stride, size_t i)
{
	uint64_t v;

	memcpy(&v, (const char *)first + i * stride, sizeof(v));
	return v;
}

uint64_t quantile_sorted_u64_field(const void *first, size_t n, size_t stride, double q)
{
	uint64_t lo;
	double frac;
	size_t i;

	if (!n)
		return 0;
	quantile_rank(n, q, &i, &frac);
	lo = u64_at(first, stride, i);
	if (!frac)
		return lo;
	/* The step between neighbours, not their doubles: exact below 2^53 ns apart. */
	return lo + (uint64_t)llround(frac * (double)(u64_at(first, stride, i + 1) - lo));
}

uint64_t quantile_sorted_u64(const uint64_t *sorted, size_t n, double q)
{
	return quantile_sorted_u64_field(sorted, n, sizeof(*sorted), q);
}

int64_t quantile_sorted_i64(const int64_t *sorted, size_t n, double q)
{
	double frac;
	size_t i;

	if (!n)
		return 0;
	quantile_rank(n, q, &i, &frac);
	if (!frac)
		return sorted[i];
	return sorted[i] + (int64_t)llround(frac * ((double)sorted[i + 1] - (double)sorted[i]));
}
