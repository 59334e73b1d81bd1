/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --step: where a step ends. A function symbol (anywhere, or in one object),
 * a USDT probe, or the end of a PyTorch record_function range whose name
 * begins with a prefix; its k-th counted hit in a process ends that
 * process's step k-1.
 */
#ifndef CORE_STEPS_STEP_SPEC_H
#define CORE_STEPS_STEP_SPEC_H

#include <stdbool.h>
#include <stddef.h>

enum step_kind { STEP_SYMBOL, STEP_OBJECT_SYMBOL, STEP_USDT, STEP_TORCH };

struct step_spec {
	enum step_kind kind;
	char *object;	/* a path (has a '/') or a library name; NULL for STEP_SYMBOL */
	char *symbol;	/* function, USDT probe name, or torch's range name prefix */
	char *provider;	/* USDT */
};

/* --step torch: what plain torch counts, and the longest prefix (BPF compares it). */
#define STEP_TORCH_DEFAULT "Optimizer.step#"
#define STEP_TORCH_PREFIX_MAX 63
/* Where PyTorch's record_function ranges begin and end (REFERENCE.md section 8). */
#define STEP_TORCH_LIB "libtorch_cpu"

/*
 * SYMBOL | OBJECT:SYMBOL | usdt:OBJECT:PROVIDER:NAME | torch | torch:PREFIX.
 * 0, or -EINVAL with err set.
 */
int step_spec__parse(const char *spec, struct step_spec *s, char *err, size_t errlen);
void step_spec__free(struct step_spec *s);
/* Whether the object at path may hold the step probe. */
bool step_spec__wants_object(const struct step_spec *s, const char *path);
/*
 * Whether the object at path is object: the same file (object has a '/'),
 * or a library of that name ("libcudart" is libcudart.so.13).
 */
bool step_object_is(const char *object, const char *path);
/* "cuprobe_step", "libtrain.so:step", "usdt:libtrain.so:train:step": for messages. */
const char *step_spec__str(const struct step_spec *s);

#endif /* CORE_STEPS_STEP_SPEC_H */
