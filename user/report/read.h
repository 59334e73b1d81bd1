/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Reading trace files into a report: read.c turns events into the model's
 * rows, read a line at a time (stream.c, for cuprobe's own layout) or a
 * value at a time (scan.c, any layout); join.c keeps what joining GPU work to its launches needs until
 * the end of each file, and graphs.c the graph replays, which the cuprobe
 * object after the events expands.
 */
#ifndef REPORT_READ_H
#define REPORT_READ_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "report/model.h"
#include "util/vec.h"

/* What reading one file keeps until its last event. */
struct file_scan {
	const char *path;
	double first_us, last_us; /* the span of its timed events */
	bool any_time;
	struct vec launches; /* launches with a correlation id (join.c) */
	struct vec gpu;	     /* GPU work, joined once every launch is read (join.c) */
	struct count_table replays; /* graph replays by content id (graphs.c) */
};

void file_scan__init(struct file_scan *fs, const char *path);
void file_scan__free(struct file_scan *fs);
/* A timed event from start_us to end_us. */
void file_scan__extend(struct file_scan *fs, double start_us, double end_us);
/* A launch with a correlation id, kept until the end of the file. 0 or -ENOMEM. */
int file_scan__keep_launch(struct file_scan *fs, int64_t correlation, double ts_us, int64_t pid,
			   bool has_step, int64_t step);
/* GPU work with a correlation id: sample is its index in the report's gpu_samples. */
int file_scan__keep_gpu(struct file_scan *fs, size_t sample, int64_t correlation, double ts_us,
			int64_t device);
/* Joins the file's GPU work to its launches: delays, and step intervals for busy time. */
int file_scan__join(struct report *r, struct file_scan *fs);
/* A graph replay of content (0: unknown), kept until the end of the file. 0 or -ENOMEM. */
int file_scan__keep_replay(struct file_scan *fs, int64_t content);
/*
 * The file's replays, by what its cuprobe object (meta) lists of their
 * contents: their kernels into the Kernels table, the graph counts (graphs.c).
 * 0 or -ENOMEM.
 */
int graphs__expand(struct report *r, const json_t *meta, struct file_scan *fs);

/* Counts one event of a trace into r (read.c). 0 or -ENOMEM. */
int read__event(struct report *r, const json_t *ev, struct file_scan *fs);
/* What needs every event read: the GPU joins, then the top-level keys (read.c). */
int read__file_end(struct report *r, const json_t *root, struct file_scan *fs);

/*
 * Reads a trace in cuprobe's layout (trace/format.h) a line at a time (stream.c).
 * 0 when read; -ENOMEM; any other error when the file is not in that layout
 * or not valid: the caller then reads it whole, which says what is wrong.
 */
int stream__read(struct report *r, FILE *f, const char *path);
/* Files read a line at a time since the program started; the unit tests check it. */
extern unsigned long report_streamed_files;

/*
 * Reads a trace in any layout a value at a time (scan.c): what reading it
 * whole with jansson gives, in memory that follows the report's tables and
 * the largest event, not the file. r holds this file alone. 0; -ENOMEM; any
 * other error once reported (not JSON, with its line, column and byte; not a
 * trace; not readable).
 */
int scan__read(struct report *r, FILE *f, const char *path);
/* Files read by scan__read since the program started; the unit tests check it. */
extern unsigned long report_scanned_files;

/*
 * Adds the trace at path to r, once however often it is named; errors are
 * reported. 0, -ENOMEM, or another error when the file cannot be read.
 */
int report__read_file(struct report *r, const char *path);

#endif /* REPORT_READ_H */
