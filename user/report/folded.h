/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Launch stacks (record --stack) as flame-graph input: one line per unique
 * stack, root first, frames joined by ';', the kernel's name as the leaf,
 * then a space and the weight (launches, or GPU ns with --weight gpu), as
 * flamegraph.pl and speedscope read it; and a flame graph SVG drawn from
 * the same stacks.
 */
#ifndef REPORT_FOLDED_H
#define REPORT_FOLDED_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "util/vec.h"

struct folded;

/* A unique stack and its weight; stack is "root;...;leaf". */
struct folded_line {
	char *stack;
	uint64_t weight;
};

struct folded_stats {
	uint64_t launches;	/* launches read */
	uint64_t without_stack;	/* of them, with no stack in the trace */
	uint64_t without_gpu;	/* --weight gpu: launches with no GPU work */
	uint64_t stack_traces;	/* traces recorded with --stack */
	uint64_t gpu_records;	/* GPU kernel, memcpy and memset events */
	uint64_t graph_unknown;	/* graph replays of unknown content: one launch each */
	/* The traces' own counts (cuprobe.stacks), summed. */
	uint64_t lost, truncated, unsymbolized, python_lost;
};

struct folded *folded__new(bool gpu_weight);
void folded__free(struct folded *f);
/* Adds the launches of one trace file. 0, -ENOMEM, or -EINVAL (not a trace: said). */
int folded__read(struct folded *f, const char *path);
/* The lines, sorted by stack; valid until folded__free. */
const struct folded_line *folded__lines(struct folded *f, size_t *n);
void folded__stats(const struct folded *f, struct folded_stats *st);

/* The lines as text. 0 or -errno. */
int folded__write(FILE *out, const struct folded_line *lines, size_t n);
/* A flame graph of the lines, as SVG; unit names the weight ("launches", "ns"). */
int flamegraph__write(FILE *out, const struct folded_line *lines, size_t n, const char *title,
		      const char *unit);

#endif /* REPORT_FOLDED_H */
