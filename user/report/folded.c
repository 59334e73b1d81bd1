// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Folded stacks from traces recorded with --stack. A launch's stack is the
 * chain of python_function spans from the one its "Python parent id" names
 * up through each span's own "Python parent id" (torch.profiler's with_stack
 * layout, trace/format.h); its leaf is the kernel it launched. A graph
 * replay's leaves are the kernels its content holds (report/graphs.h), under
 * the graph launch's frame. Each file is read whole: spans by id, launches
 * by correlation, then GPU work (--cupti) by correlation for --weight gpu.
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include "report/err.h"
#include "report/folded.h"
#include "report/graphs.h"
#include "trace/format.h"
#include "util/hashmap.h"

#define MAX_DEPTH 1024

struct folded {
	bool gpu;
	struct hmap *lines;	/* char *stack -> index in v */
	struct vec v;		/* struct folded_line */
	bool sorted;
	struct folded_stats st;
};

struct folded *folded__new(bool gpu_weight)
{
	struct folded *f = calloc(1, sizeof(*f));

	if (!f)
		return NULL;
	f->gpu = gpu_weight;
	f->v = VEC_INIT(struct folded_line);
	f->lines = hmap__new(hmap_str_hash, hmap_str_equal, NULL);
	if (!f->lines) {
		free(f);
		return NULL;
	}
	return f;
}

void folded__free(struct folded *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->v.len; i++)
		free(vec_at(&f->v, struct folded_line, i)->stack);
	vec__free(&f->v);
	hmap__free(f->lines);
	free(f);
}

static int add_line(struct folded *f, char *stack, uint64_t weight)
{
	struct folded_line *l;
	long idx;

	if (hmap__find(f->lines, (long)stack, &idx)) {
		vec_at(&f->v, struct folded_line, idx)->weight += weight;
		free(stack);
		return 0;
	}
	l = vec__push(&f->v);
	if (!l) {
		free(stack);
		return -ENOMEM;
	}
	*l = (struct folded_line){ .stack = stack, .weight = weight };
	if (hmap__add(f->lines, (long)stack, (long)(f->v.len - 1))) {
		vec__truncate(&f->v, f->v.len - 1);
		free(stack);
		return -ENOMEM;
	}
	f->sorted = false;
	return 0;
}

static const char *str_of(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static bool int_of(const json_t *o, const char *key, int64_t *v)
{
	const json_t *j = json_object_get(o, key);

	if (!json_is_integer(j))
		return false;
	*v = json_integer_value(j);
	return true;
}

/* A frame or kernel name as folded text: ';' separates frames, a newline ends the line. */
static void put_name(char **p, const char *s)
{
	for (; *s; s++)
		*(*p)++ = *s == ';' ? ':' : *s == '\n' ? ' ' : *s;
}

/* "root;...;leaf" for a launch whose innermost frame is span id (0: none). */
static char *stack_text(struct hmap *spans, int64_t id, const char *leaf)
{
	const json_t *chain[MAX_DEPTH];
	size_t n = 0, len = strlen(leaf) + 16;
	char *out, *p;
	long v;

	while (id > 0 && n < MAX_DEPTH && hmap__find(spans, (long)id, &v)) {
		const json_t *ev = (const json_t *)v;
		int64_t parent = 0;

		chain[n++] = ev;
		len += strlen(str_of(ev, TRACE_KEY_NAME)) + 1;
		if (!int_of(json_object_get(ev, TRACE_KEY_ARGS), TRACE_ARG_PY_PARENT, &parent))
			break;
		id = parent;
	}
	out = p = malloc(len);
	if (!out)
		return NULL;
	if (!n) {
		strcpy(p, "[no stack];");
		p += strlen(p);
	}
	while (n > 0) {
		put_name(&p, str_of(chain[--n], TRACE_KEY_NAME));
		*p++ = ';';
	}
	put_name(&p, leaf);
	*p = '\0';
	return out;
}

static bool is_launch(const char *cat)
{
	return cat && (!strcmp(cat, TRACE_CAT_RUNTIME) || !strcmp(cat, TRACE_CAT_DRIVER));
}

static bool is_gpu(const char *cat)
{
	return cat && (!strcmp(cat, TRACE_CAT_KERNEL) || !strcmp(cat, TRACE_CAT_MEMCPY) ||
		       !strcmp(cat, TRACE_CAT_MEMSET));
}

/* A GPU event of a graph replay, for --weight gpu: its name and ns, chained by correlation. */
struct gpu_part {
	const char *name; /* into the file's JSON */
	uint64_t ns;
	long next;	  /* the correlation's previous part, -1 at the end */
};

/* What reading one file's launches needs: its spans, GPU times and graph contents. */
struct file_ctx {
	struct hmap *spans;  /* Python id -> its python_function event */
	struct hmap *gpu;    /* correlation -> GPU ns of all its work */
	struct hmap *parts;  /* correlation -> its last gpu_part */
	struct vec part_v;   /* struct gpu_part */
	struct hmap *graphs; /* content id -> its entry in cuprobe.graphs */
};

static int keep_part(struct file_ctx *c, int64_t corr, const char *name, uint64_t ns)
{
	struct gpu_part *p = vec__push(&c->part_v);
	long head = -1;

	if (!p)
		return -ENOMEM;
	hmap__find(c->parts, (long)corr, &head);
	*p = (struct gpu_part){ .name = name ? name : "?", .ns = ns, .next = head };
	return hmap__set(c->parts, (long)corr, (long)(c->part_v.len - 1), NULL, NULL);
}

/*
 * GPU ns per correlation id, summed over the work a launch made (a graph
 * makes many), and each event on its own, to put a replay's under their names.
 */
static int gpu_times(const json_t *events, struct file_ctx *c, struct folded_stats *st)
{
	size_t i;
	const json_t *ev;

	json_array_foreach(events, i, ev) {
		const json_t *args = json_object_get(ev, TRACE_KEY_ARGS);
		int64_t corr;
		double dur = json_number_value(json_object_get(ev, TRACE_KEY_DUR));
		long old = 0;
		uint64_t ns = dur > 0 ? (uint64_t)(dur * 1000.0 + 0.5) : 0;

		if (!is_gpu(str_of(ev, TRACE_KEY_CAT)) ||
		    !int_of(args, TRACE_ARG_CORRELATION, &corr))
			continue;
		st->gpu_records++;
		hmap__find(c->gpu, (long)corr, &old);
		if (hmap__set(c->gpu, (long)corr, old + (long)ns, NULL, NULL) ||
		    keep_part(c, corr, str_of(ev, TRACE_KEY_NAME), ns))
			return -ENOMEM;
	}
	return 0;
}

static int keep_spans(const json_t *events, struct hmap *spans)
{
	const json_t *ev;
	size_t i;

	json_array_foreach(events, i, ev) {
		const char *cat = str_of(ev, TRACE_KEY_CAT);
		int64_t id;

		if (cat && !strcmp(cat, TRACE_CAT_PYTHON) && str_of(ev, TRACE_KEY_NAME) &&
		    int_of(json_object_get(ev, TRACE_KEY_ARGS), TRACE_ARG_PY_ID, &id) &&
		    hmap__set(spans, (long)id, (long)ev, NULL, NULL))
			return -ENOMEM;
	}
	return 0;
}

/*
 * "root;...;API;" for a graph replay: its stack, then the graph launch's own
 * frame, unless the innermost frame is already it (native stacks end in the
 * API's frame: "cudaGraphLaunch", or "cudaGraphLaunch (file:line)").
 */
static char *replay_prefix(struct hmap *spans, int64_t parent, const char *api)
{
	char *s = stack_text(spans, parent, ""), *last, *out, *p;
	size_t len, n = strlen(api);

	if (!s)
		return NULL;
	len = strlen(s);
	last = len > 1 ? memrchr(s, ';', len - 1) : NULL;
	last = last ? last + 1 : s;
	if (!strncmp(last, api, n) && (last[n] == ';' || last[n] == ' ' || last[n] == '('))
		return s;
	out = realloc(s, len + n + 2);
	if (!out) {
		free(s);
		return NULL;
	}
	p = out + len;
	put_name(&p, api);
	*p++ = ';';
	*p = '\0';
	return out;
}

static int add_leaf(struct folded *f, const char *prefix, const char *leaf, uint64_t weight)
{
	size_t len = strlen(prefix);
	char *stack = malloc(len + strlen(leaf) + 1), *p;

	if (!stack)
		return -ENOMEM;
	memcpy(stack, prefix, len);
	p = stack + len;
	put_name(&p, leaf);
	*p = '\0';
	return add_line(f, stack, weight);
}

/* Each kernel node of content g, weighed by its count (one replay's worth). */
static int add_graph_kernels(struct folded *f, const char *prefix, const json_t *g)
{
	const json_t *node;
	const char *kernel;
	uint64_t count;
	bool any = false;
	size_t i;
	int err;

	json_array_foreach(json_object_get(g, TRACE_GRAPH_KERNEL_NODES), i, node) {
		if (!graphs__kernel_node(node, &kernel, &count) || !count)
			continue;
		err = add_leaf(f, prefix, kernel, count);
		if (err)
			return err;
		any = true;
	}
	/* A graph of copies and sets only is still a replay: it keeps its place. */
	return any ? 0 : add_leaf(f, prefix, "[graph without kernels]", 1);
}

/* With --weight gpu, each GPU event of the replay under its own name. */
static int add_graph_gpu(struct folded *f, const struct file_ctx *c, const char *prefix,
			 int64_t corr)
{
	long i = -1;
	int err = 0;

	hmap__find(c->parts, (long)corr, &i);
	for (; !err && i >= 0; i = vec_at(&c->part_v, struct gpu_part, i)->next) {
		const struct gpu_part *p = vec_at(&c->part_v, struct gpu_part, i);

		err = add_leaf(f, prefix, p->name, p->ns);
	}
	return err;
}

/*
 * A graph replay goes under its stack and the graph launch's frame: its
 * kernels, each weighing its count, or with --weight gpu the GPU work CUPTI
 * joined to it, each event under its name. A replay of unknown content
 * weighs one launch.
 */
static int read_replay(struct folded *f, const struct file_ctx *c, const json_t *ev,
		       int64_t parent, int64_t content)
{
	const json_t *args = json_object_get(ev, TRACE_KEY_ARGS);
	const json_t *g = graphs__find(c->graphs, content);
	const char *api = str_of(ev, TRACE_KEY_NAME) ? str_of(ev, TRACE_KEY_NAME) : "?";
	int64_t corr = -1;
	char *prefix;
	int err;

	if (!g)
		f->st.graph_unknown++;
	int_of(args, TRACE_ARG_CORRELATION, &corr);
	if (f->gpu && !hmap__find(c->gpu, (long)corr, NULL)) {
		f->st.without_gpu++;
		return 0;
	}
	prefix = replay_prefix(c->spans, parent, api);
	if (!prefix)
		return -ENOMEM;
	if (f->gpu)
		err = add_graph_gpu(f, c, prefix, corr);
	else if (g)
		err = add_graph_kernels(f, prefix, g);
	else
		err = add_leaf(f, prefix, "[graph of unknown content]", 1);
	free(prefix);
	return err;
}

static int read_launch(struct folded *f, const struct file_ctx *c, const json_t *ev)
{
	const json_t *args = json_object_get(ev, TRACE_KEY_ARGS);
	const char *leaf = str_of(args, TRACE_ARG_KERNEL);
	int64_t parent = 0, corr = -1, content;
	uint64_t weight = 1;
	char *stack;
	long ns;

	f->st.launches++;
	if (!leaf)
		leaf = str_of(ev, TRACE_KEY_NAME) ? str_of(ev, TRACE_KEY_NAME) : "?";
	if (!int_of(args, TRACE_ARG_PY_PARENT, &parent))
		f->st.without_stack++;
	if (graphs__replay(args, &content) == REPLAY_OF)
		return read_replay(f, c, ev, parent, content);
	if (f->gpu) {
		int_of(args, TRACE_ARG_CORRELATION, &corr);
		if (!hmap__find(c->gpu, (long)corr, &ns)) {
			f->st.without_gpu++;
			return 0;
		}
		weight = (uint64_t)ns;
	}
	stack = stack_text(c->spans, parent, leaf);
	return stack ? add_line(f, stack, weight) : -ENOMEM;
}

static int read_events(struct folded *f, const json_t *events, const json_t *graphs)
{
	struct file_ctx c = {
		.spans = hmap__new(hmap_u64_hash, hmap_u64_equal, NULL),
		.gpu = hmap__new(hmap_u64_hash, hmap_u64_equal, NULL),
		.parts = hmap__new(hmap_u64_hash, hmap_u64_equal, NULL),
		.part_v = VEC_INIT(struct gpu_part),
	};
	uint64_t bad = 0;
	const json_t *ev;
	size_t i;
	int err = 0;

	c.graphs = graphs__index(graphs, &bad);
	if (!c.spans || !c.gpu || !c.parts || !c.graphs)
		err = -ENOMEM;
	if (!err)
		err = keep_spans(events, c.spans);
	if (!err && f->gpu)
		err = gpu_times(events, &c, &f->st);
	json_array_foreach(events, i, ev) {
		if (err)
			break;
		if (is_launch(str_of(ev, TRACE_KEY_CAT)))
			err = read_launch(f, &c, ev);
	}
	hmap__free(c.spans);
	hmap__free(c.gpu);
	hmap__free(c.parts);
	hmap__free(c.graphs);
	vec__free(&c.part_v);
	return err;
}

int folded__read(struct folded *f, const char *path)
{
	json_error_t jerr;
	json_t *root = json_load_file(path, 0, &jerr);
	const json_t *events, *cp;
	int err;

	if (!root) {
		report_err("%s: not a trace: %s (line %d): give trace files recorded by cuprobe "
			   "record --stack",
			   path, jerr.text, jerr.line);
		return -EINVAL;
	}
	events = json_object_get(root, TRACE_KEY_EVENTS);
	if (!json_is_array(events)) {
		report_err("%s: no %s array: not a Kineto trace", path, TRACE_KEY_EVENTS);
		json_decref(root);
		return -EINVAL;
	}
	cp = json_object_get(root, TRACE_KEY_CUPROBE);
	if (json_object_get(cp, TRACE_KEY_STACKS)) {
		const json_t *s = json_object_get(cp, TRACE_KEY_STACKS);
		int64_t v;

		f->st.stack_traces++;
		f->st.lost += int_of(s, TRACE_STACKS_LOST, &v) && v > 0 ? (uint64_t)v : 0;
		f->st.truncated += int_of(s, TRACE_STACKS_TRUNCATED, &v) && v > 0 ? (uint64_t)v : 0;
		f->st.unsymbolized +=
			int_of(s, TRACE_STACKS_UNSYMBOLIZED, &v) && v > 0 ? (uint64_t)v : 0;
		f->st.python_lost += int_of(s, TRACE_STACKS_PYTHON_LOST, &v) && v > 0 ? (uint64_t)v : 0;
	}
	err = read_events(f, events, json_object_get(cp, TRACE_KEY_GRAPHS));
	json_decref(root);
	return err;
}

static int line_cmp(const void *a, const void *b)
{
	return strcmp(((const struct folded_line *)a)->stack, ((const struct folded_line *)b)->stack);
}

const struct folded_line *folded__lines(struct folded *f, size_t *n)
{
	if (!f->sorted) {
		vec__sort(&f->v, line_cmp);
		hmap__clear(f->lines);
		for (size_t i = 0; i < f->v.len; i++)
			hmap__add(f->lines, (long)vec_at(&f->v, struct folded_line, i)->stack,
				  (long)i);
		f->sorted = true;
	}
	*n = f->v.len;
	return f->v.data;
}

void folded__stats(const struct folded *f, struct folded_stats *st)
{
	*st = f->st;
}

int folded__write(FILE *out, const struct folded_line *lines, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fprintf(out, "%s %llu\n", lines[i].stack,
			    (unsigned long long)lines[i].weight) < 0)
			return -EIO;
	return 0;
}
