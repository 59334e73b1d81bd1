/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Holds (session_holds.c). Session's thread.
 * A record handler (session_records.c's table) is given a record at least as
 * long as the table says, and returns 0 or the session's error (-errno).
 */
#ifndef CORE_SESSION_SESSION_HOLDS_H
#define CORE_SESSION_SESSION_HOLDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct probe_facts;
struct proc_state;
struct session;
struct target;

/*
 * A library-map hold is answered within this long, probed or not: long
 * enough to read the symbols of a library the size of libtorch_cuda on a
 * loaded machine, short enough that a stuck prober costs a process little.
 */
#define HOLD_MAX_NS (3000 * 1000 * 1000ull)

/* The library-map and exec holds answered, in every target (session_holds.c). */
struct session_holds {
	unsigned long count;
	uint64_t total_ns, max_ns;
	pid_t max_pid;			/* the longest one's */
	char max_what[200];		/* and what it was for */
	unsigned long files_read, files_reused;	/* object files read, and answered from the cache */
};

int session_on_hold(struct session *s, void *data, size_t size);
/* Continues t if a hold stops it; its length goes into t's next trace and -v. */
void session_answer_hold(struct session *s, struct target *t);
/* The same, with what the scan that ended it found (f; NULL: no scan ended it). */
void session_answer_hold_facts(struct session *s, struct target *t, const struct probe_facts *f);
/* A capture began with no launch probe in (REC_CAPTURE): they go in, then it goes on. */
void session_capture_hold(struct session *s, struct target *t);
/* CONF_CAPTURE_HOLD as BPF reads it: set while a capture's probes of t are not all in. */
void session_capture_hold_flag(struct session *s, struct target *t, bool on);
/* The capture's hold: its launch probes are in (or cannot be put in: f NULL). */
void session_capture_hold_done(struct session *s, struct target *t, const struct probe_facts *f);
/* Launch probes kept for captures go once none is open for a while. */
void session_capture_linger(struct session *s, struct target *t, const struct proc_state *ps,
			    uint64_t now);
/* How many holds there were and how long they took, said with -v at the end. */
void session_holds_report(const struct session *s);

#endif /* CORE_SESSION_SESSION_HOLDS_H */
