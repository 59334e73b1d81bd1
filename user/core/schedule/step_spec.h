/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --step: where a step ends. A function symbol (anywhere, or in one object),
 * a USDT probe, or the end of a PyTorch record_function range whose name
 * begins with a prefix; its k-th counted hit in a process ends that
 * process's step k-1.
 */
#ifndef CORE_SCHEDULE_STEP_SPEC_H
#define CORE_SCHEDULE_STEP_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
 * record_function's entry in each torch build known (step_spec.c): the
 * mangled name of record_function_enter_new(std::string const&,
 * std::optional<std::string> const&), and the std::string it names.
 */
struct step_torch_form {
	const char *enter;
	unsigned int string_abi;	/* TORCH_STRING_* */
	const char *what;		/* for messages */
};

#define STEP_TORCH_FORMS 2
/* The releases the torch tier runs (tests/real/torch_versions.sh), for messages. */
#define STEP_TORCH_TESTED "2.4 to 2.15"
extern const struct step_torch_form step_torch_forms[STEP_TORCH_FORMS];
/* The names looked up in one walk of libtorch_cpu.so: the exit (local), then each form's entry. */
#define STEP_TORCH_SYMS (1 + STEP_TORCH_FORMS)
extern const char *const step_torch_syms[STEP_TORCH_SYMS];
/*
 * From offsets found for step_torch_syms: the entry's and the exit's (0 when
 * absent) in offs, their names in names. Returns the entry's form, or NULL.
 */
const struct step_torch_form *step_torch_pick(const uint64_t *found, uint64_t offs[2],
					      const char *names[2]);
/* torch's version, from version.py beside the library at lib; "unknown" when unread. */
void step_torch_version(const char *lib, char *buf, size_t len);

/*
 * SYMBOL | OBJECT:SYMBOL | usdt:OBJECT:PROVIDER:NAME | torch | torch:PREFIX.
 * 0, or -EINVAL with err set.
 */
int step_spec__parse(const char *spec, struct step_spec *s, char *err, size_t errlen);
void step_spec__free(struct step_spec *s);
/* Whether the object at path may hold the step probe. */
bool step_spec__wants_object(const struct step_spec *s, const char *path);
/* "cuprobe_step", "libtrain.so:step", "usdt:libtrain.so:train:step": for messages. */
const char *step_spec__str(const struct step_spec *s);

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

#endif /* CORE_SCHEDULE_STEP_SPEC_H */
