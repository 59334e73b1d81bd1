// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Graph replays in the report. The cuprobe object, which lists what each
 * content holds, comes after the events, so a file's replays are counted by
 * content as they are read (file_scan__keep_replay) and expanded at its end
 * (graphs__expand): each replay adds its content's kernels to the Kernels
 * table, beside the graph launch's own row, and its copies and sets to the
 * graph counts. A content the list lacks is one of unknown content, like 0.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report/graphs.h"
#include "report/read.h"
#include "trace/format.h"

static bool count_of(const json_t *j, uint64_t *v)
{
	if (!json_is_integer(j) || json_integer_value(j) < 0)
		return false;
	*v = (uint64_t)json_integer_value(j);
	return true;
}

enum replay_kind graphs__replay(const json_t *args, int64_t *content)
{
	const json_t *c = json_object_get(args, TRACE_ARG_GRAPH_CONTENT);

	if (!c)
		return REPLAY_NONE;
	if (!json_is_integer(c) || json_integer_value(c) < 0)
		return REPLAY_BAD;
	*content = json_integer_value(c);
	return REPLAY_OF;
}

struct hmap *graphs__index(const json_t *list, uint64_t *bad)
{
	struct hmap *index = hmap__new(hmap_u64_hash, hmap_u64_equal, NULL);
	const json_t *g;
	size_t i;

	if (!index)
		return NULL;
	if (list && !json_is_array(list))
		(*bad)++;
	json_array_foreach(list, i, g) {
		const json_t *id = json_object_get(g, TRACE_GRAPH_ID);
		int err;

		if (!json_is_integer(id) || json_integer_value(id) <= 0) {
			(*bad)++;
			continue;
		}
		/* Two contents of one id: the first is taken, since nothing says which is meant. */
		err = hmap__add(index, (long)json_integer_value(id), (long)g);
		if (err == -EEXIST) {
			(*bad)++;
		} else if (err) {
			hmap__free(index);
			return NULL;
		}
	}
	return index;
}

const json_t *graphs__find(const struct hmap *index, int64_t id)
{
	long g;

	return id > 0 && hmap__find(index, (long)id, &g) ? (const json_t *)g : NULL;
}

bool graphs__kernel_node(const json_t *node, const char **kernel, uint64_t *count)
{
	*kernel = json_string_value(json_object_get(node, TRACE_GRAPH_NODE_KERNEL));
	return *kernel && count_of(json_object_get(node, TRACE_GRAPH_NODE_COUNT), count);
}

int file_scan__keep_replay(struct file_scan *fs, int64_t content)
{
	return count_table__add(&fs->replays, NULL, content, 0, 0);
}

/*
 * A content once per process however many files list it: its text without
 * the id and the origin, which name it but are not what it holds. A
 * recording whose cycles replay the same two graphs has replayed two graphs.
 */
static int add_content(struct report *r, const json_t *g, int64_t pid)
{
	json_t *copy = json_deep_copy(g);
	char *key = NULL;
	int err = -ENOMEM;

	if (copy) {
		json_object_del(copy, TRACE_GRAPH_ID);
		json_object_del(copy, TRACE_GRAPH_ORIGIN);
		key = json_dumps(copy, JSON_COMPACT | JSON_SORT_KEYS);
	}
	if (key)
		err = count_table__add(&r->graph_contents, key, pid, 0, 0);
	free(key);
	json_decref(copy);
	return err;
}

/* Each kernel node of g, n replays of it, into the Kernels table and the graph counts. */
static int add_kernels(struct report *r, const json_t *g, uint64_t n)
{
	const json_t *node;
	const char *kernel;
	uint64_t count, ran;
	size_t i;

	json_array_foreach(json_object_get(g, TRACE_GRAPH_KERNEL_NODES), i, node) {
		if (!graphs__kernel_node(node, &kernel, &count)) {
			r->malformed++;
			continue;
		}
		ran = graphs__mul(n, count);
		if (count_table__add_n(&r->sections[SEC_KERNEL], kernel, 0, 0, 0, ran) ||
		    count_table__add_n(&r->graph_kernels, kernel, 0, 0, 0, ran))
			return -ENOMEM;
		r->graphs.kernels = graphs__add(r->graphs.kernels, ran);
	}
	return 0;
}

/* n replays of content g (NULL: unknown) by process pid. */
static int add_replays(struct report *r, const json_t *g, uint64_t n, int64_t pid)
{
	struct graph_counts *gc = &r->graphs;
	uint64_t copies = 0, sets = 0;
	int err;

	gc->replays = graphs__add(gc->replays, n);
	if (!g) {
		gc->unknown = graphs__add(gc->unknown, n);
		return 0;
	}
	err = add_kernels(r, g, n);
	if (!err)
		err = add_content(r, g, pid);
	count_of(json_object_get(g, TRACE_GRAPH_COPIES), &copies);
	count_of(json_object_get(g, TRACE_GRAPH_SETS), &sets);
	gc->copies = graphs__add(gc->copies, graphs__mul(n, copies));
	gc->sets = graphs__add(gc->sets, graphs__mul(n, sets));
	return err;
}

/* What CUPTI saw of the replays (--cupti): summed as the trace gives them. */
static void add_cupti(struct report *r, const json_t *meta)
{
	const json_t *gpu = json_object_get(meta, TRACE_KEY_GRAPH_GPU_KERNELS);
	const json_t *mis = json_object_get(meta, TRACE_KEY_GRAPH_MISMATCHES);
	uint64_t v;

	if (!gpu && !mis)
		return;
	r->graphs.has_cupti = true;
	if (count_of(gpu, &v))
		r->graphs.gpu_kernels = graphs__add(r->graphs.gpu_kernels, v);
	if (count_of(mis, &v))
		r->graphs.mismatches = graphs__add(r->graphs.mismatches, v);
}

int graphs__expand(struct report *r, const json_t *meta, struct file_scan *fs)
{
	const json_t *pid = json_object_get(meta, TRACE_KEY_PID);
	const struct count_row *row;
	struct hmap *index;
	size_t bkt;
	int err = 0;

	add_cupti(r, meta);
	if (!count_table__size(&fs->replays))
		return 0;
	index = graphs__index(json_object_get(meta, TRACE_KEY_GRAPHS), &r->malformed);
	if (!index)
		return -ENOMEM;
	for (bkt = 0; !err && (row = count_table__iter(&fs->replays, &bkt)); bkt++)
		err = add_replays(r, graphs__find(index, row->a), row->count,
				  json_is_integer(pid) ? json_integer_value(pid) : -1);
	hmap__free(index);
	return err;
}
