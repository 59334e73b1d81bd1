/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The process probes (bpf/proc.bpf.c) and the loader: a followed process
 * forked, or (with watch_exec) some process ran a new program. Its exec of a
 * new program is a hold (hold.h).
 */
#ifndef CUPROBE_PROC_H
#define CUPROBE_PROC_H

#include "records.h"

/* The child shares its parent's memory until it runs a program (vfork, posix_spawn). */
#define FORK_F_SHARED_MM 1

struct fork_event {
	__u32 type;	 /* REC_FORK */
	__u32 tgid;	 /* the new process */
	__u32 parent;	 /* the process that forked it */
	__u32 flags;	 /* FORK_F_*; 0 for REC_EXEC_SEEN */
	__u64 ts_ns;
};

_Static_assert(sizeof(struct fork_event) == 24, "fork_event layout");

#endif /* CUPROBE_PROC_H */
