/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What writer.c and writer_stacks.c share of a trace being written: its
 * state, and the inline heads of its events. Not for other rooms: they see
 * trace/writer.h.
 */
#ifndef CUPROBE_TRACE_WRITER_INT_H
#define CUPROBE_TRACE_WRITER_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "launch.h"
#include "trace/format.h"
#include "trace/graphs.h"
#include "trace/writer.h"
#include "util/json_writer.h"

/* Kineto's ts and dur: microseconds with the nanoseconds as three decimals. */
#define US_DECIMALS 3

/*
 * Events are written through a json_cursor (util/json_writer.h), with the
 * trace's names as literals from trace/format.h: no call and no scan per
 * member, which is what a million launches a second needs.
 */
#define NAME(w, c, key) json_cursor__name(w, c, JSON_LITERAL(key))
#define FIELD_U64(w, c, key, v) (NAME(w, c, key), json_cursor__u64(w, c, v))
#define FIELD_I64(w, c, key, v) (NAME(w, c, key), json_cursor__i64(w, c, v))
#define FIELD_STR(w, c, key, s) (NAME(w, c, key), json_cursor__string(w, c, s))
#define FIELD_US(w, c, key, ns) (NAME(w, c, key), json_cursor__fixed(w, c, ns, US_DECIMALS))
#define FIELD_DOUBLE(w, c, key, v, d) (NAME(w, c, key), json_cursor__double(w, c, v, d))
#define FIELD_BOOL(w, c, key, v) (NAME(w, c, key), json_cursor__bool(w, c, v))
/* A member whose value is a string literal that needs no escaping. */
#define FIELD_LIT(w, c, key, lit)                                                              \
	(NAME(w, c, key), json_cursor__raw(w, c, "\"" lit "\"", sizeof(lit) + 1))

/* A frame open on a thread: from the first launch that had it to the end of the last. */
struct span {
	const char *name;
	uint64_t id, start, end;
};

struct span_thread {
	pid_t tid;
	uint32_t n, cap;
	struct span *open;	/* root first */
};

struct trace {
	struct safe_file *sf;
	FILE *f;
	struct json_writer *w;
	char *path; /* final name, with its folder for messages */
	char *name; /* final name in its folder */
	struct trace_meta m;
	char *host, *command;
	/* GPU devices and streams seen, named in the metadata. */
	struct { uint32_t device, stream; } lanes[64];
	size_t nlanes;
	bool has_gpu;
	struct trace_gpu_summary gpu;
	/* --stack: the frames open on each thread, as spans. */
	trace_stack_fn stack_get;	/* --stack: NULL when off */
	void *stack_ctx;
	struct span_thread *span_threads;
	size_t nspan_threads;
	uint64_t span_ids;
	uint64_t st_taken, st_lost, st_truncated, st_unsymbolized, st_python, st_python_lost;
	struct trace_graphs graphs;	/* the graph replays written */
};

/* Kineto's ts: microseconds after baseTimeNanoseconds. */
static inline void field_ts(struct trace *t, struct json_cursor *c, uint64_t mono)
{
	FIELD_US(t->w, c, TRACE_KEY_TS, (int64_t)(mono - t->m.start_mono));
}

/* An X event's head: its phase, category, name, lane and times; its args are open. */
static inline void begin_complete(struct trace *t, struct json_cursor *c, const char *cat,
				  const char *name, int64_t pid, int64_t tid, uint64_t start,
				  int64_t dur)
{
	struct json_writer *w = t->w;

	*c = json_writer__cursor(w);
	json_cursor__start_object(w, c);
	FIELD_LIT(w, c, TRACE_KEY_PH, TRACE_PH_COMPLETE);
	NAME(w, c, TRACE_KEY_CAT);
	json_cursor__string(w, c, cat);
	FIELD_STR(w, c, TRACE_KEY_NAME, name);
	FIELD_I64(w, c, TRACE_KEY_PID, pid);
	FIELD_I64(w, c, TRACE_KEY_TID, tid);
	field_ts(t, c, start);
	FIELD_US(w, c, TRACE_KEY_DUR, dur);
	NAME(w, c, TRACE_KEY_ARGS);
	json_cursor__start_object(w, c);
}

static inline void end_complete(struct trace *t, struct json_cursor *c)
{
	json_cursor__end_object(t->w, c);
	json_cursor__end_object(t->w, c);
	json_writer__cursor_close(t->w, *c);
}

/* Counts, a member each, under names that are literals. */
struct count_field {
	const char *name;
	size_t len;
	uint64_t value;
};

void trace_write_counts(struct json_writer *w, struct json_cursor *c,
			const struct count_field *f, size_t n);

/* --stack (writer_stacks.c): the launch's frames as spans, its innermost span's id (0: none). */
uint64_t trace_stack_spans(struct trace *t, const struct launch_event *e);
/* The spans still open, written as the trace closes. */
void trace_stack_spans_close(struct trace *t);
void trace_stack_spans_free(struct trace *t);
/* The trailer's stacks object (nothing without --stack). */
void trace_write_stack_counts(struct trace *t, struct json_cursor *c);

#endif /* CUPROBE_TRACE_WRITER_INT_H */
