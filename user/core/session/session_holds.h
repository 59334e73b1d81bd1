/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Holds answered and counted (session_holds.c). Session's thread.
 */
#ifndef CORE_SESSION_SESSION_HOLDS_H
#define CORE_SESSION_SESSION_HOLDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct probe_facts;
struct session;
struct target;

/*
 * A library-map hold is answered within this long, probed or not: long
 * enough to read the symbols of a library the size of libtorch_cuda on a
 * loaded machine, short enough that a stuck prober costs a process little.
 */
#define HOLD_MAX_NS (3000 * 1000 * 1000ull)

struct session_holds;

/* The holds' count, s->holds (none yet: zero). 0 or -ENOMEM. */
int session_holds_new(struct session *s);
void session_holds_free(struct session *s);
/* A scan's object files counted (f: its facts): read, or answered from the cache. */
void session_holds_files(struct session *s, const struct probe_facts *f);

/* Continues t if a hold stops it; its length goes into t's next trace and -v. */
void session_answer_hold(struct session *s, struct target *t);
/* The same, with what the scan that ended it found (f; NULL: no scan ended it). */
void session_answer_hold_facts(struct session *s, struct target *t, const struct probe_facts *f);
/* CONF_CAPTURE_HOLD as BPF reads it: set while a capture's probes of t are not all in. */
void session_capture_hold_flag(struct session *s, struct target *t, bool on);
/* The capture's hold: its launch probes are in (or cannot be put in: f NULL). */
void session_capture_hold_done(struct session *s, struct target *t, const struct probe_facts *f);
/* How many holds there were and how long they took, said with -v at the end. */
void session_holds_report(const struct session *s);

#endif /* CORE_SESSION_SESSION_HOLDS_H */
