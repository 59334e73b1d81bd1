// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The library-map hold: a probe on the dynamic linker's _dl_debug_state, which
 * runs after each dlopen/dlclose has mapped its objects and before their
 * constructors. It stops the process (hold.bpf.h) so that the loader can
 * probe the new libraries before their first launch.
 *
 * The linker also calls it before it maps or unmaps anything (r_debug's
 * r_state RT_ADD, RT_DELETE), and once more when it is done (RT_CONSISTENT):
 * only then is there something new to probe, so only then is the process
 * held. The cookie is _r_debug's address less the hook's (the loader reads
 * both from the linker's symbols); 0 when unknown, and then every call holds.
 */
#include "maps.bpf.h"
#include <bpf/bpf_tracing.h>
#include "hold.bpf.h"

/* struct r_debug (link.h): int r_version, r_map, r_brk, then enum r_state. */
#define R_STATE_OFF 24
#define RT_CONSISTENT 0

SEC("uprobe")
int libmap(struct pt_regs *ctx)
{
	__s64 delta = (__s64)bpf_get_attach_cookie(ctx);
	int state = RT_CONSISTENT;

	/* The uprobe's ip is the hook's address; what cannot be read holds, as before. */
	if (delta && !bpf_probe_read_user(&state, sizeof(state),
					  (void *)(PT_REGS_IP(ctx) + delta + R_STATE_OFF)) &&
	    state != RT_CONSISTENT)
		return 0;
	hold_and_tell(bpf_get_current_pid_tgid() >> 32, REC_LIBMAP);
	return 0;
}
