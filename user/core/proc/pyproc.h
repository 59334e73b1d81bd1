/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * CPython in a target process: which version it runs, where its _PyRuntime
 * is, and the offsets BPF needs to walk a thread's frames (struct
 * py_offsets) and the loader needs to name them (struct py_layout). 3.10 to
 * 3.12 come from a table of each version's layout; 3.13 from the
 * _Py_DebugOffsets the interpreter carries at the start of _PyRuntime.
 */
#ifndef CORE_PROC_PYPROC_H
#define CORE_PROC_PYPROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "stack.h"

/* What naming a frame reads: code objects, strings, bytes. */
struct py_layout {
	uint32_t version;		/* 0x030b for 3.11 */
	uint16_t code_filename, code_name, code_firstlineno, code_linetable;
	uint16_t code_qualname;		/* PY_NONE before 3.11 */
	uint16_t code_adaptive;		/* the code's first instruction (3.11+) */
	uint16_t ascii_size;		/* sizeof(PyASCIIObject): compact ASCII data follows */
	uint16_t compact_size;		/* sizeof(PyCompactUnicodeObject) */
};

/* The version a file name says (python3.11, libpython3.11.so.1.0): 0x030b, or 0. */
uint32_t pyproc_version_of(const char *path);

/*
 * Looks for CPython 3.10 to 3.13 in pid's maps. 1 when found (o and l
 * filled, where says in which object), 0 when the process runs none, or
 * -errno; -ENOTSUP for a version without a layout (what says which).
 */
int pyproc__find(pid_t pid, struct py_offsets *o, struct py_layout *l, char *where,
		 size_t len);

/*
 * The line of byte offset addr in a code object's line table (co_linetable),
 * CPython 3.10's format or 3.11+'s location table; -1 when it has none.
 */
int py_line_of(uint32_t version, const uint8_t *table, size_t len, int firstlineno,
	       uint64_t addr);

/*
 * A str's characters as UTF-8, malloc'd: raw holds nbytes of them, kind bytes
 * each (PEP 393: 1, 2 or 4). NULL for another kind or out of memory.
 */
char *py_utf8(const uint8_t *raw, size_t nbytes, unsigned int kind);

#endif /* CORE_PROC_PYPROC_H */
