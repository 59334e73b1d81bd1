// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What the events ring brings: launches (queued as read, placed in their
 * cycles later, a slice a turn), the agent's chunks, kernel handles' names
 * and graph calls, each named as its launch would be. A launch whose step
 * is ahead of the mirror reads ctrl again before it is placed, so that it
 * always lands in the cycle of its step. Session's thread.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include "agent.h"
#include "capture.h"
#include "graph.h"
#include "core/probes/bpfobj.h"
#include "core/probes/capture_api.h"
#include "cuda/launch_api.h"
#include "core/proc/handle_names.h"
#include "core/proc/stacks.h"
#include "core/proc/symbols.h"
#include "core/cycles/proc_cycles.h"
#include "core/session/session_int.h"
#include "core/session/session_launches.h"
#include "core/session/session_targets.h"
#include "launch.h"
#include "names.h"
#include "util/clock.h"
#include "util/log.h"

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

/* REC_AGENT: a chunk of the agent's records, into its target's cycles. */
int session_on_agent(struct session *s, void *data, size_t size)
{
	const struct agent_chunk_event *e = data;
	size_t room = size - offsetof(struct agent_chunk_event, data);
	struct target *t = session_find(s, e->tgid);

	/* BPF bounded len; the loader checks it again: the chunk came from a target's memory. */
	if (e->len > room || !t || !t->cycles)
		return 0;
	proc_cycles__agent_chunk(t->cycles, e->data, e->len);
	return 0;
}

/* REC_NAME: a kernel handle's or module's name, kept for the launches by it. */
int session_on_name(struct session *s, void *data, size_t size)
{
	const struct name_event *e = data;
	struct name_event copy = *e;
	const char *name, *module = NULL;

	(void)size;
	copy.str[sizeof(copy.str) - 1] = 0;
	if (!session_find(s, e->tgid) || e->api >= NAME__COUNT)
		return 0;
	if (handle_names__add(s->names, s->syms, &copy)) {
		p_err("pid %u: out of memory for a kernel handle's name", e->tgid);
		s->err = -ENOMEM;
		return 0;
	}
	name = handle_names__find(s->names, e->tgid, e->handle, &module, NULL);
	if (name)
		p_dbg("pid %u: %s made handle 0x%llx: %s, module %s", e->tgid, name_apis[e->api],
		      (unsigned long long)e->handle, name, module ? module : "unknown");
	return 0;
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

/*
 * REC_GRAPH: a graph call returned, into its target's graph store, its kernel
 * named as a launch of it would be (kernel_name).
 */
int session_on_graph(struct session *s, void *data, size_t size)
{
	const struct graph_event *e = data;
	struct target *t = session_find(s, e->tgid);
	struct launch_event as = { .tgid = e->tgid, .func = e->func };
	enum graph_op op = capture_graph_op(e->api);
	const char *kernel = "";
	char handle[48];

	(void)size;
	if (!t || !t->cycles || e->api >= CAP__COUNT)
		return 0;
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
	return 0;
}

/* REC_LAUNCH, REC_LAUNCH_BATCH: each launch queued, counted as read from the events ring. */
int session_on_launches(struct session *s, void *data, size_t size)
{
	int n = bpfobj__each_launch(data, size, session_launch, s);

	if (n > 0)
		s->launches_read += (unsigned long)n;
	return s->err;
}
