/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* /proc/PID/maps, parsed. */
#ifndef PROCMAPS_H
#define PROCMAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct map_entry {
	uint64_t start;
	uint64_t end;
	uint64_t offset;  /* file offset of start */
	uint64_t inode;
	uint64_t dev;	  /* makedev(major, minor) */
	bool exec;
	char *path;	  /* NULL for anonymous mappings; "[vdso]" style kept */
};

struct procmaps {
	struct map_entry *v;
	size_t n;
};

/* Reads /proc/PID/maps. Returns 0 or -errno (-ESRCH when the process is gone). */
int procmaps__read(pid_t pid, struct procmaps *out);
/* Parses maps text (for tests). */
int procmaps__parse(const char *text, struct procmaps *out);
void procmaps__free(struct procmaps *m);
/* The mapping that holds addr, or NULL. */
const struct map_entry *procmaps__find(const struct procmaps *m, uint64_t addr);

#endif /* PROCMAPS_H */
