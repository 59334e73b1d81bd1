// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "report/err.h"
#include "report/walk.h"
#include "trace/format.h"
#include "util/safe_file.h"

/* Takes ownership of path, also on failure. */
static int push_path(struct vec *paths, char *path)
{
	char **slot = vec__push(paths);

	if (!slot) {
		free(path);
		return -ENOMEM;
	}
	*slot = path;
	return 0;
}

void walk__free(struct vec *paths)
{
	for (size_t i = 0; i < paths->len; i++)
		free(*vec_at(paths, char *, i));
	vec__free(paths);
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* A FIFO or a device would block or have side effects when read: never opened. */
static int refuse_special(const char *path, mode_t mode)
{
	report_err("%s: not a regular file (%s): pass a trace file or a folder of them", path,
		   safe_file__kind(mode));
	return -EINVAL;
}

static int find_traces(const char *dir, struct vec *paths);

static int visit_entry(const char *dir, const char *name, struct vec *paths)
{
	const char *sep = dir[strlen(dir) - 1] == '/' ? "" : "/";
	struct stat st;
	char *path;
	int err = 0;

	if (asprintf(&path, "%s%s%s", dir, sep, name) < 0)
		return -ENOMEM;
	/* lstat: links to folders are not followed, so a loop of links cannot recurse. */
	if (lstat(path, &st)) {
		err = errno == ENOENT ? 0 : -errno; /* removed while we looked */
		if (err)
			report_err("cannot stat %s: %s: check its permissions", path, strerror(-err));
	} else if (S_ISDIR(st.st_mode)) {
		err = find_traces(path, paths);
	} else if (has_suffix(name, TRACE_SUFFIX)) {
		/* A link to a trace is read; where it leads is checked when opened. */
		if (S_ISREG(st.st_mode) || S_ISLNK(st.st_mode))
			return push_path(paths, path);
		err = refuse_special(path, st.st_mode);
	}
	free(path);
	return err;
}

/* Appends the trace files under dir, at any depth. */
static int find_traces(const char *dir, struct vec *paths)
{
	struct dirent *de;
	DIR *d = opendir(dir);
	int err = 0;

	if (!d) {
		err = -errno;
		report_err("cannot read folder %s: %s: check its permissions", dir, strerror(-err));
		return err;
	}
	while (!err && (de = readdir(d))) {
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			err = visit_entry(dir, de->d_name, paths);
	}
	closedir(d);
	return err;
}

int walk__expand(const char *path, struct vec *paths)
{
	size_t before = paths->len;
	struct stat st;
	char *copy;
	int err;

	if (stat(path, &st)) {
		err = -errno;
		report_err("%s: %s: %s", path, strerror(-err),
			   err == -EACCES ? REPORT_PRIVATE_FIX : "check the path");
		return err;
	}
	if (S_ISREG(st.st_mode)) {
		copy = strdup(path);
		return copy ? push_path(paths, copy) : -ENOMEM;
	}
	if (!S_ISDIR(st.st_mode))
		return refuse_special(path, st.st_mode);
	err = find_traces(path, paths);
	if (err)
		return err;
	if (paths->len == before) {
		report_err("no trace found under %s: pass a folder holding *.pt.trace.json files, "
			   "as cuprobe record writes them",
			   path);
		return -ENOENT;
	}
	/* readdir's order is the file system's: sort for a reproducible report. */
	qsort(vec_at(paths, char *, before), paths->len - before, sizeof(char *), cmp_str);
	return 0;
}
