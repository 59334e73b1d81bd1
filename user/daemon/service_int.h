/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The daemon's state, for its own files only (service.c, candidates.c,
 * jobs.c): the processes it samples and the loop's. All of it the daemon's
 * thread's.
 */
#ifndef DAEMON_SERVICE_INT_H
#define DAEMON_SERVICE_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "core/loop/cmd_loop.h"
#include "core/session/session.h"
#include "daemon/dconf.h"
#include "daemon/http.h"
#include "daemon/jobinfo.h"
#include "daemon/metrics.h"
#include "daemon/procinfo.h"
#include "daemon/store.h"

#define NS 1000000000ull
/* How often the daemon looks at candidates, budgets and samples due. */
#define TICK_NS (50 * 1000000ull)
#define MAX_CANDIDATES 8192
/* The budget's sliding window, in this many buckets. */
#define NBUCKETS 30

struct cand {
	pid_t pid;
	bool from_exec;
	uint64_t start_ticks;
	uint64_t since, due;
	unsigned int stage;
};

struct bucket {
	uint64_t t, cpu, cost;
};

/* Steps and when they began, for a rate over the latest of them. */
#define STEP_RATE_N 16

struct dproc {
	pid_t pid;
	struct store *wstore;		/* the running window's: d->store or d->captures */
	struct procinfo pi;
	struct jobinfo job;
	bool from_exec;			/* found from its exec event, not the /proc scan */
	uint64_t found_real;		/* when it was found, Unix ns */
	uint64_t step;			/* the step it is in (step probe), 0 before the first */
	uint64_t step_mono;		/* when that step began */
	uint64_t rate_step[STEP_RATE_N], rate_mono[STEP_RATE_N];
	unsigned int nrate;
	struct jobcap *jc;		/* the job capture this process's next window answers */
	size_t jc_slot;
	bool jc_waiting;		/* ... once the sampled window running now is written */
	const struct step_rule *rule;
	struct pmetrics *pm;
	uint64_t next_sample;
	bool in_window;			/* a window was asked for and is not written yet */
	enum window_mode wmode;
	struct dreq *capture;		/* the window in progress answers it */
	struct dreq *waiting;		/* a capture that waits for the running window */
	uint64_t capture_deadline;
	long run;			/* the running window's folder: run_<run> */
	uint64_t reserved;		/* bytes of the retention it holds while written */
	struct bucket b[NBUCKETS];	/* b[(head + i) % NBUCKETS], oldest first */
	unsigned int nb, head;
	uint64_t last_window_cost;	/* ns, the latest window's probe cost */
	bool backoff;
};

struct daemon {
	struct dconf conf;
	const struct webconf *web;	/* the HTTP server's TLS and authentication, or NULL */
	struct dconf *old;		/* earlier configs: targets' step specs point into them */
	struct step_rule torch;		/* --step torch, for PyTorch processes no rule matches */
	size_t nold;
	const char *conf_path;
	int (*reparse)(struct dconf *c, void *arg);
	void *arg;
	struct session *s;
	struct http *http;
	struct metrics *m;
	struct store *store;		/* sampled windows, under output */
	struct store *captures;		/* on-demand captures, apart: under output/captures */
	struct dproc **procs;
	size_t nprocs, cap;
	struct cand *cands;
	size_t ncands;
	struct jobcap **jcs;		/* job captures not answered yet */
	size_t njcs;
	struct cmd_loop *loop;
	pid_t self;
	uint64_t reloads, reload_errors;
	bool told_full;
	bool told_disk;			/* said that windows wait for room */
	unsigned int rng;
};

/* service.c's, for jobs.c. */
struct dproc *service_find(struct daemon *d, pid_t pid);
enum window_mode service_mode(const struct daemon *d, const struct dproc *p, const char *asked);
/*
 * A window of steps in mode (at first .. first + steps - 1 when first >= 0),
 * with its room under the retention reserved. 0, -ENOSPC, or the engine's
 * error (-ERANGE: first is too near, *now the step the process is in).
 */
struct json_writer;
/* The JSON made by fill as r's answer, with status; a 500 when it could not be made. */
void service_answer_json(struct dreq *r, int status,
			 void (*fill)(struct json_writer *w, void *arg), void *arg);
int service_open_window(struct daemon *d, struct dproc *p, uint32_t steps, enum window_mode mode,
			int64_t first, uint64_t *now);

/* A process found to map CUDA is sampled: a target of the session. 0 or -errno. */
int service_add_proc(struct daemon *d, pid_t pid, const struct procinfo *pi, bool from_exec);

/* candidates.c: the processes that may map CUDA, looked at until they do. */
/* Every process already there: those with CUDA now sampled, the rest candidates. */
void candidates__scan(struct daemon *d);
/* pid ran a new program: sampled if it maps CUDA now, else a candidate. */
void candidates__exec(struct daemon *d, pid_t pid);
/* The candidates due are looked at again (the loop's tick). */
void candidates__tick(struct daemon *d, uint64_t now);

/* jobs.c: GET /targets and job captures (POST /capture?job=). */
void jobs__targets(struct daemon *d, struct dreq *r);
void jobs__capture(struct daemon *d, struct dreq *r);
/* p's window was written (ci), or p exited (ci NULL): its job capture's rank is answered. */
void jobs__window_done(struct daemon *d, struct dproc *p, const struct cycle_info *ci,
		       const char *result);
/* The sampled window p waited for was written: its job capture's window opens. */
void jobs__resume(struct daemon *d, struct dproc *p);
/* Job captures past their deadline are answered with what came. */
void jobs__tick(struct daemon *d, uint64_t now);
/* The daemon stops: every job capture is answered. */
void jobs__stop(struct daemon *d);

#endif /* DAEMON_SERVICE_INT_H */
