/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The stream capture calls cuprobe probes (capture.h), as the loader sees them. */
#ifndef CORE_PROBES_CAPTURE_API_H
#define CORE_PROBES_CAPTURE_API_H

#include <stdbool.h>
#include "capture.h"

/* The probed functions' symbols: capture_apis[i] for enum capture_api i. */
extern const char *const capture_apis[CAP__COUNT];

/* A driver entry ("cu…"), probed in a driver; else a runtime's ("cuda…"). */
static inline bool capture_api_is_driver(unsigned int api)
{
	return capture_apis[api][2] != 'd';
}

/*
 * The begins, the ends and the graph calls have a return probe: a failed
 * call made nothing, and what a call made is known at its return.
 */
static inline bool capture_api_has_return(unsigned int api)
{
	enum capture_kind k = capture_api_kind(api);

	return k == CAPTURE_BEGIN || k == CAPTURE_END || k == CAPTURE_GRAPH;
}

/*
 * The event calls (record, wait) matter only while a capture is open, and a
 * program may make many: their probes go in with the captures' launch
 * probes, not for the whole session (probe_want.events).
 */
#define CAP_EVENT_N (CAP_FIRST_MODE - CAP_FIRST_RECORD)

static inline bool capture_api_is_event(unsigned int api)
{
	enum capture_kind k = capture_api_kind(api);

	return k == CAPTURE_RECORD || k == CAPTURE_WAIT;
}

#endif /* CORE_PROBES_CAPTURE_API_H */
