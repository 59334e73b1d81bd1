/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What every BPF program and the loader share on the rings: the record types.
 * Each record of the events and ctrl rings starts with a __u32 type from enum
 * cuprobe_rec; the record itself is in the header of the program that writes
 * it (launch.h, step.h, proc.h, hold.h, names.h, graph.h, agent.h).
 *
 * The ABI headers of include/ are contracts between the BPF programs, the
 * loader and the agent: fixed-width fields only, no kernel or libc headers
 * (vmlinux.h gives the BPF side its types, <linux/types.h> the user side's),
 * and sizes pinned with _Static_assert so that a change on one side cannot
 * silently disagree with the other.
 */
#ifndef CUPROBE_RECORDS_H
#define CUPROBE_RECORDS_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

enum cuprobe_rec {
	REC_LAUNCH = 1,	 /* an entry of a launch API (struct launch_event, launch.h) */
	REC_LIBMAP = 2,	 /* the dynamic linker changed the map (struct libmap_event, hold.h) */
	REC_STEP = 3,	 /* a hit of the step probe (struct step_event, step.h) */
	REC_THREAD = 4,	 /* first launch of a thread, with its name (struct thread_event, launch.h) */
	REC_AGENT = 5,	 /* a chunk of the agent's records (struct agent_chunk_event, agent.h) */
	REC_FORK = 6,	 /* a target or its descendant forked a process (struct fork_event, proc.h) */
	REC_EXEC = 7,	 /* a followed process ran a new program (struct libmap_event, held) */
	REC_NAME = 8,	 /* a call made a kernel handle or module (struct name_event, names.h) */
	REC_LAUNCH_BATCH = 9, /* launch_events staged on one CPU (struct launch_batch, launch.h) */
	REC_EXEC_SEEN = 10, /* with watch_exec: any other process ran a new program (struct
			    * fork_event, parent 0); not held */
	REC_GRAPH = 11,	 /* events ring: a graph call returned: made, changed or ended
			  * (struct graph_event, graph.h) */
	REC_CAPTURE = 12, /* a capture began where no launch probe is in (struct libmap_event,
			   * held) */
	REC_RANGE = 13,	 /* --step torch: a record_function range began or ended in a
			  * recorded step (struct range_event, step.h) */
};

/* The ctrl ring (steps, library maps, thread names, forks): a size both sides agree on. */
#define CUPROBE_CTRL_RING (256 * 1024)

#endif /* CUPROBE_RECORDS_H */
