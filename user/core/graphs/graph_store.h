/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What a process's CUDA graphs hold, kept from the calls that build them
 * (graph.h's events) and the launches made into a capture, so that a replay
 * (cudaGraphLaunch of an executable graph) is expanded into its kernels
 * without CUPTI.
 *
 * A graph is a list of nodes, changed as calls come. An executable graph
 * runs a content: the graph's nodes as they were when it was instantiated
 * or updated, a snapshot that never changes after (a change of one of its
 * nodes makes a new content). Contents are kept for the store's life, so a
 * trace may point at them until it is closed; an executable graph keeps
 * the span of time it ran each content, so a replay read after its handle
 * was destroyed and given again is still given the content it ran.
 *
 * A graph whose making cuprobe did not see (built before it attached) is of
 * unknown content, and so is every replay of it: counted, never guessed.
 *
 * What a node and a content hold (struct graph_node, struct graph_content)
 * is the trace's vocabulary, in trace/graphs.h: the writer needs no more.
 */
#ifndef CORE_GRAPHS_GRAPH_STORE_H
#define CORE_GRAPHS_GRAPH_STORE_H

#include <stdbool.h>
#include <stdint.h>
#include "graph.h"
#include "launch.h"
#include "trace/graphs.h"
#include "util/vec.h"

/* What the store could not follow: said at the session's end. */
struct graph_store_stats {
	uint64_t late_nodes;	/* captured nodes read after a replay of their content */
	uint64_t unknown_changes; /* changes of nodes or graphs cuprobe never saw made */
	uint64_t full;		/* items not kept: the budget was spent (graph_budget) */
};

/*
 * What a session's stores hold together, in items (a node, a graph, an
 * executable graph's span, a capture's buffer, a content): a process that
 * builds without end (a local user's, under the daemon) fills the budget, and
 * what comes after is of unknown content, counted (stats.full), not kept.
 */
struct graph_budget {
	uint64_t used, max;
};

/* About 100 MiB: a thousand graphs of a thousand nodes, each instantiated. */
#define GRAPH_BUDGET_ITEMS (1u << 20)

struct graph_store;

/* b is shared by the session's stores; NULL: the store has its own, of GRAPH_BUDGET_ITEMS. */
struct graph_store *graph_store__new(struct graph_budget *b);
void graph_store__free(struct graph_store *gs);

/* A launch made into a capture (LAUNCH_F_CAPTURED), named; -ENOMEM. */
int graph_store__captured(struct graph_store *gs, const struct launch_event *e,
			  const char *kernel);

/* A graph call's return; kernel names func for the kernel ops. -ENOMEM. */
int graph_store__event(struct graph_store *gs, const struct graph_event *e, const char *kernel);

/* The content executable graph exec ran at ts; NULL when unknown. */
const struct graph_content *graph_store__replay(struct graph_store *gs, uint64_t exec, uint64_t ts);

void graph_store__stats(const struct graph_store *gs, struct graph_store_stats *st);

#endif /* CORE_GRAPHS_GRAPH_STORE_H */
