/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What one launch probe hit costs on this machine, measured at start: the
 * probe is attached to a function of cuprobe's own, and calls are timed
 * with and without it. Traces and reports turn hits into time with it.
 */
#ifndef CORE_PROBES_CALIBRATE_H
#define CORE_PROBES_CALIBRATE_H

#include <stdbool.h>
#include <stdint.h>

struct bpf_program;
struct ring_buffer;

struct calibrate_env {
	struct bpf_program *entry;
	struct bpf_program *ret;	/* with --latency: the return program too */
	bool multi;			/* uprobe_multi links */
	struct ring_buffer *drain;	/* emptied between batches, so no hit is a drop */
	uint64_t ring_bytes;		/* the events ring's size */
	uint64_t slot;			/* cookie bits of cuprobe's own launch slot; 0: none */
};

/*
 * Per-hit cost in ns of the entry program (and the return program), attached
 * as cuprobe attaches them. 0 or -errno; takes well under a second. With a
 * slot, cuprobe's own process has state in BPF for the calibration's time
 * only (bpfobj__calibrate), so the hits take a target's path; its launches
 * are read and left aside (no target has its pid). Without, its hits count
 * in the shared counters, never in a target's.
 */
int calibrate_probe(const struct calibrate_env *env, double *ns_per_hit);

#endif /* CORE_PROBES_CALIBRATE_H */
