/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The hold (bpf/hold.bpf.h) and the loader: the record of a process stopped
 * until the loader has probed what it mapped, sent by the library-map probe
 * (bpf/libmap.bpf.c, REC_LIBMAP), at the exec of a followed process
 * (bpf/proc.bpf.c, REC_EXEC) and at a capture that begins where no launch
 * probe is in (bpf/capture.bpf.c, REC_CAPTURE); and how long a hold may go
 * unanswered (the guardian, user/core/probes/guard.c).
 */
#ifndef CUPROBE_HOLD_H
#define CUPROBE_HOLD_H

#include "records.h"

/*
 * The dynamic linker changed the map of tgid. With held set, the process was
 * stopped (SIGSTOP) before this event went out, and the loader must continue
 * it; either way it answers seq in proc_conf.holds_answered.
 */
struct libmap_event {
	__u32 type;	 /* REC_LIBMAP */
	__u32 tgid;
	__u64 ts_ns;
	__u64 seq;	 /* proc_state.stops after this event */
	__u32 held;	 /* the process was stopped */
	__u32 pad;
};

/*
 * A hold still unanswered after this long means the loader is not running:
 * BPF holds the process no more until the loader catches up, and the
 * guardian continues it (GUARD_STALE_NS).
 */
#define HOLD_STALE_NS (4000 * 1000000ull)

_Static_assert(sizeof(struct libmap_event) == 32, "libmap_event layout");

#endif /* CUPROBE_HOLD_H */
