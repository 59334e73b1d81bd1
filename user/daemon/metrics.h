/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The daemon's Prometheus series, per process, owned by the daemon's thread;
 * the HTTP thread gets a rendered copy (metrics__render) through a message.
 * Cardinality is bounded: kernel label values per process (the rest are
 * kernel="other"), processes (max-targets), and a gone process's series
 * stay only for the linger time.
 */
#ifndef DAEMON_METRICS_H
#define DAEMON_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "core/session/session_types.h"
#include "daemon/jobinfo.h"

struct metrics;
struct pmetrics;

/* What a process is labelled with. */
struct plabels {
	pid_t pid;
	const char *comm;
	int rank;		/* -1: unknown */
	const char *cgroup;	/* "" when unknown */
	const char *container;	/* "" when none */
	const struct jobinfo *job;	/* NULL: none known */
};

/* Window results, the result label; cut: it reached window-max-bytes or -launches. */
enum window_result { WIN_OK, WIN_PARTIAL, WIN_ERROR, WIN_BUDGET, WIN_BUSY, WIN_CUT, WIN_DISK,
		     WIN_RESULT__COUNT };

/* The result label's value ("ok", "cut", "skipped_disk", ...). */
const char *metrics__result_name(enum window_result r);

/* Host-wide facts, given when rendering. */
struct metrics_host {
	unsigned int targets;		/* processes being sampled */
	unsigned int candidates;	/* execs waiting to be checked for CUDA */
	double probe_seconds;		/* one launch probe hit, measured; < 0 unknown */
	uint64_t dropped_exec;		/* exec events lost (ring full) */
	uint64_t dropped_other;		/* launches lost outside any target */
	uint64_t traces_bytes;		/* under the output folder */
	uint64_t traces_removed;	/* cycles removed by retention */
	uint64_t reloads, reload_errors;
	uint64_t http_errors;		/* requests answered 4xx/5xx */
};

struct metrics *metrics__new(uint32_t top_kernels);
void metrics__free(struct metrics *m);
void metrics__set_top(struct metrics *m, uint32_t top_kernels);
/*
 * Job label values kept at once: a process of a job beyond them is
 * job="other", counted (cuprobe_jobs_other_total). A job's value goes when
 * its last process's series do.
 */
void metrics__set_max_jobs(struct metrics *m, uint32_t max_jobs);

/* The series of a live process (made when new; a lingering one of the same pid goes). */
struct pmetrics *metrics__proc(struct metrics *m, const struct plabels *l);
/* The process exited at now: its series go linger_ns later (metrics__expire). */
void metrics__gone(struct metrics *m, struct pmetrics *pm, uint64_t now);
void metrics__expire(struct metrics *m, uint64_t now, uint64_t linger_ns);
size_t metrics__count(const struct metrics *m);

/* n launches of kernel (NULL: not a kernel launch) through api. 0 or -ENOMEM. */
int pmetrics__launches(struct pmetrics *pm, const char *kernel, const char *api, uint64_t n);
void pmetrics__step(struct pmetrics *pm, double seconds);
void pmetrics__gpu_kernel(struct pmetrics *pm, double seconds);
void pmetrics__window(struct pmetrics *pm, enum window_mode mode, enum window_result r);
void pmetrics__drops(struct pmetrics *pm, uint64_t n);
void pmetrics__overhead(struct pmetrics *pm, double ratio, bool backoff);
/* n launch records made into captured streams: graph nodes, apart from the launch totals. */
void pmetrics__captured(struct pmetrics *pm, uint64_t n);
/*
 * n kernels of kernel that graph replays through api ran: apart from the
 * launch totals, where each replay is one launch. 0 or -ENOMEM.
 */
int pmetrics__graph_kernels(struct pmetrics *pm, const char *kernel, const char *api, uint64_t n);
/* Graph replays of known and of unknown content (made before cuprobe attached). */
void pmetrics__graph_replays(struct pmetrics *pm, uint64_t known, uint64_t unknown);
/* The step the process is in (cuprobe_target_step), for processes with a step probe. */
void pmetrics__target_step(struct pmetrics *pm, uint64_t step);
/* The job label value the process got ("other" past the bound), "" when none. */
const char *pmetrics__job(const struct pmetrics *pm);
/* Windows sampled and launches counted, for the tests' and the log's sake. */
uint64_t pmetrics__launch_total(const struct pmetrics *pm);

/* The text exposition format (version 0.0.4). 0 or -ENOMEM; *out is malloc'ed. */
int metrics__render(const struct metrics *m, const struct metrics_host *h, char **out,
		    size_t *len);

#endif /* DAEMON_METRICS_H */
