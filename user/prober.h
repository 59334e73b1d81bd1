/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Attaching and detaching probes takes milliseconds to seconds (a
 * perf-event uprobe detaches in ~100 ms): a worker thread does it, so the
 * event loop keeps reading the ring buffer meanwhile. Jobs run in order.
 */
#ifndef PROBER_H
#define PROBER_H

struct prober;

typedef void (*prober_fn)(void *ctx, long arg);

struct prober *prober__new(void);
/* Queues fn(ctx, arg). 0 or -errno. */
int prober__submit(struct prober *p, prober_fn fn, void *ctx, long arg);
/* Waits until every queued job has run. */
void prober__drain(struct prober *p);
/* Runs what is queued, stops the thread and frees. */
void prober__free(struct prober *p);

#endif /* PROBER_H */
