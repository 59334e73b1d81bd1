/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* /proc/PID/maps, parsed. */
#ifndef CORE_PROC_PROCMAPS_H
#define CORE_PROC_PROCMAPS_H

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
/*
 * Only the executable mappings (exec set), which is all that names code and
 * decides what to probe: through PROCMAP_QUERY where the kernel has it (Linux
 * 6.11), a fifth of the cost of the text for a process of many libraries,
 * else from the text. Returns as procmaps__read.
 */
int procmaps__read_exec(pid_t pid, struct procmaps *out);
/* Parses maps text (for tests). */
int procmaps__parse(const char *text, struct procmaps *out);
void procmaps__free(struct procmaps *m);
/* The mapping that holds addr, or NULL. */
const struct map_entry *procmaps__find(const struct procmaps *m, uint64_t addr);

/*
 * Files named by a target. A target chooses the paths in its maps, and may put
 * a FIFO, a device, or a link at one (even at "PATH (deleted)") or swap the file
 * after mapping it: nothing cuprobe opens on its behalf may block or be swapped.
 * So every such open goes through these two, which open the name O_PATH and
 * O_NOFOLLOW (no open() of anything but a checked regular file, a FIFO or a
 * device is never opened), check what it is, and only then reopen it for
 * reading, O_NONBLOCK and O_NOCTTY, through /proc/self/fd. Files larger than
 * TARGET_FILE_MAX are refused: whatever is read from them stays bounded.
 * Each refusal is said at debug level, with the path and why.
 */
#define TARGET_FILE_MAX (16ull << 30)

/*
 * Opens the file behind mapping m of pid: /proc/PID/map_files/START-END (the
 * mapped file itself, even deleted or in another mount namespace), else
 * /proc/PID/root<path>, else the path as this process sees it (all that is left
 * once the target exited), the last two only when they are a regular file with
 * the mapping's inode and device (the device is not compared on overlayfs,
 * where stat and maps disagree on it). A read-only descriptor (O_CLOEXEC) or
 * -errno: -ESTALE another file than the one mapped, as target_file_open otherwise.
 */
int procmaps__open(pid_t pid, const struct map_entry *m);
/*
 * The second of those alone: m's path through /proc/PID/root, as checked
 * there (m need not be mapped yet: probeset__preregister). -ENAMETOOLONG
 * when the path does not fit.
 */
int procmaps__open_in_root(pid_t pid, const struct map_entry *m);

/*
 * Opens a regular file by path, never blocking and never opening anything
 * else: the ELF readers' door (elf_file__open) for paths with no mapping to
 * match, which are the user's (links followed: --step OBJECT, the command)
 * or cuprobe's own descriptors (/proc/self/fd/N, followed to the file that
 * was checked). follow false: a symlink is refused (-ELOOP). A read-only
 * descriptor (O_CLOEXEC) or -errno (-EINVAL not a regular file, -EFBIG too
 * large).
 */
int target_file_open(const char *path, bool follow);

/* "/proc/self/fd/N": a path to fd that opens without blocking (libbpf, the kernel). */
void target_file_fd_path(int fd, char *buf, size_t len);

/* The process's start time in clock ticks after boot (/proc/PID/stat): tells a reused pid. 0 when gone. */
uint64_t proc_start_ticks(pid_t pid);
/* The command name of pid, from /proc/PID/comm (buf left as it is when unreadable). */
void proc_comm(pid_t pid, char *buf, size_t len);

#endif /* CORE_PROC_PROCMAPS_H */
