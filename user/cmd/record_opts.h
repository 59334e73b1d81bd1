/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* `cuprobe record` options: parsed and checked in one place. */
#ifndef OPTS_H
#define OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "schedule.h"
#include "step.h"

#define MAX_PIDS 64

struct record_opts {
	const char *output;	/* -o, default ./cuprobe-runs */
	pid_t pids[MAX_PIDS];	/* -p */
	size_t npids;
	char **cmd;		/* after --, NULL-terminated */
	double duration;	/* --duration seconds, 0 = until the end */
	bool has_step;		/* --step SPEC */
	struct step_spec step;
	unsigned int step_every;	/* --step-every N: one step per N hits */
	bool has_schedule;	/* --schedule SPEC */
	struct schedule sched;
	uint64_t ringbuf_bytes;	/* --ringbuf-size */
	bool cupti;
	double cupti_wait;	/* --cupti-wait: seconds a cycle waits for its GPU records */
	bool latency;
	bool stack;		/* --stack: each launch's CPU stack, native and Python */
	bool children;		/* --children: -p's descendants too (a command's always) */
	bool quiet;
	int verbose;
};

/*
 * Parses argv (argv[0] is "record"). Returns 0, 1 after --help, or -EINVAL
 * after printing what is wrong and what to do.
 */
int record_opts__parse(struct record_opts *o, int argc, char **argv);
void record_usage(FILE *f);
void record_opts__free(struct record_opts *o);
/*
 * One of record's options for another subcommand (compare), by the short
 * code record_opts__parse gives it ('o', 'p', 's', ...); messages name cmd.
 * 0 or -EINVAL (printed).
 */
int record_opts__parse_shared(struct record_opts *o, int c, const char *arg, const char *cmd);

/* "64M", "1G", "4096": bytes, or -EINVAL. */
int parse_size(const char *s, uint64_t *out);

#endif /* OPTS_H */
