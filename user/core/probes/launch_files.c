// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The cache file has one line per pair, after a comment:
 *
 *	1 EXE_DEV EXE_INO DEV INO EXE PATH
 *
 * (1: the format). Paths are written only when they have no space or
 * control character, so a line splits on spaces.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "core/probes/launch_files.h"
#include "util/safe_file.h"
#include "util/vec.h"

/* A cache file larger than this is not one cuprobe wrote (LAUNCH_FILES_MAX lines). */
#define CACHE_MAX_BYTES (LAUNCH_FILES_MAX * (2 * PATH_MAX + 128))

struct launch_files {
	struct vec v; /* struct launch_file */
	size_t learned;
};

struct launch_files *launch_files__new(void)
{
	struct launch_files *lf = calloc(1, sizeof(*lf));

	if (lf)
		lf->v = VEC_INIT(struct launch_file);
	return lf;
}

void launch_files__free(struct launch_files *lf)
{
	if (!lf)
		return;
	for (size_t i = 0; i < lf->v.len; i++) {
		struct launch_file *f = vec_at(&lf->v, struct launch_file, i);

		free(f->exe);
		free(f->path);
	}
	vec__free(&lf->v);
	free(lf);
}

int launch_files__add(struct launch_files *lf, const struct launch_file *nf)
{
	struct launch_file *f;
	char *exe, *path;

	for (size_t i = 0; i < lf->v.len; i++) {
		f = vec_at(&lf->v, struct launch_file, i);
		if (f->dev == nf->dev && f->ino == nf->ino && f->exe_dev == nf->exe_dev &&
		    f->exe_ino == nf->exe_ino)
			return 0;
	}
	f = NULL;
	/* Full: a pair learned now goes before the oldest one loaded. */
	for (size_t i = lf->v.len; lf->v.len >= LAUNCH_FILES_MAX && nf->learned && i-- > 0;) {
		if (!vec_at(&lf->v, struct launch_file, i)->learned) {
			f = vec_at(&lf->v, struct launch_file, i);
			break;
		}
	}
	if (!f && lf->v.len >= LAUNCH_FILES_MAX)
		return 0;
	exe = strdup(nf->exe ? nf->exe : "");
	path = strdup(nf->path);
	if (!exe || !path) {
		free(exe);
		free(path);
		return -ENOMEM;
	}
	if (f) {
		free(f->exe);
		free(f->path);
	} else if (!(f = vec__push(&lf->v))) {
		free(exe);
		free(path);
		return -ENOMEM;
	}
	*f = *nf;
	f->exe = exe;
	f->path = path;
	lf->learned += nf->learned;
	return 0;
}

size_t launch_files__count(const struct launch_files *lf)
{
	return lf ? lf->v.len : 0;
}

const struct launch_file *launch_files__at(const struct launch_files *lf, size_t i)
{
	return vec_at(&lf->v, struct launch_file, i);
}

size_t launch_files__learned(const struct launch_files *lf)
{
	return lf ? lf->learned : 0;
}

int launch_files__exe_of(int pid, uint64_t *dev, uint64_t *ino, char *name, size_t len)
{
	char link[64];
	struct stat st;
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", pid);
	if (stat(link, &st))
		return errno == ENOENT ? -ESRCH : -errno;
	*dev = st.st_dev;
	*ino = st.st_ino;
	if (!name)
		return 0;
	n = readlink(link, name, len - 1);
	if (n < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	name[n] = '\0';
	if (n >= 10 && !strcmp(name + n - 10, " (deleted)"))
		return -ENOENT;
	return 0;
}

const char *launch_files__cache_path(void)
{
	const char *p = getenv("CUPROBE_CACHE");

	if (!p)
		return LAUNCH_FILES_CACHE;
	if (!*p || !strcmp(p, "off"))
		return NULL;
	return p;
}

/* The folder part of path ("." for a bare name), in buf. */
static void folder_of(const char *path, char *buf, size_t len)
{
	const char *slash = strrchr(path, '/');

	if (!slash)
		snprintf(buf, len, ".");
	else if (slash == path)
		snprintf(buf, len, "/");
	else
		snprintf(buf, len, "%.*s", (int)(slash - path), path);
}

/* What root may trust: owned by us (or root) and written by no one else. */
static bool trusted(const struct stat *st)
{
	return (st->st_uid == geteuid() || st->st_uid == 0) && !(st->st_mode & (S_IWGRP | S_IWOTH));
}

/* The fix every refusal that no other fix helps ends with. */
#define GO_WITHOUT "; set CUPROBE_CACHE=off to go without it"

static int untrusted(const char *what, const char *path, const struct stat *st, char *why,
		     size_t len)
{
	snprintf(why, len,
		 "%s %s %s: not used; make it owned by root and writable by root only "
		 "(chown root, chmod go-w), or set CUPROBE_CACHE=off",
		 what, path,
		 st->st_uid != geteuid() && st->st_uid != 0 ? "is another user's" :
							     "may be written by another user");
	return -EPERM;
}

static bool plain_name(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if ((unsigned char)*s <= ' ' || *s == 0x7f)
			return false;
	return true;
}

/* One line of the file; false when it is not one. */
static bool parse_line(char *line, struct launch_file *f)
{
	unsigned int version;
	int at = 0;
	char *exe, *path, *end;

	if (sscanf(line, "%u %" SCNu64 " %" SCNu64 " %" SCNu64 " %" SCNu64 " %n", &version,
		   &f->exe_dev, &f->exe_ino, &f->dev, &f->ino, &at) != 5 ||
	    version != 1 || !at)
		return false;
	exe = line + at;
	path = strchr(exe, ' ');
	if (!path)
		return false;
	*path++ = '\0';
	end = path + strcspn(path, "\n");
	*end = '\0';
	if (exe[0] != '/' || path[0] != '/' || !plain_name(exe) || !plain_name(path) || !f->ino)
		return false;
	f->exe = exe;
	f->path = path;
	f->learned = false;
	return true;
}

int launch_files__load(struct launch_files *lf, const char *path, size_t *bad, char *why,
		       size_t len)
{
	char dir[PATH_MAX], *line = NULL;
	size_t cap = 0, total = 0;
	struct stat st;
	int fd, n = 0, err = 0;
	FILE *fp;

	*bad = 0;
	why[0] = '\0';
	folder_of(path, dir, sizeof(dir));
	if (stat(dir, &st))
		return errno == ENOENT ? 0 : -errno;
	if (!trusted(&st))
		return untrusted("the cache's folder", dir, &st, why, len);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		err = -errno;
		snprintf(why, len, "cannot read the cache %s: %s%s", path, strerror(errno),
			 errno == ELOOP ? " (a symlink): remove it, or set CUPROBE_CACHE=off" :
					  GO_WITHOUT);
		return err;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(why, len, "the cache %s is not a regular file: remove it, or set "
			 "CUPROBE_CACHE=off", path);
		close(fd);
		return -EINVAL;
	}
	if (!trusted(&st) || (st.st_uid != geteuid())) {
		close(fd);
		return untrusted("the cache", path, &st, why, len);
	}
	fp = fdopen(fd, "r");
	if (!fp) {
		close(fd);
		return -errno;
	}
	for (ssize_t got; (got = getline(&line, &cap, fp)) > 0;) {
		struct launch_file f;

		total += got;
		if (total > CACHE_MAX_BYTES) {
			(*bad)++;
			break;
		}
		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (!parse_line(line, &f)) {
			(*bad)++;
			continue;
		}
		err = launch_files__add(lf, &f);
		if (err)
			break;
		n++;
	}
	free(line);
	fclose(fp);
	return err ? err : n;
}

/* The file or program at path is still the one of (dev, ino). */
static bool still_there(const char *path, uint64_t dev, uint64_t ino)
{
	struct stat st;

	return !stat(path, &st) && S_ISREG(st.st_mode) && st.st_dev == dev && st.st_ino == ino;
}

static int keep(struct launch_files *out, const struct launch_file *f)
{
	if (!plain_name(f->exe) || !plain_name(f->path) || !still_there(f->exe, f->exe_dev, f->exe_ino) ||
	    !still_there(f->path, f->dev, f->ino))
		return 0;
	return launch_files__add(out, f);
}

static int write_all(int fd, const struct launch_files *lf)
{
	FILE *fp;
	int fd2 = dup(fd), err = 0;

	if (fd2 < 0)
		return -errno;
	fp = fdopen(fd2, "w");
	if (!fp) {
		err = -errno;
		close(fd2);
		return err;
	}
	fprintf(fp, "# cuprobe: files with launch probes, by program, probed before they are "
		    "mapped (docs/performance.md)\n");
	for (size_t i = 0; i < lf->v.len; i++) {
		const struct launch_file *f = vec_at(&lf->v, struct launch_file, i);

		fprintf(fp, "1 %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %s %s\n", f->exe_dev,
			f->exe_ino, f->dev, f->ino, f->exe, f->path);
	}
	if (fflush(fp) || ferror(fp))
		err = -(errno ? errno : EIO);
	if (fclose(fp) && !err)
		err = -(errno ? errno : EIO);
	return err;
}

int launch_files__save(const struct launch_files *lf, const char *path, char *why, size_t len)
{
	struct launch_files *out = launch_files__new(), *now = launch_files__new();
	char dir[PATH_MAX], ignored[512];
	const char *base = strrchr(path, '/');
	struct safe_file *sf = NULL;
	unsigned int made = 0;
	struct stat st;
	size_t bad;
	int dfd = -1, err = 0;

	why[0] = '\0';
	if (!out || !now) {
		err = -ENOMEM;
		goto out;
	}
	base = base ? base + 1 : path;
	folder_of(path, dir, sizeof(dir));
	for (size_t i = 0; !err && i < lf->v.len; i++)
		if (vec_at(&lf->v, struct launch_file, i)->learned)
			err = keep(out, vec_at(&lf->v, struct launch_file, i));
	/* What another session wrote since this one loaded the file. */
	if (!err && launch_files__load(now, path, &bad, ignored, sizeof(ignored)) > 0)
		for (size_t i = 0; !err && i < now->v.len; i++)
			err = keep(out, vec_at(&now->v, struct launch_file, i));
	for (size_t i = 0; !err && i < lf->v.len; i++)
		if (!vec_at(&lf->v, struct launch_file, i)->learned)
			err = keep(out, vec_at(&lf->v, struct launch_file, i));
	if (err)
		goto out;
	dfd = safe_file__make_dirs(dir, 0700, &made);
	if (dfd < 0) {
		err = dfd;
		snprintf(why, len, "cannot make the cache's folder %s: %s" GO_WITHOUT, dir,
			 strerror(-err));
		goto out;
	}
	if (fstat(dfd, &st) || !trusted(&st)) {
		err = untrusted("the cache's folder", dir, &st, why, len);
		goto out;
	}
	sf = safe_file__open(dfd, base, SAFE_FILE_REPLACE, 0600);
	if (!sf) {
		err = -errno;
		snprintf(why, len, "cannot write the cache %s: %s" GO_WITHOUT, path, strerror(errno));
		goto out;
	}
	err = write_all(safe_file__fd(sf), out);
	if (!err)
		err = safe_file__publish(sf);
	if (err)
		snprintf(why, len, "cannot write the cache %s: %s" GO_WITHOUT, path, strerror(-err));
out:
	safe_file__free(sf);
	if (dfd >= 0)
		close(dfd);
	launch_files__free(now);
	launch_files__free(out);
	return err;
}
