// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Processes the targets start: a followed target's child is adopted (a
 * target with its parent's plan); another's is watched for CUDA, and said
 * if it takes it up. With watch_exec, any other process's exec is told to
 * the front-end. Session's thread.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "core/proc/procmaps.h"
#include "core/session/session_int.h"
#include "core/session/session_children.h"
#include "core/session/session_jobs.h"
#include "core/session/session_targets.h"
#include "proc.h"
#include "util/clock.h"
#include "util/log.h"

/* A followed process's child is recorded; another's is watched for CUDA. */
/* A process a target (or its descendant) started, watched for CUDA until it exits. */
struct child {
	pid_t pid, parent;
};

void session_children_init(struct session *s)
{
	s->children = VEC_INIT(struct child);
}

/* REC_FORK: a target or its descendant forked. */
int session_on_fork(struct session *s, void *data, size_t size)
{
	const struct fork_event *e = data;
	struct target *parent = session_find(s, e->parent);
	struct child *c;

	(void)size;
	if (parent && parent->plan.follow && !session_find(s, e->tgid)) {
		session_adopt(s, e->tgid, parent, e->flags & FORK_F_SHARED_MM);
		return 0;
	}
	c = vec__push(&s->children);
	if (c)
		*c = (struct child){ .pid = e->tgid, .parent = e->parent };
	return 0;
}

/* REC_EXEC_SEEN: the host-wide watch (watch_exec): a process that is no target ran a new program. */
int session_on_exec_seen(struct session *s, void *data, size_t size)
{
	const struct fork_event *e = data;

	(void)size;
	if (s->h.exec && !session_find(s, e->tgid))
		s->h.exec(s->h.ctx, e->tgid);
	return 0;
}

/* Whether the process maps a CUDA runtime or driver; -ESRCH once it is gone. */
static int maps_cuda(pid_t pid)
{
	struct procmaps m;
	int found = 0;

	if (procmaps__read(pid, &m))
		return -ESRCH;
	for (size_t i = 0; i < m.n && !found; i++)
		found = m.v[i].path && (strstr(m.v[i].path, "/libcudart") ||
					strstr(m.v[i].path, "/libcuda.so"));
	procmaps__free(&m);
	return found;
}

/*
 * Children of targets that are not followed (-p without --children) are not
 * recorded: one that takes up CUDA is said, with how to record it, rather
 * than missed in silence.
 */
void session_watch_children(struct session *s)
{
	for (size_t i = 0; i < s->children.len;) {
		struct child *c = vec_at(&s->children, struct child, i);
		int cuda = session_find(s, c->pid) ? -ESRCH : maps_cuda(c->pid);
		char comm[64] = "?";

		if (!cuda) {
			i++;
			continue;
		}
		if (cuda > 0) {
			proc_comm(c->pid, comm, sizeof(comm));
			p_warn("pid %d (%s), started by pid %d, uses CUDA but is not recorded: record "
			       "it with -p %d, or its parent with -p %d --children", c->pid, comm,
			       c->parent, c->pid, c->parent);
		}
		*c = *vec_at(&s->children, struct child, s->children.len - 1);
		vec__truncate(&s->children, s->children.len - 1);
	}
}

struct target *session_adopt(struct session *s, pid_t pid, const struct target *parent,
			     bool shared_mm)
{
	struct target *t;
	int err;

	t = session_new_target(s, pid, false, &parent->plan, true, &err);
	if (err) {
		if (err != -ESRCH)
			p_warn("pid %d, started by pid %d: cannot record it: %s", pid, parent->pid,
			       strerror(-err));
		if (t)
			session_end_target(s, t);
		return NULL;
	}
	p_dbg("pid %d (%s), started by pid %d: recorded too", pid, t->comm, parent->pid);
	/*
	 * A vfork child runs in its parent's memory, whose probes are in, until
	 * its exec (python's subprocess, posix_spawn): a scan of that copy would
	 * attach links it drops a few µs later, and hold its exec behind their
	 * attach (a grace period: 10-20 ms). Its exec's scan is the first.
	 */
	if (shared_mm) {
		p_dbg("pid %d shares pid %d's memory (vfork): scanned at its exec", pid,
		      parent->pid);
		t->scan_due = clock_mono_ns() + SHARED_MM_SCAN_NS;
		return t;
	}
	session_rescan(s, t);
	return t;
}
