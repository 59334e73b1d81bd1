// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "format.h"
#include "log.h"
#include "store.h"

struct kept {
	long n;
	uint64_t bytes;
};

struct store {
	char out[PATH_MAX];
	uint64_t limit, bytes, removed;
	long next;
	struct kept *v;		/* oldest first */
	size_t nv, cap;
};

static uint64_t du_sum;

static int du_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)path;
	(void)ftw;
	if (flag == FTW_F)
		du_sum += (uint64_t)sb->st_blocks * 512;
	return 0;
}

/* Bytes on disk under dir; the daemon's thread is the only caller. */
static uint64_t du(const char *dir)
{
	du_sum = 0;
	nftw(dir, du_entry, 8, FTW_PHYS);
	return du_sum;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	remove(path);
	return 0;
}

static int push(struct store *st, long n, uint64_t bytes)
{
	if (st->nv == st->cap) {
		size_t cap = st->cap ? st->cap * 2 : 64;
		struct kept *nv = realloc(st->v, cap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		st->v = nv;
		st->cap = cap;
	}
	st->v[st->nv++] = (struct kept){ n, bytes };
	st->bytes += bytes;
	return 0;
}

static int by_n(const void *a, const void *b)
{
	const struct kept *x = a, *y = b;

	return (x->n > y->n) - (x->n < y->n);
}

/* The run_<n> folders already there count towards the limit, oldest first. */
static void scan(struct store *st)
{
	DIR *d = opendir(st->out);
	struct dirent *de;
	char path[PATH_MAX + 300];

	if (!d)
		return;
	while ((de = readdir(d))) {
		char *end;
		long n;

		struct stat sb;

		if (strncmp(de->d_name, "run_", 4) || de->d_type != DT_DIR)
			continue;
		n = strtol(de->d_name + 4, &end, 10);
		if (*end || n < 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", st->out, de->d_name);
		/* Retention removes only folders of ours: another user's is left alone. */
		if (lstat(path, &sb) || sb.st_uid != geteuid()) {
			if (n >= st->next)
				st->next = n + 1;
			continue;
		}
		push(st, n, du(path));
		if (n >= st->next)
			st->next = n + 1;
	}
	closedir(d);
	qsort(st->v, st->nv, sizeof(*st->v), by_n);
}

struct store *store__new(const char *out, uint64_t limit, char *err, size_t len)
{
	struct store *st = calloc(1, sizeof(*st));
	struct stat sb;

	if (!st)
		return NULL;
	snprintf(st->out, sizeof(st->out), "%s", out);
	st->limit = limit;
	if (mkdir(out, 0755) && errno != EEXIST) {
		int e = errno;

		snprintf(err, len, "cannot make the output folder %s: %s", out, strerror(e));
		free(st);
		errno = e;
		return NULL;
	}
	/* Never through a link: the folder must be a folder, not a link to one. */
	if (lstat(out, &sb) || !S_ISDIR(sb.st_mode)) {
		snprintf(err, len, "output %s is not a folder (a link or a file): give a folder "
			 "with -o", out);
		free(st);
		errno = ENOTDIR;
		return NULL;
	}
	/*
	 * Retention removes folders under it: another user able to write there
	 * could swap one for a link while it is removed.
	 */
	if (sb.st_uid != geteuid() || (sb.st_mode & (S_IWGRP | S_IWOTH))) {
		snprintf(err, len, "output %s may be written by other users (owner %u, mode %03o), "
			 "and the daemon removes old traces there: give a folder only it writes "
			 "with -o, or chmod go-w it", out, (unsigned)sb.st_uid,
			 (unsigned)(sb.st_mode & 0777));
		free(st);
		errno = EPERM;
		return NULL;
	}
	scan(st);
	return st;
}

void store__free(struct store *st)
{
	if (!st)
		return;
	free(st->v);
	free(st);
}

void store__set_limit(struct store *st, uint64_t limit)
{
	st->limit = limit;
}

int store__next_dir(struct store *st, char *buf, size_t len)
{
	return snprintf(buf, len, "%s/run_%ld", st->out, st->next++) < (int)len ? 0 : -ENAMETOOLONG;
}

void store__written(struct store *st, const char *dir)
{
	const char *base = strrchr(dir, '/');
	char path[PATH_MAX + 32];
	long n = base ? strtol(base + 5, NULL, 10) : -1;

	push(st, n, du(dir));
	/* The newest is kept whatever its size: it was just asked for. */
	while (st->bytes > st->limit && st->nv > 1) {
		snprintf(path, sizeof(path), "%s/run_%ld", st->out, st->v[0].n);
		nftw(path, rm_entry, 8, FTW_DEPTH | FTW_PHYS);
		st->bytes -= st->v[0].bytes;
		st->removed++;
		memmove(st->v, st->v + 1, (st->nv - 1) * sizeof(*st->v));
		st->nv--;
	}
}

uint64_t store__bytes(const struct store *st)
{
	return st->bytes;
}

uint64_t store__removed(const struct store *st)
{
	return st->removed;
}

static int add_kernel(struct trace_counts *tc, const char *kernel, const char *api)
{
	struct trace_kernel *nk;

	for (size_t i = 0; i < tc->nk; i++) {
		struct trace_kernel *k = &tc->k[i];

		if (!strcmp(k->api, api) && (k->kernel ? kernel && !strcmp(k->kernel, kernel) : !kernel)) {
			k->n++;
			return 0;
		}
	}
	nk = realloc(tc->k, (tc->nk + 1) * sizeof(*nk));
	if (!nk)
		return -ENOMEM;
	tc->k = nk;
	nk = &tc->k[tc->nk++];
	nk->kernel = kernel ? strdup(kernel) : NULL;
	nk->api = strdup(api);
	nk->n = 1;
	return 0;
}

static int add_gpu(struct trace_counts *tc, double s)
{
	double *nv = realloc(tc->gpu_kernel_s, (tc->ngpu + 1) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	tc->gpu_kernel_s = nv;
	nv[tc->ngpu++] = s;
	return 0;
}

static int count_event(struct trace_counts *tc, json_t *ev)
{
	const char *cat = json_string_value(json_object_get(ev, TRACE_KEY_CAT));
	const char *ph = json_string_value(json_object_get(ev, TRACE_KEY_PH));
	const char *name = json_string_value(json_object_get(ev, TRACE_KEY_NAME));
	json_t *args = json_object_get(ev, TRACE_KEY_ARGS);

	if (!cat || !ph || strcmp(ph, TRACE_PH_COMPLETE))
		return 0;
	if ((!strcmp(cat, TRACE_CAT_RUNTIME) || !strcmp(cat, TRACE_CAT_DRIVER)) && name) {
		tc->launches++;
		return add_kernel(tc, json_string_value(json_object_get(args, TRACE_ARG_KERNEL)),
				  name);
	}
	if (!strcmp(cat, TRACE_CAT_KERNEL))
		return add_gpu(tc, json_number_value(json_object_get(ev, TRACE_KEY_DUR)) / 1e6);
	return 0;
}

static int busiest_first(const void *a, const void *b)
{
	const struct trace_kernel *x = a, *y = b;

	return (x->n < y->n) - (x->n > y->n);
}

/* Appends the code point as UTF-8. */
static char *put_utf8(char *o, unsigned int cp)
{
	if (cp < 0x80) {
		*o++ = (char)cp;
	} else if (cp < 0x800) {
		*o++ = (char)(0xc0 | cp >> 6);
		*o++ = (char)(0x80 | (cp & 0x3f));
	} else {
		*o++ = (char)(0xe0 | cp >> 12);
		*o++ = (char)(0x80 | ((cp >> 6) & 0x3f));
		*o++ = (char)(0x80 | (cp & 0x3f));
	}
	return o;
}

/*
 * The JSON string after key in line ("key": "..."), decoded into buf; NULL
 * when the key is not there. A key cannot be matched inside a string value:
 * a quote there is escaped.
 */
static const char *string_at(const char *line, const char *key, char *buf, size_t len)
{
	const char *p = strstr(line, key);
	char *o = buf, *end = buf + len - 4;

	if (!p)
		return NULL;
	for (p += strlen(key); *p && *p != '"' && o < end; p++) {
		if (*p != '\\') {
			*o++ = *p;
			continue;
		}
		switch (*++p) {
		case 'n': *o++ = '\n'; break;
		case 't': *o++ = '\t'; break;
		case 'r': *o++ = '\r'; break;
		case 'b': *o++ = '\b'; break;
		case 'f': *o++ = '\f'; break;
		case 'u': {
			unsigned int cp = 0;

			if (sscanf(p + 1, "%4x", &cp) != 1)
				return NULL;
			o = put_utf8(o, cp);
			p += 4;
			break;
		}
		case '\0': return NULL;
		default: *o++ = *p; break;
		}
	}
	if (*p != '"')
		return NULL;
	*o = '\0';
	return buf;
}

/*
 * One event line of cuprobe's own layout (trace/format.h: an event a line),
 * read without building it: a window of 10,000 launches is read back in a
 * few milliseconds, not the tens that a JSON tree takes.
 */
static int count_line(struct trace_counts *tc, const char *line)
{
	static const char cat_key[] = "\"" TRACE_KEY_CAT "\": \"";
	static const char name_key[] = "\"" TRACE_KEY_NAME "\": \"";
	static const char kernel_key[] = "\"" TRACE_ARG_KERNEL "\": \"";
	static const char dur_key[] = "\"" TRACE_KEY_DUR "\": ";
	static char cat[64], name[256], kernel[8192];
	const char *args, *dur;

	if (strncmp(line, TRACE_LINE_EVENT_PREFIX "\"" TRACE_KEY_PH "\": \"" TRACE_PH_COMPLETE "\"",
		    strlen(TRACE_LINE_EVENT_PREFIX "\"" TRACE_KEY_PH "\": \"" TRACE_PH_COMPLETE "\"")) ||
	    !string_at(line, cat_key, cat, sizeof(cat)))
		return 0;
	if (!strcmp(cat, TRACE_CAT_RUNTIME) || !strcmp(cat, TRACE_CAT_DRIVER)) {
		if (!string_at(line, name_key, name, sizeof(name)))
			return -EINVAL;
		args = strstr(line, "\"" TRACE_KEY_ARGS "\": {");
		tc->launches++;
		return add_kernel(tc, args ? string_at(args, kernel_key, kernel, sizeof(kernel)) : NULL,
				  name);
	}
	if (!strcmp(cat, TRACE_CAT_KERNEL)) {
		dur = strstr(line, dur_key);
		return dur ? add_gpu(tc, strtod(dur + strlen(dur_key), NULL) / 1e6) : -EINVAL;
	}
	return 0;
}

/* 0, or -EINVAL when the file is not in cuprobe's line layout (then it is read whole). */
static int read_lines(const char *path, struct trace_counts *tc)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	bool in_events = false, closed = false;
	int err = 0;

	if (!f)
		return -errno;
	while (!err && !closed && getline(&line, &cap, f) > 0) {
		line[strcspn(line, "\n")] = '\0';
		if (!in_events)
			in_events = !strcmp(line, TRACE_LINE_EVENTS_OPEN);
		else if (!strcmp(line, TRACE_LINE_EVENTS_CLOSE) ||
			 !strcmp(line, TRACE_LINE_EVENTS_CLOSE_MORE))
			closed = true;
		else if (strncmp(line, TRACE_LINE_EVENT_PREFIX, strlen(TRACE_LINE_EVENT_PREFIX)))
			err = -EINVAL;
		else
			err = count_line(tc, line);
	}
	free(line);
	fclose(f);
	return err ? err : closed ? 0 : -EINVAL;
}

int trace_counts__read(const char *path, struct trace_counts *tc)
{
	json_error_t jerr;
	json_t *root, *evs, *ev;
	size_t i;
	int err = 0;

	memset(tc, 0, sizeof(*tc));
	if (!read_lines(path, tc)) {
		qsort(tc->k, tc->nk, sizeof(*tc->k), busiest_first);
		return 0;
	}
	/* Not in cuprobe's layout: read as any JSON. */
	trace_counts__free(tc);
	root = json_load_file(path, 0, &jerr);
	if (!root) {
		p_warn("cannot read the window's trace %s: %s (line %d)", path, jerr.text, jerr.line);
		return -EINVAL;
	}
	evs = json_object_get(root, TRACE_KEY_EVENTS);
	json_array_foreach(evs, i, ev) {
		err = count_event(tc, ev);
		if (err)
			break;
	}
	json_decref(root);
	qsort(tc->k, tc->nk, sizeof(*tc->k), busiest_first);
	return err;
}

void trace_counts__free(struct trace_counts *tc)
{
	for (size_t i = 0; i < tc->nk; i++) {
		free(tc->k[i].kernel);
		free(tc->k[i].api);
	}
	free(tc->k);
	free(tc->gpu_kernel_s);
	memset(tc, 0, sizeof(*tc));
}
