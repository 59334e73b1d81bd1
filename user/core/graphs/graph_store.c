// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The graph store (graph_store.h). Graph calls come on the events ring, in
 * order with the launches sent there; launches staged per CPU are copied
 * after the ring's records of the same turn, so a capture's end or an
 * instantiation may be read before some of the capture's own launches: a
 * captured node is put where its capture's graph is, and into the contents
 * made from that graph, as long as no replay of such a content was handed
 * out; after that it is counted late. (Captured launches are kept as they
 * are copied, before any launch of the turn is placed.)
 *
 * The runtime's graph calls enter the driver's, and both are probed: the
 * inner return comes first. Each update is made so that the second changes
 * nothing (a node added again by its handle, an instantiation again of the
 * graph as it is, a second destroy).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "core/graphs/graph_store.h"
#include "cuda/launch_api.h"
#include "util/hashmap.h"


struct graph {
	uint64_t handle;
	bool live;		/* its handle names it */
	bool unknown;		/* some of its making was not seen */
	uint32_t version;	/* raised with each change */
	const char *origin;
	uint64_t end_ts;	/* a capture's graph: its launches came before this */
	struct vec nodes;	/* struct graph_node */
	struct vec made;	/* struct graph_content *: contents made from it */
	struct vec copies;	/* struct graph *: clones and parents made from it */
};

struct capture_buf {
	uint32_t id;
	struct graph *g;	/* once its end was read */
	struct vec nodes;	/* until then: items of the budget */
	bool short_of_nodes;	/* the budget refused one: its graph is of unknown content */
};

/* An executable graph ran content c (NULL: unknown) from..to. */
struct exec_span {
	uint64_t from, to;
	struct graph *g;	/* made from, at version */
	uint32_t version;
	struct graph_content *c;
};

struct gexec {
	uint64_t handle;
	struct vec spans;	/* struct exec_span, by time */
};

struct graph_store {
	struct hmap *graphs;	/* live handle -> struct graph * */
	struct hmap *execs;	/* handle -> struct gexec * */
	struct hmap *captures;	/* id -> struct capture_buf * */
	struct hmap *names;	/* interned kernel names: char * -> char * */
	struct vec all_graphs;	/* struct graph *, every one made: freed at the end */
	struct vec contents;	/* struct graph_content * */
	struct graph_budget own, *budget;
	uint64_t used;		/* of the budget: given back when the store goes */
	bool refused;		/* the latest allocation failed for the budget, not memory */
	struct graph_store_stats st;
};

/* One item of the budget; false when it is spent (counted). */
static bool take(struct graph_store *gs)
{
	if (gs->budget->used >= gs->budget->max) {
		gs->st.full++;
		gs->refused = true;
		return false;
	}
	gs->budget->used++;
	gs->used++;
	return true;
}

static void give_back(struct graph_store *gs, uint64_t n)
{
	gs->budget->used -= n;
	gs->used -= n;
}

/* What a failed allocation returns: nothing, when the budget refused it; else -ENOMEM. */
static int failed(struct graph_store *gs)
{
	int err = gs->refused ? 0 : -ENOMEM;

	gs->refused = false;
	return err;
}

static size_t hash_key(long key, void *ctx)
{
	(void)ctx;
	return hash_u64((uint64_t)key);
}

static bool equal_key(long a, long b, void *ctx)
{
	(void)ctx;
	return a == b;
}

static size_t hash_name(long key, void *ctx)
{
	(void)ctx;
	return hash_str((const char *)key);
}

static bool equal_name(long a, long b, void *ctx)
{
	(void)ctx;
	return !strcmp((const char *)a, (const char *)b);
}

struct graph_store *graph_store__new(struct graph_budget *b)
{
	struct graph_store *gs = calloc(1, sizeof(*gs));

	if (!gs)
		return NULL;
	gs->own.max = GRAPH_BUDGET_ITEMS;
	gs->budget = b ? b : &gs->own;
	gs->graphs = hmap__new(hash_key, equal_key, NULL);
	gs->execs = hmap__new(hash_key, equal_key, NULL);
	gs->captures = hmap__new(hash_key, equal_key, NULL);
	gs->names = hmap__new(hash_name, equal_name, NULL);
	gs->all_graphs = VEC_INIT(struct graph *);
	gs->contents = VEC_INIT(struct graph_content *);
	if (!gs->graphs || !gs->execs || !gs->captures || !gs->names) {
		graph_store__free(gs);
		return NULL;
	}
	return gs;
}

void graph_store__free(struct graph_store *gs)
{
	const struct hmap_entry *cur;
	size_t bkt;

	if (!gs)
		return;
	give_back(gs, gs->used);
	for (size_t i = 0; i < gs->all_graphs.len; i++) {
		struct graph *g = *vec_at(&gs->all_graphs, struct graph *, i);

		vec__free(&g->nodes);
		vec__free(&g->made);
		vec__free(&g->copies);
		free(g);
	}
	for (size_t i = 0; i < gs->contents.len; i++) {
		struct graph_content *c = *vec_at(&gs->contents, struct graph_content *, i);

		vec__free(&c->nodes);
		free(c);
	}
	if (gs->execs)
		hmap__for_each_entry(gs->execs, cur, bkt) {
			struct gexec *x = (struct gexec *)cur->value;

			vec__free(&x->spans);
			free(x);
		}
	if (gs->captures)
		hmap__for_each_entry(gs->captures, cur, bkt) {
			struct capture_buf *cb = (struct capture_buf *)cur->value;

			vec__free(&cb->nodes);
			free(cb);
		}
	if (gs->names)
		hmap__for_each_entry(gs->names, cur, bkt)
			free((char *)cur->key);
	hmap__free(gs->graphs);
	hmap__free(gs->execs);
	hmap__free(gs->captures);
	hmap__free(gs->names);
	vec__free(&gs->all_graphs);
	vec__free(&gs->contents);
	free(gs);
}

static const char *intern(struct graph_store *gs, const char *name)
{
	long found;
	char *dup;

	if (!name)
		name = "";
	if (hmap__find(gs->names, (long)name, &found))
		return (const char *)found;
	dup = strdup(name);
	if (!dup || hmap__add(gs->names, (long)dup, (long)dup)) {
		free(dup);
		return NULL;
	}
	return dup;
}

static struct graph *graph_of(struct graph_store *gs, uint64_t handle)
{
	long v;

	return handle && hmap__find(gs->graphs, (long)handle, &v) ? (struct graph *)v : NULL;
}

/* A new graph at handle, in place of whatever it named. */
static struct graph *graph_new(struct graph_store *gs, uint64_t handle, const char *origin)
{
	struct graph *g, *old = graph_of(gs, handle);
	struct graph **slot;

	if (!take(gs))
		return NULL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->handle = handle;
	g->live = true;
	g->origin = origin;
	g->nodes = VEC_INIT(struct graph_node);
	g->made = VEC_INIT(struct graph_content *);
	g->copies = VEC_INIT(struct graph *);
	slot = vec__push(&gs->all_graphs);
	if (!slot || hmap__set(gs->graphs, (long)handle, (long)g, NULL, NULL)) {
		if (slot)
			vec__truncate(&gs->all_graphs, gs->all_graphs.len - 1);
		free(g);
		return NULL;
	}
	*slot = g;
	if (old)
		old->live = false;
	return g;
}

static void count_node(struct graph_content *c, const struct graph_node *n, int d)
{
	switch (n->what) {
	case GNODE_KERNEL:
		c->kernels += d;
		break;
	case GNODE_COPY:
		c->copies += d;
		break;
	case GNODE_SET:
		c->sets += d;
		break;
	case GNODE_OTHER:
		c->other += d;
		break;
	}
}

/* -ENOSPC when the budget refused it: the content is then short, and never handed out. */
static int content_add(struct graph_store *gs, struct graph_content *c, const struct graph_node *n)
{
	struct graph_node *slot;

	if (!take(gs)) {
		c->short_of_nodes = true;
		return -ENOSPC;
	}
	slot = vec__push(&c->nodes);
	if (!slot)
		return -ENOMEM;
	*slot = *n;
	count_node(c, n, 1);
	return 0;
}

/* An empty content, counted as made from g. */
static struct graph_content *content_new(struct graph_store *gs, struct graph *g,
					 const char *origin)
{
	struct graph_content *c, **slot, **made;

	if (!take(gs))
		return NULL;
	c = calloc(1, sizeof(*c));
	slot = vec__push(&gs->contents);
	made = slot ? vec__push(&g->made) : NULL;
	if (!c || !made) {
		if (slot)
			vec__truncate(&gs->contents, gs->contents.len - 1);
		free(c);
		return NULL;
	}
	*slot = c;
	*made = c;
	c->id = (uint32_t)gs->contents.len;
	c->origin = origin;
	c->nodes = VEC_INIT(struct graph_node);
	return c;
}

/* A content of g as it is now. NULL: out of memory, or the store is full (counted). */
static struct graph_content *content_of(struct graph_store *gs, struct graph *g,
					const char *origin)
{
	struct graph_content *c = content_new(gs, g, origin);

	for (size_t i = 0; c && i < g->nodes.len; i++)
		if (content_add(gs, c, vec_at(&g->nodes, struct graph_node, i)))
			return NULL; /* refused stays set when the budget was spent */
	return c;
}

static struct gexec *exec_of(struct graph_store *gs, uint64_t handle, bool make)
{
	struct gexec *x;
	long v;

	if (hmap__find(gs->execs, (long)handle, &v))
		return (struct gexec *)v;
	if (!make || !take(gs))
		return NULL;
	x = calloc(1, sizeof(*x));
	if (!x)
		return NULL;
	x->handle = handle;
	x->spans = VEC_INIT(struct exec_span);
	if (hmap__add(gs->execs, (long)handle, (long)x)) {
		free(x);
		return NULL;
	}
	return x;
}

static struct exec_span *live_span(struct gexec *x)
{
	struct exec_span *sp;

	if (!x || !x->spans.len)
		return NULL;
	sp = vec_at(&x->spans, struct exec_span, x->spans.len - 1);
	return sp->to == UINT64_MAX ? sp : NULL;
}

/* exec runs c (NULL: unknown), made from g at its version, from ts on. */
static int exec_runs(struct graph_store *gs, uint64_t handle, uint64_t ts, struct graph *g,
		     struct graph_content *c)
{
	struct gexec *x = exec_of(gs, handle, true);
	struct exec_span *sp, *live;

	if (!x)
		return failed(gs);
	live = live_span(x);
	if (live)
		live->to = ts;
	if (!take(gs))
		return failed(gs); /* its replays from now on are of unknown content */
	sp = vec__push(&x->spans);
	if (!sp)
		return -ENOMEM;
	*sp = (struct exec_span){ .from = ts, .to = UINT64_MAX, .g = g,
				  .version = g ? g->version : 0, .c = c };
	return 0;
}

static int node_of_event(struct graph_store *gs, const struct graph_event *e, const char *kernel,
			 enum graph_node_what what, struct graph_node *n)
{
	*n = (struct graph_node){ .handle = e->out, .ts = e->ts_ns, .what = what,
				  .shmem = e->shmem, .kind = e->kind, .bytes = e->bytes };
	if (what == GNODE_KERNEL) {
		n->kernel = intern(gs, kernel);
		if (!n->kernel)
			return -ENOMEM;
		memcpy(n->grid, e->grid, sizeof(n->grid));
		memcpy(n->block, e->block, sizeof(n->block));
	}
	return 0;
}

static struct graph_node *node_by_handle(struct graph *g, uint64_t handle)
{
	for (size_t i = g->nodes.len; handle && i > 0; i--) {
		struct graph_node *n = vec_at(&g->nodes, struct graph_node, i - 1);

		if (n->handle == handle)
			return n;
	}
	return NULL;
}

static int add_node(struct graph_store *gs, struct graph *g, const struct graph_node *n)
{
	struct graph_node *old = node_by_handle(g, n->handle), *slot;

	/* The runtime's return after its driver's: the runtime names its host stub. */
	if (old) {
		uint64_t ts = old->ts;

		*old = *n;
		old->ts = ts;
		return 0;
	}
	if (!take(gs)) {
		/* A graph short of a node would be guessed: it is of unknown content now. */
		g->unknown = true;
		gs->refused = false;
		return 0;
	}
	slot = vec__push(&g->nodes);
	if (!slot)
		return -ENOMEM;
	*slot = *n;
	g->version++;
	return 0;
}

/* to is made of from's nodes: a captured node of from read late goes into it too. */
static int copied_from(struct graph *from, struct graph *to)
{
	struct graph **slot = vec__push(&from->copies);

	if (!slot)
		return -ENOMEM;
	*slot = to;
	return 0;
}

static int add_child(struct graph_store *gs, struct graph *g, const struct graph_event *e)
{
	struct graph *child = graph_of(gs, e->b);
	int err;

	/* CUDA copies the child in: its nodes are the parent's now, flattened. */
	if (!child || child->unknown) {
		g->unknown = true;
		return 0;
	}
	if (child == g)
		return 0;
	/* The runtime's return after its driver's: the child node is in already. */
	for (size_t i = 0; i < g->nodes.len; i++)
		if (vec_at(&g->nodes, struct graph_node, i)->child == e->out)
			return 0;
	for (size_t i = 0; i < child->nodes.len; i++) {
		struct graph_node n = *vec_at(&child->nodes, struct graph_node, i);

		n.handle = 0;
		n.child = e->out;
		n.ts = e->ts_ns;
		err = add_node(gs, g, &n);
		if (err)
			return err;
	}
	return copied_from(child, g);
}

static struct graph *graph_or_unknown(struct graph_store *gs, uint64_t handle)
{
	struct graph *g = graph_of(gs, handle);

	if (g)
		return g;
	/* Made before cuprobe looked: what it holds is not known. */
	g = graph_new(gs, handle, "built");
	if (g)
		g->unknown = true;
	gs->st.unknown_changes++;
	return g;
}

static int made_node(struct graph_store *gs, const struct graph_event *e, const char *kernel)
{
	static const enum graph_node_what what[] = {
		[GOP_ADD_KERNEL] = GNODE_KERNEL, [GOP_ADD_COPY] = GNODE_COPY,
		[GOP_ADD_SET] = GNODE_SET, [GOP_ADD_OTHER] = GNODE_OTHER,
	};
	enum graph_op op = capture_graph_op(e->api);
	struct graph *g = graph_or_unknown(gs, e->a);
	struct graph_node n;
	int err;

	if (!g)
		return failed(gs);
	if (op == GOP_ADD_CHILD)
		return add_child(gs, g, e);
	err = node_of_event(gs, e, kernel, what[op], &n);
	return err ?: add_node(gs, g, &n);
}

/* A kernel node's new params: in its graph (node b), wherever it is. */
static int node_params(struct graph_store *gs, const struct graph_event *e, const char *kernel)
{
	for (size_t i = gs->all_graphs.len; i > 0; i--) {
		struct graph *g = *vec_at(&gs->all_graphs, struct graph *, i - 1);
		struct graph_node *n = g->live ? node_by_handle(g, e->b) : NULL;
		struct graph_node nn;

		if (!n)
			continue;
		if (node_of_event(gs, e, kernel, GNODE_KERNEL, &nn))
			return -ENOMEM;
		nn.handle = n->handle;
		nn.ts = n->ts;
		if (memcmp(&nn, n, sizeof(nn))) {
			*n = nn;
			g->version++;
		}
		return 0;
	}
	gs->st.unknown_changes++;
	return 0;
}

/* Node b of what exec a runs now launches other params: a content of its own from now on. */
static int exec_params(struct graph_store *gs, const struct graph_event *e, const char *kernel)
{
	struct exec_span *live = live_span(exec_of(gs, e->a, false));
	struct graph_content *c;
	struct graph_node nn, *n = NULL;
	struct graph *g;

	if (!live || !live->c) {
		gs->st.unknown_changes += !live;
		return 0;
	}
	for (size_t i = 0; i < live->c->nodes.len && !n; i++)
		if (vec_at(&live->c->nodes, struct graph_node, i)->handle == e->b)
			n = vec_at(&live->c->nodes, struct graph_node, i);
	if (!n) {
		gs->st.unknown_changes++;
		return 0;
	}
	if (node_of_event(gs, e, kernel, GNODE_KERNEL, &nn))
		return -ENOMEM;
	nn.handle = n->handle;
	nn.ts = n->ts;
	if (!memcmp(&nn, n, sizeof(nn)))
		return 0; /* the runtime's return after its driver's */
	g = live->g;
	c = content_new(gs, g, "updated");
	if (!c)
		return failed(gs);
	/* The content it ran, not the graph as it is now, with the node changed. */
	for (size_t i = 0; i < live->c->nodes.len; i++) {
		const struct graph_node *o = vec_at(&live->c->nodes, struct graph_node, i);
		int err = content_add(gs, c, o->handle == e->b ? &nn : o);

		if (err == -ENOSPC)
			return exec_runs(gs, e->a, e->ts_ns, g, NULL);
		if (err)
			return err;
	}
	return exec_runs(gs, e->a, e->ts_ns, g, c);
}

/* exec a runs graph g as it is now, unless it runs that already (the runtime's second return). */
static int instantiate(struct graph_store *gs, uint64_t exec, struct graph *g, uint64_t ts,
		       const char *origin)
{
	struct exec_span *live = live_span(exec_of(gs, exec, false));
	struct graph_content *c = NULL;

	if (live && g && live->g == g && live->version == g->version)
		return 0;
	if (g && !g->unknown) {
		c = content_of(gs, g, origin);
		if (!c && failed(gs))
			return -ENOMEM;
	}
	return exec_runs(gs, exec, ts, g, c);
}

/* Capture id's nodes, made at its first node or its end, whichever is read first. */
static struct capture_buf *capture_buf_of(struct graph_store *gs, uint32_t id)
{
	struct capture_buf *cb;
	long v;

	if (hmap__find(gs->captures, (long)id, &v))
		return (struct capture_buf *)v;
	if (!take(gs))
		return NULL;
	cb = calloc(1, sizeof(*cb));
	if (!cb)
		return NULL;
	cb->id = id;
	cb->nodes = VEC_INIT(struct graph_node);
	if (hmap__add(gs->captures, (long)id, (long)cb)) {
		free(cb);
		return NULL;
	}
	return cb;
}

/* A capture's end: its graph holds what was launched into it, read so far and later. */
static int captured(struct graph_store *gs, const struct graph_event *e)
{
	struct graph *g = graph_of(gs, e->out);
	struct capture_buf *cb;
	int err;

	/* cudaStreamBeginCaptureToGraph adds to a graph that was: the same handle. */
	if (!g || !g->live)
		g = graph_new(gs, e->out, "capture");
	if (!g)
		return failed(gs);
	/* The runtime's end makes its graph through the driver's cuGraphCreate: still empty. */
	if (!g->nodes.len && !g->unknown)
		g->origin = "capture";
	g->end_ts = e->ts_ns;
	cb = capture_buf_of(gs, e->capture);
	if (!cb) {
		g->unknown = true;
		return failed(gs);
	}
	cb->g = g;
	g->unknown |= cb->short_of_nodes;
	/* The buffer's items go back: the graph's nodes take them again. */
	give_back(gs, cb->nodes.len);
	for (size_t i = 0; i < cb->nodes.len; i++) {
		err = add_node(gs, g, vec_at(&cb->nodes, struct graph_node, i));
		if (err)
			return err;
	}
	vec__free(&cb->nodes);
	cb->nodes = VEC_INIT(struct graph_node);
	return 0;
}

/*
 * A node of g read after its end: into g, the contents made from it that no
 * replay has shown yet, and the graphs made of it (clones, parents), a few
 * levels down.
 */
static int late_node(struct graph_store *gs, struct graph *g, const struct graph_node *n,
		     int depth)
{
	if (depth > 8)
		return 0;
	if (add_node(gs, g, n))
		return -ENOMEM;
	for (size_t i = 0; i < g->made.len; i++) {
		struct graph_content *c = *vec_at(&g->made, struct graph_content *, i);

		if (c->replayed)
			gs->st.late_nodes++;
		else if (content_add(gs, c, n) == -ENOMEM)
			return -ENOMEM;
	}
	for (size_t i = 0; i < g->copies.len; i++)
		if (late_node(gs, *vec_at(&g->copies, struct graph *, i), n, depth + 1))
			return -ENOMEM;
	return 0;
}

int graph_store__captured(struct graph_store *gs, const struct launch_event *e,
			  const char *kernel)
{
	struct graph_node n = { .ts = e->ts_ns, .shmem = (uint32_t)e->shmem, .kind = e->kind,
				.bytes = e->bytes };
	struct capture_buf *cb;
	struct graph_node *slot;

	switch (launch_api_what(e->api)) {
	case LAUNCH_KERNEL:
		n.what = GNODE_KERNEL;
		n.kernel = intern(gs, kernel);
		if (!n.kernel)
			return -ENOMEM;
		memcpy(n.grid, e->grid, sizeof(n.grid));
		memcpy(n.block, e->block, sizeof(n.block));
		break;
	case LAUNCH_MEMCPY:
		n.what = GNODE_COPY;
		break;
	case LAUNCH_MEMSET:
		n.what = GNODE_SET;
		break;
	case LAUNCH_GRAPH:
		n.what = GNODE_OTHER; /* a graph launched into a capture: a child of it */
		break;
	}
	cb = capture_buf_of(gs, e->capture);
	if (!cb)
		return failed(gs); /* its end finds no buffer: its graph is of unknown content */
	if (!cb->g) {
		if (!take(gs)) {
			cb->short_of_nodes = true;
			gs->refused = false;
			return 0;
		}
		slot = vec__push(&cb->nodes);
		if (!slot)
			return -ENOMEM;
		*slot = n;
		return 0;
	}
	/* Its end was read first: into the graph, and what was made from it since. */
	return late_node(gs, cb->g, &n, 0);
}

int graph_store__event(struct graph_store *gs, const struct graph_event *e, const char *kernel)
{
	struct graph *g;

	switch (capture_graph_op(e->api)) {
	case GOP_CAPTURED:
		return e->out ? captured(gs, e) : 0;
	case GOP_CREATE:
		g = graph_of(gs, e->out);
		if (g && g->live && !g->nodes.len && !g->unknown)
			return 0; /* the runtime's return after its driver's */
		return graph_new(gs, e->out, "built") ? 0 : failed(gs);
	case GOP_CLONE: {
		struct graph *from = graph_of(gs, e->a);

		g = graph_of(gs, e->out);
		if (g && g->live && g != from && !strcmp(g->origin, "cloned"))
			return 0;
		g = graph_new(gs, e->out, "cloned");
		if (!g)
			return failed(gs);
		if (!from || from->unknown) {
			g->unknown = true;
			return 0;
		}
		for (size_t i = 0; i < from->nodes.len; i++) {
			struct graph_node n = *vec_at(&from->nodes, struct graph_node, i);

			/* The clone's nodes have handles of their own, not seen. */
			n.handle = 0;
			if (add_node(gs, g, &n))
				return -ENOMEM;
		}
		return copied_from(from, g);
	}
	case GOP_ADD_KERNEL:
	case GOP_ADD_COPY:
	case GOP_ADD_SET:
	case GOP_ADD_CHILD:
	case GOP_ADD_OTHER:
		return made_node(gs, e, kernel);
	case GOP_NODE_PARAMS:
		return node_params(gs, e, kernel);
	case GOP_EXEC_PARAMS:
		return exec_params(gs, e, kernel);
	case GOP_INSTANTIATE:
		g = graph_of(gs, e->a);
		return e->out ? instantiate(gs, e->out, g && g->live ? g : NULL, e->ts_ns,
					    g ? g->origin : "built") : 0;
	case GOP_UPDATE:
		g = graph_of(gs, e->b);
		if (!live_span(exec_of(gs, e->a, false)))
			gs->st.unknown_changes++;
		return instantiate(gs, e->a, g && g->live ? g : NULL, e->ts_ns, "updated");
	case GOP_DESTROY:
		g = graph_of(gs, e->a);
		if (g && g->live) {
			g->live = false;
			hmap__delete(gs->graphs, (long)e->a, NULL, NULL);
		}
		return 0;
	case GOP_EXEC_DESTROY: {
		struct exec_span *live = live_span(exec_of(gs, e->a, false));

		if (live)
			live->to = e->ts_ns;
		return 0;
	}
	case GOP_NONE:
		break;
	}
	return 0;
}

const struct graph_content *graph_store__replay(struct graph_store *gs, uint64_t exec, uint64_t ts)
{
	struct gexec *x = exec_of(gs, exec, false);

	for (size_t i = x ? x->spans.len : 0; i > 0; i--) {
		struct exec_span *sp = vec_at(&x->spans, struct exec_span, i - 1);

		if (sp->from <= ts && ts < sp->to) {
			/* A content short of a node would be a guess: of unknown content. */
			if (!sp->c || sp->c->short_of_nodes)
				return NULL;
			sp->c->replayed = true;
			return sp->c;
		}
	}
	return NULL;
}

void graph_store__stats(const struct graph_store *gs, struct graph_store_stats *st)
{
	*st = gs->st;
}
