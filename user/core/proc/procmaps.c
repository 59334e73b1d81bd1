// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "core/proc/procmaps.h"
#include "util/log.h"
#include "util/safe_file.h"

/* include/uapi/linux/magic.h */
#define OVERLAYFS_SUPER_MAGIC 0x794c7630

static int push_line(struct procmaps *m, const char *line, size_t *cap)
{
	unsigned long long start, end, off, ino;
	unsigned int maj, min;
	char perms[8];
	int pos = 0;
	struct map_entry *e;

	if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu%n", &start, &end, perms, &off, &maj,
		   &min, &ino, &pos) < 7)
		return -EINVAL;
	/* Spaces up to the path, but not past the end of the line. */
	while (line[pos] == ' ' || line[pos] == '\t')
		pos++;
	if (m->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct map_entry *v = realloc(m->v, ncap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		m->v = v;
		*cap = ncap;
	}
	e = &m->v[m->n];
	memset(e, 0, sizeof(*e));
	e->start = start;
	e->end = end;
	e->offset = off;
	e->inode = ino;
	e->dev = makedev(maj, min);
	e->exec = perms[2] == 'x';
	if (pos > 0 && line[pos] && line[pos] != '\n') {
		size_t len = strcspn(line + pos, "\n");

		e->path = strndup(line + pos, len);
		if (!e->path)
			return -ENOMEM;
	}
	m->n++;
	return 0;
}

int procmaps__parse(const char *text, struct procmaps *out)
{
	size_t cap = 0;
	const char *p = text;
	int err;

	memset(out, 0, sizeof(*out));
	while (*p) {
		err = push_line(out, p, &cap);
		if (err) {
			procmaps__free(out);
			return err;
		}
		p += strcspn(p, "\n");
		if (*p)
			p++;
	}
	return 0;
}

int procmaps__read(pid_t pid, struct procmaps *out)
{
	char path[64], *line = NULL;
	size_t cap = 0, lcap = 0;
	FILE *f;
	int err = 0;

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	while (getline(&line, &lcap, f) > 0) {
		err = push_line(out, line, &cap);
		if (err)
			break;
	}
	free(line);
	fclose(f);
	if (!err && out->n == 0)
		err = -ESRCH; /* a zombie has no mappings */
	if (err)
		procmaps__free(out);
	return err;
}

void procmaps__free(struct procmaps *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->v[i].path);
	free(m->v);
	m->v = NULL;
	m->n = 0;
}

const struct map_entry *procmaps__find(const struct procmaps *m, uint64_t addr)
{
	size_t lo = 0, hi = m->n;

	/* The kernel lists mappings in address order. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (addr < m->v[mid].start)
			hi = mid;
		else if (addr >= m->v[mid].end)
			lo = mid + 1;
		else
			return &m->v[mid];
	}
	return NULL;
}

void target_file_fd_path(int fd, char *buf, size_t len)
{
	snprintf(buf, len, "/proc/self/fd/%d", fd);
}

/* Why the file behind an O_PATH descriptor is not the one wanted, or NULL. */
static const char *refusal(int pfd, const struct map_entry *m, int *err)
{
	struct statfs sfs;
	struct stat st;

	if (fstat(pfd, &st)) {
		*err = -errno;
		return strerror(errno);
	}
	if (S_ISLNK(st.st_mode)) {
		*err = -ELOOP;
		return "it is a symlink";
	}
	if (!S_ISREG(st.st_mode)) {
		*err = -EINVAL;
		return safe_file__kind(st.st_mode);
	}
	if ((uint64_t)st.st_size > TARGET_FILE_MAX) {
		*err = -EFBIG;
		return "it is larger than cuprobe reads";
	}
	*err = -ESTALE;
	if (m && (uint64_t)st.st_ino != m->inode)
		return "it is another file than the one mapped (inode)";
	if (m && (uint64_t)st.st_dev != m->dev &&
	    !(!fstatfs(pfd, &sfs) && sfs.f_type == OVERLAYFS_SUPER_MAGIC))
		return "it is another file than the one mapped (device)";
	*err = 0;
	return NULL;
}

/*
 * Opens path O_PATH (no open() of the file itself: a FIFO cannot block, a
 * device's open is never called), checks it, then reopens the checked file
 * for reading through /proc/self/fd, which names that very inode.
 */
static int open_checked(const char *path, int flags, const struct map_entry *m)
{
	char self[32];
	const char *why;
	int pfd, fd, err;

	pfd = open(path, O_PATH | O_CLOEXEC | flags);
	if (pfd < 0) {
		err = -errno;
		p_dbg("not reading %s: %s", path, strerror(-err));
		return err;
	}
	why = refusal(pfd, m, &err);
	if (why) {
		p_dbg("not reading %s: %s", path, why);
		close(pfd);
		return err;
	}
	target_file_fd_path(pfd, self, sizeof(self));
	fd = open(self, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	err = fd < 0 ? -errno : fd;
	close(pfd);
	return err;
}

int target_file_open(const char *path, bool follow)
{
	return open_checked(path, follow ? 0 : O_NOFOLLOW, NULL);
}

static bool path_deleted(const char *path)
{
	static const char deleted[] = " (deleted)";
	size_t len = strlen(path), dlen = sizeof(deleted) - 1;

	return len > dlen && !strcmp(path + len - dlen, deleted);
}

int procmaps__open(pid_t pid, const struct map_entry *m)
{
	char path[4096 + 64];
	int fd, len;

	if (!m->path || m->path[0] != '/')
		return -ENOENT;
	/* The kernel's own link to the mapped file: followed, and not compared (overlayfs). */
	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid,
		 m->start, m->end);
	fd = open_checked(path, 0, NULL);
	/* Something mapped that is no regular file (a device): nothing else is tried. */
	if (fd >= 0 || fd == -EINVAL || fd == -EFBIG)
		return fd;
	/* A deleted file has no name left, whatever a target put at "PATH (deleted)". */
	if (path_deleted(m->path))
		return -ENOENT;
	len = snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, m->path);
	if (len > 0 && (size_t)len < sizeof(path)) {
		fd = open_checked(path, O_NOFOLLOW, m);
		if (fd >= 0 || fd == -ESTALE || fd == -ELOOP || fd == -EINVAL)
			return fd;
	}
	return open_checked(m->path, O_NOFOLLOW, m);
}
