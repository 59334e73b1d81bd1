// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Folded stacks from traces recorded with --stack. A launch's stack is the
 * chain of python_function spans from the one its "Python parent id" names
 * up through each span's own "Python parent id" (torch.profiler's with_stack
 * layout, trace/format.h); its leaf is the kernel it launched. Each file is
 * read whole: spans by id, launches by correlation, then GPU work (--cupti)
 * by correlation for --weight gpu.
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include "report/err.h"
#include "report/folded.h"
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

/* GPU ns per correlation id, summed over the work a launch made (a graph makes many). */
static int gpu_times(const json_t *events, struct hmap *gpu, struct folded_stats *st)
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
		hmap__find(gpu, (long)corr, &old);
		if (hmap__set(gpu, (long)corr, old + (long)ns, NULL, NULL))
			return -ENOMEM;
	}
	return 0;
}

static int read_events(struct folded *f, const json_t *events)
{
	struct hmap *spans = hmap__new(hmap_u64_hash, hmap_u64_equal, NULL);
	struct hmap *gpu = hmap__new(hmap_u64_hash, hmap_u64_equal, NULL);
	const json_t *ev;
	size_t i;
	int err = 0;

	if (!spans || !gpu) {
		err = -ENOMEM;
		goto out;
	}
	json_array_foreach(events, i, ev) {
		const char *cat = str_of(ev, TRACE_KEY_CAT);
		int64_t id;

		if (cat && !strcmp(cat, TRACE_CAT_PYTHON) && str_of(ev, TRACE_KEY_NAME) &&
		    int_of(json_object_get(ev, TRACE_KEY_ARGS), TRACE_ARG_PY_ID, &id) &&
		    hmap__set(spans, (long)id, (long)ev, NULL, NULL)) {
			err = -ENOMEM;
			goto out;
		}
	}
	if (f->gpu && (err = gpu_times(events, gpu, &f->st)))
		goto out;
	json_array_foreach(events, i, ev) {
		const json_t *args = json_object_get(ev, TRACE_KEY_ARGS);
		const char *leaf = str_of(args, TRACE_ARG_KERNEL);
		int64_t parent = 0, corr = -1;
		uint64_t weight = 1;
		char *stack;
		long ns;

		if (!is_launch(str_of(ev, TRACE_KEY_CAT)))
			continue;
		f->st.launches++;
		if (!leaf)
			leaf = str_of(ev, TRACE_KEY_NAME) ? str_of(ev, TRACE_KEY_NAME) : "?";
		if (!int_of(args, TRACE_ARG_PY_PARENT, &parent))
			f->st.without_stack++;
		if (f->gpu) {
			int_of(args, TRACE_ARG_CORRELATION, &corr);
			if (!hmap__find(gpu, (long)corr, &ns)) {
				f->st.without_gpu++;
				continue;
			}
			weight = (uint64_t)ns;
		}
		stack = stack_text(spans, parent, leaf);
		if (!stack || add_line(f, stack, weight)) {
			err = -ENOMEM;
			goto out;
		}
	}
out:
	hmap__free(spans);
	hmap__free(gpu);
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
	err = read_events(f, events);
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
