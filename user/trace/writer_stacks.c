// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --stack in a trace: the frames open on each thread, as the user's
 * stack walk (trace__set_stacks) gives them at each launch, written as nested
 * python_function spans, and the stacks' counts in the trailer.
 */
#include <stdlib.h>
#include <string.h>
#include "launch.h"
#include "trace/format.h"
#include "trace/writer.h"
#include "trace/writer_int.h"
#include "util/json_writer.h"

void trace__set_stacks(struct trace *t, trace_stack_fn get, void *ctx)
{
	t->stack_get = get;
	t->stack_ctx = ctx;
}

static struct span_thread *span_thread(struct trace *t, pid_t tid)
{
	struct span_thread *v;

	for (size_t i = 0; i < t->nspan_threads; i++)
		if (t->span_threads[i].tid == tid)
			return &t->span_threads[i];
	v = realloc(t->span_threads, (t->nspan_threads + 1) * sizeof(*v));
	if (!v)
		return NULL;
	t->span_threads = v;
	v = &v[t->nspan_threads++];
	*v = (struct span_thread){ .tid = tid };
	return v;
}

static void write_span(struct trace *t, pid_t tid, const struct span *sp, uint64_t parent)
{
	struct json_cursor c;

	begin_complete(t, &c, TRACE_CAT_PYTHON, sp->name, t->m.pid, tid, sp->start,
		       (int64_t)(sp->end - sp->start));
	FIELD_U64(t->w, &c, TRACE_ARG_PY_ID, sp->id);
	if (parent)
		FIELD_U64(t->w, &c, TRACE_ARG_PY_PARENT, parent);
	FIELD_U64(t->w, &c, TRACE_ARG_PY_THREAD, (uint64_t)tid);
	end_complete(t, &c);
}

/* Writes the thread's open spans from depth keep on (their frames ended). */
static void spans_end(struct trace *t, struct span_thread *th, uint32_t keep)
{
	while (th->n > keep) {
		th->n--;
		write_span(t, th->tid, &th->open[th->n], th->n ? th->open[th->n - 1].id : 0);
	}
}

uint64_t trace_stack_spans(struct trace *t, const struct launch_event *e)
{
	struct trace_stack stack, *st = &stack;
	struct span_thread *th;
	uint64_t end = e->ts_ns + e->dur_ns;
	uint32_t same = 0;

	t->st_taken += (e->flags & (LAUNCH_F_USTACK | LAUNCH_F_ULOST)) != 0;
	t->st_lost += (e->flags & LAUNCH_F_ULOST) != 0;
	t->st_python += (e->flags & LAUNCH_F_PYSTACK) != 0;
	t->st_python_lost += (e->flags & LAUNCH_F_PYLOST) != 0;
	th = span_thread(t, (pid_t)e->tid);
	if (!t->stack_get(t->stack_ctx, e, &stack))
		st = NULL;
	if (!th)
		return 0;
	if (!st) {
		spans_end(t, th, 0);
		return 0;
	}
	t->st_truncated += st->truncated;
	t->st_unsymbolized += st->unsymbolized;
	if (st->n > th->cap) {
		struct span *v = realloc(th->open, st->n * sizeof(*v));

		if (!v)
			return 0;
		th->open = v;
		th->cap = st->n;
	}
	/* Equal names are one pointer within a stack, not across stacks: compare text. */
	while (same < th->n && same < st->n && th->open[same].start <= e->ts_ns &&
	       !strcmp(th->open[same].name, st->frames[same]))
		same++;
	spans_end(t, th, same);
	for (uint32_t i = 0; i < same; i++)
		if (th->open[i].end < end)
			th->open[i].end = end;
	for (uint32_t i = same; i < st->n; i++)
		th->open[i] = (struct span){ .name = st->frames[i], .id = ++t->span_ids,
					     .start = e->ts_ns, .end = end };
	th->n = st->n;
	return th->n ? th->open[th->n - 1].id : 0;
}

void trace_stack_spans_close(struct trace *t)
{
	for (size_t i = 0; i < t->nspan_threads; i++)
		spans_end(t, &t->span_threads[i], 0);
}

void trace_stack_spans_free(struct trace *t)
{
	for (size_t i = 0; i < t->nspan_threads; i++)
		free(t->span_threads[i].open);
	free(t->span_threads);
	t->span_threads = NULL;
	t->nspan_threads = 0;
}

void trace_write_stack_counts(struct trace *t, struct json_cursor *c)
{
	const struct count_field counts[] = {
		{ JSON_LITERAL(TRACE_STACKS_TAKEN), t->st_taken },
		{ JSON_LITERAL(TRACE_STACKS_LOST), t->st_lost },
		{ JSON_LITERAL(TRACE_STACKS_TRUNCATED), t->st_truncated },
		{ JSON_LITERAL(TRACE_STACKS_UNSYMBOLIZED), t->st_unsymbolized },
		{ JSON_LITERAL(TRACE_STACKS_PYTHON), t->st_python },
		{ JSON_LITERAL(TRACE_STACKS_PYTHON_LOST), t->st_python_lost },
	};

	if (!t->stack_get)
		return;
	NAME(t->w, c, TRACE_KEY_STACKS);
	json_cursor__start_object(t->w, c);
	trace_write_counts(t->w, c, counts, sizeof(counts) / sizeof(counts[0]));
	json_cursor__end_object(t->w, c);
}
