/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The graph replays of a trace: counted as the writer writes them, and the
 * contents they ran, written once in the cuprobe object (format.h's graphs).
 * What a content holds is defined here, below the store that keeps it
 * (core/graphs/graph_store.h), so that the writer needs nothing of the engine.
 */
#ifndef TRACE_GRAPHS_H
#define TRACE_GRAPHS_H

#include <stdbool.h>
#include <stdint.h>
#include "util/json_writer.h"
#include "util/vec.h"

/*
 * A CUDA graph's nodes and contents, as a trace writes them: the trace's
 * vocabulary, which core/graphs/graph_store.c fills and keeps.
 */

/* What a node runs. */
enum graph_node_what {
	GNODE_KERNEL,
	GNODE_COPY,
	GNODE_SET,
	GNODE_OTHER,	/* empty, host, event record and wait nodes: no GPU work of their own */
};

struct graph_node {
	uint64_t handle;	/* the node's, when a call made it; 0 for captured nodes */
	uint64_t child;		/* a child graph's node, flattened: that node's handle */
	uint64_t ts;		/* when it was added */
	enum graph_node_what what;
	const char *kernel;	/* interned in the store */
	uint32_t grid[3];
	uint32_t block[3];
	uint32_t shmem;
	uint32_t kind;		/* copies: cudaMemcpyKind */
	uint64_t bytes;
};

/* A content, as a trace writes it. */
struct graph_content {
	uint32_t id;		/* the process's, from 1 */
	const char *origin;	/* "capture", "built", "updated", "cloned" */
	struct vec nodes;	/* struct graph_node */
	uint32_t kernels, copies, sets, other;
	bool replayed;		/* a replay of it was handed out: it no longer changes */
	bool short_of_nodes;	/* the budget refused one of its nodes: never handed out */
};

struct trace_graphs {
	uint64_t replays, unknown, kernels;
	bool gpu;	/* --cupti: the two below are written */
	uint64_t gpu_kernels, mismatches;
	struct vec contents;	/* const struct graph_content *, each once */
};

void trace_graphs__init(struct trace_graphs *g);
void trace_graphs__free(struct trace_graphs *g);

/* A replay of c (NULL: of unknown content). -ENOMEM. */
int trace_graphs__replay(struct trace_graphs *g, const struct graph_content *c);

/* The counts and the contents, as fields of the open object at c; none without replays. */
void trace_graphs__write(const struct trace_graphs *g, struct json_writer *w,
			 struct json_cursor *c);

#endif /* TRACE_GRAPHS_H */
