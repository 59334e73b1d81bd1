/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What became of one rank's window in a job capture: its result, why, and
 * the steps and launches its trace holds. The daemon answers each rank of
 * POST /capture?job= with it (daemon/jobs.c); cuprobe capture --job reads
 * those answers and writes each rank's again in run_<k>.capture.json
 * (cmd/fleet.c). The keys are named here once, for the writer and the reader.
 */
#ifndef TRACE_CAPTURE_RESULT_H
#define TRACE_CAPTURE_RESULT_H

#include <stdint.h>
#include "util/json_writer.h"

#define CAPTURE_RESULT_KEY_RESULT "result"
#define CAPTURE_RESULT_KEY_WHY "why"
#define CAPTURE_RESULT_KEY_FIRST_STEP "first_step"
#define CAPTURE_RESULT_KEY_LAST_STEP "last_step"
#define CAPTURE_RESULT_KEY_LAUNCHES "launches"

struct capture_result {
	const char *result;	/* ok, partial, cut, error, missed, busy, exited, timeout, ... */
	const char *why;	/* "" for ok */
	int64_t first_step, last_step;	/* -1: no trace */
	uint64_t launches;
};

/* r's members, into the object being written at w. Pure; the writer's thread. */
void capture_result__write(struct json_writer *w, const struct capture_result *r);

#endif /* TRACE_CAPTURE_RESULT_H */
