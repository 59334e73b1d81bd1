/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What ctrl brings about steps (session_steps.c). Session's thread.
 * A record handler (session_records.c's table) is given a record at least as
 * long as the table says, and returns 0 or the session's error (-errno).
 */
#ifndef CORE_SESSION_SESSION_STEPS_H
#define CORE_SESSION_SESSION_STEPS_H

#include <stddef.h>

struct session;
struct step_event;
struct target;

int session_on_step(struct session *s, void *data, size_t size);
int session_on_thread(struct session *s, void *data, size_t size);
int session_on_range(struct session *s, void *data, size_t size);
/* A step boundary, from BPF or a time slice's end. */
void session_step(struct session *s, struct target *t, const struct step_event *e);

#endif /* CORE_SESSION_SESSION_STEPS_H */
