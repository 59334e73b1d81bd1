// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "core/steps/step_source.h"

static const struct step_source sources[] = {
	[STEP_SYMBOL] = { .find = step_find_function, .suggests = true, .anywhere = true,
			  .missing = step_tell_missing },
	[STEP_OBJECT_SYMBOL] = { .find = step_find_function, .suggests = true,
				 .missing = step_tell_missing },
	[STEP_USDT] = { .find = step_find_usdt, .notes = true, .suggests = true,
			.missing = step_tell_missing },
	[STEP_TORCH] = { .find = step_find_torch, .walked = true,
			 .missing = step_tell_torch_missing },
};

const struct step_source *step_source(const struct step_spec *s)
{
	return &sources[s->kind];
}
