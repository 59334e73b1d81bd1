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

/* Only the begins have a return probe: a failed begin captures nothing. */
static inline bool capture_api_has_return(unsigned int api)
{
	return capture_api_kind(api) == CAPTURE_BEGIN;
}

#endif /* CORE_PROBES_CAPTURE_API_H */
