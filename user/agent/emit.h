/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The agent's output: records packed into chunks of at most
 * CUPROBE_AGENT_CHUNK bytes (include/agent.h), kernel names interned into
 * string records, and the counts the window markers carry. A chunk goes to a
 * sink, which in the agent fires the cuprobe:records USDT probe. Every
 * function is thread-safe.
 */
#ifndef AGENT_EMIT_H
#define AGENT_EMIT_H

#include <stdbool.h>
#include <stddef.h>

#include "agent.h"

/* Hands out one chunk; returns false when nothing listened (the chunk is lost). */
typedef bool (*emitter_sink_fn)(const void *chunk, size_t len, void *ctx);

struct emitter;

/* NULL and errno set on failure. */
struct emitter *emitter__new(emitter_sink_fn sink, void *ctx);
void emitter__free(struct emitter *em);

/* A window begins: string records are sent again before their first use. */
void emitter__new_window(struct emitter *em);

/* Appends a fixed-size record (its header's size is used). */
void emitter__record(struct emitter *em, const void *rec);

/* Interns name (may be NULL), sends its string record when this window has
 * not seen it yet, and appends the kernel with name_id set. */
void emitter__kernel(struct emitter *em, struct agent_kernel *k, const char *name);

void emitter__dropped(struct emitter *em, __u32 reason, __u64 count);
void emitter__error(struct emitter *em, __u32 code, __u32 stage, __u32 window, const char *msg);

/* The window markers. Both hand out the chunk at once. FLUSHED carries and
 * then resets the counts of records handed out and lost since the last one. */
void emitter__started(struct emitter *em, __u64 ts_ns, __u32 window, __u32 cupti_version,
		      __u32 pid);
void emitter__flushed(struct emitter *em, __u64 ts_ns, __u32 window, __u32 reason);

/* Hands out the partly filled chunk, if any. */
void emitter__flush(struct emitter *em);

#endif /* AGENT_EMIT_H */
