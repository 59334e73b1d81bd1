/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The daemon's output folder: one folder per window, OUT/run_<n> with n
 * counting on from the folders already there (nothing is overwritten), and
 * a retention limit in bytes over the windows kept and those being written
 * (each reserves its bound when it starts): the oldest windows' folders go
 * first. The folder is opened once, never through a link and only where no
 * other user may write a folder on its path; every name is then looked up
 * from that descriptor, so that a folder swapped for a link later cannot
 * redirect a write or a removal. Also reads back a window's trace for the
 * metrics. The daemon's thread owns it.
 */
#ifndef DAEMON_STORE_H
#define DAEMON_STORE_H

#include <stddef.h>
#include <stdint.h>
#include "core/session/session_types.h"

struct store;

/*
 * Opens out (absolute), making its last folder if missing with om's mode and
 * group; NULL and errno with err saying why (a folder on the path that
 * another user may write, a link, a relative path).
 */
struct store *store__new(const char *out, uint64_t limit, const struct out_mode *om, char *err,
			 size_t len);
void store__free(struct store *st);
void store__set_limit(struct store *st, uint64_t limit);
/*
 * Room for a window of up to bytes: the oldest windows go until it fits.
 * 0, or -ENOSPC when windows being written already hold the limit.
 */
int store__reserve(struct store *st, uint64_t bytes);
/* A window that wrote nothing gives its room back. */
void store__release(struct store *st, uint64_t bytes);
uint64_t store__reserved(const struct store *st);
/*
 * The next window's folder (not made), *n its number, as a path through the
 * held descriptor (/proc/self/fd/N/run_<n>). 0 or -ENAMETOOLONG.
 */
int store__next_dir(struct store *st, char *buf, size_t len, long *n);
/* Window n's folder as the user named it (OUT/run_<n>), for messages and answers. */
void store__name(const struct store *st, long n, char *buf, size_t len);
/* The output folder as the user named it, and its held descriptor (the store's), for GET /trace. */
const char *store__out(const struct store *st);
int store__dirfd(const struct store *st);
/* Window n was written, after reserving reserved: counted, then the oldest go while over. */
void store__written(struct store *st, long n, uint64_t reserved);
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
	uint64_t captured;	/* launch records made into captured streams: not launches */
	double *gpu_kernel_s;	/* each GPU kernel's duration */
	size_t ngpu;
	/* What graph replays ran (kernel, graph launch API): apart from the launches. */
	struct trace_kernel *gk; /* busiest first */
	size_t ngk;
	uint64_t replays_known, replays_unknown;
};

/* 0, or -errno when the trace cannot be read (the message says which). */
int trace_counts__read(const char *path, struct trace_counts *tc);
void trace_counts__free(struct trace_counts *tc);

#endif /* DAEMON_STORE_H */
