// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include "core/proc/procmaps.h"
#include "util/log.h"
#include "util/safe_file.h"

/* include/uapi/linux/magic.h */
#define OVERLAYFS_SUPER_MAGIC 0x794c7630

static int push_entry(struct procmaps *m, size_t *cap, const struct map_entry *src)
{
	if (m->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct map_entry *v = realloc(m->v, ncap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		m->v = v;
		*cap = ncap;
	}
	m->v[m->n++] = *src;
	return 0;
}

/* Hex digits at *p, then the character end (0: any); false when there are none. */
static bool take_hex(const char **p, char end, unsigned long long *v)
{
	const char *q = *p;
	unsigned long long x = 0;
	int d;

	for (; *q; q++) {
		if (*q >= '0' && *q <= '9')
			d = *q - '0';
		else if ((*q | 0x20) >= 'a' && (*q | 0x20) <= 'f')
			d = (*q | 0x20) - 'a' + 10;
		else
			break;
		if (x >> 60)
			return false;
		x = x << 4 | (unsigned)d;
	}
	if (q == *p || (end && *q != end))
		return false;
	*v = x;
	*p = q + (end != 0);
	return true;
}

/*
 * One line, "start-end perms offset major:minor inode [path]": parsed by
 * hand, since a scan of a large process reads thousands of them while it
 * is held (sscanf took half of the read).
 */
static int push_line(struct procmaps *m, const char *line, size_t *cap)
{
	unsigned long long start, end, off, ino = 0, maj, min;
	const char *p = line, *perms;
	struct map_entry e;
	int err;

	if (!take_hex(&p, '-', &start) || !take_hex(&p, ' ', &end))
		return -EINVAL;
	perms = p;
	while (*p && *p != ' ' && *p != '\n')
		p++;
	if (p - perms < 3 || *p++ != ' ' || !take_hex(&p, ' ', &off) ||
	    !take_hex(&p, ':', &maj) || !take_hex(&p, ' ', &min))
		return -EINVAL;
	if (*p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++)
		ino = ino * 10 + (unsigned)(*p - '0');
	if (*p && *p != ' ' && *p != '\t' && *p != '\n')
		return -EINVAL;
	/* Spaces up to the path, but not past the end of the line. */
	while (*p == ' ' || *p == '\t')
		p++;
	e = (struct map_entry){
		.start = start,
		.end = end,
		.offset = off,
		.inode = ino,
		.dev = makedev((unsigned)maj, (unsigned)min),
		.exec = perms[2] == 'x',
	};
	if (*p && *p != '\n') {
		e.path = strndup(p, strcspn(p, "\n"));
		if (!e.path)
			return -ENOMEM;
	}
	err = push_entry(m, cap, &e);
	if (err)
		free(e.path);
	return err;
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

/*
 * The whole file in as few reads as it takes (each read of a seq_file walks
 * to its place again), into buf, grown as needed. Returns its length or -errno.
 */
static ssize_t read_all(int fd, char **buf, size_t *cap)
{
	size_t len = 0;
	ssize_t r;

	for (;;) {
		if (*cap - len < 4096) {
			size_t ncap = *cap * 2;
			char *nb = ncap > (64u << 20) ? NULL : realloc(*buf, ncap);

			if (!nb)
				return -ENOMEM;
			*buf = nb;
			*cap = ncap;
		}
		r = read(fd, *buf + len, *cap - len - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (!r)
			break;
		len += (size_t)r;
	}
	(*buf)[len] = '\0';
	return (ssize_t)len;
}

int procmaps__read(pid_t pid, struct procmaps *out)
{
	size_t cap = 64 << 10;
	char path[64], *buf;
	ssize_t len;
	int fd, err;

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	buf = malloc(cap);
	len = buf ? read_all(fd, &buf, &cap) : -ENOMEM;
	close(fd);
	/* A process gone while its maps were read: ESRCH from the read. */
	err = len < 0 ? (int)len : procmaps__parse(buf, out);
	free(buf);
	if (!err && out->n == 0)
		err = -ESRCH; /* a zombie has no mappings */
	if (err)
		procmaps__free(out);
	return err;
}

/* PROCMAP_QUERY (include/uapi/linux/fs.h, Linux 6.11): one mapping by address. */
struct procmap_query_arg {
	uint64_t size, query_flags, query_addr;
	uint64_t vma_start, vma_end, vma_flags, vma_page_size, vma_offset, inode;
	uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
	uint64_t vma_name_addr, build_id_addr;
};

#define PROCMAP_QUERY_IOC _IOWR('f', 17, struct procmap_query_arg)
#define PROCMAP_QUERY_VMA_EXECUTABLE 0x04
#define PROCMAP_QUERY_COVERING_OR_NEXT_VMA 0x10

/* More mappings than any process has: a bound on the walk, not a limit met. */
#define EXEC_MAPS_MAX (1u << 20)

/* The executable mappings through PROCMAP_QUERY; -ENOTTY where the kernel has none. */
static int query_exec(int fd, struct procmaps *out)
{
	char name[PATH_MAX];
	size_t cap = 0;
	uint64_t addr = 0;
	int err = 0;

	for (unsigned int i = 0; i < EXEC_MAPS_MAX; i++) {
		struct procmap_query_arg q = {
			.size = sizeof(q),
			.query_flags = PROCMAP_QUERY_VMA_EXECUTABLE | PROCMAP_QUERY_COVERING_OR_NEXT_VMA,
			.query_addr = addr,
			.vma_name_addr = (uint64_t)(uintptr_t)name,
			.vma_name_size = sizeof(name),
		};
		struct map_entry e = {};

		if (ioctl(fd, PROCMAP_QUERY_IOC, &q)) {
			err = errno == ENOENT ? 0 : -errno;
			break;
		}
		e.start = q.vma_start;
		e.end = q.vma_end;
		e.offset = q.vma_offset;
		e.inode = q.inode;
		e.dev = makedev(q.dev_major, q.dev_minor);
		e.exec = true;
		if (q.vma_name_size && name[0]) {
			e.path = strndup(name, sizeof(name));
			if (!e.path) {
				err = -ENOMEM;
				break;
			}
		}
		err = push_entry(out, &cap, &e);
		if (err) {
			free(e.path);
			break;
		}
		if (q.vma_end <= addr)
			break;
		addr = q.vma_end;
	}
	return err;
}

/*
 * Keeps m's executable mappings only, as PROCMAP_QUERY gives them: without
 * the vsyscall page, which the text lists but no VMA of the process holds.
 */
#define VSYSCALL_START 0xffffffffff600000ull

static void keep_exec(struct procmaps *m)
{
	size_t k = 0;

	for (size_t i = 0; i < m->n; i++) {
		if (m->v[i].exec && m->v[i].start < VSYSCALL_START)
			m->v[k++] = m->v[i];
		else
			free(m->v[i].path);
	}
	m->n = k;
}

int procmaps__read_exec(pid_t pid, struct procmaps *out)
{
	char path[64];
	int fd, err;

	memset(out, 0, sizeof(*out));
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	err = query_exec(fd, out);
	close(fd);
	/* An older kernel, or a name too long for the query: the text has them all. */
	if (err) {
		procmaps__free(out);
		err = procmaps__read(pid, out);
		if (!err)
			keep_exec(out);
	}
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

int procmaps__open_in_root(pid_t pid, const struct map_entry *m)
{
	char path[4096 + 64];
	int len;

	if (!m->path || m->path[0] != '/')
		return -ENOENT;
	len = snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, m->path);
	if (len <= 0 || (size_t)len >= sizeof(path))
		return -ENAMETOOLONG;
	return open_checked(path, O_NOFOLLOW, m);
}

int procmaps__open(pid_t pid, const struct map_entry *m)
{
	char path[4096 + 64];
	int fd;

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
	fd = procmaps__open_in_root(pid, m);
	if (fd >= 0 || fd == -ESTALE || fd == -ELOOP || fd == -EINVAL)
		return fd;
	return open_checked(m->path, O_NOFOLLOW, m);
}

uint64_t proc_start_ticks(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long v = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d "
			 "%*d %*d %*d %*d %llu", &v) != 1)
		return 0;
	return v;
}

void proc_comm(pid_t pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(buf, len, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}
