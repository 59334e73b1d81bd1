/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * `cuprobe compare` options: record's shared tables (record_opts.h), the
 * same options meaning the same, and the rotation's own. Main thread only.
 */
#ifndef CMD_COMPARE_OPTS_H
#define CMD_COMPARE_OPTS_H

#include <stdint.h>
#include <stdio.h>
#include "cmd/record_opts.h"
#include "core/session/session_types.h"

struct compare_opts {
	struct record_opts r;	/* -o, -p, --step, --duration, ... as record has them */
	enum window_mode modes[MODE__COUNT];	/* --modes, in the order given */
	size_t nmodes;
	uint32_t steps_per_mode;	/* --steps-per-mode, default 5 */
	uint32_t rounds;		/* --rounds, default 2 */
	uint32_t skip_first;		/* --skip-first: steps before the first window */
	uint64_t slice_ns;		/* --slice MS without --step, default 100 ms */
	bool has_slice;
};

/* Parses argv (argv[0] is "compare"). 0, 1 after --help, or -EINVAL (printed). */
int compare_opts__parse(struct compare_opts *o, int argc, char **argv);
void compare_usage(FILE *f);
void compare_opts__free(struct compare_opts *o);

#endif /* CMD_COMPARE_OPTS_H */
