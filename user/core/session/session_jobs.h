/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Jobs to the prober about a target's probeset (session_jobs.c). Session's
 * thread; a job's run function on the prober.
 */
#ifndef CORE_SESSION_SESSION_JOBS_H
#define CORE_SESSION_SESSION_JOBS_H

#include <stdbool.h>
#include <stdint.h>

struct session;
struct target;

/* A message to the prober about one target's probeset, and its answer. */
/* JOB_DROP lets go of a probeset the target no longer needs (after exec); JOB_FREE of the target's last. */
/* JOB_KEEP asks whether a probeset serves the program its process now runs (probeset.h). */
/* JOB_PREREG probes the session's launch files before the process maps them (probeset__preregister). */
/* JOB_WALK: the step object's walk and probes, off its hold (probeset__step_walk). */
enum probe_job_kind { JOB_SCAN, JOB_SET, JOB_EXEC, JOB_SUGGEST, JOB_DROP, JOB_FREE, JOB_KEEP,
		      JOB_PREREG, JOB_WALK };

/* arg: JOB_EXEC's executable. 0 or -ENOMEM. */
int session_submit(struct session *s, struct target *t, enum probe_job_kind kind,
		   uint64_t hold_seq, const char *arg);
/*
 * What launch probes t should have, its window on or not (on), and what its
 * captures keep in: asked of the prober when that changed.
 */
void session_want_probes(struct session *s, struct target *t, bool on);
/* Looks at t's maps again (library loaded, events lost); one scan at a time. */
void session_rescan(struct session *s, struct target *t);

#endif /* CORE_SESSION_SESSION_JOBS_H */
