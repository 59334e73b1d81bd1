/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A Kineto-format trace file, written as events arrive (nothing is held in
 * memory), unnamed until whole and synced, then given its name, which must
 * be new (util/safe_file.h). Its keys and layout are in trace/format.h.
 */
#ifndef TRACE_WRITER_H
#define TRACE_WRITER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct trace;

struct trace_meta {
	pid_t pid;
	const char *host;
	const char *command;	/* process name */
	int rank;		/* -1 when unknown */
	int world_size;		/* -1 when unknown */
	unsigned int cycle;
	int64_t mono_to_real;	/* Unix ns - CLOCK_MONOTONIC ns */
	uint64_t start_mono;	/* start of the cycle: baseTimeNanoseconds */
	mode_t file_mode;	/* the file's mode (less the umask); 0: 0600, private */
	gid_t gid;		/* the file's group when share_group; else the creator's */
	bool share_group;
};

/* The holds (library maps, exec) that stopped the process since its previous trace. */
struct trace_holds {
	uint64_t count, total_ns, max_ns;
};

struct trace_summary {
	uint64_t end_mono;
	uint64_t launches;
	uint64_t captured;	/* launch records made into a captured stream: not launches */
	uint64_t probe_hits;	/* launch probe hits of this process in the cycle */
	double probe_ns;	/* measured cost of one hit, < 0 when unknown */
	uint64_t drops;		/* launches of this process lost in this cycle (ring full) */
	uint64_t nested;	/* probe hits skipped as nested calls, not launches */
	uint64_t stale;		/* hits of an earlier window's links, still closing: not launches */
	uint64_t lost_steps;	/* step boundaries whose event was lost (seen as a gap) */
	uint64_t unprobed_ns;	/* recorded before the launch probes were in: launches missed */
	bool no_driver;		/* the process had no CUDA driver loaded: its CUDA calls failed */
	uint64_t unnamed;	/* kernels named only by object+offset */
	uint64_t late;		/* launches that arrived after their cycle was written */
	struct trace_holds holds;
	int64_t first_step;	/* -1 without --step */
	int64_t last_step;
	bool partial;		/* stopped during an active step */
	/* Cut: the cycle reached a size bound; launches after the cut were counted, not written. */
	const char *cut_reason;	/* NULL when not cut: "launches" or "bytes" */
	int64_t cut_step;	/* the step it was cut in, -1 without steps */
	uint64_t cut_mono;	/* when */
	uint64_t cut_launches;	/* launches not written */
};

/* Starts DIR/<host>_<pid>.<epoch_ns>.pt.trace.json. NULL and errno on failure. */
struct trace *trace__open(const char *dir, const struct trace_meta *m);
/* The same in the folder open as dirfd, which stays the caller's. */
struct trace *trace__openat(int dirfd, const struct trace_meta *m);
/* Bytes of the trace written so far (its final size, less the trailer). */
uint64_t trace__bytes(const struct trace *t);
/* A launch; a graph launch's content is graph (NULL: unknown; graph_store.h). */
struct graph_content;
struct launch_event;
void trace__launch(struct trace *t, const struct launch_event *e, const char *kernel,
		   uint64_t correlation, const struct graph_content *graph);
void trace__thread(struct trace *t, pid_t tid, const char *name);
/* A step of the cycle: its bounds, and what the probes cost in it. */
struct trace_step {
	pid_t tid;		/* the thread whose hit began it */
	uint64_t step;
	uint64_t start_mono, end_mono;
	int64_t probe_hits;	/* -1 when not known */
	double probe_ns;	/* cost of one hit, < 0 when unknown */
	bool partial;		/* cut short by the end of the recording */
};

/* A ProfilerStep#<step> span, as torch.profiler writes one per step. */
void trace__step(struct trace *t, const struct trace_step *st);
/* A record_function range of the thread tid (--step torch), as torch.profiler writes one. */
void trace__annotation(struct trace *t, pid_t tid, const char *name, uint64_t start_mono,
		       uint64_t end_mono);
/* GPU work from CUPTI (--cupti), on pid = device, tid = stream, as Kineto writes it. */
struct agent_kernel;
struct agent_memcpy;
struct agent_memset;
void trace__kernel(struct trace *t, const struct agent_kernel *k, const char *name);
void trace__memcpy(struct trace *t, const struct agent_memcpy *m);
void trace__memset(struct trace *t, const struct agent_memset *m);
/* An ac2g flow from a launch (pid, tid) to its GPU work (device, stream), by correlation. */
void trace__flow(struct trace *t, bool start, int pid, int tid, uint64_t mono, uint64_t id);
/* GPU facts of the cycle for the cuprobe object (--cupti); NULL members are left out. */
struct trace_gpu_summary {
	uint64_t matched, without_gpu, unmatched_launches, gpu_without_launch;
	uint64_t clock_faults, dropped, bad_chunks, missing, overhead_ns, gpu_records;
	/* Graph replays: CUPTI's kernels of them, and replays whose count differs from cuprobe's. */
	uint64_t graph_gpu_kernels, graph_mismatches;
};
void trace__set_gpu(struct trace *t, const struct trace_gpu_summary *g);

/*
 * Writes the trailer, syncs and names the file; the final path stays
 * readable via trace__path. 0 or -errno; on failure nothing is left.
 */
int trace__close(struct trace *t, const struct trace_summary *s);
/* A launch's stack as the trace writes it: named frames, root first. */
struct trace_stack {
	uint32_t n;
	const char **frames;	/* equal names are one pointer within a stack */
	bool truncated;		/* deeper than was taken */
	uint32_t unsymbolized;	/* frames named only by an address */
};
/* Names launch e's stack into out: true, or false when it has none. */
typedef bool (*trace_stack_fn)(void *ctx, const struct launch_event *e, struct trace_stack *out);
/*
 * --stack: launches written after this carry their stacks, named by get
 * (core/proc/stacks.h's stacks__trace_stack), as python_function spans; the
 * spans still open are written by trace__close.
 */
void trace__set_stacks(struct trace *t, trace_stack_fn get, void *ctx);

/* Drops the file (nothing was recorded worth keeping): nothing is left. */
void trace__discard(struct trace *t);
const char *trace__path(const struct trace *t);
void trace__free(struct trace *t);

#endif /* TRACE_WRITER_H */
