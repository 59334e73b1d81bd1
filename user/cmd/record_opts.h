/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * `cuprobe record` options, written once in tables (util/opt.h), and checked
 * in one place. compare takes record's shared tables (the targets, the step
 * probe, the ring, the output) with its own, so that an option shared by both
 * means one thing, parses one way and is checked by one validate function
 * (perf's record_options and target__validate). Main thread only.
 */
#ifndef CMD_RECORD_OPTS_H
#define CMD_RECORD_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "core/steps/step_spec.h"
#include "schedule.h"
#include "util/opt.h"

#define MAX_PIDS 64

struct record_opts {
	const char *output;	/* -o, default ./cuprobe-runs */
	bool has_output;
	pid_t pids[MAX_PIDS];	/* -p */
	size_t npids;
	char **cmd;		/* after --, NULL-terminated */
	double duration;	/* --duration seconds, 0 = until the end */
	bool has_step;		/* --step SPEC */
	struct step_spec step;
	unsigned int step_every;	/* --step-every N: one step per N hits */
	bool has_step_every;
	bool has_schedule;	/* --schedule SPEC */
	struct schedule sched;
	uint64_t ringbuf_bytes;	/* --ringbuf-size */
	bool cupti;
	double cupti_wait;	/* --cupti-wait: seconds a cycle waits for its GPU records */
	bool has_cupti_wait;
	bool latency;
	bool stack;		/* --stack: each launch's CPU stack, native and Python */
	bool children;		/* --children: -p's descendants too (a command's always) */
	bool quiet;
	int verbose;
};

/* The options record and compare share; their setters set a struct record_opts. */
extern const struct opt_table record_target_opts;	/* -o, -p, --children, --step, --step-every */
extern const struct opt_table record_common_opts;	/* --duration, --cupti-wait, --stack, ... */

/*
 * Parses argv (argv[0] is "record"). Returns 0, 1 after --help, or -EINVAL
 * after printing what is wrong and what to do.
 */
int record_opts__parse(struct record_opts *o, int argc, char **argv);
void record_usage(FILE *f);
void record_opts__free(struct record_opts *o);
/* The defaults of every shared option, before a parse. */
void record_opts__defaults(struct record_opts *o);
/*
 * What holds across the shared options: a command or -p, not both;
 * --children with -p; --step-every with --step; the ring's size. verb names
 * the command's work ("nothing to record"). 0, or -EINVAL with err saying
 * what is wrong and the fix.
 */
int record_opts__validate(const struct record_opts *o, const char *verb, char *err, size_t len);

#endif /* CMD_RECORD_OPTS_H */
