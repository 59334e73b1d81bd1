/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A process held by BPF, and capture probes let go (session_held.c).
 * Session's thread. A record handler (session_records.c's table) is given a
 * record at least as long as the table says, and returns 0 or the
 * session's error (-errno).
 */
#ifndef CORE_SESSION_SESSION_HELD_H
#define CORE_SESSION_SESSION_HELD_H

#include <stddef.h>
#include <stdint.h>

struct proc_state;
struct session;
struct target;

/* REC_LIBMAP, REC_EXEC, REC_CAPTURE. */
int session_on_hold(struct session *s, void *data, size_t size);
/* Launch probes kept for captures go once none is open for a while. */
void session_capture_linger(struct session *s, struct target *t, const struct proc_state *ps,
			    uint64_t now);

#endif /* CORE_SESSION_SESSION_HELD_H */
