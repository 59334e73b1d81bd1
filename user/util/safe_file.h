/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Files and folders written as root into folders that other users may write
 * to. A file is written unnamed (O_TMPFILE) where the file system allows it,
 * else under a temporary name made with O_CREAT|O_EXCL|O_NOFOLLOW, and given
 * its name only once whole and synced. So cuprobe never writes through a
 * symlink, never into a FIFO or a device, never leaves half a file under the
 * final name, and, with O_TMPFILE, leaves nothing at all when SIGKILLed.
 * Everything is relative to a folder's descriptor, so that a folder renamed
 * or replaced by a link while cuprobe works cannot redirect it.
 *
 * The same rule of trust holds for what cuprobe reads and obeys (the
 * daemon's web-config, its TLS files, capture's password file): only root
 * or the running user may have written it, or be able to swap it.
 */
#ifndef UTIL_SAFE_FILE_H
#define UTIL_SAFE_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

enum safe_file_mode {
	/* A new name only: publishing never replaces anything, and fails with -EEXIST. */
	SAFE_FILE_NEW = 0,
	/*
	 * Nothing there, or a regular file that publishing replaces whole. A
	 * symlink (-ELOOP), a folder (-EISDIR) or any other file that is not
	 * regular (-EEXIST) is refused, when opening and again when publishing.
	 */
	SAFE_FILE_REPLACE = 1,
};

/* Or'ed into the mode: a named temporary even where O_TMPFILE works (tests). */
#define SAFE_FILE_NAMED_TMP 0x100

struct safe_file;

/*
 * Starts the file that publishing names dirfd/name (one path component),
 * created with perm less the umask. NULL and errno on failure.
 */
struct safe_file *safe_file__open(int dirfd, const char *name, int mode, mode_t perm);
/* The same for a path: its folder part is opened as given, links and all. */
struct safe_file *safe_file__open_path(const char *path, int mode, mode_t perm);
/* The descriptor to write through; it stays the safe_file's. */
int safe_file__fd(const struct safe_file *sf);
/* Syncs the file and gives it its name. 0 or -errno; on failure nothing is left. */
int safe_file__publish(struct safe_file *sf);
/* Closes; a file not published leaves nothing behind. */
void safe_file__free(struct safe_file *sf);

/* What a file that is not a regular one is, for messages: "a FIFO", "a folder", ... */
const char *safe_file__kind(mode_t st_mode);

/*
 * mkdir -p: opens path, making the folders it lacks with mode. *made counts
 * the components made, the last ones of path; on failure none stays made.
 * Returns the folder's descriptor or -errno.
 */
int safe_file__make_dirs(const char *path, mode_t mode, unsigned int *made);
/*
 * Removes the last made components of path, deepest first, each only if
 * empty; stops at a ".." (what lies past it is not known to be ours).
 */
int safe_file__remove_made_dirs(const char *path, unsigned int made);
/*
 * A child folder for output (run_<k>): made with mode, or opened when there,
 * but never through a symlink (-ELOOP) and never one that another user owns
 * (-EPERM). *created says whether it was made here. The descriptor or -errno.
 */
int safe_file__child_dir(int dirfd, const char *name, mode_t mode, bool *created);

/*
 * The rule for a folder cuprobe writes in or reads its settings from: owned
 * by root or the running user, and writable by no other user (group or
 * others), except, where sticky_ok, with the sticky bit (as /tmp), where
 * others cannot rename or remove what is not theirs.
 */
bool safe_file__trusted_dir(const struct stat *st, bool sticky_ok);

/*
 * Opens path to read what it says, only if nobody but root or the running
 * user can have chosen it: links are resolved first, then every folder of
 * the real path, from "/", passes safe_file__trusted_dir (sticky allowed);
 * the file is regular (opened O_NONBLOCK, so a FIFO never blocks), owned by
 * root or the running user and writable by no one else; a secret (a private
 * key, a password) is not readable by group or others either, OpenSSH's
 * rule for private keys. The descriptor (O_CLOEXEC), or -errno with why
 * saying what is wrong and the fix (the caller names the file).
 */
int safe_file__open_trusted(const char *path, bool secret, char *why, size_t len);

#endif /* UTIL_SAFE_FILE_H */
