/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one percentile rule of report and compare: linear interpolation
 * between the closest ranks, numpy's and pandas' default (R's type 7, Excel's
 * PERCENTILE.INC). The q-quantile of n sorted values lies at h = (n - 1) * q:
 * sorted[floor(h)] plus the fraction of h of the way to the next value. So
 * report, compare and a user's pandas on the same trace agree. Pure
 * functions, safe from any thread.
 */
#ifndef UTIL_PERCENTILE_H
#define UTIL_PERCENTILE_H

#include <stddef.h>
#include <stdint.h>

/*
 * Where the q-quantile (0 to 1) of n > 0 sorted values lies: between index
 * *lo and *lo + 1, *frac (0 to 1) of the way; *frac is 0 at the last one.
 */
void quantile_rank(size_t n, double q, size_t *lo, double *frac);

/* The q-quantile of n sorted values; NaN when n is 0. */
double quantile_sorted(const double *sorted, size_t n, double q);

/* The same of integers, rounded to the nearest (halves up); 0 when n is 0. */
uint64_t quantile_sorted_u64(const uint64_t *sorted, size_t n, double q);
/* The same over a field of n structs sorted by it: first field, then every stride bytes. */
uint64_t quantile_sorted_u64_field(const void *first, size_t n, size_t stride, double q);
int64_t quantile_sorted_i64(const int64_t *sorted, size_t n, double q);

#endif /* UTIL_PERCENTILE_H */
