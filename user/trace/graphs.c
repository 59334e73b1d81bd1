// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cuda/launch_api.h"
#include "trace/format.h"
#include "trace/graphs.h"

#define NAME(w, c, key) json_cursor__name(w, c, JSON_LITERAL(key))
#define FIELD_U64(w, c, key, v) (NAME(w, c, key), json_cursor__u64(w, c, v))
#define FIELD_STR(w, c, key, s) (NAME(w, c, key), json_cursor__string(w, c, s))

void trace_graphs__init(struct trace_graphs *g)
{
	memset(g, 0, sizeof(*g));
	g->contents = VEC_INIT(const struct graph_content *);
}

void trace_graphs__free(struct trace_graphs *g)
{
	vec__free(&g->contents);
}

int trace_graphs__replay(struct trace_graphs *g, const struct graph_content *c)
{
	const struct graph_content **slot;

	g->replays++;
	if (!c) {
		g->unknown++;
		return 0;
	}
	g->kernels += c->kernels;
	/* A trace replays a few contents many times: the latest is the likely one. */
	for (size_t i = g->contents.len; i > 0; i--)
		if (*vec_at(&g->contents, const struct graph_content *, i - 1) == c)
			return 0;
	slot = vec__push(&g->contents);
	if (!slot)
		return -ENOMEM;
	*slot = c;
	return 0;
}

static void dim(struct json_writer *w, struct json_cursor *c, const char *name, size_t len,
		const uint32_t d[3])
{
	json_cursor__name(w, c, name, len);
	json_cursor__start_array(w, c);
	for (int i = 0; i < 3; i++)
		json_cursor__u64(w, c, d[i]);
	json_cursor__end_array(w, c);
}

/* Nodes alike for the trace: a kernel's name and shape, a copy's bytes and kind, a set's bytes. */
static bool same(const struct graph_node *a, const struct graph_node *b)
{
	if (a->what != b->what)
		return false;
	switch (a->what) {
	case GNODE_KERNEL:
		return a->kernel == b->kernel && !memcmp(a->grid, b->grid, sizeof(a->grid)) &&
		       !memcmp(a->block, b->block, sizeof(a->block)) && a->shmem == b->shmem;
	case GNODE_COPY:
		return a->bytes == b->bytes && a->kind == b->kind;
	case GNODE_SET:
		return a->bytes == b->bytes;
	case GNODE_OTHER:
		break;
	}
	return true;
}

/* The nodes of c that run what, identical ones once with a count, in the order first seen. */
static void write_nodes(const struct graph_content *gc, enum graph_node_what what,
			struct json_writer *w, struct json_cursor *c)
{
	size_t n = gc->nodes.len;

	json_cursor__start_array(w, c);
	for (size_t i = 0; i < n; i++) {
		const struct graph_node *a = vec_at(&gc->nodes, struct graph_node, i);
		uint64_t count = 0;
		bool before = false;

		if (a->what != what)
			continue;
		/* Quadratic in a graph's nodes, once per trace: graphs hold hundreds, not millions. */
		for (size_t j = 0; j < i && !before; j++)
			before = same(vec_at(&gc->nodes, struct graph_node, j), a);
		if (before)
			continue;
		for (size_t j = i; j < n; j++)
			count += same(vec_at(&gc->nodes, struct graph_node, j), a);
		json_cursor__start_object(w, c);
		if (what == GNODE_KERNEL) {
			FIELD_STR(w, c, TRACE_ARG_KERNEL, a->kernel);
			dim(w, c, JSON_LITERAL(TRACE_ARG_GRID), a->grid);
			dim(w, c, JSON_LITERAL(TRACE_ARG_BLOCK), a->block);
			FIELD_U64(w, c, TRACE_ARG_SHARED_MEMORY, a->shmem);
		} else {
			FIELD_U64(w, c, TRACE_ARG_BYTES, a->bytes);
			if (what == GNODE_COPY)
				FIELD_STR(w, c, TRACE_ARG_KIND, launch_memcpy_kind(a->kind));
		}
		FIELD_U64(w, c, TRACE_GRAPH_NODE_COUNT, count);
		json_cursor__end_object(w, c);
	}
	json_cursor__end_array(w, c);
}

static void write_content(const struct graph_content *gc, struct json_writer *w,
			  struct json_cursor *c)
{
	json_cursor__start_object(w, c);
	FIELD_U64(w, c, TRACE_GRAPH_ID, gc->id);
	FIELD_STR(w, c, TRACE_GRAPH_ORIGIN, gc->origin);
	FIELD_U64(w, c, TRACE_GRAPH_NODES, gc->nodes.len);
	FIELD_U64(w, c, TRACE_GRAPH_KERNELS, gc->kernels);
	FIELD_U64(w, c, TRACE_GRAPH_COPIES, gc->copies);
	FIELD_U64(w, c, TRACE_GRAPH_SETS, gc->sets);
	FIELD_U64(w, c, TRACE_GRAPH_OTHER, gc->other);
	NAME(w, c, TRACE_GRAPH_KERNEL_NODES);
	write_nodes(gc, GNODE_KERNEL, w, c);
	NAME(w, c, TRACE_GRAPH_COPY_NODES);
	write_nodes(gc, GNODE_COPY, w, c);
	NAME(w, c, TRACE_GRAPH_SET_NODES);
	write_nodes(gc, GNODE_SET, w, c);
	json_cursor__end_object(w, c);
}

void trace_graphs__write(const struct trace_graphs *g, struct json_writer *w,
			 struct json_cursor *c)
{
	/* A trace with no replay says nothing of graphs: absent counts are 0. */
	if (!g->replays)
		return;
	FIELD_U64(w, c, TRACE_KEY_GRAPH_REPLAYS, g->replays);
	FIELD_U64(w, c, TRACE_KEY_GRAPH_UNKNOWN_REPLAYS, g->unknown);
	FIELD_U64(w, c, TRACE_KEY_GRAPH_KERNELS, g->kernels);
	if (g->gpu) {
		FIELD_U64(w, c, TRACE_KEY_GRAPH_GPU_KERNELS, g->gpu_kernels);
		FIELD_U64(w, c, TRACE_KEY_GRAPH_MISMATCHES, g->mismatches);
	}
	NAME(w, c, TRACE_KEY_GRAPHS);
	json_cursor__start_array(w, c);
	for (size_t i = 0; i < g->contents.len; i++)
		write_content(*vec_at(&g->contents, const struct graph_content *, i), w, c);
	json_cursor__end_array(w, c);
}
