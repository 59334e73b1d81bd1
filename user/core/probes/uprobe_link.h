/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Uprobes on many functions of one object in one process. Where the kernel
 * has uprobe_multi links (Linux 6.6, "bpf: Add multi uprobe link"), all of
 * them are one link: one close() detaches them in tens of ms, where a
 * perf-event uprobe costs ~100 ms each to detach. Elsewhere, one perf-event
 * link per function.
 */
#ifndef CORE_PROBES_UPROBE_LINK_H
#define CORE_PROBES_UPROBE_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct bpf_program;
struct uprobe_link;

/* BPF_TRACE_UPROBE_MULTI in 6.6+ UAPI; Debian's 6.1 headers lack the name. */
#define CUPROBE_TRACE_UPROBE_MULTI 48
#define CUPROBE_F_UPROBE_MULTI_RETURN 1u

struct uprobe_spec {
	const char *path;	   /* the ELF file, as this process can open it */
	pid_t pid;		   /* only this process (never 0 here) */
	const uint64_t *offsets;   /* file offsets of the functions */
	const uint64_t *cookies;   /* bpf_get_attach_cookie() per function */
	const uint64_t *ref_ctr_offsets; /* USDT semaphores (file offsets, 0: none) */
	size_t n;
	bool retprobe;
};

/* Whether this kernel takes uprobe_multi links; decided once, before programs load. */
bool attach_has_uprobe_multi(void);

/* Attaches prog (loaded for uprobe_multi iff multi) per spec. 0 or -errno. */
int attach_uprobes(struct bpf_program *prog, bool multi, const struct uprobe_spec *s,
		   struct uprobe_link **out);
void uprobe_link__destroy(struct uprobe_link *l);

#endif /* CORE_PROBES_UPROBE_LINK_H */
