/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * CUPTI activity records (CUDA 13.0 layouts: CUpti_ActivityAPI,
 * CUpti_ActivityKernel10, CUpti_ActivityMemcpy6, CUpti_ActivityMemset4,
 * CUpti_ActivityOverhead3) to the agent's fixed records of include/agent.h.
 */
#ifndef AGENT_CONVERT_H
#define AGENT_CONVERT_H

#include <cupti.h>

#include "agent.h"

/*
 * Fills out from rec and returns the agent record type, or 0 for a kind the
 * agent does not hand out. For a kernel, *name is CUPTI's name (may be NULL),
 * which the caller interns.
 */
__u32 convert__record(const CUpti_Activity *rec, union agent_any *out, const char **name);

#endif /* AGENT_CONVERT_H */
