/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One process's GPU records from the agent (--cupti): kept as they arrive,
 * joined to a cycle's launches when the cycle is written, then let go.
 */
#ifndef CORE_GPU_GPU_STORE_H
#define CORE_GPU_GPU_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "launch.h"

struct gpu_store;
struct trace;

/* A launch of a cycle, waiting for its GPU work. */
struct graph_content;

struct gpu_launch {
	struct launch_event e;
	const char *kernel;	/* from the symbols cache: stable */
	uint64_t own_correlation;
	bool unnamed;
	const struct graph_content *graph;	/* a graph launch's, when known (graph_store.h) */
};

/* What one cycle's join found: every figure goes into the trace and the report. */
struct gpu_join_stats {
	uint64_t matched;		/* launches joined to their API record */
	uint64_t without_gpu;		/* joined launches with no GPU record */
	uint64_t unmatched_launches;	/* launches with no API record */
	uint64_t gpu_without_launch;	/* GPU records of the window no launch made */
	uint64_t clock_faults;		/* GPU work that starts before its launch */
	uint64_t dropped;		/* records CUPTI or the agent lost */
	uint64_t bad_chunks;		/* agent chunks refused as malformed */
	uint64_t overhead_ns;		/* CUPTI's own OVERHEAD records */
	uint64_t gpu_records;		/* kernel, memcpy and memset events written */
	uint64_t named_by_cupti;	/* unnamed kernel launches CUPTI's record named */
	uint64_t graph_gpu_kernels;	/* kernel records of graph replays */
	uint64_t graph_mismatches;	/* replays of known content whose kernel records differ */
};

struct gpu_store *gpu_store__new(void);
void gpu_store__free(struct gpu_store *g);

/* Adds a chunk of agent records. -EINVAL for a malformed chunk (counted, dropped whole). */
int gpu_store__add_chunk(struct gpu_store *g, const void *data, size_t len);
/* The latest agent window that has been flushed whole, and when (0: none yet). */
uint64_t gpu_store__flushed_at(const struct gpu_store *g);
/* An error the agent reported (another profiler holds CUPTI...), once: NULL when none new. */
const char *gpu_store__take_error(struct gpu_store *g);

/* Chunks added so far: a cycle need not check again until this moves. */
uint64_t gpu_store__chunks(const struct gpu_store *g);
/* Whether every launch already has its API record and some GPU work. */
bool gpu_store__complete(struct gpu_store *g, struct gpu_launch *l, size_t n);

/*
 * Joins launches (of one cycle, made in [t0, t1]) to the store's records,
 * writes the launches, their GPU work and the flows between them to t, and
 * lets go of what the cycle used. 0 or -errno.
 */
int gpu_store__join(struct gpu_store *g, struct gpu_launch *l, size_t n, uint64_t t0, uint64_t t1,
		    struct trace *t, struct gpu_join_stats *st);

#endif /* CORE_GPU_GPU_STORE_H */
