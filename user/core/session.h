/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The engine: a session owns the BPF object, the targets, their schedules
 * and cycles, the GPU join, the prober thread and the guardian. Front-ends
 * (record, compare, daemon) give it targets and a plan, turn its crank from
 * their own event loop, and hear back through hooks; they hold no engine
 * state of their own.
 *
 *	s = session__new(&opts, &hooks);
 *	session__spawn(s, argv, ...) or session__attach(s, pid);
 *	while (session__alive(s) && !stop) {
 *		wait for session__fd(s) (and the front-end's own fds);
 *		session__dispatch(s);
 *	}
 *	session__finish(s);
 *	session__free(s);
 */
#ifndef SESSION_H
#define SESSION_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "cuprobe.h"

struct session;
struct step_spec;
struct target;
struct cycle_status;

/* What a window attaches from its warmup step to its end. */
enum window_mode {
	MODE_OFF,	/* the step probe only: a baseline */
	MODE_BPF,	/* launch probes */
	MODE_CUPTI,	/* launch probes and the agent's CUPTI records */
	MODE_LATENCY,	/* launch and return probes */
};

struct session_opts {
	const char *out;		/* trace folder */
	long run_base;			/* cycle k goes to OUT/run_<run_base + k> */
	const char *host;
	uint64_t ringbuf_bytes;		/* the events ring */
	const struct step_spec *step;	/* NULL: no steps, a process is one cycle */
	struct schedule sched;		/* with step */
	uint32_t step_every;
	enum window_mode mode;
	double cupti_wait;		/* seconds a finished cycle waits for its GPU records */
};

struct session_hooks {
	void *ctx;
	/* A target began a step (status lines); changed: its phase is not the last step's. */
	void (*step)(void *ctx, const struct target *t, const struct cycle_status *st,
		     bool changed);
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
 * pid, then lets it exec (with CUDA_INJECTION64_PATH=agent when agent is
 * set, and the signal mask mask). 0 or -errno, with the message printed.
 */
int session__spawn(struct session *s, char **argv, const char *agent, const sigset_t *mask);
/* Records a running process from now on. 0 or -errno, with the message printed. */
int session__attach(struct session *s, pid_t pid);

/* Readable (epoll) when the session has something to do. */
int session__fd(const struct session *s);
/* Does what is due: events, prober results, exits, holds, cycles to write. 0 or -errno. */
int session__dispatch(struct session *s);
/* Some target still runs. */
bool session__alive(const struct session *s);
/* The process started by session__spawn: its wait status, once it has exited. */
bool session__command_status(const struct session *s, int *status);
/*
 * Ends what session__spawn started, as perf record does: SIGTERM, then
 * SIGKILL after grace_ms. Processes given to session__attach are never signalled.
 */
void session__end_command(struct session *s, int grace_ms);
/*
 * The recording ends: agents flush their open windows (waited for, boundedly),
 * every open cycle is written. 0, or -errno when a trace could not be written
 * or a step probe was never found.
 */
int session__finish(struct session *s);

#endif /* SESSION_H */
