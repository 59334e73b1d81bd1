/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Launches copied out of the events ring and the CPUs' stages as they come,
 * placed into their cycles (symbols, JSON) later, a slice at a time: while
 * producers flood the ring, the loader's reading stays a copy per launch,
 * and the ring never waits on the trace writer. First in, first out, in
 * chunks, up to a cap; over the cap the caller places a launch at once.
 */
#ifndef CORE_SESSION_LAUNCH_QUEUE_H
#define CORE_SESSION_LAUNCH_QUEUE_H

#include <stdbool.h>
#include <stddef.h>
#include "launch.h"

struct launch_queue_chunk;

struct launch_queue {
	struct launch_queue_chunk *head, *tail, *spare;	/* spare: spent chunks, for reuse */
	size_t nspare;
	size_t head_at;	 /* next launch to take in head */
	size_t len;	 /* launches queued */
	size_t peak;	 /* the most ever queued */
	size_t cap;	 /* at most this many */
};

/* The cap: a share of the machine's memory, bounded (launch_queue.c). */
void launch_queue__init(struct launch_queue *q);
void launch_queue__free(struct launch_queue *q);

/* false when the queue is at its cap or out of memory: place e now instead. */
bool launch_queue__push(struct launch_queue *q, const struct launch_event *e);

/* Hands the oldest launches, at most max, to fn; returns how many. */
size_t launch_queue__pop(struct launch_queue *q, size_t max,
	       void (*fn)(void *ctx, const struct launch_event *e), void *ctx);

#endif /* CORE_SESSION_LAUNCH_QUEUE_H */
