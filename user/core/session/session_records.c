// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What comes out of the two rings, dispatched by record type through one
 * table (as perf's struct perf_tool does): each type names its ring, its
 * least size, and its handler, which lives in the file that owns what it
 * changes. ctrl is read first; a launch whose step is ahead of the mirror
 * reads ctrl again before it is placed (session_launches.c). A new record
 * type is a new row here. Session's thread.
 */
#include <errno.h>
#include <stddef.h>
#include "agent.h"
#include "graph.h"
#include "hold.h"
#include "launch.h"
#include "names.h"
#include "core/session/session_int.h"
#include "core/session/session_children.h"
#include "core/session/session_held.h"
#include "core/session/session_launches.h"
#include "core/session/session_records.h"
#include "core/session/session_steps.h"
#include "proc.h"
#include "records.h"
#include "step.h"

/* The ring a record type comes through. */
enum record_ring { RING_CTRL, RING_EVENTS };

struct record_handler {
	enum record_ring ring;
	size_t min;		/* a shorter record is read and let go */
	/* 0, or an error that stops the ring's read (the session's own, -errno). */
	int (*fn)(struct session *s, void *data, size_t size);
};

static const struct record_handler handlers[] = {
	/* ctrl: steps, holds, threads, ranges, forks, execs seen. */
	[REC_STEP] = { RING_CTRL, sizeof(struct step_event), session_on_step },
	[REC_LIBMAP] = { RING_CTRL, sizeof(struct libmap_event), session_on_hold },
	[REC_EXEC] = { RING_CTRL, sizeof(struct libmap_event), session_on_hold },
	[REC_CAPTURE] = { RING_CTRL, sizeof(struct libmap_event), session_on_hold },
	[REC_THREAD] = { RING_CTRL, sizeof(struct thread_event), session_on_thread },
	[REC_RANGE] = { RING_CTRL, sizeof(struct range_event), session_on_range },
	[REC_FORK] = { RING_CTRL, sizeof(struct fork_event), session_on_fork },
	[REC_EXEC_SEEN] = { RING_CTRL, sizeof(struct fork_event), session_on_exec_seen },
	/* events: launches (one or a CPU's batch, checked as they are read), chunks, names, graphs. */
	[REC_LAUNCH] = { RING_EVENTS, 0, session_on_launches },
	[REC_LAUNCH_BATCH] = { RING_EVENTS, 0, session_on_launches },
	[REC_AGENT] = { RING_EVENTS, offsetof(struct agent_chunk_event, data), session_on_agent },
	[REC_NAME] = { RING_EVENTS, sizeof(struct name_event), session_on_name },
	[REC_GRAPH] = { RING_EVENTS, sizeof(struct graph_event), session_on_graph },
};

static __u32 record_type(const void *data, size_t size)
{
	return size >= sizeof(__u32) ? *(const __u32 *)data : 0;
}

/* One record of ring: its handler's, when the table has one for it there. */
static int dispatch(struct session *s, enum record_ring ring, void *data, size_t size)
{
	__u32 type = record_type(data, size);
	const struct record_handler *h;
	int err = 0;

	h = type < sizeof(handlers) / sizeof(handlers[0]) ? &handlers[type] : NULL;
	if (h && h->fn && h->ring == ring && size >= h->min)
		err = h->fn(s, data, size);
	if (err)
		return err;
	/* The turn's share is taken: the rest waits for the next turn (session_consume). */
	return --s->budget > 0 ? 0 : -EAGAIN;
}

int session_ctrl_event(void *ctx, void *data, size_t size)
{
	return dispatch(ctx, RING_CTRL, data, size);
}

int session_data_event(void *ctx, void *data, size_t size)
{
	struct session *s = ctx;
	__u32 type = record_type(data, size);

	/* The ring's own header is 8 bytes, and records are 8-byte aligned. */
	s->bytes_read += ((size + 7) & ~(size_t)7) + 8;
	if (s->calibrating) {
		if (type == REC_LAUNCH)
			s->calib_read++;
		else if (type == REC_LAUNCH_BATCH)
			s->calib_read += LAUNCH_BATCH_N;
		return 0;
	}
	return dispatch(s, RING_EVENTS, data, size);
}
