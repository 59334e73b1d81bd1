/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Time slices: where no step probe is asked for (compare --slice, the
 * daemon's processes that no step rule matches), steps of a fixed length
 * that the session ends itself, as a step probe would end a step. The
 * other step sources are probes (step_source.h).
 */
#ifndef CORE_STEPS_STEP_SLICES_H
#define CORE_STEPS_STEP_SLICES_H

#include <stdbool.h>
#include <stdint.h>
#include "schedule.h"

struct step_slices {
	uint64_t ns;	/* a slice's length; 0: no slices */
	uint64_t slice;	/* the running slice */
	uint64_t next;	/* when the next begins */
	uint64_t base;	/* the slice the schedule counts from */
};

/* Slice 0 begins at now. */
void step_slices__start(struct step_slices *sl, uint64_t ns, uint64_t now);
/* Whether the running slice has ended by now. */
bool step_slices__due(const struct step_slices *sl, uint64_t now);
/*
 * Ends the running slice at now: returns the slice that begins, its phase
 * under sched in phase. A late end restarts the slices from now.
 */
uint64_t step_slices__end(struct step_slices *sl, const struct schedule *sched, uint64_t now,
			  uint32_t *phase);
/* A new schedule counts from the next slice: returns it. */
uint64_t step_slices__rebase(struct step_slices *sl);

#endif /* CORE_STEPS_STEP_SLICES_H */
