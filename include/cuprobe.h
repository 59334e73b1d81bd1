/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The ABI headers of every BPF program, while their users move to the one each needs. */
#ifndef CUPROBE_H
#define CUPROBE_H

#include "records.h"
#include "schedule.h"
#include "proc_state.h"
#include "launch.h"
#include "step.h"
#include "proc.h"
#include "hold.h"
#include "stack.h"

#endif /* CUPROBE_H */
