/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the events ring brings (session_launches.c). Session's thread.
 * A record handler (session_records.c's table) is given a record at least as
 * long as the table says, and returns 0 or the session's error (-errno).
 */
#ifndef CORE_SESSION_SESSION_LAUNCHES_H
#define CORE_SESSION_SESSION_LAUNCHES_H

#include <stdbool.h>
#include <stddef.h>

struct launch_event;
struct session;

int session_on_launches(struct session *s, void *data, size_t size);
int session_on_agent(struct session *s, void *data, size_t size);
int session_on_name(struct session *s, void *data, size_t size);
int session_on_graph(struct session *s, void *data, size_t size);
/* A launch from the ring or a CPU's stage: queued, or placed now when the queue is full. */
void session_launch(void *ctx, const struct launch_event *e);
/* A launch placed into its cycle: the first error stays in s->err. */
void session_place_launch(void *ctx, const struct launch_event *e);
/* Places queued launches, at most max; whether the queue is now empty. */
bool session_place(struct session *s, size_t max);

#endif /* CORE_SESSION_SESSION_LAUNCHES_H */
