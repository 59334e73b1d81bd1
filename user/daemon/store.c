// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "daemon/store.h"
#include "report/graphs.h"
#include "trace/format.h"
#include "util/log.h"
#include "util/safe_file.h"

struct kept {
	long n;
	uint64_t bytes;
};

struct store {
	char out[PATH_MAX];
	int dirfd;		/* out, held from the start: every name is looked up from it */
	struct out_mode om;
	uint64_t limit, bytes, removed, reserved;
	long next;
	struct kept *v;		/* oldest first */
	size_t nv, cap;
};

/* Run folders hold trace files, nothing deeper: a deeper tree is not ours. */
#define MAX_DEPTH 4

/* Bytes on disk under dirfd/name, never through a link. */
static uint64_t du_at(int at, const char *name, int depth)
{
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct dirent *de;
	uint64_t sum = 0;
	struct stat sb;
	DIR *d;

	if (fd < 0 || depth > MAX_DEPTH || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (fstatat(dirfd(d), de->d_name, &sb, AT_SYMLINK_NOFOLLOW))
			continue;
		if (S_ISDIR(sb.st_mode))
			sum += du_at(dirfd(d), de->d_name, depth + 1);
		else
			sum += (uint64_t)sb.st_blocks * 512;
	}
	closedir(d);
	return sum;
}

/* Removes dirfd/name and what it holds, relative to descriptors: a link is removed, never followed. */
static void rm_at(int at, const char *name, int depth)
{
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	struct dirent *de;
	DIR *d;

	if (fd < 0 || depth > MAX_DEPTH || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		unlinkat(at, name, 0);
		return;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (de->d_type == DT_DIR)
			rm_at(dirfd(d), de->d_name, depth + 1);
		else if (unlinkat(dirfd(d), de->d_name, 0) && errno == EISDIR)
			rm_at(dirfd(d), de->d_name, depth + 1);
	}
	closedir(d);
	unlinkat(at, name, AT_REMOVEDIR);
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
	int fd = dup(st->dirfd);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d))) {
		struct stat sb;
		char *end;
		long n;

		if (strncmp(de->d_name, "run_", 4))
			continue;
		n = strtol(de->d_name + 4, &end, 10);
		if (*end || n < 0)
			continue;
		if (n >= st->next)
			st->next = n + 1;
		/* Retention removes only folders of ours: another user's, or a link, is left alone. */
		if (fstatat(st->dirfd, de->d_name, &sb, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(sb.st_mode) ||
		    sb.st_uid != geteuid())
			continue;
		push(st, n, du_at(st->dirfd, de->d_name, 0));
	}
	closedir(d);
	if (st->nv > 1)
		qsort(st->v, st->nv, sizeof(*st->v), by_n);
}

/*
 * Whether a folder may hold what the daemon writes and removes: only root
 * (or the daemon's user) may rename or replace its entries. A folder others
 * may write to is safe only with the sticky bit, and then its entry on the
 * path (checked at the next level) must be ours; the last one, where the
 * daemon removes old traces, may not be written by others at all.
 */
static bool safe_folder(const struct stat *sb, bool last)
{
	return safe_file__trusted_dir(sb, !last);
}

/*
 * Walks out from "/" one component at a time, never through a link, making
 * the last component if missing, and returns the output folder's descriptor;
 * -errno with err saying which component is unsafe and what to do.
 */
static int open_output(const char *out, const struct out_mode *om, char *err, size_t len)
{
	char path[PATH_MAX], *save = NULL, *c, *next;
	int fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC), nfd;
	char walked[PATH_MAX] = "";
	struct stat sb;

	if (out[0] != '/') {
		snprintf(err, len, "output %s is not an absolute path: give -o /PATH", out);
		close(fd);
		return -EINVAL;
	}
	snprintf(path, sizeof(path), "%s", out);
	for (c = strtok_r(path, "/", &save); c; c = next) {
		next = strtok_r(NULL, "/", &save);
		if (fstat(fd, &sb) || !safe_folder(&sb, false)) {
			snprintf(err, len, "output %s: %s/ may be written by another user (owner %u, mode "
				 "%04o), who could swap the folders under it: give a path whose folders "
				 "only root may write", out, walked[0] ? walked : "",
				 (unsigned)sb.st_uid, (unsigned)(sb.st_mode & 07777));
			close(fd);
			return -EPERM;
		}
		if (!strcmp(c, "..")) {
			snprintf(err, len, "output %s: give a path without '..'", out);
			close(fd);
			return -EINVAL;
		}
		if (!next && mkdirat(fd, c, om->dir) == 0 && om->share_group)
			fchownat(fd, c, (uid_t)-1, om->gid, AT_SYMLINK_NOFOLLOW);
		nfd = openat(fd, c, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0) {
			int e = errno;

			snprintf(err, len, "output %s: cannot open %s/%s: %s%s", out, walked, c,
				 strerror(e), e == ELOOP || e == ENOTDIR ?
				 " (a link or a file: the daemon follows no link; give the real path)" :
				 e == ENOENT ? " (make the folders above it)" : "");
			close(fd);
			return -e;
		}
		close(fd);
		fd = nfd;
		snprintf(walked + strlen(walked), sizeof(walked) - strlen(walked), "/%s", c);
	}
	if (fstat(fd, &sb) || !safe_folder(&sb, true) || sb.st_uid != geteuid()) {
		snprintf(err, len, "output %s may be written by other users (owner %u, mode %03o), "
			 "and the daemon removes old traces there: give a folder only it writes "
			 "with -o, or chmod go-w it", out, (unsigned)sb.st_uid,
			 (unsigned)(sb.st_mode & 0777));
		close(fd);
		return -EPERM;
	}
	return fd;
}

struct store *store__new(const char *out, uint64_t limit, const struct out_mode *om, char *err,
			 size_t len)
{
	struct store *st = calloc(1, sizeof(*st));

	if (!st)
		return NULL;
	snprintf(st->out, sizeof(st->out), "%s", out);
	st->limit = limit;
	st->om = *om;
	st->dirfd = open_output(out, om, err, len);
	if (st->dirfd < 0) {
		errno = -st->dirfd;
		free(st);
		return NULL;
	}
	scan(st);
	return st;
}

void store__free(struct store *st)
{
	if (!st)
		return;
	close(st->dirfd);
	free(st->v);
	free(st);
}

void store__set_limit(struct store *st, uint64_t limit)
{
	st->limit = limit;
}

/* The oldest window goes. */
static void evict(struct store *st)
{
	char name[32];

	snprintf(name, sizeof(name), "run_%ld", st->v[0].n);
	rm_at(st->dirfd, name, 0);
	st->bytes -= st->v[0].bytes;
	st->removed++;
	memmove(st->v, st->v + 1, (st->nv - 1) * sizeof(*st->v));
	st->nv--;
}

int store__reserve(struct store *st, uint64_t bytes)
{
	if (st->reserved + bytes > st->limit)
		return -ENOSPC;
	while (st->nv && st->bytes + st->reserved + bytes > st->limit)
		evict(st);
	st->reserved += bytes;
	return 0;
}

void store__release(struct store *st, uint64_t bytes)
{
	st->reserved -= bytes < st->reserved ? bytes : st->reserved;
}

uint64_t store__reserved(const struct store *st)
{
	return st->reserved;
}

int store__next_dir(struct store *st, char *buf, size_t len, long *n)
{
	*n = st->next++;
	return snprintf(buf, len, "/proc/self/fd/%d/run_%ld", st->dirfd, *n) < (int)len ? 0 :
	       -ENAMETOOLONG;
}

void store__name(const struct store *st, long n, char *buf, size_t len)
{
	snprintf(buf, len, "%s/run_%ld", st->out, n);
}

const char *store__out(const struct store *st)
{
	return st->out;
}

int store__dirfd(const struct store *st)
{
	return st->dirfd;
}

void store__written(struct store *st, long n, uint64_t reserved)
{
	char name[32];

	store__release(st, reserved);
	snprintf(name, sizeof(name), "run_%ld", n);
	push(st, n, du_at(st->dirfd, name, 0));
	/* The newest is kept whatever its size: it was just asked for. */
	while (st->bytes + st->reserved > st->limit && st->nv > 1)
		evict(st);
}

uint64_t store__bytes(const struct store *st)
{
	return st->bytes;
}

uint64_t store__removed(const struct store *st)
{
	return st->removed;
}

/* n more of (kernel, api) in a list of them; kernel NULL: not a kernel (copies, sets). */
static int tally(struct trace_kernel **v, size_t *nv, const char *kernel, const char *api,
		 uint64_t n)
{
	struct trace_kernel *nk;

	for (size_t i = 0; i < *nv; i++) {
		struct trace_kernel *k = &(*v)[i];

		if (!strcmp(k->api, api) && (k->kernel ? kernel && !strcmp(k->kernel, kernel) : !kernel)) {
			k->n = graphs__add(k->n, n);
			return 0;
		}
	}
	nk = realloc(*v, (*nv + 1) * sizeof(*nk));
	if (!nk)
		return -ENOMEM;
	*v = nk;
	nk = &(*v)[*nv];
	nk->kernel = kernel ? strdup(kernel) : NULL;
	nk->api = strdup(api);
	nk->n = n;
	if ((kernel && !nk->kernel) || !nk->api) {
		free(nk->kernel);
		free(nk->api);
		return -ENOMEM;
	}
	(*nv)++;
	return 0;
}

static void tally_free(struct trace_kernel *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].kernel);
		free(v[i].api);
	}
	free(v);
}

/* Graph replays by content and API, until the cuprobe object after the events says more. */
struct replay {
	int64_t content;
	char *api;
	uint64_t n;
};

/* Reading one trace: its counts, and its replays until their contents are known. */
struct trace_read {
	struct trace_counts *tc;
	struct replay *rp;
	size_t nrp;
};

static int add_replay(struct trace_read *tr, int64_t content, const char *api)
{
	struct replay *nr;

	for (size_t i = 0; i < tr->nrp; i++) {
		if (tr->rp[i].content == content && !strcmp(tr->rp[i].api, api)) {
			tr->rp[i].n++;
			return 0;
		}
	}
	nr = realloc(tr->rp, (tr->nrp + 1) * sizeof(*nr));
	if (!nr)
		return -ENOMEM;
	tr->rp = nr;
	nr[tr->nrp] = (struct replay){ .content = content, .api = strdup(api), .n = 1 };
	if (!nr[tr->nrp].api)
		return -ENOMEM;
	tr->nrp++;
	return 0;
}

static void replays_free(struct trace_read *tr)
{
	for (size_t i = 0; i < tr->nrp; i++)
		free(tr->rp[i].api);
	free(tr->rp);
	tr->rp = NULL;
	tr->nrp = 0;
}

/*
 * Each replay's kernels, by its content in meta's graphs list, counted by
 * (kernel, graph launch API); a content the list lacks is unknown, like 0.
 * The replays are then let go, so that a second call counts nothing twice.
 */
static int expand_replays(struct trace_read *tr, const json_t *meta)
{
	struct trace_counts *tc = tr->tc;
	const json_t *g, *node;
	struct hmap *index;
	const char *kernel;
	uint64_t bad = 0, count;
	size_t j;
	int err = 0;

	if (!tr->nrp)
		return 0;
	index = graphs__index(json_object_get(meta, TRACE_KEY_GRAPHS), &bad);
	if (!index)
		return -ENOMEM;
	for (size_t i = 0; !err && i < tr->nrp; i++) {
		const struct replay *r = &tr->rp[i];

		g = graphs__find(index, r->content);
		if (!g) {
			tc->replays_unknown += r->n;
			continue;
		}
		tc->replays_known += r->n;
		json_array_foreach(json_object_get(g, TRACE_GRAPH_KERNEL_NODES), j, node) {
			if (err || !graphs__kernel_node(node, &kernel, &count) || !count)
				continue;
			err = tally(&tc->gk, &tc->ngk, kernel, r->api, graphs__mul(r->n, count));
		}
	}
	hmap__free(index);
	replays_free(tr);
	return err;
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

static int count_event(struct trace_read *tr, json_t *ev)
{
	struct trace_counts *tc = tr->tc;
	const char *cat = json_string_value(json_object_get(ev, TRACE_KEY_CAT));
	const char *ph = json_string_value(json_object_get(ev, TRACE_KEY_PH));
	const char *name = json_string_value(json_object_get(ev, TRACE_KEY_NAME));
	json_t *args = json_object_get(ev, TRACE_KEY_ARGS);
	int64_t content;

	if (!cat || !ph || strcmp(ph, TRACE_PH_COMPLETE))
		return 0;
	if ((!strcmp(cat, TRACE_CAT_RUNTIME) || !strcmp(cat, TRACE_CAT_DRIVER)) && name) {
		tc->launches++;
		if (graphs__replay(args, &content) == REPLAY_OF && add_replay(tr, content, name))
			return -ENOMEM;
		return tally(&tc->k, &tc->nk,
			     json_string_value(json_object_get(args, TRACE_ARG_KERNEL)), name, 1);
	}
	if (!strcmp(cat, TRACE_CAT_KERNEL))
		return add_gpu(tc, json_number_value(json_object_get(ev, TRACE_KEY_DUR)) / 1e6);
	tc->captured += !strcmp(cat, TRACE_CAT_CAPTURE);
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

/* The integer after key in line ("key": 12); false when the key is not there. */
static bool int_at(const char *line, const char *key, int64_t *v)
{
	const char *p = strstr(line, key);
	char *end;

	if (!p)
		return false;
	p += strlen(key);
	if (*p < '0' || *p > '9')
		return false;
	errno = 0;
	*v = strtoll(p, &end, 10);
	return !errno && (*end == ',' || *end == '}');
}

/*
 * One event line of cuprobe's own layout (trace/format.h: an event a line),
 * read without building it: a window of 10,000 launches is read back in a
 * few milliseconds, not the tens that a JSON tree takes.
 */
static int count_line(struct trace_read *tr, const char *line)
{
	static const char cat_key[] = "\"" TRACE_KEY_CAT "\": \"";
	static const char name_key[] = "\"" TRACE_KEY_NAME "\": \"";
	static const char kernel_key[] = "\"" TRACE_ARG_KERNEL "\": \"";
	static const char content_key[] = "\"" TRACE_ARG_GRAPH_CONTENT "\": ";
	static const char dur_key[] = "\"" TRACE_KEY_DUR "\": ";
	static char cat[64], name[256], kernel[8192];
	struct trace_counts *tc = tr->tc;
	const char *args, *dur;
	int64_t content;

	if (strncmp(line, TRACE_LINE_EVENT_PREFIX "\"" TRACE_KEY_PH "\": \"" TRACE_PH_COMPLETE "\"",
		    strlen(TRACE_LINE_EVENT_PREFIX "\"" TRACE_KEY_PH "\": \"" TRACE_PH_COMPLETE "\"")) ||
	    !string_at(line, cat_key, cat, sizeof(cat)))
		return 0;
	if (!strcmp(cat, TRACE_CAT_RUNTIME) || !strcmp(cat, TRACE_CAT_DRIVER)) {
		if (!string_at(line, name_key, name, sizeof(name)))
			return -EINVAL;
		args = strstr(line, "\"" TRACE_KEY_ARGS "\": {");
		tc->launches++;
		if (args && int_at(args, content_key, &content) && add_replay(tr, content, name))
			return -ENOMEM;
		return tally(&tc->k, &tc->nk,
			     args ? string_at(args, kernel_key, kernel, sizeof(kernel)) : NULL,
			     name, 1);
	}
	if (!strcmp(cat, TRACE_CAT_KERNEL)) {
		dur = strstr(line, dur_key);
		return dur ? add_gpu(tc, strtod(dur + strlen(dur_key), NULL) / 1e6) : -EINVAL;
	}
	tc->captured += !strcmp(cat, TRACE_CAT_CAPTURE);
	return 0;
}

/*
 * After the events, the cuprobe object's line, which lists the contents the
 * replays ran: read only when there were replays. 0, or -EINVAL when the line
 * is not JSON (then the file is read whole).
 */
static int trailer_line(struct trace_read *tr, const char *line)
{
	static const char prefix[] = " \"" TRACE_KEY_CUPROBE "\": ";
	json_error_t jerr;
	json_t *meta;
	int err;

	if (!tr->nrp || strncmp(line, prefix, strlen(prefix)))
		return 0;
	meta = json_loads(line + strlen(prefix), JSON_DISABLE_EOF_CHECK, &jerr);
	if (!meta)
		return -EINVAL;
	err = expand_replays(tr, meta);
	json_decref(meta);
	return err;
}

/* 0, or -EINVAL when the file is not in cuprobe's line layout (then it is read whole). */
static int read_lines(const char *path, struct trace_read *tr)
{
	FILE *f = fopen(path, "re");
	char *line = NULL;
	size_t cap = 0;
	bool in_events = false, closed = false;
	int err = 0;

	if (!f)
		return -errno;
	while (!err && (!closed || tr->nrp) && getline(&line, &cap, f) > 0) {
		line[strcspn(line, "\n")] = '\0';
		if (closed)
			err = trailer_line(tr, line);
		else if (!in_events)
			in_events = !strcmp(line, TRACE_LINE_EVENTS_OPEN);
		else if (!strcmp(line, TRACE_LINE_EVENTS_CLOSE) ||
			 !strcmp(line, TRACE_LINE_EVENTS_CLOSE_MORE))
			closed = true;
		else if (strncmp(line, TRACE_LINE_EVENT_PREFIX, strlen(TRACE_LINE_EVENT_PREFIX)))
			err = -EINVAL;
		else
			err = count_line(tr, line);
	}
	free(line);
	fclose(f);
	/* Replays whose trace lists no contents (no cuprobe line) are of unknown content. */
	if (!err && closed)
		err = expand_replays(tr, NULL);
	return err ? err : closed ? 0 : -EINVAL;
}

/* Not in cuprobe's layout: read as any JSON. */
static int read_whole(const char *path, struct trace_read *tr)
{
	json_error_t jerr;
	json_t *root, *evs, *ev;
	size_t i;
	int err = 0;

	root = json_load_file(path, 0, &jerr);
	if (!root) {
		p_warn("cannot read the window's trace %s: %s (line %d)", path, jerr.text, jerr.line);
		return -EINVAL;
	}
	evs = json_object_get(root, TRACE_KEY_EVENTS);
	json_array_foreach(evs, i, ev) {
		err = count_event(tr, ev);
		if (err)
			break;
	}
	if (!err)
		err = expand_replays(tr, json_object_get(root, TRACE_KEY_CUPROBE));
	json_decref(root);
	return err;
}

int trace_counts__read(const char *path, struct trace_counts *tc)
{
	struct trace_read tr = { .tc = tc };
	int err;

	memset(tc, 0, sizeof(*tc));
	err = read_lines(path, &tr);
	if (err) {
		replays_free(&tr);
		trace_counts__free(tc);
		err = read_whole(path, &tr);
	}
	replays_free(&tr);
	if (tc->nk > 1)
		qsort(tc->k, tc->nk, sizeof(*tc->k), busiest_first);
	if (tc->ngk > 1)
		qsort(tc->gk, tc->ngk, sizeof(*tc->gk), busiest_first);
	return err;
}

void trace_counts__free(struct trace_counts *tc)
{
	tally_free(tc->k, tc->nk);
	tally_free(tc->gk, tc->ngk);
	free(tc->gpu_kernel_s);
	memset(tc, 0, sizeof(*tc));
}
