/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A followed process's new program (session_exec.c). Session's thread.
 */
#ifndef CORE_SESSION_SESSION_EXEC_H
#define CORE_SESSION_SESSION_EXEC_H

struct session;
struct target;

/* A followed process ran a new program: its old probes go, the new program is probed. */
void session_exec(struct session *s, struct target *t);
/* The same, its old probes dropped and the new program probed from nothing. */
void session_exec_anew(struct session *s, struct target *t);

#endif /* CORE_SESSION_SESSION_EXEC_H */
