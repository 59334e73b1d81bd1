/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The daemon's output folder: one folder per window, OUT/run_<n> with n
 * counting on from the folders already there (nothing is overwritten), and
 * a retention limit in bytes: the oldest windows' folders go first, never
 * the newest. Also reads back a window's trace for the metrics.
 */
#ifndef DAEMON_STORE_H
#define DAEMON_STORE_H

#include <stddef.h>
#include <stdint.h>

struct store;

/* Makes out if missing (0755); NULL and errno with err saying why. */
struct store *store__new(const char *out, uint64_t limit, char *err, size_t len);
void store__free(struct store *st);
void store__set_limit(struct store *st, uint64_t limit);
/* The next window's folder name (not made): OUT/run_<n>. 0 or -ENAMETOOLONG. */
int store__next_dir(struct store *st, char *buf, size_t len);
/* A window's folder was written: counted, then the oldest go while over the limit. */
void store__written(struct store *st, const char *dir);
uint64_t store__bytes(const struct store *st);
uint64_t store__removed(const struct store *st);

/* What a window's trace holds, for the metrics. */
struct trace_kernel {
	char *kernel;		/* NULL: not a kernel launch (copies, sets) */
	char *api;
	uint64_t n;
};

struct trace_counts {
	struct trace_kernel *k;	/* busiest first */
	size_t nk;
	uint64_t launches;
	double *gpu_kernel_s;	/* each GPU kernel's duration */
	size_t ngpu;
};

/* 0, or -errno when the trace cannot be read (the message says which). */
int trace_counts__read(const char *path, struct trace_counts *tc);
void trace_counts__free(struct trace_counts *tc);

#endif /* DAEMON_STORE_H */
