/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A step found in an object: its sites in the ELF file's symbols or USDT
 * notes, and the names close to it when it is not there.
 */
#ifndef CORE_STEPS_STEP_FIND_H
#define CORE_STEPS_STEP_FIND_H

#include <stddef.h>
#include <stdint.h>
#include "core/steps/step_spec.h"

#define STEP_MAX_SITES 16

/* Where to attach in one object: offsets, and USDT semaphores' offsets (0: none). */
struct step_sites {
	uint64_t offsets[STEP_MAX_SITES];
	uint64_t ref_ctr[STEP_MAX_SITES];
	size_t n;
};

/*
 * Finds the step probe in the ELF at path. Returns 1 when found, 0 when not, or -errno.
 * A torch step has two sites: the entry and the exit (step_torch_pick), both found or none.
 */
int step_spec__find(const struct step_spec *s, const char *path, struct step_sites *out);
/* Each kind's finding (step_source.h): the same contract, out zeroed by the caller. */
int step_find_function(const struct step_spec *s, const char *path, struct step_sites *out);
int step_find_usdt(const struct step_spec *s, const char *path, struct step_sites *out);
int step_find_torch(const struct step_spec *s, const char *path, struct step_sites *out);
/* The few names closest to the wanted one, gathered over the objects searched. */
#define STEP_SUGGEST_MAX 3
struct step_suggest {
	char want[256];
	char best[STEP_SUGGEST_MAX][128];
	unsigned int dist[STEP_SUGGEST_MAX];	/* UINT_MAX: an empty slot */
};

void step_spec__suggest_init(const struct step_spec *s, struct step_suggest *sg);
/*
 * Adds the names in the ELF at path (function symbols, or USDT probes) that
 * are close to the wanted one: a typo of it, or holding it or held by it.
 */
void step_spec__suggest(const struct step_spec *s, const char *path, struct step_suggest *sg);
/* Keeps name if it is close and closer than one kept; each name once. */
void step_spec__consider(struct step_suggest *sg, const char *name);
/* "a, b, c", closest first, each name once and whole; "" when none is close. */
void step_spec__suggest_str(const struct step_suggest *sg, char *buf, size_t len);

/*
 * --step in a named file (a path), checked before the session starts; a step
 * elsewhere may come with a library. 0, or -errno said (what is close, and
 * what lists the names searched).
 */
int step_spec__check_file(const struct step_spec *st);

#endif /* CORE_STEPS_STEP_FIND_H */
