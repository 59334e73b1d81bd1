/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A target process: the objects it maps, which of them carry launch APIs,
 * and the probes cuprobe attached to them for this process.
 */
#ifndef TARGET_H
#define TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct launch_bpf;
struct examined;
struct step_spec;
struct uprobe_link;

struct probe_ctx {
	struct launch_bpf *skel;
	const struct step_spec *step;	/* NULL without --step */
	bool multi;	/* uprobe_multi links */
	bool latency;	/* return probes too */
	bool cupti;	/* look for the agent and switch it with the launch probes */
	/*
	 * Detaching a uprobe takes tens of ms: when set, a detached link is
	 * handed to dispose (another thread closes it), so that the next attach
	 * need not wait. The link stops mattering at once: BPF filters by phase.
	 */
	void (*dispose)(struct uprobe_link *l, void *arg);
	void *dispose_arg;
};

struct target {
	pid_t pid;
	int pidfd;		/* readable once the process exits */
	char comm[64];
	int rank, world_size;	/* from RANK / WORLD_SIZE, -1 when unset */
	bool child;		/* started by cuprobe: reap it */
	bool exited;
	int status;		/* wait status when child */
	bool has_launch_apis;	/* some mapped object has launch APIs */
	bool told_waiting;
	bool probes_on;		/* launch probes attached (the schedule wants them) */
	uint64_t probes_since;	/* CLOCK_MONOTONIC of the latest launch probe attach; 0 when off */
	struct examined *objs;	/* every object looked at, probed or not */
	size_t nobjs;
	struct bpf_link *libmap;
	struct uprobe_link *step;	/* the step probe, once found */
	char *step_object;	/* where it was found */
	char *agent;		/* the agent library, once found (--cupti) */
	struct bpf_link *agent_records;	/* listens to the agent for the whole session */
	struct uprobe_link *agent_enable;	/* raises its switch while probes are on */
};

/* Fills t for pid: opens a pidfd, reads comm and rank. 0 or -errno (-ESRCH: no such process). */
int target__init(struct target *t, pid_t pid, bool child);
/*
 * Before exec: probes the executable that will run (a statically linked
 * runtime) and its dynamic linker, for t->pid, so that nothing after exec is
 * missed. 0 or -errno.
 */
int target__prepare_exec(struct target *t, const struct probe_ctx *ctx, const char *exe);
/*
 * Looks at objects mapped since the last scan: launch APIs (probed when
 * probes are on), the dynamic linker's hook and the step probe.
 */
int target__scan(struct target *t, const struct probe_ctx *ctx);
/* Attaches (on) or detaches (off) the launch probes of every object found so far. */
int target__set_probes(struct target *t, const struct probe_ctx *ctx, bool on);
/* Appends to buf up to three names close to the step spec, from objects looked at. */
void target__suggest_step(struct target *t, const struct probe_ctx *ctx, char *buf, size_t len);
/* Re-reads comm, rank and world size (after exec). */
void target__refresh_identity(struct target *t);
void target__detach(struct target *t);
void target__free(struct target *t);

#endif /* TARGET_H */
