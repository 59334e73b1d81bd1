/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The engine: a session owns the BPF object, the targets, their schedules
 * and cycles, the GPU join, the prober thread and the guardian. Front-ends
 * (record, compare, daemon) give it targets and a plan, turn its crank from
 * their event loop (core/loop/cmd_loop.h), and hear back through hooks; they hold
 * no engine state of their own. What they see of a target is a small public
 * view (struct session_target); the vocabulary they share with the engine is
 * in session_types.h. A session belongs to the thread that made it: every
 * call below is made on it, and every hook runs on it.
 *
 *	s = session__new(&opts, &hooks);
 *	session__spawn(s, argv, mask) or session__attach(s, pid);
 *	while (session__alive(s) && !stop) {
 *		wait for session__fd(s) (and the front-end's own fds);
 *		session__dispatch(s);
 *	}
 *	session__finish(s);
 *	session__free(s);
 */
#ifndef CORE_SESSION_SESSION_H
#define CORE_SESSION_SESSION_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "core/session/session_types.h"

struct session;

/* How long session__end_command waits after SIGTERM before it sends SIGKILL. */
#define SESSION_END_GRACE_MS 3000

/* The smallest events ring (ringbuf_bytes below): it holds a whole batch of launches. */
#define SESSION_RINGBUF_MIN (8ull << 10)

/* Given to session__new, which copies it; pointers in it must outlive the session. */
struct session_opts {
	/* The host name in trace file names; NULL: this machine's (gethostname). For tests. */
	const char *host;
	uint64_t ringbuf_bytes;		/* the events ring */
	unsigned int modes;		/* 1 << mode for every mode a window may use */
	bool steps;			/* some target may have a step probe */
	double cupti_wait;		/* seconds a finished cycle waits for its GPU records */
	struct target_plan plan;	/* for session__spawn and session__attach */
	/*
	 * The agent library (MODE_CUPTI): session__spawn's command loads it
	 * (CUDA_INJECTION64_PATH), session__attach brings it into a process that
	 * lacks it (inject.h); NULL: neither.
	 */
	const char *agent;
	bool stack;			/* --stack: each launch's CPU stack (stacks.h) */
	bool watch_exec;		/* the exec hook hears of every exec on the host */
	/*
	 * A cycle that reaches a bound is cut there, and a window asked for with
	 * session__window ends at the next step; 0: no bound.
	 */
	struct cycle_bounds bounds;
	struct out_mode out;		/* run folders and traces: 0700 and 0600 by default */
};

/*
 * What a front-end hears; every hook but cycle_dir may be NULL. All run on
 * the session's thread; t and what the other pointers name are valid during
 * the hook only.
 */
struct session_hooks {
	void *ctx;
	/* A target began a step; changed: its phase is not the last step's. */
	void (*step)(void *ctx, const struct session_target *t, const struct cycle_status *st,
		     bool changed);
	/* A step ended (step times per mode). */
	void (*step_done)(void *ctx, const struct session_target *t,
			  const struct cycle_step_info *si);
	/*
	 * The mode of t's cycle k, asked as it begins, and also ahead of it (the
	 * early attach): the same k must get the same answer. NULL: the plan's.
	 */
	enum window_mode (*cycle_mode)(void *ctx, const struct session_target *t, uint32_t k);
	/* The folder of t's cycle k (made if missing). Required. 0 or -errno. */
	int (*cycle_dir)(void *ctx, const struct session_target *t, uint32_t k, char *buf,
			 size_t len);
	/* A cycle was written (or failed, or had no trace: MODE_OFF). */
	void (*cycle_done)(void *ctx, const struct session_target *t, const struct cycle_info *ci);
	/* A target exited (its cycles are written). */
	void (*exited)(void *ctx, const struct session_target *t);
	/* With watch_exec: pid, which is no target, ran a new program. */
	void (*exec)(void *ctx, pid_t pid);
};

/* Loads the probes, starts the guardian and the prober, calibrates. NULL and errno. */
struct session *session__new(const struct session_opts *o, const struct session_hooks *h);
/*
 * Every target's open cycles must have been written (session__finish):
 * detaches everything, continues whatever cuprobe holds, lets the guardian go.
 */
void session__free(struct session *s);

/*
 * Starts argv as a target: forks, probes what the child will run for its
 * pid, then lets it exec (with CUDA_INJECTION64_PATH naming session_opts'
 * agent when it is set, and the signal mask mask). 0 or -errno, with the
 * message printed.
 */
int session__spawn(struct session *s, char **argv, const sigset_t *mask);
/* Records a running process from now on, with the session's plan. 0 or -errno (printed). */
int session__attach(struct session *s, pid_t pid);
/* The same with a plan of its own (the plan's step spec must outlive the session). */
int session__attach_plan(struct session *s, pid_t pid, const struct target_plan *p);
/* Stops recording pid: its open cycles are written, its probes detached. 0 or -ESRCH. */
int session__detach(struct session *s, pid_t pid);
/*
 * Opens a window at pid's next step (or slice): warmup steps, then active
 * ones, in mode; then nothing until the next window. 0, -ESRCH, or -EBUSY
 * while a window is open.
 */
int session__window(struct session *s, pid_t pid, uint32_t warmup, uint32_t active,
		    enum window_mode mode);
/*
 * The same, with the active steps exactly first .. first + active - 1 of the
 * process's step count (its step probe's hits since it became a target):
 * the schedule counts from step 0 in BPF, so no lag moves it. 0, -ESRCH,
 * -EBUSY, -EINVAL (time slices), or -ERANGE when step first - warmup is not
 * far enough ahead for the probes to go in first (*now: the current step).
 */
int session__window_at(struct session *s, pid_t pid, uint32_t warmup, uint32_t active,
		       enum window_mode mode, uint64_t first, uint64_t *now);
/* What one launch probe hit costs here, in ns, as measured at start; < 0: unknown. */
double session__probe_ns(const struct session *s);
/* Launches lost (events ring full) in processes with no state of their own: no target. */
uint64_t session__lost_other(const struct session *s);
/* With watch_exec: exec events lost because the ctrl ring was full. */
uint64_t session__lost_exec(const struct session *s);
/*
 * The public view of the target with that pid into out (which may be NULL
 * to ask only whether it is one). Session's thread. 0, or -ESRCH when pid is
 * no target (or is gone).
 */
int session__target(const struct session *s, pid_t pid, struct session_target *out);

/* Readable (epoll) when the session has something to do. */
int session__fd(const struct session *s);
/* Does what is due: events, prober results, exits, holds, cycles to write. 0 or -errno. */
int session__dispatch(struct session *s);
/* The rings held more than one turn takes: call session__dispatch again without waiting. */
bool session__busy(const struct session *s);
/* Some target still runs. */
bool session__alive(const struct session *s);
/* The process started by session__spawn: its wait status, once it has exited. */
bool session__command_status(const struct session *s, int *status);
/*
 * Ends what session__spawn started, as perf record does: SIGTERM, then
 * SIGKILL after SESSION_END_GRACE_MS. Processes given to session__attach
 * are never signalled.
 */
void session__end_command(struct session *s);
/*
 * The recording ends: agents flush their open windows (waited for, boundedly),
 * every open cycle is written. 0, or -errno when a trace could not be written
 * or a step probe was never found.
 */
int session__finish(struct session *s);

#endif /* CORE_SESSION_SESSION_H */
