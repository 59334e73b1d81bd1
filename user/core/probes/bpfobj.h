/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The loaded BPF object: the only module that touches the skeleton. It
 * loads the programs a session needs, keeps each process's entries in the
 * shared maps (configuration in, state out), attaches programs to uprobes
 * for the modules that decide where, and hands out the two rings.
 */
#ifndef CORE_PROBES_BPFOBJ_H
#define CORE_PROBES_BPFOBJ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "launch.h"
#include "proc_state.h"
#include "stack.h"

struct bpfobj;
struct uprobe_link;
struct uprobe_spec;
struct bpf_link;
struct ring_buffer;

struct bpfobj_opts {
	uint64_t ringbuf_bytes;	/* the events ring, a power of two */
	bool latency;		/* load the return program (some window measures latency) */
	bool steps;		/* load the step programs (a symbol's, and torch's range probes) */
	bool cupti;		/* load the agent's programs */
	bool stack;		/* --stack: launches take their stacks (stack.bpf.h) */
	bool watch_exec;	/* tell every exec on the host (REC_EXEC_SEEN) */
};

/* Which program a uprobe runs. */
enum bpfobj_prog {
	PROG_LAUNCH,		/* launch entries; the cookie names the API */
	PROG_LAUNCH_RETURN,	/* --latency returns */
	PROG_STEP,
	PROG_TORCH_ENTER,	/* --step torch: record_function_enter_new */
	PROG_TORCH_EXIT,	/* and record_function_exit_new, which may count a step */
	PROG_LIBMAP,
	PROG_AGENT_ENABLE,
	PROG_NAME_ENTRY,	/* handle-creating calls (names.h); the cookie names the API */
	PROG_NAME_RETURN,
	PROG_CAPTURE_ENTRY,	/* stream capture calls (capture.h); the cookie names the API */
	PROG_CAPTURE_RETURN,	/* their begins' returns */
};

/* Opens and loads; NULL and errno on failure (the message is printed). */
struct bpfobj *bpfobj__load(const struct bpfobj_opts *o);
void bpfobj__free(struct bpfobj *b);

/* The fork and exit tracepoints that tell of targets' children. 0 or -errno. */
int bpfobj__attach_proc(struct bpfobj *b);

/* Uprobe links: uprobe_multi where the kernel has it, perf links elsewhere. */
bool bpfobj__multi(const struct bpfobj *b);
int bpfobj__attach(struct bpfobj *b, enum bpfobj_prog prog, const struct uprobe_spec *s,
		   struct uprobe_link **out);
/* The agent's cuprobe:records USDT probe in path, for pid. */
int bpfobj__attach_agent_records(struct bpfobj *b, pid_t pid, const char *path,
				 struct bpf_link **out);

/* A process's entries: created at attach, with its first conf and state. */
int bpfobj__add_proc(struct bpfobj *b, pid_t pid, const struct proc_conf *conf, uint64_t state);
int bpfobj__set_conf(struct bpfobj *b, pid_t pid, const struct proc_conf *conf);
/* Its proc_state, launch_hits including the hits counted in its launch slot. */
int bpfobj__proc_state(struct bpfobj *b, pid_t pid, struct proc_state *out);
/*
 * The process's launch slot, as the bits to add to its launch probes'
 * cookies (COOKIE_SLOT_SHIFT): the probe then reads its state and counts its
 * hits there, with no map lookup. bpfobj__add_proc makes the slot (0 when
 * all are taken: the probe looks proc_state up); slot_cookie only finds it.
 */
uint64_t bpfobj__reserve_slot(struct bpfobj *b, pid_t pid);
uint64_t bpfobj__slot_cookie(struct bpfobj *b, pid_t pid);
void bpfobj__remove_proc(struct bpfobj *b, pid_t pid);
/*
 * --step torch: the range name prefix that ends pid's steps (at most 63 bytes
 * used), and how its torch holds a range's name (TORCH_STRING_*). 0 or -errno.
 */
int bpfobj__set_torch_prefix(struct bpfobj *b, pid_t pid, const char *prefix,
			     unsigned int string_abi);
/* Captured streams or events BPF could not keep (its maps full): their launches ran as launches. */
uint64_t bpfobj__capture_full(const struct bpfobj *b);
/* Graph calls that succeeded and could not be told: the ctrl ring was full. */
uint64_t bpfobj__graph_lost(const struct bpfobj *b);
/* record_function ranges entered deeper than TORCH_DEPTH_MAX: neither matched nor told. */
uint64_t bpfobj__torch_too_deep(const struct bpfobj *b);
/* Step records told, and those that woke the loader (proc_conf.wake_ahead). */
void bpfobj__step_wakeups(const struct bpfobj *b, uint64_t *told, uint64_t *woke);
int bpfobj__set_runtime_ranges(struct bpfobj *b, pid_t pid, const struct runtime_ranges *rr);

/* The rings: events (launches, agent chunks) and ctrl (steps, library maps, threads). */
int bpfobj__events_fd(const struct bpfobj *b);
int bpfobj__ctrl_fd(const struct bpfobj *b);
/*
 * The events ring grows (session_ring.c): events_fd is the ring BPF now
 * writes to, of events_bytes. events_swap creates a ring of bytes (a power
 * of two), hands it to ready (the reader takes it: non-zero refuses it), and
 * puts it in BPF's slot; when it returns, no BPF program writes to the one
 * before any more. That one is then "retiring", to be read to its end and
 * closed by events_retire. Returns the new ring's fd; -EBUSY while one is
 * retiring; -errno when the kernel refuses the ring (memory), or ready's.
 */
uint64_t bpfobj__events_bytes(const struct bpfobj *b);
int bpfobj__events_swap(struct bpfobj *b, uint64_t bytes, int (*ready)(void *ctx, int fd),
			void *ctx);
/*
 * The same in three steps, so that the wait in the middle need not stop the
 * reader: events_new makes the ring (its fd; -EBUSY while one is made or
 * retiring); events_put puts it in BPF's slot and waits for the programs
 * that may hold the old one (any thread; 0 or -errno); events_commit(err)
 * takes put's answer: the new ring is then the events ring and the old one
 * retiring, or, when put failed, the new one retiring, never written.
 */
int bpfobj__events_new(struct bpfobj *b, uint64_t bytes);
int bpfobj__events_put(const struct bpfobj *b);
void bpfobj__events_commit(struct bpfobj *b, int err);
int bpfobj__events_retiring_fd(const struct bpfobj *b);
void bpfobj__events_retire(struct bpfobj *b);
/* The highest fill, in bytes, BPF saw in the events ring since the last call. */
uint64_t bpfobj__events_high(struct bpfobj *b);
/* Launches the events ring had no room for, so far (all processes). */
uint64_t bpfobj__events_lost(const struct bpfobj *b);
/* What a BPF ring (its fd) holds unread, in bytes. 0 or -errno. */
int bpfobj__ring_unread(int fd, uint64_t *bytes);
/* The maps the guardian needs (proc_state, proc_conf): it keeps them past the loader. */
int bpfobj__state_fd(const struct bpfobj *b);
int bpfobj__conf_fd(const struct bpfobj *b);

/* Counters of processes without state of their own, and session-wide ones. */
void bpfobj__counters(const struct bpfobj *b, struct cuprobe_counters *out);

/* Handle records lost (ctrl ring full) and names cut short, so far. */
void bpfobj__name_counters(const struct bpfobj *b, uint64_t *lost, uint64_t *truncated);
/* A launch, from the ring alone or in a batch, or from a CPU's stage. */
typedef void (*bpfobj_launch_fn)(void *ctx, const struct launch_event *e);
/*
 * Hands fn the launches that wait in the CPUs' stages (not yet a full
 * batch in the ring); returns how many stages were busy and left for later.
 */
size_t bpfobj__drain_stages(struct bpfobj *b, bpfobj_launch_fn fn, void *ctx);
/* The stages, one per possible CPU (tests look at them). */
size_t bpfobj__nstages(const struct bpfobj *b);
struct launch_stage *bpfobj__stage(struct bpfobj *b, size_t cpu);
/*
 * A record of the events ring that holds launches (REC_LAUNCH or
 * REC_LAUNCH_BATCH): fn for each; how many, or -EINVAL when it holds none.
 */
int bpfobj__each_launch(const void *data, size_t size, bpfobj_launch_fn fn, void *ctx);
/* --stack's maps: ustacks, py_stacks, py_procs; -1 without --stack. */
int bpfobj__stacks_fd(const struct bpfobj *b);
int bpfobj__py_stacks_fd(const struct bpfobj *b);
int bpfobj__py_codes_fd(const struct bpfobj *b);
int bpfobj__set_py_proc(struct bpfobj *b, pid_t pid, const struct py_offsets *o);
void bpfobj__remove_py_proc(struct bpfobj *b, pid_t pid);
/* Exec events of the host-wide watch lost to a full ctrl ring. */
uint64_t bpfobj__lost_exec(const struct bpfobj *b);

/* What one launch probe hit costs here (calibrate.c), with return probes when latency. */
int bpfobj__calibrate(struct bpfobj *b, bool latency, struct ring_buffer *drain, double *ns);

#endif /* CORE_PROBES_BPFOBJ_H */
