/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Stacks (--stack), as the launch probe walks them (bpf/stack.bpf.h) and the
 * loader names them (user/core/proc/stacks.c, stacks_py.c): the user stack,
 * a thread's Python frames, the code objects that name them, and where each
 * CPython version keeps what BPF walks.
 */
#ifndef CUPROBE_STACK_H
#define CUPROBE_STACK_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/*
 * Stacks (--stack). The user stack is walked by frame pointers into the
 * ustacks map, and a thread that runs CPython has its Python frames walked
 * from its thread state into py_stacks: one entry per unique stack in each,
 * keyed by a hash of its frames, so that the loader may delete an entry
 * once it has named it.
 */
#define STACK_MAX_DEPTH 127	/* PERF_MAX_STACK_DEPTH: a stack this deep may be cut */
#define STACK_MAP_ENTRIES 16384
#define PY_MAX_FRAMES 64
#define PY_MAX_THREADS 64	/* thread states looked at to find a thread's */
#define PY_STACK_ENTRIES 4096
#define PY_NONE 0xffffu	/* an offset a version does not have */

/* A user stack: return addresses, the probed function's entry first. */
struct ustack {
	__u32 n;
	__u32 truncated;	/* deeper than STACK_MAX_DEPTH */
	__u64 ip[STACK_MAX_DEPTH];
};

/* One Python frame as BPF saw it: its code object and where it was. */
struct py_frame {
	__u64 code;	/* PyCodeObject * */
	__u64 instr;	/* the instruction pointer (3.11+), or f_lasti (3.10) */
};

struct py_stack {
	__u32 n;	/* frames, leaf first */
	__u32 truncated; /* more frames than PY_MAX_FRAMES */
	__u64 entry;	/* bit i: frame i is the first of its C evaluation call */
	struct py_frame f[PY_MAX_FRAMES];
	__u32 id[PY_MAX_FRAMES]; /* frame i's code: py_code_id, its key in py_codes with f[i].code */
};

/*
 * A code object as BPF read it when a new stack first showed it (py_codes):
 * what names its frames after the process is gone. Keyed by the code's
 * address, the process and an id of what the code holds (py_code_id), so
 * that a code object freed and another made at its address get two keys.
 */
#define PY_CODE_ENTRIES 4096
#define PY_NAME_BYTES 128	/* of the name (co_qualname, else co_name), in its own kind */
#define PY_FILE_BYTES 256	/* of the file name: its end when longer */
#define PY_LINES_BYTES 1024	/* of the line table: its start when longer */

struct py_code_key {
	__u64 code;
	__u32 tgid;
	__u32 id;
};

struct py_code_info {
	__s32 firstlineno;
	__u32 lines_len;	/* bytes of the line table held */
	__u32 lines_full;	/* the table's length */
	__u16 name_len, file_len; /* bytes held */
	__u32 file_full;	/* the file name's length in bytes */
	__u8 name_kind, file_kind; /* bytes a character: 1, 2 or 4 (PEP 393) */
	__u8 pad[2];
	__u8 name[PY_NAME_BYTES];
	__u8 file[PY_FILE_BYTES];
	__u8 lines[PY_LINES_BYTES];
};

/*
 * What tells one code object at an address from another made there later:
 * its name's, file name's and line table's addresses, its first line, and
 * its name's length and string hash (the name's content, which differs
 * even where the allocator gave the new name the old one's address).
 * BPF computes it for each frame, the loader again when it reads a code
 * object late. Interned names have their hash; -1 when not computed.
 */
static inline __u32 py_code_id(__u64 name, __u64 file, __u64 table, __u32 first, __u64 name_len,
			       __u64 name_hash)
{
	__u64 h = 14695981039346656037ull;

	h = (h ^ name) * 1099511628211ull;
	h = (h ^ file) * 1099511628211ull;
	h = (h ^ table) * 1099511628211ull;
	h = (h ^ first) * 1099511628211ull;
	h = (h ^ name_len) * 1099511628211ull;
	h = (h ^ name_hash) * 1099511628211ull;
	return (__u32)(h ^ h >> 32);
}

/*
 * Where a process's interpreter keeps what BPF walks (per CPython version),
 * in the BPF map py_procs. Offsets are bytes; PY_NONE: the version has none.
 */
struct py_offsets {
	__u64 runtime;		/* address of _PyRuntime in the process */
	__u32 version;		/* 0x030b for 3.11 */
	__u16 runtime_interp_head;
	__u16 interp_threads_head;
	__u16 tstate_next;
	__u16 tstate_native_tid; /* PY_NONE (3.10): match thread_id with the thread's TLS base */
	__u16 tstate_thread_id;
	__u16 tstate_frame;	/* the frame, or the _PyCFrame that holds it */
	__u16 cframe_frame;	/* PY_NONE: tstate_frame points at the frame itself */
	__u16 frame_code;
	__u16 frame_back;
	__u16 frame_instr;
	__u16 frame_instr_size;	/* 4: an int (3.10's f_lasti); 8: a pointer */
	__u16 frame_owner;	/* PY_NONE: no owner; FRAME_OWNED_BY_CSTACK (3) frames are shims */
	__u16 frame_is_entry;	/* PY_NONE but in 3.11 */
	/* Naming a code object: its fields, read as one window from code_head on. */
	__u16 code_head;
	__u16 code_filename;
	__u16 code_name;	/* co_qualname where the version has it, else co_name */
	__u16 code_firstlineno;
	__u16 code_linetable;
	__u16 str_ascii_size;	/* sizeof(PyASCIIObject): compact ASCII data follows */
	__u16 str_compact_size;	/* sizeof(PyCompactUnicodeObject): other compact data follows */
	__u16 pad[2];
};

_Static_assert(sizeof(struct py_offsets) == 56, "py_offsets layout");
_Static_assert(sizeof(struct ustack) == 8 + 8 * STACK_MAX_DEPTH, "ustack layout");
_Static_assert(sizeof(struct py_stack) == 16 + 20 * PY_MAX_FRAMES, "py_stack layout");
_Static_assert(sizeof(struct py_code_key) == 16, "py_code_key layout");
_Static_assert(sizeof(struct py_code_info) ==
		       24 + PY_NAME_BYTES + PY_FILE_BYTES + PY_LINES_BYTES, "py_code_info layout");

#endif /* CUPROBE_STACK_H */
