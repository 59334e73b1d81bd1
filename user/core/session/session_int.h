/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The session's state (struct session), the epoll tags and the turn's reads
 * (session.c), for the session_*.c files only. What
 * each of them does is declared in its own header (session_jobs.h,
 * session_holds.h, ...), which includes none of this. Session's thread.
 */
#ifndef CORE_SESSION_SESSION_INT_H
#define CORE_SESSION_SESSION_INT_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/types.h>
#include "core/graphs/graph_store.h"
#include "core/probes/probeset.h"
#include "core/cycles/proc_cycles.h"
#include "core/session/launch_queue.h"
#include "core/session/session.h"
#include "core/session/target.h"
#include "util/vec.h"

/* Reaper threads, which close links side by side (dispose_links). */
#define REAPERS 32

struct bpfobj;
struct guard;
struct handle_names;
struct prober;
struct ring_buffer;
struct session_holds;
struct session_lost;
struct session_ring;
struct stacks;
struct symbols;
struct uprobe_warm;

struct session {
	struct session_opts o;
	char host[256];		/* o.host, or this machine's name: traces are named by it */
	struct target_plan one_cycle;	/* the schedule of a target without steps or slices */
	struct session_hooks h;
	struct bpfobj *bpf;
	struct guard *guard;
	struct ring_buffer *ctrl, *events;
	struct prober *prober;
	/* Where the prober's answers go (session_job_done), so that session_jobs.c calls no file above it. */
	void (*job_done)(void *job);
	struct prober *reaper[REAPERS]; /* close detached links, off the prober's path */
	unsigned int reap_next;		/* the next job's reaper, round the REAPERS */
	struct uprobe_warm *warm;	/* registration kept warm while holds come */
	bool cache_refused;	/* the cache of launch files could not be read: said once */
	struct symbols *syms;
	struct handle_names *names;	/* kernel handles' names, from the handle probes */
	struct probe_env penv;	/* what every probeset shares; fixed once set */
	struct cycle_env cenv;
	struct graph_budget graphs;	/* what its targets' graph stores hold together */
	struct vec targets;	/* struct target *, owned */
	size_t last;		/* the target the latest event named */
	pid_t command;		/* started by session__spawn; 0 when none */
	bool command_done;	/* it has exited, with command_status */
	int command_status;
	int epfd;
	uint64_t correlation;
	uint64_t polled;	/* when targets' counters were last looked at */
	bool leaving;		/* holds are answered at once: cuprobe is going */
	long budget;		/* events this turn may still take from the rings */
	bool calibrating;	/* the ring's launches are the calibration's: read and let go */
	unsigned long calib_read;	/* how many of them */
	long ring_events;	/* a turn's budget */
	bool backlog;		/* the rings held more than a turn takes */
	bool guard_gone;	/* the guardian died: said once */
	char suggest[512];	/* the latest JOB_SUGGEST answer */
	unsigned long steps_found;	/* targets whose step probe was found */
	struct vec children;	/* descendants of targets, not recorded (session_children.c) */
	int err;		/* cuprobe's own failure, -errno */
	struct launch_queue queue; /* launches read, not yet placed (launch_queue.h) */
	unsigned long placed_at_once; /* launches placed as read: the queue was full */
	struct stacks *stacks;	/* --stack; NULL without */
	unsigned long launches_read;	/* from the events ring */
	uint64_t bytes_read;		/* of its records, with their headers */
	struct session_ring *ring;	/* its growth (session_ring.c's) */
	struct session_lost *lost;	/* cycles lost (session_lost.c's) */
	struct session_holds *holds;	/* holds answered (session_holds.c's) */
};

/* The session's i-th target. */
#define TARGET(s, i) (*vec_at(&(s)->targets, struct target *, i))

/* epoll tags: a kind in the high half, a pid in the low one. */
enum { TAG_RING = 1, TAG_PROBER, TAG_REAPER, TAG_GUARD, TAG_TARGET };
#define TAG(kind, pid) ((uint64_t)(kind) << 32 | (uint32_t)(pid))

/* Adds fd to the session's epoll set with tag (TAG). 0 or -errno. */
static inline int session_epoll_add(int epfd, int fd, uint64_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = tag };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

/*
 * session.c: the turn's reads. A file below session.c calls these two only:
 * a launch ahead of its step's mirror reads ctrl first (session_launches.c),
 * a target's end reads what it made (session_targets.c).
 */
/* Reads both rings, ctrl first, within a turn's budget. 0 or the session's error. */
int session_consume_all(struct session *s);
/* Reads a ring within this turn's budget; false when it held more. */
bool session_consume(struct session *s, struct ring_buffer *rb);

#endif /* CORE_SESSION_SESSION_INT_H */
