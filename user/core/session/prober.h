/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A worker thread for slow work (attaching uprobes takes milliseconds):
 * jobs run on it in order, and each job's result comes back to the thread
 * that submitted it, which runs the job's done callback in prober__collect.
 * A job is a message: the submitter gives it up until done hands it back,
 * so no state is shared between the two threads.
 */
#ifndef CORE_SESSION_PROBER_H
#define CORE_SESSION_PROBER_H

#include <stdbool.h>

struct prober;

/* run: on the worker. done: on the owner, in prober__collect (may be NULL). */
typedef void (*prober_fn)(void *job);

struct prober *prober__new(void);
/* Runs every job still queued and their done callbacks (prober__drain), then frees. */
void prober__free(struct prober *p);

/* 0 or -ENOMEM. */
int prober__submit(struct prober *p, prober_fn run, prober_fn done, void *job);
/* From the worker's job: whether jobs wait behind it (a long one may let them go first). */
bool prober__waiting(struct prober *p);
/* Readable (epoll) when finished jobs wait for prober__collect. */
int prober__fd(const struct prober *p);
/* Runs the done callbacks of finished jobs, in order. Returns how many. */
int prober__collect(struct prober *p);
/* Waits until every submitted job has run, then collects. */
void prober__drain(struct prober *p);

#endif /* CORE_SESSION_PROBER_H */
