/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Password checks off the thread that answers: one thread of its own runs
 * bcrypt (libcrypt's crypt_rn, ~200 ms at cost 12), one check at a time as
 * the exporter toolkit does, on a queue of at most PWCHECK_MAX checks. A
 * check is a message: libmicrohttpd's thread fills a job and submits it; the
 * job is the checker's until it is done, when the checker calls the job's
 * resume (which resumes the suspended connection); then the submitter takes
 * the outcome back with pwcheck__take. The checker holds no other state.
 */
#ifndef DAEMON_PWCHECK_H
#define DAEMON_PWCHECK_H

#include <stdbool.h>

/* Checks queued or running at once; past them pwcheck__submit says -EAGAIN. */
#define PWCHECK_MAX 4

struct pwcheck;

struct pwcheck_job {
	/* The submitter's, read by the checker. */
	const char *hash;		/* a bcrypt hash that outlives the job */
	char *pass;			/* malloc'ed: the checker wipes and frees it */
	void (*resume)(void *arg);	/* called by the checker once done */
	void *arg;
	/* The checker's until done (pwcheck__take reads them). */
	bool done, ok, stopped;
	struct pwcheck_job *next;
};

/* Starts the checker's thread. NULL and errno on failure. */
struct pwcheck *pwcheck__new(void);
/*
 * Stops the thread: what is queued is done unchecked (stopped, not ok) and
 * resumed; later submits are -ESHUTDOWN. After it, no job is the checker's.
 */
void pwcheck__stop(struct pwcheck *p);
/* Stops p if need be, and frees it. */
void pwcheck__free(struct pwcheck *p);
/*
 * Queues j (j->pass is taken over on success). 0, -EAGAIN when PWCHECK_MAX
 * checks are queued or running, -ESHUTDOWN when p stops.
 */
int pwcheck__submit(struct pwcheck *p, struct pwcheck_job *j);
/* Whether j is done; *ok and *stopped say its outcome then. */
bool pwcheck__take(struct pwcheck *p, struct pwcheck_job *j, bool *ok, bool *stopped);
/* Whether pass matches the bcrypt hash, compared in constant time (any thread). */
bool pwcheck__bcrypt(const char *pass, const char *hash);

#endif /* DAEMON_PWCHECK_H */
