/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The guardian: whatever ends cuprobe, no process stays stopped by it.
 *
 * The library-map probe stops a target (SIGSTOP from BPF) until the loader
 * has probed its new libraries and continues it. If the loader dies in
 * between (SIGKILL, a crash, the OOM killer), nobody would. So, right after
 * the BPF object is loaded and before any thread starts, cuprobe forks a
 * guardian: a small process that keeps only the two maps that tell who is
 * held (proc_state.stops, counted by BPF before each stop, against
 * proc_conf.holds_answered, written by the loader after each SIGCONT) and a
 * pidfd of the loader. It sits in its own session, ignores the signals a
 * terminal or a service manager sends, and is exempt from the OOM killer.
 * When the loader ends without saying goodbye, its links are gone with it,
 * so nothing stops a target again; the guardian continues every process with
 * an unanswered stop, looks again a little later for a stop that was in
 * flight, and exits. While the loader lives but does not run (stopped,
 * starved of CPU), the guardian continues a hold left unanswered for 5 s:
 * the loader's own bound is 3 s, and BPF makes no new hold after 4 s. A process stopped by its user is never
 * continued: only stops cuprobe counted are.
 */
#ifndef CORE_PROBES_GUARD_H
#define CORE_PROBES_GUARD_H

#include <sys/types.h>

struct guard;

/* Forks the guardian over the two maps' fds. Call before any thread exists. NULL and errno. */
struct guard *guard__start(int state_fd, int conf_fd);
/* The guardian's pid (tests and messages). */
pid_t guard__pid(const struct guard *g);
/* Whether the guardian is still there. */
int guard__fd(const struct guard *g);
/*
 * Every hold is answered and every probe detached: the guardian checks once
 * more and leaves. Frees g.
 */
void guard__release(struct guard *g);

#endif /* CORE_PROBES_GUARD_H */
