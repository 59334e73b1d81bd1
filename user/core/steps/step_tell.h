/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What is said when a process's step probe is missing, each kind its own way
 * (step_source.h's missing): the names searched and those close to it, or
 * what a torch step lacks.
 */
#ifndef CORE_STEPS_STEP_TELL_H
#define CORE_STEPS_STEP_TELL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct step_spec;

/* When a missing step probe is said: at attach, once it launches, at its end (an error). */
enum step_missing { STEP_NOT_YET, STEP_LIKELY, STEP_NEVER };

/* What the message says of the process (the session's facts of it). */
struct step_proc {
	pid_t pid;
	const char *comm;
	size_t nobjs;		/* the objects searched */
	bool torch_mapped;	/* it maps PyTorch's libtorch_cpu.so */
	const char *why;	/* why its step's object had no step probe (the prober's); "" */
	bool waiting;		/* its step's object waits for, or is in, a walk of its .symtab */
};

/* A probe looked for by name: how long it is missing, in how many objects, what is close. */
void step_tell_missing(const struct step_spec *s, const struct step_proc *p, const char *close,
		       enum step_missing when);
/* --step torch with no probes: no torch loaded (yet), or one without the range calls. */
void step_tell_torch_missing(const struct step_spec *s, const struct step_proc *p,
			     const char *close, enum step_missing when);

#endif /* CORE_STEPS_STEP_TELL_H */
