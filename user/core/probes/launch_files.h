/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The files in which a program's processes had launch probes (a runtime, a
 * driver, a static runtime), by the program (its executable's device and
 * inode) and the file's path as mapped and identity: what a later process
 * of the same program is probed on before it maps them
 * (probeset__preregister), in this session and, through the host's cache
 * file, in later ones. The prober thread's, like the probesets that add to
 * it; loaded before it starts and saved after it stops.
 */
#ifndef CORE_PROBES_LAUNCH_FILES_H
#define CORE_PROBES_LAUNCH_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct launch_file {
	char *exe;		/* the program's executable, as /proc/PID/exe names it */
	uint64_t exe_dev, exe_ino;
	char *path;		/* as the process that mapped it saw it (/proc/PID/maps) */
	uint64_t dev, ino;
	bool learned;		/* added by this session, not loaded */
};

struct launch_files;

/* The cache file when CUPROBE_CACHE does not name one ("off": none). */
#define LAUNCH_FILES_CACHE "/var/cache/cuprobe/launch-files"
/*
 * At most this many (program, file) pairs. One that the session learns when
 * it has as many takes the place of the last one loaded (the cache file's
 * oldest); past that, none.
 */
#define LAUNCH_FILES_MAX 256

/* NULL and errno when out of memory. */
struct launch_files *launch_files__new(void);
void launch_files__free(struct launch_files *lf);
/* Adds a pair once (the same program and file); see LAUNCH_FILES_MAX. 0 or -ENOMEM. */
int launch_files__add(struct launch_files *lf, const struct launch_file *f);
size_t launch_files__count(const struct launch_files *lf);
const struct launch_file *launch_files__at(const struct launch_files *lf, size_t i);
/* How many pairs this session added. */
size_t launch_files__learned(const struct launch_files *lf);

/*
 * The program process pid runs: its executable's identity and, unless name
 * is NULL, its name. 0, or -errno (-ESRCH: gone; -ENOENT: its executable
 * was deleted, said only with a name).
 */
int launch_files__exe_of(int pid, uint64_t *dev, uint64_t *ino, char *name, size_t len);

/*
 * The cache file's path: $CUPROBE_CACHE, else LAUNCH_FILES_CACHE; NULL when
 * CUPROBE_CACHE is "off" or empty.
 */
const char *launch_files__cache_path(void);
/*
 * Adds the pairs of the cache file at path, after this session's. A file
 * that is missing loads nothing (0). One that another user owns or may
 * write, or in a folder others may write to, is not read: -EPERM, and why
 * (with the fix) in why. Returns the pairs loaded or -errno; lines it
 * cannot read are left out and counted in *bad.
 */
int launch_files__load(struct launch_files *lf, const char *path, size_t *bad, char *why,
		       size_t len);
/*
 * Writes the pairs to path whole (a temporary, then renamed; mode 0600),
 * making its folder (0700) if need be: those of this session first, then the
 * ones the file has now (another session may have written it since the
 * load), then the loaded ones; each only if its program and its file are
 * still there as they were (stat, in cuprobe's own root), and named by a
 * path with no space or control character. 0 or -errno, with why.
 */
int launch_files__save(const struct launch_files *lf, const char *path, char *why, size_t len);

#endif /* CORE_PROBES_LAUNCH_FILES_H */
