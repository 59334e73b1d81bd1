/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The one rule for a count's noun in messages: "1 step", "3 steps". Pure. */
#ifndef UTIL_PLURAL_H
#define UTIL_PLURAL_H

#include <stdint.h>

/* one for a count of 1, many for any other (0 included, as English has it). */
static inline const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

#endif /* UTIL_PLURAL_H */
