/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * `cuprobe compare`'s model: what a run saw (each step's time and mode, each
 * window's counts and trace), the figures computed from it once the run has
 * ended (compare__analyse), and the three writers: the text summary, the
 * JSON file and the HTML page. It holds no engine state: the front-end
 * (user/cmd/compare.c) feeds it from the session's hooks.
 */
#ifndef COMPARE_COMPARE_MODEL_H
#define COMPARE_COMPARE_MODEL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include "compare/compare_stats.h"
#include "core/session/session_types.h"
#include "report/model.h"
#include "util/vec.h"

struct compare_config {
	enum window_mode modes[MODE__COUNT];	/* as given, each once */
	size_t nmodes;
	uint32_t rounds, steps_per_mode, skip_first;
	uint64_t slice_ns;	/* no step probe: slices this long stand in for steps */
	const char *step;	/* the step probe as given; NULL with slices */
	char **cmd;		/* the command, or NULL */
	const pid_t *pids;	/* or the processes */
	size_t npids;
	const char *out;	/* the output folder */
};

/* A step that ended: mode is the window's, or -1 for the steps between windows. */
struct compare_step {
	int64_t pid;
	uint64_t step;
	uint64_t start_mono, dur_ns;
	int mode;
	uint32_t window;
	bool partial;
};

/* A window (one process's cycle) that ended. */
struct compare_window {
	uint32_t k;
	enum window_mode mode;
	int64_t pid;
	uint64_t launches, drops, hits;
	int64_t first_step, last_step;
	bool partial, agent;	/* agent: the process has the cuprobe agent loaded */
	int err;
	char *path;		/* its trace, NULL when none */
};

struct compare_pid_windows {
	int64_t pid;
	size_t n;
};

struct compare_api {
	char name[64];
	uint64_t calls;
	bool has_latency;
	struct dist latency_ns;
};

struct compare_kernel {
	char *name;
	uint64_t launches[MODE__COUNT];	/* from each probe mode's traces */
	uint64_t gpu_count, gpu_ns;	/* from the cupti windows */
};

/* Figures per mode; every has_* says whether the figure beside it was measured. */
struct compare_result {
	bool selected;
	uint32_t windows_planned, windows_run, windows_partial;
	uint64_t steps;			/* complete measured steps */
	bool has_steps;
	struct dist step_ns;
	bool has_vs_off;
	struct median_cmp vs_off;	/* step time against off's */
	uint64_t launches, drops, hits;	/* in all its windows */
	uint64_t window_steps, step_launches, step_hits;	/* in its complete windows */
	bool has_launches;		/* a probe mode with windows */
	double launches_per_step, hits_per_step;
	bool has_probe_cost;
	double probe_ns_per_hit, probe_cost_per_step_ns;
	bool has_cupti_overhead;
	double cupti_overhead_per_step_ns;
	uint64_t gpu_records;
	bool has_gpu;			/* cupti: some GPU record came */
	int explained;			/* 1 yes, 0 no, -1 cannot tell */
	double predicted_ns;		/* probe cost + CUPTI overhead per step */
	struct vec apis;		/* struct compare_api */
};

struct compare {
	struct compare_config cfg;
	enum window_mode order[MODE__COUNT * 1000];
	size_t norder;
	struct vec steps;	/* struct compare_step */
	struct vec windows;	/* struct compare_window */
	struct vec notes;	/* char *: what could not be measured, and why */
	struct vec pid_windows;	/* struct compare_pid_windows: windows ended per process */
	struct compare_result res[MODE__COUNT];
	struct vec kernels;	/* struct compare_kernel, by GPU time then launches */
	uint64_t t0;		/* the first step's start */
	bool ended_early;	/* the targets ended before every window ran */
};

#define COMPARE_MAX_ROUNDS 1000

void compare__init(struct compare *c, const struct compare_config *cfg);
void compare__free(struct compare *c);
/* A step ended (any phase). 0 or -ENOMEM. */
int compare__step(struct compare *c, pid_t pid, const struct cycle_step_info *si);
/* A window ended; path is copied. 0 or -ENOMEM. */
int compare__window(struct compare *c, pid_t pid, const struct cycle_info *ci, bool agent);
/* Something that could not be measured, said in the text, the JSON and the page. */
void compare__note(struct compare *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The windows of mode m so far (one process's), for the folder of the next. */
uint32_t compare__mode_index(const struct compare *c, uint32_t k);
/* Every target has had all its windows. */
bool compare__complete(const struct compare *c);
/* Reads the traces and computes every figure. 0 or -errno. */
int compare__analyse(struct compare *c);

void compare__write_text(const struct compare *c, FILE *f);
int compare__write_json(const struct compare *c, FILE *f);
int compare__write_html(const struct compare *c, FILE *f);

#endif /* COMPARE_COMPARE_MODEL_H */
