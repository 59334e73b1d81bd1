/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Jobs to the prober about a target's probeset (session_jobs.c). Session's
 * thread; a job's run function on the prober.
 */
#ifndef CORE_SESSION_SESSION_JOBS_H
#define CORE_SESSION_SESSION_JOBS_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "core/probes/probeset.h"
#include "core/proc/procmaps.h"

struct procmaps;
struct session;
struct target;

/* A message to the prober about one target's probeset, and its answer. */
/* JOB_DROP lets go of a probeset the target no longer needs (after exec); JOB_FREE of the target's last. */
/* JOB_KEEP asks whether a probeset serves the program its process now runs (probeset.h). */
/* JOB_PREREG probes the session's launch files before the process maps them (probeset__preregister). */
/* JOB_WALK: the step object's walk and probes, off its hold (probeset__step_walk). */
enum probe_job_kind { JOB_SCAN, JOB_SET, JOB_EXEC, JOB_SUGGEST, JOB_DROP, JOB_FREE, JOB_KEEP,
		      JOB_PREREG, JOB_WALK };

/* One such message: the prober's while it runs, the session's before and after. */
struct probe_job {
	struct session *s;
	enum probe_job_kind kind;
	pid_t pid;
	struct probeset *ps;
	struct probe_want want;		/* JOB_SET */
	uint64_t hold_seq;		/* JOB_SCAN: the hold it answers, 0 for none */
	bool kept;			/* JOB_KEEP: the answer */
	bool more;			/* JOB_PREREG: it let other jobs go first, and goes on */
	struct procmaps maps;		/* JOB_SCAN: the maps it read while the process was held */
	char arg[PATH_MAX];		/* JOB_EXEC: the executable; JOB_SUGGEST: the answer */
	struct probe_facts facts;	/* the answer */
};

/* arg: JOB_EXEC's executable. 0 or -ENOMEM. */
int session_submit(struct session *s, struct target *t, enum probe_job_kind kind,
		   uint64_t hold_seq, const char *arg);
/*
 * What launch probes t should have, its window on or not (on), and what its
 * captures keep in: asked of the prober when that changed.
 */
void session_want_probes(struct session *s, struct target *t, bool on);
/*
 * The session's views of t's map (identity, symbols, stacks) after a scan,
 * from the maps it read (taken over; NULL or empty: read now).
 */
void session_refresh_views(struct session *s, struct target *t, struct procmaps *maps);
/* Looks at t's maps again (library loaded, events lost); one scan at a time. */
void session_rescan(struct session *s, struct target *t);

#endif /* CORE_SESSION_SESSION_JOBS_H */
