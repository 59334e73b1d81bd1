// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "daemon/trace_get.h"
#include "util/safe_file.h"

/* OUT/run_<n>/FILE: nothing the daemon writes lies deeper. */
#define TRACE_MAX_DEPTH 3
#define TRACE_SUFFIX ".pt.trace.json"

/* name made relative to out, or NULL when it is absolute and elsewhere. */
static const char *relative(const char *out, const char *name)
{
	size_t n = strlen(out);

	if (name[0] != '/')
		return name;
	while (n > 1 && out[n - 1] == '/')
		n--;
	if (strncmp(name, out, n) || name[n] != '/')
		return NULL;
	return name + n + 1;
}

/* A relative path of plain components ("", "." and ".." refused), in comps. */
static int split(const char *rel, char *buf, size_t len, char **comps, int *n)
{
	char *save = NULL, *c;
	size_t k = strlen(rel);

	if (!k || k >= len || rel[0] == '/' || rel[k - 1] == '/' || strstr(rel, "//"))
		return -EINVAL;
	memcpy(buf, rel, k + 1);
	*n = 0;
	for (c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (!strcmp(c, ".") || !strcmp(c, "..") || *n == TRACE_MAX_DEPTH)
			return -EINVAL;
		comps[(*n)++] = c;
	}
	return *n ? 0 : -EINVAL;
}

/* The folders on the way, each opened from the last without following a link. */
static int walk(int dirfd, char **comps, int n, char *why, size_t len)
{
	int fd = dirfd;

	for (int i = 0; i < n; i++) {
		int next = openat(fd, comps[i], O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		int err = -errno;

		if (fd != dirfd)
			close(fd);
		if (next >= 0) {
			fd = next;
			continue;
		}
		if (err == -ENOENT) {
			snprintf(why, len, "no folder '%s' in the output folder", comps[i]);
			return -ENOENT;
		}
		snprintf(why, len, "'%s' is %s, not a folder of the daemon's", comps[i],
			 err == -ELOOP || err == -ENOTDIR ? "a link or a file" : strerror(-err));
		return -EACCES;
	}
	if (fd == dirfd && (fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0)) < 0)
		return -errno;
	return fd;
}

/* The file itself: a regular file of ours, looked at before it is opened (no FIFO, no device). */
static int open_file(int at, const char *name, uint64_t *size, char *why, size_t len)
{
	struct stat before, sb;
	int fd;

	if (fstatat(at, name, &before, AT_SYMLINK_NOFOLLOW)) {
		snprintf(why, len, "no trace '%s' there", name);
		return errno == ENOENT ? -ENOENT : -EACCES;
	}
	if (!S_ISREG(before.st_mode) || before.st_uid != geteuid()) {
		snprintf(why, len, "'%s' is %s, not a trace the daemon wrote", name,
			 S_ISREG(before.st_mode) ? "another user's file" :
			 safe_file__kind(before.st_mode));
		return -EACCES;
	}
	fd = openat(at, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb) || sb.st_ino != before.st_ino || sb.st_dev != before.st_dev ||
	    !S_ISREG(sb.st_mode)) {
		snprintf(why, len, "'%s' changed while it was opened", name);
		if (fd >= 0)
			close(fd);
		return -EACCES;
	}
	*size = (uint64_t)sb.st_size;
	return fd;
}

int trace_get__open(int dirfd, const char *out, const char *name, uint64_t *size, char *why,
		    size_t len)
{
	const char *rel = relative(out, name);
	char buf[PATH_MAX], *comps[TRACE_MAX_DEPTH];
	size_t k;
	int n, at, fd;

	if (!rel || split(rel, buf, sizeof(buf), comps, &n)) {
		snprintf(why, len, "'%s' is not a trace's path under %s (give the capture's "
			 "\"trace\", or run_N/FILE; no '..', '.' or '//')", name, out);
		return -EINVAL;
	}
	k = strlen(comps[n - 1]);
	if (k <= strlen(TRACE_SUFFIX) || strcmp(comps[n - 1] + k - strlen(TRACE_SUFFIX),
						TRACE_SUFFIX)) {
		snprintf(why, len, "'%s' is not a trace (*%s)", comps[n - 1], TRACE_SUFFIX);
		return -EACCES;
	}
	at = walk(dirfd, comps, n - 1, why, len);
	if (at < 0)
		return at;
	fd = open_file(at, comps[n - 1], size, why, len);
	close(at);
	return fd;
}
