// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "core/steps/step_source.h"

static const struct step_source sources[] = {
	[STEP_SYMBOL] = { .find = step_find_function, .suggests = true, .anywhere = true },
	[STEP_OBJECT_SYMBOL] = { .find = step_find_function, .suggests = true },
	[STEP_USDT] = { .find = step_find_usdt, .notes = true, .suggests = true },
	[STEP_TORCH] = { .find = step_find_torch, .walked = true },
};

const struct step_source *step_source(const struct step_spec *s)
{
	return &sources[s->kind];
}
