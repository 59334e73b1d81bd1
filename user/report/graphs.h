/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * CUDA graph replays as the trace gives them: a graph launch names its
 * content ("graph content", trace/format.h), an id in the cuprobe object's
 * "graphs" list, or 0 when cuprobe did not see what the graph holds; each
 * content lists its kernels, identical nodes grouped with a count. The
 * report's reader (graphs.c) and the folded stacks (folded.c) both find a
 * content by its id here. Pure: nothing is kept but what the caller frees.
 */
#ifndef REPORT_GRAPHS_H
#define REPORT_GRAPHS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include "util/hashmap.h"

enum replay_kind {
	REPLAY_NONE, /* not a replay that names its content (any launch of older traces) */
	REPLAY_OF,   /* a replay: its content's id, 0 when unknown */
	REPLAY_BAD,  /* "graph content" is not an integer from 0 */
};

/* What a launch's args say of its graph; *content is set for REPLAY_OF. */
enum replay_kind graphs__replay(const json_t *args, int64_t *content);

/*
 * The contents of a cuprobe.graphs list by id (values: const json_t *, owned
 * by the list). Entries without a positive integer id, and a second entry of
 * an id, are left out and counted in *bad. NULL when out of memory.
 */
struct hmap *graphs__index(const json_t *list, uint64_t *bad);
/* The content of id; NULL for 0 (unknown) or an id the list lacks. */
const json_t *graphs__find(const struct hmap *index, int64_t id);
/* A kernel_nodes entry's kernel and count; false when either is missing or mistyped. */
bool graphs__kernel_node(const json_t *node, const char **kernel, uint64_t *count);

/* a x b, and a + b, held at UINT64_MAX: counts from a trace must not wrap. */
static inline uint64_t graphs__mul(uint64_t a, uint64_t b)
{
	uint64_t v;

	return __builtin_mul_overflow(a, b, &v) ? UINT64_MAX : v;
}

static inline uint64_t graphs__add(uint64_t a, uint64_t b)
{
	uint64_t v;

	return __builtin_add_overflow(a, b, &v) ? UINT64_MAX : v;
}

#endif /* REPORT_GRAPHS_H */
