/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The loaded BPF object: the only module that touches the skeleton. It
 * loads the programs a session needs, keeps each process's entries in the
 * shared maps (configuration in, state out), attaches programs to uprobes
 * for the modules that decide where, and hands out the two rings.
 */
#ifndef BPFOBJ_H
#define BPFOBJ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "cuprobe.h"

struct bpfobj;
struct uprobe_link;
struct uprobe_spec;
struct bpf_link;
struct ring_buffer;

struct bpfobj_opts {
	uint64_t ringbuf_bytes;	/* the events ring, a power of two */
	bool latency;		/* load the return program (some window measures latency) */
	bool steps;		/* load the step program */
	bool cupti;		/* load the agent's programs */
	bool watch_exec;	/* tell every exec on the host (REC_EXEC_SEEN) */
};

/* Which program a uprobe runs. */
enum bpfobj_prog {
	PROG_LAUNCH,		/* launch entries; the cookie names the API */
	PROG_LAUNCH_RETURN,	/* --latency returns */
	PROG_STEP,
	PROG_LIBMAP,
	PROG_AGENT_ENABLE,
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
int bpfobj__proc_state(const struct bpfobj *b, pid_t pid, struct proc_state *out);
void bpfobj__remove_proc(struct bpfobj *b, pid_t pid);
int bpfobj__set_runtime_ranges(struct bpfobj *b, pid_t pid, const struct runtime_ranges *rr);

/* The rings: events (launches, agent chunks) and ctrl (steps, library maps, threads). */
int bpfobj__events_fd(const struct bpfobj *b);
int bpfobj__ctrl_fd(const struct bpfobj *b);
/* The maps the guardian needs (proc_state, proc_conf): it keeps them past the loader. */
int bpfobj__state_fd(const struct bpfobj *b);
int bpfobj__conf_fd(const struct bpfobj *b);

/* Counters of processes without state of their own, and session-wide ones. */
void bpfobj__counters(const struct bpfobj *b, struct cuprobe_counters *out);

/* Exec events of the host-wide watch lost to a full ctrl ring. */
uint64_t bpfobj__lost_exec(const struct bpfobj *b);

/* What one launch probe hit costs here (calibrate.c), with return probes when latency. */
int bpfobj__calibrate(struct bpfobj *b, bool latency, struct ring_buffer *drain, double *ns);

#endif /* BPFOBJ_H */
