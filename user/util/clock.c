// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <time.h>
#include "util/clock.h"

static uint64_t read_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

uint64_t clock_mono_ns(void)
{
	return read_ns(CLOCK_MONOTONIC);
}

uint64_t clock_real_ns(void)
{
	return read_ns(CLOCK_REALTIME);
}

int64_t clock_mono_to_real_offset(void)
{
	uint64_t best_gap = UINT64_MAX;
	int64_t best = 0;

	for (int i = 0; i < 16; i++) {
		uint64_t a = clock_mono_ns(), r = clock_real_ns(), b = clock_mono_ns();

		if (b - a < best_gap) {
			best_gap = b - a;
			best = (int64_t)(r - (a + (b - a) / 2));
		}
	}
	return best;
}
