// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The library-map hold: a probe on the dynamic linker's _dl_debug_state, which
 * runs after each dlopen/dlclose has mapped its objects and before their
 * constructors. It stops the process (hold.bpf.h) so that the loader can
 * probe the new libraries before their first launch.
 */
#include "maps.bpf.h"
#include <bpf/bpf_tracing.h>
#include "hold.bpf.h"

SEC("uprobe")
int libmap(struct pt_regs *ctx)
{
	(void)ctx;
	hold_and_tell(bpf_get_current_pid_tgid() >> 32, REC_LIBMAP);
	return 0;
}
