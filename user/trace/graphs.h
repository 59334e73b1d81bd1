/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The graph replays of a trace: counted as the writer writes them, and the
 * contents they ran, written once in the cuprobe object (format.h's graphs).
 */
#ifndef TRACE_GRAPHS_H
#define TRACE_GRAPHS_H

#include <stdint.h>
#include "core/graphs/graph_store.h"
#include "util/json_writer.h"
#include "util/vec.h"

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
