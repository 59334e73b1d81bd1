/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* --schedule, parsed with torch.profiler.schedule's names and checks. */
#ifndef CORE_SCHEDULE_SCHEDULE_PARSE_H
#define CORE_SCHEDULE_SCHEDULE_PARSE_H

#include <stddef.h>
#include "schedule.h"

/*
 * "skip_first=N,skip_first_wait=0|1,wait=N,warmup=N,active=N,repeat=N" in any
 * order. wait, warmup and active are required, the others default to 0, as in
 * torch. Returns 0, or -EINVAL with the problem written to err.
 */
int schedule_parse(const char *spec, struct schedule *s, char *err, size_t errlen);
const char *schedule_phase_name(__u32 phase);

#endif /* CORE_SCHEDULE_SCHEDULE_PARSE_H */
