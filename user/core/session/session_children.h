/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Processes the targets start (session_children.c). Session's thread.
 * A record handler (session_records.c's table) is given a record at least as
 * long as the table says, and returns 0 or the session's error (-errno).
 */
#ifndef CORE_SESSION_SESSION_CHILDREN_H
#define CORE_SESSION_SESSION_CHILDREN_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct session;
struct target;

/*
 * A followed child that shares its parent's memory (vfork, posix_spawn) runs
 * a program within microseconds: it is scanned at that exec. One that has
 * not after this long is scanned as the copy of its parent it is.
 */
#define SHARED_MM_SCAN_NS (50 * 1000 * 1000ull)
/* Its list of children watched, empty. */
void session_children_init(struct session *s);
int session_on_fork(struct session *s, void *data, size_t size);
int session_on_exec_seen(struct session *s, void *data, size_t size);
/* Children of targets not followed that took up CUDA are said, with how to record them. */
void session_watch_children(struct session *s);
/* A followed process's new child, with its parent's plan (BPF made its entries). */
struct target *session_adopt(struct session *s, pid_t pid, const struct target *parent,
			     bool shared_mm);

#endif /* CORE_SESSION_SESSION_CHILDREN_H */
