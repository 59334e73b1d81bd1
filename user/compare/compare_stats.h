/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * `cuprobe compare`'s statistics, pure functions over step times: a
 * distribution's summary, the ratio and difference of two medians with a
 * percentile bootstrap confidence interval, and the balanced order in which
 * windows rotate through the modes.
 */
#ifndef COMPARE_COMPARE_STATS_H
#define COMPARE_COMPARE_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/session/session_types.h"
#include "util/percentile.h"

/* Fewer samples than this in either mode: no confidence interval is given. */
#define COMPARE_MIN_CI_SAMPLES 5
#define COMPARE_BOOTSTRAP_ITERS 2000
#define COMPARE_BOOTSTRAP_SEED 0x9e3779b97f4a7c15ull

/* The summary of a sample; quantiles by util/percentile.h's rule, as report's. */
struct dist {
	size_t n;
	double min, max, mean, stddev;	/* stddev: the sample's (n - 1); 0 when n < 2 */
	double p25, median, p75, p95;
};

/* Summarises x (left unchanged). 0, -EINVAL when n is 0, or -ENOMEM. */
int dist__of(const double *x, size_t n, struct dist *d);

/* median(b) / median(a) and median(b) - median(a), each with a confidence interval. */
struct median_cmp {
	double ratio, ratio_lo, ratio_hi;
	double diff, diff_lo, diff_hi;
	bool has_ci;	/* false: too few samples, only the point figures are set */
};

/*
 * Compares b with the baseline a: the point figures from the samples, the
 * interval at level (0.95) from iters bootstrap resamples of each, drawn
 * with a generator seeded by seed, so that a run is reproducible. 0,
 * -EINVAL (an empty sample, a baseline median of 0), or -ENOMEM.
 */
int median_cmp__of(const double *a, size_t na, const double *b, size_t nb, double level,
		   unsigned int iters, uint64_t seed, struct median_cmp *out);

/*
 * The windows' modes for rounds rounds over modes[0..n-1]: even rounds
 * forward, odd rounds backward (A B C C B A A B C ...), so that a drift that
 * is linear in time weighs on every mode alike over each pair of rounds.
 * out holds n * rounds; returns how many were written.
 */
size_t compare_order(const enum window_mode *modes, size_t n, uint32_t rounds,
		     enum window_mode *out);

/* "off", "bpf", "cupti", "latency"; parse: the mode of a name, -1 when none. */
const char *compare_mode_name(enum window_mode m);
int compare_mode_parse(const char *name);

#endif /* COMPARE_COMPARE_STATS_H */
