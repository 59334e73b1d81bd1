// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What comes out of the two rings: step boundaries, library maps and thread
 * names from ctrl; launches and agent chunks from events. ctrl is read
 * first; a launch whose step is ahead of the mirror reads ctrl again before
 * it is placed, so it always lands in the cycle of its step.
 */
#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "agent.h"
#include "graph.h"
#include "core/probes/bpfobj.h"
#include "core/probes/capture_api.h"
#include "core/probes/launch_api.h"
#include "core/proc/handle_names.h"
#include "core/proc/procmaps.h"
#include "core/proc/stacks.h"
#include "core/proc/symbols.h"
#include "core/schedule/proc_cycles.h"
#include "core/session/session_int.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/plural.h"

/*
 * The kernel's name: a handle's from the call that made it (its record came
 * through this ring before any launch by the handle), else the host stub's
 * symbol. A handle made before cuprobe attached stays unnamed
 * (CUfunction 0x...), never guessed: CUPTI names it with --cupti. A runtime
 * launch may be given a cudaKernel_t in place of a stub (cudaLaunchKernel's
 * docs): its address is in no object, so no symbol names it.
 */
static bool kernel_name(struct session *s, const struct launch_event *e, char *buf, size_t len,
			const char **kernel)
{
	bool unnamed = false;
	const char *handle;

	*kernel = "";
	if (launch_api_what(e->api) != LAUNCH_KERNEL)
		return false;
	handle = handle_names__find(s->names, e->tgid, e->func, NULL, &unnamed);
	if (handle) {
		*kernel = handle;
		return unnamed;
	}
	if (launch_api_is_driver(e->api) || e->flags & LAUNCH_F_HANDLE) {
		snprintf(buf, len, "CUfunction 0x%llx", (unsigned long long)e->func);
		*kernel = buf;
		return true;
	}
	return symbols__name(s->syms, e->tgid, e->func, kernel) != 0;
}

static int on_launch(struct session *s, const struct launch_event *e)
{
	struct target *t = session_find(s, e->tgid);
	const char *kernel;
	char handle[48];
	bool unnamed;

	if (!t || e->api >= API__COUNT || !t->cycles)
		return 0;
	if (proc_cycles__ahead(t->cycles, e))
		session_consume(s, s->ctrl);
	unnamed = kernel_name(s, e, handle, sizeof(handle), &kernel);
	/* Named now, while the process lives: a cupti cycle writes its launches later. */
	if (s->stacks) {
		stacks__get(s->stacks, e);
		stacks__count(s->stacks, e);
	}
	return proc_cycles__launch(t->cycles, e, kernel, unnamed, ++s->correlation);
}

static void on_agent(struct session *s, const struct agent_chunk_event *e, size_t size)
{
	size_t room = size - offsetof(struct agent_chunk_event, data);
	struct target *t = session_find(s, e->tgid);

	/* BPF bounded len; the loader checks it again: the chunk came from a target's memory. */
	if (e->len > room || !t || !t->cycles)
		return;
	proc_cycles__agent_chunk(t->cycles, e->data, e->len);
}

static void on_name(struct session *s, const struct name_event *e)
{
	struct name_event copy = *e;
	const char *name, *module = NULL;

	copy.str[sizeof(copy.str) - 1] = 0;
	if (!session_find(s, e->tgid) || e->api >= NAME__COUNT)
		return;
	if (handle_names__add(s->names, s->syms, &copy)) {
		p_err("pid %u: out of memory for a kernel handle's name", e->tgid);
		s->err = -ENOMEM;
		return;
	}
	name = handle_names__find(s->names, e->tgid, e->handle, &module, NULL);
	if (name)
		p_dbg("pid %u: %s made handle 0x%llx: %s, module %s", e->tgid, name_apis[e->api],
		      (unsigned long long)e->handle, name, module ? module : "unknown");
}

/* A launch placed into its cycle: the first error stays in s->err. */
void session_place_launch(void *ctx, const struct launch_event *e)
{
	struct session *s = ctx;
	int err = on_launch(s, e);

	if (err && !s->err)
		s->err = err;
}

/*
 * A launch made into a capture is a node of the capture's graph, kept as it
 * is copied out (not placed): a graph call read on ctrl since may need it,
 * and the loader reads ctrl before placing launches.
 */
static void captured_node(struct session *s, const struct launch_event *e)
{
	struct target *t = session_find(s, e->tgid);
	const char *kernel;
	char handle[48];

	if (!t || !t->cycles || e->api >= API__COUNT)
		return;
	kernel_name(s, e, handle, sizeof(handle), &kernel);
	if (proc_cycles__captured(t->cycles, e, kernel) && !s->err) {
		p_err("pid %d: out of memory for a node of a captured graph", t->pid);
		s->err = -ENOMEM;
	}
}

/* A launch from the ring or a CPU's stage: queued, or placed now when the queue is full. */
void session_launch(void *ctx, const struct launch_event *e)
{
	struct session *s = ctx;

	if (e->flags & LAUNCH_F_CAPTURED)
		captured_node(s, e);

	if (!launch_queue__push(&s->queue, e)) {
		s->placed_at_once++;
		session_place_launch(s, e);
	}
}

bool session_place(struct session *s, size_t max)
{
	launch_queue__pop(&s->queue, max, session_place_launch, s);
	return s->queue.len == 0;
}

/* A graph call's return: its kernel named as a launch of it would be (kernel_name). */
static void on_graph(struct session *s, const struct graph_event *e)
{
	struct target *t = session_find(s, e->tgid);
	struct launch_event as = { .tgid = e->tgid, .func = e->func };
	enum graph_op op = capture_graph_op(e->api);
	const char *kernel = "";
	char handle[48];

	if (!t || !t->cycles || e->api >= CAP__COUNT)
		return;
	if (op == GOP_ADD_KERNEL || op == GOP_NODE_PARAMS || op == GOP_EXEC_PARAMS) {
		as.api = capture_api_is_driver(e->api) ? API_cuLaunchKernel : API_cudaLaunchKernel;
		as.flags = e->flags & GRAPH_F_KERNEL_HANDLE ? LAUNCH_F_HANDLE : 0;
		kernel_name(s, &as, handle, sizeof(handle), &kernel);
	}
	if (proc_cycles__graph(t->cycles, e, kernel) && !s->err) {
		p_err("pid %d: out of memory for a CUDA graph's nodes", t->pid);
		s->err = -ENOMEM;
	}
	if (op == GOP_CAPTURED)
		t->capture_last = clock_mono_ns();
}

int session_data_event(void *ctx, void *data, size_t size)
{
	struct session *s = ctx;
	__u32 type = size >= sizeof(__u32) ? *(__u32 *)data : 0;
	int err = 0;

	/* The ring's own header is 8 bytes, and records are 8-byte aligned. */
	s->ring.bytes_read += ((size + 7) & ~(size_t)7) + 8;
	if (s->calibrating) {
		if (type == REC_LAUNCH)
			s->calib_read++;
		else if (type == REC_LAUNCH_BATCH)
			s->calib_read += LAUNCH_BATCH_N;
		return 0;
	}
	if (type == REC_LAUNCH || type == REC_LAUNCH_BATCH) {
		int n = bpfobj__each_launch(data, size, session_launch, s);

		if (n > 0)
			s->ring.launches_read += (unsigned long)n;
		err = s->err;
	} else if (type == REC_AGENT && size >= offsetof(struct agent_chunk_event, data))
		on_agent(s, data, size);
	else if (type == REC_NAME && size >= sizeof(struct name_event))
		on_name(s, data);
	else if (type == REC_GRAPH && size >= sizeof(struct graph_event))
		on_graph(s, data);
	if (err)
		return err;
	/* The turn's share is taken: the rest waits for the next turn (session_consume). */
	return --s->budget > 0 ? 0 : -EAGAIN;
}

/* A step boundary, from BPF or a time slice's end. */
void session_step(struct session *s, struct target *t, const struct step_event *e)
{
	struct cycle_status before, after;
	int err;

	if (!t->cycles)
		return;
	proc_cycles__status(t->cycles, &before);
	err = proc_cycles__step(t->cycles, e);
	if (err)
		s->err = err;
	proc_cycles__status(t->cycles, &after);
	if (t->step_ts && e->ts_ns > t->step_ts)
		t->step_ns = e->ts_ns - t->step_ts;
	t->step_ts = e->ts_ns;
	/*
	 * Ahead of warmup, the probes of the next cycle's mode: a window asked
	 * for, the front-end's answer for that cycle (asked again as it begins),
	 * or the plan's.
	 */
	session_want_ahead(s, t, after.phase, after.next_cycle);
	if (before.phase == PHASE_WARMUP && phase_records(after.phase)) {
		/* The attach's answer may still be on its way: check once it is in. */
		if (t->attaching) {
			t->warm_step = e->step;
			t->warm_ts = e->ts_ns;
		} else {
			session_check_warmup(t, e->step, e->ts_ns);
		}
	}
	session_hook_step(s, t, &after, before.phase != after.phase);
}

static void on_step(struct session *s, const struct step_event *e)
{
	struct target *t = session_find(s, e->tgid);

	if (t)
		session_step(s, t, e);
}

static void on_thread(struct session *s, const struct thread_event *e)
{
	struct target *t = session_find(s, e->tgid);

	if (t && t->cycles)
		proc_cycles__thread(t->cycles, e);
}

static void on_range(struct session *s, const struct range_event *e)
{
	struct target *t = session_find(s, e->tgid);

	if (t && t->cycles)
		proc_cycles__range(t->cycles, e);
}

/*
 * A hold: the dynamic linker changed the map (REC_LIBMAP), or a followed
 * process ran a new program (REC_EXEC). The process is probed while held and
 * continued when that is done (session_answer_hold); while cuprobe is
 * leaving, or for a process it no longer follows, at once.
 */
static void on_hold(struct session *s, const struct libmap_event *e)
{
	struct target *t = session_find(s, e->tgid);

	if (!t || t->gone) {
		if (e->held)
			kill(e->tgid, SIGCONT);
		return;
	}
	t->hold_seq = e->seq;
	/* More holds are likely to follow: their attaches should not wait for a grace period. */
	uprobe_warm__hold(s->warm);
	/* A hold lasts from its first stop to the SIGCONT that answers them all. */
	if (e->held && !t->held)
		t->hold_ts = e->ts_ns;
	t->held |= e->held;
	t->hold_since = clock_mono_ns();
	if (s->leaving || !t->probes)
		session_answer_hold(s, t);
	else if (e->type == REC_CAPTURE)
		session_capture_hold(s, t);
	else if (e->type == REC_EXEC)
		session_exec(s, t);
	else
		session_rescan(s, t);
}

/* A followed process's child is recorded; another's is watched for CUDA. */
static void on_fork(struct session *s, const struct fork_event *e)
{
	struct target *parent = session_find(s, e->parent);
	struct child *c;

	if (parent && parent->plan.follow && !session_find(s, e->tgid)) {
		session_adopt(s, e->tgid, parent, e->flags & FORK_F_SHARED_MM);
		return;
	}
	c = vec__push(&s->children);
	if (c)
		*c = (struct child){ .pid = e->tgid, .parent = e->parent };
}

/* The host-wide watch: a process that is no target ran a new program. */
static void on_exec_seen(struct session *s, const struct fork_event *e)
{
	if (s->h.exec && !session_find(s, e->tgid))
		s->h.exec(s->h.ctx, e->tgid);
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
			target_comm(c->pid, comm, sizeof(comm));
			p_warn("pid %d (%s), started by pid %d, uses CUDA but is not recorded: record "
			       "it with -p %d, or its parent with -p %d --children", c->pid, comm,
			       c->parent, c->pid, c->parent);
		}
		*c = *vec_at(&s->children, struct child, s->children.len - 1);
		vec__truncate(&s->children, s->children.len - 1);
	}
}

int session_ctrl_event(void *ctx, void *data, size_t size)
{
	struct session *s = ctx;
	__u32 type = size >= sizeof(__u32) ? *(__u32 *)data : 0;

	if (type == REC_STEP && size >= sizeof(struct step_event))
		on_step(s, data);
	else if ((type == REC_LIBMAP || type == REC_EXEC || type == REC_CAPTURE) &&
		 size >= sizeof(struct libmap_event))
		on_hold(s, data);

	else if (type == REC_THREAD && size >= sizeof(struct thread_event))
		on_thread(s, data);
	else if (type == REC_RANGE && size >= sizeof(struct range_event))
		on_range(s, data);
	else if (type == REC_FORK && size >= sizeof(struct fork_event))
		on_fork(s, data);
	else if (type == REC_EXEC_SEEN && size >= sizeof(struct fork_event))
		on_exec_seen(s, data);
	return --s->budget > 0 ? 0 : -EAGAIN;
}
