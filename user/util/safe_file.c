// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include "util/safe_file.h"

/* Temporary names tried before giving up: someone may have planted files at them. */
#define TMP_TRIES 64
/* Room for ".<name>.<8 hex digits>.tmp" within NAME_MAX. */
#define TMP_NAME_KEEP 200

struct safe_file {
	int dirfd;
	int fd;
	int mode; /* enum safe_file_mode */
	char *name;
	char tmp[NAME_MAX + 1]; /* the temporary's name; "" when it has none */
	bool published;
};

const char *safe_file__kind(mode_t st_mode)
{
	switch (st_mode & S_IFMT) {
	case S_IFREG:
		return "a regular file";
	case S_IFDIR:
		return "a folder";
	case S_IFLNK:
		return "a symbolic link";
	case S_IFIFO:
		return "a FIFO";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	case S_IFSOCK:
		return "a socket";
	default:
		return "not a regular file";
	}
}

/* What replace mode finds at the final name: nothing or a regular file is fine. */
static int check_target(int dirfd, const char *name)
{
	struct stat st;

	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return errno == ENOENT ? 0 : -errno;
	if (S_ISREG(st.st_mode))
		return 0;
	if (S_ISLNK(st.st_mode))
		return -ELOOP;
	return S_ISDIR(st.st_mode) ? -EISDIR : -EEXIST;
}

/*
 * The try-th temporary name: ".<name>.tmp" first, then random ones. Both
 * end in .tmp and start with a dot, so that no reader of *.pt.trace.json
 * takes a temporary for a trace.
 */
static void tmp_name(struct safe_file *sf, int try)
{
	unsigned int r;

	if (!try) {
		snprintf(sf->tmp, sizeof(sf->tmp), ".%.*s.tmp", TMP_NAME_KEEP, sf->name);
		return;
	}
	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != sizeof(r))
		r = (unsigned int)getpid() * 2654435761u ^ (unsigned int)try * 40503u;
	snprintf(sf->tmp, sizeof(sf->tmp), ".%.*s.%08x.tmp", TMP_NAME_KEEP, sf->name, r);
}

/* A temporary under a fresh name: O_EXCL and O_NOFOLLOW, so a planted link is never opened. */
static int open_named_tmp(struct safe_file *sf, mode_t perm)
{
	for (int try = 0; try < TMP_TRIES; try++) {
		tmp_name(sf, try);
		sf->fd = openat(sf->dirfd, sf->tmp,
				O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, perm);
		if (sf->fd >= 0)
			return 0;
		if (errno != EEXIST)
			break;
	}
	sf->tmp[0] = '\0';
	return -errno;
}

/* An unnamed file in the folder; -EOPNOTSUPP where the file system cannot. */
static int open_unnamed(struct safe_file *sf, mode_t perm)
{
	sf->fd = openat(sf->dirfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, perm);
	if (sf->fd >= 0)
		return 0;
	/* EISDIR: a kernel that predates O_TMPFILE opened the folder itself. */
	if (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)
		return -EOPNOTSUPP;
	return -errno;
}

static bool valid_name(const char *name)
{
	return *name && !strchr(name, '/') && strcmp(name, ".") && strcmp(name, "..");
}

/* Our own descriptor of the folder; AT_FDCWD, which is no descriptor, is the current one. */
static int dup_dir(int dirfd)
{
	if (dirfd == AT_FDCWD)
		return open(".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
}

struct safe_file *safe_file__open(int dirfd, const char *name, int mode, mode_t perm)
{
	struct safe_file *sf = calloc(1, sizeof(*sf));
	int err = -ENOMEM;

	if (!sf)
		goto fail;
	sf->fd = -1;
	sf->dirfd = -1;
	sf->mode = mode & ~SAFE_FILE_NAMED_TMP;
	sf->dirfd = dup_dir(dirfd);
	if (sf->dirfd < 0) {
		err = -errno;
		goto fail;
	}
	err = -EINVAL;
	if (!valid_name(name) || !(sf->name = strdup(name)))
		goto fail;
	err = sf->mode == SAFE_FILE_REPLACE ? check_target(dirfd, name) : 0;
	if (err)
		goto fail;
	err = mode & SAFE_FILE_NAMED_TMP ? -EOPNOTSUPP : open_unnamed(sf, perm);
	if (err == -EOPNOTSUPP)
		err = open_named_tmp(sf, perm);
	if (err)
		goto fail;
	return sf;
fail:
	safe_file__free(sf);
	errno = -err;
	return NULL;
}

struct safe_file *safe_file__open_path(const char *path, int mode, mode_t perm)
{
	const char *slash = strrchr(path, '/');
	struct safe_file *sf;
	char *dir;
	int dirfd, err;

	if (!slash)
		return safe_file__open(AT_FDCWD, path, mode, perm);
	dir = slash == path ? strdup("/") : strndup(path, (size_t)(slash - path));
	if (!dir) {
		errno = ENOMEM;
		return NULL;
	}
	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	err = errno;
	free(dir);
	if (dirfd < 0) {
		errno = err;
		return NULL;
	}
	sf = safe_file__open(dirfd, slash + 1, mode, perm);
	err = errno;
	close(dirfd);
	errno = err;
	return sf;
}

int safe_file__fd(const struct safe_file *sf)
{
	return sf->fd;
}

/* Names the unnamed file: under its final name, or a temporary one for replace mode. */
static int link_unnamed(struct safe_file *sf, const char *name)
{
	char proc[64];

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", sf->fd);
	/* linkat never replaces: a name taken, by a link or anything, is EEXIST. */
	return linkat(AT_FDCWD, proc, sf->dirfd, name, AT_SYMLINK_FOLLOW) ? -errno : 0;
}

static int link_unnamed_tmp(struct safe_file *sf)
{
	int err = -EEXIST;

	for (int try = 0; try < TMP_TRIES && err == -EEXIST; try++) {
		tmp_name(sf, try);
		err = link_unnamed(sf, sf->tmp);
	}
	if (err)
		sf->tmp[0] = '\0';
	return err;
}

/* The named temporary takes the final name, which must be free. */
static int rename_noreplace(struct safe_file *sf)
{
	if (!renameat2(sf->dirfd, sf->tmp, sf->dirfd, sf->name, RENAME_NOREPLACE))
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -errno;
	/* A file system without RENAME_NOREPLACE: link, which never replaces, then unlink. */
	if (linkat(sf->dirfd, sf->tmp, sf->dirfd, sf->name, 0))
		return -errno;
	unlinkat(sf->dirfd, sf->tmp, 0);
	return 0;
}

static int rename_replace(struct safe_file *sf)
{
	/* Checked again: something may have taken the name since the file was opened. */
	int err = check_target(sf->dirfd, sf->name);

	if (!err && renameat(sf->dirfd, sf->tmp, sf->dirfd, sf->name))
		err = -errno;
	return err;
}

int safe_file__publish(struct safe_file *sf)
{
	int err = 0;

	if (sf->published || sf->fd < 0)
		return -EINVAL;
	if (fsync(sf->fd))
		err = -errno;
	if (!err && !sf->tmp[0])
		err = sf->mode == SAFE_FILE_NEW ? link_unnamed(sf, sf->name) : link_unnamed_tmp(sf);
	if (!err && sf->tmp[0])
		err = sf->mode == SAFE_FILE_NEW ? rename_noreplace(sf) : rename_replace(sf);
	if (err) {
		if (sf->tmp[0])
			unlinkat(sf->dirfd, sf->tmp, 0);
		sf->tmp[0] = '\0';
		return err;
	}
	sf->tmp[0] = '\0';
	sf->published = true;
	return 0;
}

void safe_file__free(struct safe_file *sf)
{
	if (!sf)
		return;
	if (!sf->published && sf->tmp[0])
		unlinkat(sf->dirfd, sf->tmp, 0);
	if (sf->fd >= 0)
		close(sf->fd);
	if (sf->dirfd >= 0)
		close(sf->dirfd);
	free(sf->name);
	free(sf);
}

/* The next component of *p, with *p moved past it; NULL at the end. */
static const char *next_component(const char **p, size_t *len)
{
	const char *s = *p;

	while (*s == '/')
		s++;
	if (!*s)
		return NULL;
	*len = strcspn(s, "/");
	*p = s + *len;
	return s;
}

/* Steps into name under *fd, made when missing; made ones are not followed if links. */
static int make_step(int *fd, const char *name, mode_t mode, bool *created)
{
	int next, flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;

	*created = false;
	if (mkdirat(*fd, name, mode)) {
		if (errno != EEXIST)
			return -errno;
	} else {
		*created = true;
		/* Ours a moment ago: a link there now was planted. */
		flags |= O_NOFOLLOW;
	}
	next = openat(*fd, name, flags);
	if (next < 0)
		return -errno;
	close(*fd);
	*fd = next;
	return 0;
}

int safe_file__make_dirs(const char *path, mode_t mode, unsigned int *made)
{
	const char *p = path, *comp;
	char name[NAME_MAX + 1], *upto;
	int fd, err = 0;
	size_t len;
	bool created;

	*made = 0;
	fd = open(*path == '/' ? "/" : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (!err && (comp = next_component(&p, &len))) {
		if (len > NAME_MAX) {
			err = -ENAMETOOLONG;
			break;
		}
		memcpy(name, comp, len);
		name[len] = '\0';
		err = make_step(&fd, name, mode, &created);
		if (!err && created)
			(*made)++;
	}
	if (!err)
		return fd;
	close(fd);
	/* What was made ends at the component that failed. */
	upto = *made ? strndup(path, (size_t)(comp - path)) : NULL;
	if (upto)
		safe_file__remove_made_dirs(upto, *made);
	free(upto);
	*made = 0;
	return err;
}

/* Cuts the last component of p, skipping "." ones; false at a ".." or at the start. */
static bool cut_component(char *p, char **last)
{
	char *end = p + strlen(p), *start;

	for (;;) {
		while (end > p && end[-1] == '/')
			end--;
		for (start = end; start > p && start[-1] != '/'; start--)
			;
		if (start == end || (end - start == 2 && !strncmp(start, "..", 2)))
			return false;
		if (end - start == 1 && *start == '.') {
			end = start;
			continue;
		}
		*end = '\0';
		*last = start;
		return true;
	}
}

int safe_file__remove_made_dirs(const char *path, unsigned int made)
{
	char *p = strdup(path), *last;
	int err = 0;

	if (!p)
		return -ENOMEM;
	for (; made && cut_component(p, &last); made--) {
		if (rmdir(p)) {
			err = -errno;
			break;
		}
		*last = '\0';
		if (last == p) /* a relative path made whole */
			break;
	}
	free(p);
	return err;
}

int safe_file__child_dir(int dirfd, const char *name, mode_t mode, bool *created)
{
	struct stat st;
	int fd;

	*created = false;
	if (!valid_name(name))
		return -EINVAL;
	if (mkdirat(dirfd, name, mode) == 0)
		*created = true;
	else if (errno != EEXIST)
		return -errno;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		int err = -errno;

		/* Some kernels say ENOTDIR for a link to a folder opened O_NOFOLLOW. */
		if (err == -ENOTDIR && !fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) &&
		    S_ISLNK(st.st_mode))
			err = -ELOOP;
		return err;
	}
	if (fstat(fd, &st) || st.st_uid != geteuid()) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

bool safe_file__trusted_dir(const struct stat *st, bool sticky_ok)
{
	if (st->st_uid != 0 && st->st_uid != geteuid())
		return false;
	if (!(st->st_mode & (S_IWGRP | S_IWOTH)))
		return true;
	return sticky_ok && (st->st_mode & S_ISVTX);
}

/* Who may own what is trusted, for messages: "root", or "root or uid N". */
static const char *trusted_owners(char *buf, size_t len)
{
	if (!geteuid())
		return "root";
	snprintf(buf, len, "root or uid %u", (unsigned)geteuid());
	return buf;
}

/* Whether the opened file may be trusted; -errno with why (and the fix) when not. */
static int check_trusted(const struct stat *st, bool secret, char *why, size_t len)
{
	unsigned int mode = st->st_mode & 07777;
	char who[32];

	if (!S_ISREG(st->st_mode)) {
		snprintf(why, len, "it is %s: give a regular file", safe_file__kind(st->st_mode));
		return -EINVAL;
	}
	if (st->st_uid != 0 && st->st_uid != geteuid()) {
		snprintf(why, len, "it is owned by uid %u, who may write in it what they like: "
			 "only a file owned by %s is taken (chown it)", (unsigned)st->st_uid,
			 trusted_owners(who, sizeof(who)));
		return -EPERM;
	}
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(why, len, "other users may write it (mode %04o): chmod go-w it", mode);
		return -EPERM;
	}
	if (secret && (st->st_mode & (S_IRWXG | S_IRWXO))) {
		snprintf(why, len, "other users may read it (mode %04o), and it is a secret: "
			 "chmod 600 it", mode);
		return -EPERM;
	}
	return 0;
}

/*
 * Opens the folders of an absolute, link-free path from "/", each checked
 * and none through a link (one planted since realpath is refused). The last
 * one's descriptor, or -errno with why.
 */
static int open_trusted_dirs(char *dir, char *why, size_t len)
{
	char *save = NULL, walked[PATH_MAX] = "/", who[32];
	int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC), nfd;
	struct stat st;

	for (char *c = strtok_r(dir, "/", &save);; c = strtok_r(NULL, "/", &save)) {
		if (fd < 0 || fstat(fd, &st)) {
			int err = -errno;

			snprintf(why, len, "cannot open its folder %s: %s", walked, strerror(errno));
			if (fd >= 0)
				close(fd);
			return err;
		}
		if (!safe_file__trusted_dir(&st, true)) {
			snprintf(why, len, "its folder %s may be written by another user (owner uid %u, "
				 "mode %04o), who could put another file in its place: keep it in "
				 "folders only %s may write", walked, (unsigned)st.st_uid,
				 (unsigned)(st.st_mode & 07777), trusted_owners(who, sizeof(who)));
			close(fd);
			return -EPERM;
		}
		if (!c)
			return fd;
		nfd = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		close(fd);
		fd = nfd;
		snprintf(walked + strlen(walked), sizeof(walked) - strlen(walked), "%s%s",
			 walked[1] ? "/" : "", c);
	}
}

int safe_file__open_trusted(const char *path, bool secret, char *why, size_t len)
{
	char *real = realpath(path, NULL), *base;
	struct stat st;
	int dirfd, fd = -1, err;

	why[0] = '\0';
	if (!real) {
		err = -errno;
		snprintf(why, len, "%s", strerror(errno));
		return err;
	}
	base = strrchr(real, '/');
	*base++ = '\0';
	dirfd = open_trusted_dirs(real, why, len);
	if (dirfd >= 0) {
		/* An empty name: the path was "/", which is a folder. */
		fd = openat(dirfd, *base ? base : ".",
			    O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
		err = fd < 0 || fstat(fd, &st) ? -errno : check_trusted(&st, secret, why, len);
		if (err && !why[0])
			snprintf(why, len, "%s", strerror(-err));
		close(dirfd);
	} else {
		err = dirfd;
	}
	free(real);
	if (err && fd >= 0)
		close(fd);
	return err ? err : fd;
}
