/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The BPF tier's harness: loads cuprobe's real BPF object through bpfobj,
 * attaches its programs to functions of this test binary, and collects what
 * the two rings received, record by record.
 */
#ifndef BPF_TEST_H
#define BPF_TEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "core/probes/bpfobj.h"
#include "hold.h"
#include "launch.h"
#include "proc.h"
#include "proc_state.h"
#include "step.h"
#include "names.h"

/*
 * A local stand-in for a probed entry point: a real function that, like
 * libcudart's entry points, starts with a push (STAND_IN_FRAME in its
 * body). noipa keeps the caller to the ABI (no clone with fewer arguments);
 * each one counts its own calls, so no two bodies are alike and none is
 * folded into another.
 */
#define STAND_IN __attribute__((noipa, used))
#if defined(__x86_64__)
/* A callee-saved register clobbered: even a leaf function then begins with a push. */
#define STAND_IN_FRAME() asm volatile("" ::: "memory", "rbx")
#else
#define STAND_IN_FRAME() asm volatile("" ::: "memory")
#endif

#define BT_MAX_RECS 256
#define BT_MAX_LINKS 8

struct bt {
	struct bpfobj *obj;
	struct ring_buffer *events;
	struct ring_buffer *ctrl;
	struct uprobe_link *links[BT_MAX_LINKS];
	size_t n_links;
	struct launch_event launches[BT_MAX_RECS];
	size_t n_launches;
	struct step_event steps[BT_MAX_RECS];
	size_t n_steps;
	struct thread_event threads[BT_MAX_RECS];
	size_t n_threads;
	struct libmap_event libmaps[BT_MAX_RECS];	/* and REC_EXEC holds */
	size_t n_libmaps;
	struct fork_event forks[BT_MAX_RECS];
	size_t n_forks;
	struct name_event names[BT_MAX_RECS];
	size_t n_names;
	size_t n_other; /* records of no type above, or of a wrong size */
	size_t n_batches; /* REC_LAUNCH_BATCH records (their launches are in launches[]) */
	bool no_slots;	  /* attach launch probes without the process's slot (proc_state path) */
};

/* Loads every program (latency and steps too) with an events ring of ring_bytes. */
struct bt *bt__new(uint64_t ring_bytes);
/* The launch programs with --stack's maps and code on. */
struct bt *bt__new_stack(uint64_t ring_bytes);
void bt__free(struct bt *t);

/*
 * Attaches prog for pid to the functions names[0..n) of this binary, with
 * their cookies, and for launch probes pid's launch slot (unless no_slots).
 */
int bt__attach(struct bt *t, enum bpfobj_prog prog, pid_t pid, const char *const *names,
	       const uint64_t *cookies, size_t n);

/* Reads both rings and the CPUs' launch stages into the arrays above (what was there is kept). */
void bt__drain(struct bt *t);

/* This process's entries, as the loader makes them, with a RECORD state of step. */
int bt__add_self(struct bt *t, const struct proc_conf *conf, uint64_t state);
struct proc_state bt__state(struct bt *t, pid_t pid);

pid_t bt__gettid(void);

/* Sets every CPU's stage's busy word (STAGE_*), as a writer holding it would; how many. */
size_t bt__hold_stages(struct bt *t, __u32 busy);

#endif /* BPF_TEST_H */
