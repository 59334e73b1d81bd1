/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --stack: the CPU stack of each launch, named. BPF leaves a stack id (the
 * user stack, by frame pointers) and, in a thread that runs CPython, the key
 * of its Python frames; the first launch that names a (process, stack)
 * symbolizes it, with elfutils (libdwfl: symbols, source lines, inlined
 * frames where debug info exists) and by reading the target's code objects
 * for Python frames, merged as py-spy does. Later launches of the same stack
 * cost one lookup. Owned by the session's thread.
 */
#ifndef CORE_PROC_STACKS_H
#define CORE_PROC_STACKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "launch.h"
#include "trace/writer.h"

struct symbols;
struct stacks;

/* A named stack: stable until stacks__free. */
struct stack {
	uint32_t n;		/* frames, root first */
	const char **frames;
	bool truncated;		/* the stack was deeper than cuprobe takes */
	uint32_t unsymbolized;	/* frames named only by an address (no symbol, bad object) */
	uint32_t python;	/* of them, Python frames */
	/* The key: the process and BPF's ids. */
	pid_t pid;
	uint64_t ustack;
	uint64_t pystack;
	uint32_t flags;
};

/* Session-wide counts, for the user at the end. */
struct stacks_counts {
	uint64_t unique;	/* stacks named */
	uint64_t python_procs;	/* processes whose Python frames BPF walks */
	uint64_t lost;		/* launches whose user stack did not fit in its map */
	uint64_t python_lost;	/* launches whose Python frames did not fit in theirs */
};

/* fd: the ustacks map; py_fd: py_stacks; code_fd: py_codes. NULL and errno. */
struct stacks *stacks__new(int fd, int py_fd, int code_fd, struct symbols *syms);
void stacks__free(struct stacks *s);

/* The launch's stack, or NULL when it has none (no --stack, or both stacks lost). */
const struct stack *stacks__get(struct stacks *s, const struct launch_event *e);
/* stacks__get as the trace writer asks (trace__set_stacks): ctx is the struct stacks. */
bool stacks__trace_stack(void *ctx, const struct launch_event *e, struct trace_stack *out);
/*
 * Once per launch, after stacks__get named it: counts what BPF lost of its
 * stacks, and empties BPF's maps of named stacks when they are half full.
 */
void stacks__count(struct stacks *s, const struct launch_event *e);
/* pid mapped or unmapped libraries: their symbols are read again. */
void stacks__refresh(struct stacks *s, pid_t pid);
/* pid is gone and its traces written: what was kept for it goes (its pid may come back). */
void stacks__forget(struct stacks *s, pid_t pid);
/* pid runs CPython: how to name its code objects (pyproc.h). */
struct py_layout;
void stacks__set_python(struct stacks *s, pid_t pid, const struct py_layout *l);
void stacks__counts(const struct stacks *s, struct stacks_counts *c);

/*
 * py-spy's merge of one stack's frames, leaf first. native: the native
 * frames, those of one return address (inlined ones, then their function)
 * sharing ip, eval marking CPython's evaluation loop; py: the Python frames,
 * bit i of entry set when frame i began its evaluation. Each evaluation
 * frame stands for its Python frames; Python frames the native walk did not
 * reach go above the rest. out holds nn + np; returns how many it got.
 */
struct merge_frame {
	const char *name;
	uint32_t ip;
	bool eval;
};
size_t stack_merge(const struct merge_frame *native, size_t nn, const char *const *py,
		   uint64_t entry, size_t np, const char **out);

#endif /* CORE_PROC_STACKS_H */
