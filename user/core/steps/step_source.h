/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Where steps come from: one concept, a kind per row. A function symbol
 * (anywhere, or in one object), a USDT probe and PyTorch's record_function
 * ranges are probes the prober finds and attaches; time slices
 * (step_slices.h) are steps the session ends itself where no probe is asked
 * for. Callers ask a step's row what it needs rather than switch on its kind.
 */
#ifndef CORE_STEPS_STEP_SOURCE_H
#define CORE_STEPS_STEP_SOURCE_H

#include <stdbool.h>
#include "core/steps/step_find.h"
#include "core/steps/step_spec.h"
#include "core/steps/step_tell.h"

struct step_source {
	/* Its sites in the ELF file at path: 1 when found, 0 when not, or -errno (step_find.c). */
	int (*find)(const struct step_spec *s, const char *path, struct step_sites *out);
	/*
	 * Its names are USDT notes (provider:name), listed by readelf -n; else
	 * function symbols, whose probe goes on the entry (placement.h), listed by nm.
	 */
	bool notes;
	/*
	 * Its sites wait for a walk of the object's .symtab, too long for a
	 * process's hold: the prober walks it after (probeset__step_walk).
	 */
	bool walked;
	/* When missing, the names close to it are said; else it says what it lacks itself. */
	bool suggests;
	/* Any object may hold it: the command's executable, then each library it loads. */
	bool anywhere;
	/* Says that it is missing in p: when, and close (names close to it, or ""). */
	void (*missing)(const struct step_spec *s, const struct step_proc *p, const char *close,
			enum step_missing when);
};

/* s's row: how it is found, attached and explained. */
const struct step_source *step_source(const struct step_spec *s);

#endif /* CORE_STEPS_STEP_SOURCE_H */
