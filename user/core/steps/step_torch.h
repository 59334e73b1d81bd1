/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --step torch: PyTorch's record_function entry and exit in libtorch_cpu.so,
 * by the builds known, and torch's version for messages.
 */
#ifndef CORE_STEPS_STEP_TORCH_H
#define CORE_STEPS_STEP_TORCH_H

#include <stddef.h>
#include <stdint.h>

/*
 * record_function's entry in each torch build known (step_torch.c): the
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

#endif /* CORE_STEPS_STEP_TORCH_H */
