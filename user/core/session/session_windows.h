/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Windows and time slices (session_windows.c). Session's thread.
 */
#ifndef CORE_SESSION_SESSION_WINDOWS_H
#define CORE_SESSION_SESSION_WINDOWS_H

#include <stdint.h>

struct session;
struct target;

void session_end_slice(struct session *s, struct target *t, uint64_t now);
/*
 * The window running in t ends at its next step (or slice): a schedule that
 * records nothing, in BPF and in the mirror. t may be NULL. Session's thread.
 */
void session_end_window(struct session *s, struct target *t);

#endif /* CORE_SESSION_SESSION_WINDOWS_H */
