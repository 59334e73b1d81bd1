/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Inside the stack namer (stacks.h): what stacks.c (native frames, one
 * stack, the maps' sweep) and stacks_py.c (Python frames) share.
 */
#ifndef CORE_PROC_STACKS_INT_H
#define CORE_PROC_STACKS_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "core/proc/pyproc.h"
#include "core/proc/stacks.h"
#include "util/hashmap.h"
#include "util/vec.h"

struct py_proc {
	pid_t pid;
	struct py_layout l;
	uint64_t code_type;	/* the PyCode_Type seen to be "code", 0 until then */
};

/* A code object, read once. */
struct py_code {
	pid_t pid;
	uint32_t id;	/* py_code_id: the code object at addr, not one made there later */
	uint64_t addr;
	char *name, *file;
	int firstlineno;
	uint8_t *lines;
	size_t nlines;
	bool cut;	/* lines is the start of a longer table */
	bool bad;
};

struct stacks {
	int fd, py_fd, code_fd;
	struct symbols *syms;
	struct hmap *by_key;	/* struct stack * -> itself */
	struct hmap *codes;	/* struct py_code * -> itself */
	struct vec dw;		/* struct dw_proc */
	struct vec py;		/* struct py_proc */
	struct hmap *strings;	/* char * -> itself: every frame name once, owned */
	/* Keys of BPF's map entries launches have named: deleted in a sweep when many. */
	struct hmap *live_u, *live_py;
	struct hmap *live_codes;	/* struct py_code_key * (owned) -> itself */
	struct stacks_counts counts;
};

/* A frame's name, kept once until stacks__free. NULL when out of memory. */
const char *stacks_keep(struct stacks *s, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* stacks_py.c: the process's Python layout (stacks__set_python), NULL when none. */
struct py_proc *py_proc_of(struct stacks *s, pid_t pid);
/* "file(line): name", as torch.profiler names Python frames; counts an unreadable one in st. */
const char *py_frame_name(struct stacks *s, struct stack *st, struct py_proc *p,
			  const struct py_frame *f, uint32_t id);

#endif /* CORE_PROC_STACKS_INT_H */
