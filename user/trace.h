/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A Kineto-format trace file, written as events arrive (nothing is held in
 * memory) under a temporary name and renamed into place only when whole.
 */
#ifndef TRACE_H
#define TRACE_H

#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>
#include "cuprobe.h"

struct trace;

struct trace_meta {
	pid_t pid;
	const char *host;
	const char *command;	/* process name */
	int rank;		/* -1 when unknown */
	int world_size;		/* -1 when unknown */
	unsigned int cycle;
	int64_t mono_to_real;	/* Unix ns - CLOCK_MONOTONIC ns */
	uint64_t start_mono;	/* start of the cycle: baseTimeNanoseconds */
};

struct trace_summary {
	uint64_t end_mono;
	uint64_t launches;
	uint64_t probe_hits;	/* session-wide */
	uint64_t drops;		/* session-wide */
	uint64_t unnamed;	/* kernels named only by object+offset */
	uint64_t late;		/* launches that arrived after their cycle was written */
	int64_t first_step;	/* -1 without --step */
	int64_t last_step;
	bool partial;		/* stopped during an active step */
};

/* Opens DIR/<host>_<pid>.<epoch_ns>.pt.trace.json.tmp. NULL and errno on failure. */
struct trace *trace__open(const char *dir, const struct trace_meta *m);
void trace__launch(struct trace *t, const struct launch_event *e, const char *kernel,
		   uint64_t correlation);
void trace__thread(struct trace *t, pid_t tid, const char *name);
/*
 * A ProfilerStep#<step> span, as torch.profiler writes one per step, with
 * the launch probe hits counted in it (-1 when not known).
 */
void trace__step(struct trace *t, pid_t tid, uint64_t step, uint64_t start_mono, uint64_t end_mono,
		 int64_t probe_hits, bool partial);
/* Writes the trailer, syncs, renames into place; the final path stays readable via trace__path. */
int trace__close(struct trace *t, const struct trace_summary *s);
/* Removes the temporary file (nothing was recorded worth keeping). */
void trace__discard(struct trace *t);
const char *trace__path(const struct trace *t);
void trace__free(struct trace *t);

/* Writes s as a JSON string literal, escaped. */
void json_write_str(FILE *f, const char *s);

#endif /* TRACE_H */
