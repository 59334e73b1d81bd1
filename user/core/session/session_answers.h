/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The prober's answers (session_answers.c). Session's thread. */
#ifndef CORE_SESSION_SESSION_ANSWERS_H
#define CORE_SESSION_SESSION_ANSWERS_H

/*
 * A job (struct probe_job, session_jobs.h) back from the prober: the target
 * updated, the job freed. The prober's done callback (prober_fn), which
 * session__new gives session_submit as s->job_done.
 */
void session_job_done(void *job);

#endif /* CORE_SESSION_SESSION_ANSWERS_H */
