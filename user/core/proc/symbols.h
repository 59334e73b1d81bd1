/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Names for code addresses in target processes, and function offsets for
 * attaching probes. Process maps are cached per pid so that names still
 * resolve after the process has exited; ELF symbol tables are cached per
 * file (device, inode).
 */
#ifndef CORE_PROC_SYMBOLS_H
#define CORE_PROC_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "core/proc/elf_file.h"

struct symbols;

struct symbols *symbols__new(void);
void symbols__free(struct symbols *s);

/*
 * Re-reads /proc/PID/maps into the cache (after attach, and each time the
 * dynamic linker changes the map). Keeps the old view when the process is
 * gone. Returns 0 or -errno.
 */
int symbols__refresh(struct symbols *s, pid_t pid);
/*
 * The same with maps read elsewhere (the prober's scan, while the process
 * was held), taken over: *maps is left empty. 0 or -ENOMEM (maps freed).
 */
struct procmaps;
int symbols__set_maps(struct symbols *s, pid_t pid, struct procmaps *maps);

/*
 * Names addr in pid, through *out: the demangled function symbol that
 * covers addr (plus "+0xoff" when addr is not its start), else
 * "object+0xfileoffset" (object's basename), else "0xaddr". Returns 0 when a
 * symbol named it, 1 when only a fallback did, -ENOMEM. The result is cached; the
 * returned string stays valid until symbols__free via *out when out != NULL.
 */
int symbols__name(struct symbols *s, pid_t pid, uint64_t addr, const char **out);

/*
 * pid's maps as the cache last read them (read now if never): they outlive
 * the process. NULL when out of memory.
 */
struct procmaps;
const struct procmaps *symbols__maps(struct symbols *s, pid_t pid);

/* Demangles a C++ symbol name into a malloc'd string, or strdup of name. */
char *symbols__demangle(const char *name);

#endif /* CORE_PROC_SYMBOLS_H */
