/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* BPF and CUPTI time is CLOCK_MONOTONIC; traces speak Unix time. */
#ifndef UTIL_CLOCK_H
#define UTIL_CLOCK_H

#include <stdint.h>

uint64_t clock_mono_ns(void);
uint64_t clock_real_ns(void);
/*
 * Unix ns minus monotonic ns, from the tightest of several bracketed reads
 * (mono, real, mono): the real read lies within the narrowest bracket.
 */
int64_t clock_mono_to_real_offset(void);

#endif /* UTIL_CLOCK_H */
