/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What one launch probe hit costs on this machine, measured at start: the
 * probe is attached to a function of cuprobe's own, and calls are timed
 * with and without it. Traces and reports turn hits into time with it.
 */
#ifndef CALIBRATE_H
#define CALIBRATE_H

#include <stdbool.h>

struct bpf_program;

/*
 * Per-hit cost in ns of entry (and ret, when not NULL: --latency), attached
 * as cuprobe attaches them. 0 or -errno; takes well under a second.
 */
int calibrate_probe(struct bpf_program *entry, struct bpf_program *ret, bool multi,
		    double *ns_per_hit);

#endif /* CALIBRATE_H */
