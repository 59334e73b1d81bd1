/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The files in which the session's processes had launch probes (a runtime,
 * a driver, a static runtime), by the path they were mapped at and their
 * identity: what a process that runs its parent's program again is probed on
 * before it maps them (probeset__preregister). The prober thread's, like the
 * probesets that add to it.
 */
#ifndef CORE_PROBES_LAUNCH_FILES_H
#define CORE_PROBES_LAUNCH_FILES_H

#include <stddef.h>
#include <stdint.h>

struct launch_file {
	char *path;	/* as the process that mapped it saw it (/proc/PID/maps) */
	uint64_t dev, ino;
};

struct launch_files;

/* NULL and errno when out of memory. */
struct launch_files *launch_files__new(void);
void launch_files__free(struct launch_files *lf);
/* Adds a file once (by device and inode); at most LAUNCH_FILES_MAX, then none. 0 or -ENOMEM. */
#define LAUNCH_FILES_MAX 64
int launch_files__add(struct launch_files *lf, const char *path, uint64_t dev, uint64_t ino);
size_t launch_files__count(const struct launch_files *lf);
const struct launch_file *launch_files__at(const struct launch_files *lf, size_t i);

#endif /* CORE_PROBES_LAUNCH_FILES_H */
