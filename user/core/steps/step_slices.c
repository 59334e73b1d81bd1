// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "core/steps/step_slices.h"

void step_slices__start(struct step_slices *sl, uint64_t ns, uint64_t now)
{
	sl->ns = ns;
	sl->next = now + ns;
}

bool step_slices__due(const struct step_slices *sl, uint64_t now)
{
	return sl->ns && now >= sl->next;
}

uint64_t step_slices__end(struct step_slices *sl, const struct schedule *sched, uint64_t now,
			  uint32_t *phase)
{
	sl->slice++;
	*phase = schedule_action(sched, sl->slice - sl->base);
	sl->next += sl->ns;
	if (sl->next < now)
		sl->next = now + sl->ns; /* cuprobe was late: slices restart from now */
	return sl->slice;
}

uint64_t step_slices__rebase(struct step_slices *sl)
{
	sl->base = sl->slice + 1;
	return sl->base;
}
