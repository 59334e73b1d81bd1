// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cuprobe report: counts the launch events of Kineto trace files per kernel,
 * per API and per thread, and prints them as text, JSON or CSV.
 *
 * Files are read one at a time: each is loaded whole, folded into hash tables
 * and freed, so memory follows the largest file and the work is linear in the
 * number of events plus one sort of the distinct keys.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "report.h"

#define TRACE_SUFFIX ".pt.trace.json"
#define REPORT_SCHEMA_VERSION 1
/* Longest name the text format prints whole; longer ones lose their middle. */
#define TEXT_NAME_MAX 80

enum report_format { FORMAT_TEXT, FORMAT_JSON, FORMAT_CSV };

struct report_opts {
	enum report_format format;
	const char *out_path; /* NULL: standard output */
	char **paths;
	int npaths;
};

static void report_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Every message reads "cuprobe report: <problem>: <what to do>". */
static void report_err(const char *fmt, ...)
{
	va_list ap;

	fputs("cuprobe report: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/*
 * Counts per key in an open-addressing hash table. A key is a string, a pair
 * of integers, or both; the table owns its strings.
 */
struct tally_entry {
	char *key;	/* NULL for keys made of integers only */
	int64_t a, b;	/* integer part of the key: (pid, tid), (dev, ino) */
	char *label;	/* a name that is not part of the key (a thread's name) */
	uint64_t count;
	uint64_t hash;
	bool used;
};

struct tally {
	struct tally_entry *slots;
	size_t cap; /* 0 or a power of two, at least twice n */
	size_t n;
};

/* splitmix64's finaliser: spreads integer keys over the low bits. */
static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint64_t key_hash(const char *key, int64_t a, int64_t b)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */

	for (const unsigned char *p = (const unsigned char *)key; p && *p; p++)
		h = (h ^ *p) * 0x100000001b3ULL;
	return mix64(h ^ mix64((uint64_t)a ^ mix64((uint64_t)b)));
}

static bool entry_matches(const struct tally_entry *e, uint64_t h, const char *key, int64_t a,
			  int64_t b)
{
	if (e->hash != h || e->a != a || e->b != b)
		return false;
	if (!e->key || !key)
		return !e->key && !key;
	return strcmp(e->key, key) == 0;
}

static struct tally_entry *tally_slot(struct tally_entry *slots, size_t cap, uint64_t h,
				      const char *key, int64_t a, int64_t b)
{
	size_t i = h & (cap - 1);

	while (slots[i].used && !entry_matches(&slots[i], h, key, a, b))
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

static int tally_grow(struct tally *t)
{
	size_t ncap = t->cap ? t->cap * 2 : 64;
	struct tally_entry *slots = calloc(ncap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < t->cap; i++) {
		const struct tally_entry *e = &t->slots[i];

		if (e->used)
			*tally_slot(slots, ncap, e->hash, e->key, e->a, e->b) = *e;
	}
	free(t->slots);
	t->slots = slots;
	t->cap = ncap;
	return 0;
}

/* The entry for a key, added with a zero count if new; NULL when out of memory. */
static struct tally_entry *tally_get(struct tally *t, const char *key, int64_t a, int64_t b)
{
	uint64_t h = key_hash(key, a, b);
	struct tally_entry *e;

	if ((t->n + 1) * 2 > t->cap && tally_grow(t))
		return NULL;
	e = tally_slot(t->slots, t->cap, h, key, a, b);
	if (e->used)
		return e;
	if (key && !(e->key = strdup(key)))
		return NULL;
	e->a = a;
	e->b = b;
	e->hash = h;
	e->used = true;
	t->n++;
	return e;
}

static int tally_add(struct tally *t, const char *key, int64_t a, int64_t b)
{
	struct tally_entry *e = tally_get(t, key, a, b);

	if (!e)
		return -ENOMEM;
	e->count++;
	return 0;
}

static void tally_free(struct tally *t)
{
	for (size_t i = 0; i < t->cap; i++) {
		free(t->slots[i].key);
		free(t->slots[i].label);
	}
	free(t->slots);
	memset(t, 0, sizeof(*t));
}

/*
 * The sections of the report. Adding one takes an id here, a line in
 * section_descs, code that fills its tally, and nothing in the writers.
 */
enum section_id { SEC_KERNEL, SEC_API, SEC_THREAD, SEC__COUNT };

struct section_desc {
	const char *id;		/* CSV `section` column */
	const char *json_key;	/* JSON array holding the rows */
	const char *count_key;	/* JSON name of the count */
	const char *rate_key;	/* JSON name of the count per second */
	const char *title;	/* text heading */
	const char *count_head; /* text column headings */
	const char *rate_head;
	const char *name_head;
	bool by_thread; /* keyed by (pid, tid) and labelled with the thread's name */
};

static const struct section_desc section_descs[SEC__COUNT] = {
	[SEC_KERNEL] = { "kernel", "kernels", "launches", "launches_per_s", "Kernels",
			 "LAUNCHES", "LAUNCHES/S", "KERNEL", false },
	[SEC_API] = { "api", "apis", "calls", "calls_per_s", "APIs", "CALLS", "CALLS/S", "API",
		      false },
	[SEC_THREAD] = { "thread", "threads", "launches", "launches_per_s", "Threads",
			 "LAUNCHES", "LAUNCHES/S", "THREAD", true },
};

struct report {
	struct tally sections[SEC__COUNT];
	struct tally pids;  /* distinct processes */
	struct tally files; /* (dev, ino) of the files read, so each counts once */
	uint64_t trace_files;
	uint64_t launches;
	uint64_t wall_ns;
	uint64_t drops;
	char *scratch; /* kernel keys composed from several fields */
	size_t scratch_cap;
};

/* A section's non-empty rows in print order. */
struct section_rows {
	const struct section_desc *desc;
	const struct tally_entry **rows;
	size_t n;
};

static void report_free(struct report *r)
{
	for (int i = 0; i < SEC__COUNT; i++)
		tally_free(&r->sections[i]);
	tally_free(&r->pids);
	tally_free(&r->files);
	free(r->scratch);
}

/* Formats into the report's scratch buffer; NULL when out of memory. */
static const char *scratch_printf(struct report *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static const char *scratch_printf(struct report *r, const char *fmt, ...)
{
	va_list ap;
	int len;

	for (;;) {
		va_start(ap, fmt);
		len = vsnprintf(r->scratch, r->scratch_cap, fmt, ap);
		va_end(ap);
		if (len < 0)
			return NULL;
		if ((size_t)len < r->scratch_cap)
			return r->scratch;
		free(r->scratch);
		r->scratch_cap = (size_t)len + 64;
		r->scratch = malloc(r->scratch_cap);
		if (!r->scratch) {
			r->scratch_cap = 0;
			return NULL;
		}
	}
}

static const char *str_member(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

static int64_t int_member(const json_t *obj, const char *key)
{
	return json_integer_value(json_object_get(obj, key));
}

/* Names the work a launch started; the README's report section lists the rules. */
static const char *launch_key(struct report *r, const char *api, const json_t *args)
{
	const char *kernel = str_member(args, "kernel");
	const char *graph = str_member(args, "graph");
	const char *kind = str_member(args, "kind");

	if (kernel)
		return kernel;
	if (graph || strstr(api, "GraphLaunch"))
		return scratch_printf(r, "graph%s%s", graph ? " " : "", graph ? graph : "");
	if (strstr(api, "Memcpy"))
		return scratch_printf(r, "Memcpy%s%s", kind ? " " : "", kind ? kind : "");
	if (strstr(api, "Memset"))
		return "Memset";
	return scratch_printf(r, "[%s]", api);
}

static int consume_launch(struct report *r, const json_t *ev)
{
	const char *api = str_member(ev, "name");
	int64_t pid = int_member(ev, "pid");
	const char *key;
	int err;

	if (!api)
		api = "?";
	key = launch_key(r, api, json_object_get(ev, "args"));
	if (!key)
		return -ENOMEM;
	err = tally_add(&r->sections[SEC_KERNEL], key, 0, 0);
	if (!err)
		err = tally_add(&r->sections[SEC_API], api, 0, 0);
	if (!err)
		err = tally_add(&r->sections[SEC_THREAD], NULL, pid, int_member(ev, "tid"));
	if (!err)
		err = tally_add(&r->pids, NULL, pid, 0);
	if (!err)
		r->launches++;
	return err;
}

static int consume_metadata(struct report *r, const json_t *ev)
{
	const char *what = str_member(ev, "name");
	const char *name = str_member(json_object_get(ev, "args"), "name");
	struct tally_entry *e;

	if (!what || strcmp(what, "thread_name") || !name || !*name)
		return 0;
	e = tally_get(&r->sections[SEC_THREAD], NULL, int_member(ev, "pid"), int_member(ev, "tid"));
	if (!e)
		return -ENOMEM;
	/* The first name wins, so a thread renamed between cycles keeps one row. */
	if (!e->label && !(e->label = strdup(name)))
		return -ENOMEM;
	return 0;
}

/* First and last moments of a file's timed events, for traces without a duration. */
struct span {
	double first_us, last_us;
	bool any;
};

static void span_extend(struct span *s, const json_t *ev)
{
	const json_t *ts = json_object_get(ev, "ts");
	double start, end;

	if (!json_is_number(ts))
		return;
	start = json_number_value(ts);
	end = start + json_number_value(json_object_get(ev, "dur"));
	if (end < start)
		end = start;
	if (!s->any || start < s->first_us)
		s->first_us = start;
	if (!s->any || end > s->last_us)
		s->last_us = end;
	s->any = true;
}

static int consume_event(struct report *r, const json_t *ev, struct span *span)
{
	const char *ph = str_member(ev, "ph");
	const char *cat;

	if (!ph)
		return 0;
	if (!strcmp(ph, "M"))
		return consume_metadata(r, ev);
	span_extend(span, ev);
	if (strcmp(ph, "X"))
		return 0;
	cat = str_member(ev, "cat");
	if (cat && (!strcmp(cat, "cuda_runtime") || !strcmp(cat, "cuda_driver")))
		return consume_launch(r, ev);
	/* GPU work and step annotations feed no section yet. */
	return 0;
}

/* cuprobe's duration when the trace has one, else the span of its events. */
static uint64_t file_wall_ns(const json_t *meta, const struct span *s)
{
	const json_t *dur = json_object_get(meta, "duration_ns");
	double ns;

	if (json_is_integer(dur) && json_integer_value(dur) >= 0)
		return (uint64_t)json_integer_value(dur);
	if (!s->any)
		return 0;
	ns = (s->last_us - s->first_us) * 1000.0;
	/* Garbage timestamps must not overflow the conversion. */
	return ns < 1e18 ? (uint64_t)llround(ns) : (uint64_t)1e18;
}

static int consume_meta(struct report *r, const json_t *meta, const struct span *span)
{
	const json_t *drops = json_object_get(meta, "drops");
	const json_t *pid = json_object_get(meta, "pid");

	r->wall_ns += file_wall_ns(meta, span);
	if (json_is_integer(drops) && json_integer_value(drops) > 0)
		r->drops += (uint64_t)json_integer_value(drops);
	/* A process that made no launch in the window still took part. */
	if (json_is_integer(pid) && !tally_get(&r->pids, NULL, json_integer_value(pid), 0))
		return -ENOMEM;
	return 0;
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

static int load_error(const char *path, const json_error_t *jerr)
{
	if (json_error_code(jerr) == json_error_cannot_open_file)
		report_err("%s: check that the file is readable", jerr->text);
	else if (has_suffix(path, ".gz"))
		report_err("%s: compressed traces are not read: gunzip it first", path);
	else
		report_err("%s: not valid JSON at line %d, column %d (%s): pass a trace file "
			   "written by cuprobe record",
			   path, jerr->line, jerr->column, jerr->text);
	return -EINVAL;
}

/* Sets *seen when the file was read before (given twice, or through two paths). */
static int seen_before(struct report *r, const char *path, bool *seen)
{
	struct tally_entry *e;
	struct stat st;

	*seen = false;
	if (stat(path, &st))
		return 0; /* json_load_file says why */
	e = tally_get(&r->files, NULL, (int64_t)st.st_dev, (int64_t)st.st_ino);
	if (!e)
		return -ENOMEM;
	*seen = e->count++ > 0;
	return 0;
}

static int report_add_file(struct report *r, const char *path)
{
	struct span span = {};
	json_error_t jerr;
	json_t *root, *events, *ev;
	bool seen;
	size_t i;
	int err;

	err = seen_before(r, path, &seen);
	if (err || seen)
		goto out;
	root = json_load_file(path, 0, &jerr);
	if (!root)
		return load_error(path, &jerr);
	events = json_object_get(root, "traceEvents");
	if (!json_is_array(events)) {
		report_err("%s: not a trace (no traceEvents array): pass a *.pt.trace.json file "
			   "written by cuprobe record",
			   path);
		json_decref(root);
		return -EINVAL;
	}
	json_array_foreach(events, i, ev) {
		err = consume_event(r, ev, &span);
		if (err)
			break;
	}
	if (!err)
		err = consume_meta(r, json_object_get(root, "cuprobe"), &span);
	json_decref(root);
	r->trace_files++;
out:
	/* Reading errors were reported above; only memory can run out here. */
	if (err)
		report_err("%s: out of memory: report on fewer traces at a time", path);
	return err;
}

struct path_list {
	char **v;
	size_t n, cap;
};

/* Takes ownership of path, also on failure. */
static int path_list_push(struct path_list *l, char *path)
{
	if (l->n == l->cap) {
		size_t ncap = l->cap ? l->cap * 2 : 16;
		char **v = realloc(l->v, ncap * sizeof(*v));

		if (!v) {
			free(path);
			return -ENOMEM;
		}
		l->v = v;
		l->cap = ncap;
	}
	l->v[l->n++] = path;
	return 0;
}

static void path_list_free(struct path_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int find_traces(const char *dir, struct path_list *l);

static int visit_entry(const char *dir, const char *name, struct path_list *l)
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
		err = find_traces(path, l);
	} else if (has_suffix(name, TRACE_SUFFIX)) {
		return path_list_push(l, path);
	}
	free(path);
	return err;
}

/* Appends the trace files under dir, at any depth, to l. */
static int find_traces(const char *dir, struct path_list *l)
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
			err = visit_entry(dir, de->d_name, l);
	}
	closedir(d);
	return err;
}

/* Appends path, or the traces under it when it is a folder, to l. */
static int expand_path(const char *path, struct path_list *l)
{
	size_t before = l->n;
	struct stat st;
	char *copy;
	int err;

	if (stat(path, &st)) {
		err = -errno;
		report_err("%s: %s: check the path", path, strerror(-err));
		return err;
	}
	if (!S_ISDIR(st.st_mode)) {
		copy = strdup(path);
		return copy ? path_list_push(l, copy) : -ENOMEM;
	}
	err = find_traces(path, l);
	if (err)
		return err;
	if (l->n == before) {
		report_err("no trace found under %s: pass a folder holding *.pt.trace.json files, "
			   "as cuprobe record writes them",
			   path);
		return -ENOENT;
	}
	/* readdir's order is the file system's: sort for a reproducible report. */
	qsort(l->v + before, l->n - before, sizeof(*l->v), cmp_str);
	return 0;
}

static int cmp_count_desc(const struct tally_entry *x, const struct tally_entry *y)
{
	return (x->count < y->count) - (x->count > y->count);
}

static int cmp_by_name(const void *pa, const void *pb)
{
	const struct tally_entry *x = *(const struct tally_entry *const *)pa;
	const struct tally_entry *y = *(const struct tally_entry *const *)pb;
	int c = cmp_count_desc(x, y);

	return c ? c : strcmp(x->key, y->key);
}

static int cmp_by_thread(const void *pa, const void *pb)
{
	const struct tally_entry *x = *(const struct tally_entry *const *)pa;
	const struct tally_entry *y = *(const struct tally_entry *const *)pb;
	int c = cmp_count_desc(x, y);

	if (c)
		return c;
	if (x->a != y->a)
		return x->a < y->a ? -1 : 1;
	return (x->b > y->b) - (x->b < y->b);
}

/* Rows with a count, most first; threads that only had a name are left out. */
static int section_sort(const struct tally *t, const struct section_desc *d,
			struct section_rows *out)
{
	out->desc = d;
	out->n = 0;
	out->rows = calloc(t->n ? t->n : 1, sizeof(*out->rows));
	if (!out->rows) {
		report_err("out of memory sorting %s: report on fewer traces at a time", d->json_key);
		return -ENOMEM;
	}
	for (size_t i = 0; i < t->cap; i++) {
		if (t->slots[i].used && t->slots[i].count)
			out->rows[out->n++] = &t->slots[i];
	}
	qsort(out->rows, out->n, sizeof(*out->rows), d->by_thread ? cmp_by_thread : cmp_by_name);
	return 0;
}

static double share_pct(const struct report *r, uint64_t count)
{
	return r->launches ? 100.0 * (double)count / (double)r->launches : 0.0;
}

/* Events per second of wall time; false when the wall time is unknown (zero). */
static bool per_second(const struct report *r, uint64_t count, double *rate)
{
	if (!r->wall_ns)
		return false;
	*rate = (double)count * 1e9 / (double)r->wall_ns;
	return true;
}

static const char *row_name(const struct section_desc *d, const struct tally_entry *e)
{
	return d->by_thread ? e->label : e->key;
}

/* Text format. Numbers are right-aligned; the name comes last so that it needs no width. */
enum { TCOL_PID, TCOL_TID, TCOL_COUNT, TCOL_SHARE, TCOL_RATE, TCOL__COUNT };

struct text_cells {
	char c[TCOL__COUNT][48];
};

static void text_cells(const struct report *r, const struct tally_entry *e, struct text_cells *t)
{
	double rate;

	snprintf(t->c[TCOL_PID], sizeof(t->c[0]), "%" PRId64, e->a);
	snprintf(t->c[TCOL_TID], sizeof(t->c[0]), "%" PRId64, e->b);
	snprintf(t->c[TCOL_COUNT], sizeof(t->c[0]), "%" PRIu64, e->count);
	snprintf(t->c[TCOL_SHARE], sizeof(t->c[0]), "%.2f%%", share_pct(r, e->count));
	if (per_second(r, e->count, &rate))
		snprintf(t->c[TCOL_RATE], sizeof(t->c[0]), "%.1f", rate);
	else
		snprintf(t->c[TCOL_RATE], sizeof(t->c[0]), "-");
}

static bool utf8_continuation(char c)
{
	return ((unsigned char)c & 0xc0) == 0x80;
}

/*
 * Long C++ signatures keep their start (return type and function) and their
 * end (last template arguments or parameters), so that a row stays one line.
 */
static void text_name(FILE *f, const char *name)
{
	size_t len = strlen(name), head, tail;

	if (len <= TEXT_NAME_MAX) {
		fprintf(f, "%s\n", name);
		return;
	}
	head = TEXT_NAME_MAX * 2 / 3;
	tail = len - (TEXT_NAME_MAX - head - 3);
	while (head > 0 && utf8_continuation(name[head]))
		head--;
	while (tail < len && utf8_continuation(name[tail]))
		tail++;
	fprintf(f, "%.*s...%s\n", (int)head, name, name + tail);
}

static void text_section(FILE *f, const struct report *r, const struct section_rows *s)
{
	const struct section_desc *d = s->desc;
	const char *heads[TCOL__COUNT] = { "PID", "TID", d->count_head, "SHARE", d->rate_head };
	int first = d->by_thread ? TCOL_PID : TCOL_COUNT;
	int width[TCOL__COUNT];
	struct text_cells t;
	const char *name;

	for (int c = first; c < TCOL__COUNT; c++)
		width[c] = (int)strlen(heads[c]);
	for (size_t i = 0; i < s->n; i++) {
		text_cells(r, s->rows[i], &t);
		for (int c = first; c < TCOL__COUNT; c++)
			if ((int)strlen(t.c[c]) > width[c])
				width[c] = (int)strlen(t.c[c]);
	}
	fprintf(f, "\n%s\n", d->title);
	for (int c = first; c < TCOL__COUNT; c++)
		fprintf(f, "  %*s", width[c], heads[c]);
	fprintf(f, "  %s\n", d->name_head);
	for (size_t i = 0; i < s->n; i++) {
		text_cells(r, s->rows[i], &t);
		for (int c = first; c < TCOL__COUNT; c++)
			fprintf(f, "  %*s", width[c], t.c[c]);
		name = row_name(d, s->rows[i]);
		fputs("  ", f);
		text_name(f, name ? name : "-");
	}
}

static int write_text(FILE *f, const struct report *r, const struct section_rows *secs)
{
	size_t procs = r->pids.n;
	double rate;

	fprintf(f, "Traces     %" PRIu64 " file%s, %zu process%s\n", r->trace_files,
		r->trace_files == 1 ? "" : "s", procs, procs == 1 ? "" : "es");
	fprintf(f, "Launches   %" PRIu64 "\n", r->launches);
	fprintf(f, "Wall time  %.3f s", (double)r->wall_ns / 1e9);
	if (per_second(r, r->launches, &rate))
		fprintf(f, " (%.1f launches/s)", rate);
	fprintf(f, "\nDrops      %" PRIu64 "%s\n", r->drops,
		r->drops ? " (the counts below miss at least this many)" : "");
	for (int i = 0; i < SEC__COUNT; i++)
		text_section(f, r, &secs[i]);
	return 0;
}

/* JSON format; the README's report section documents the schema. */
static json_t *json_rate(const struct report *r, uint64_t count)
{
	double rate;

	return per_second(r, count, &rate) ? json_real(rate) : json_null();
}

static json_t *json_row(const struct report *r, const struct section_desc *d,
			const struct tally_entry *e)
{
	if (d->by_thread)
		return json_pack("{s:I, s:I, s:s?, s:I, s:f, s:o}", "pid", (json_int_t)e->a, "tid",
				 (json_int_t)e->b, "name", e->label, d->count_key,
				 (json_int_t)e->count, "share_pct", share_pct(r, e->count),
				 d->rate_key, json_rate(r, e->count));
	return json_pack("{s:s, s:I, s:f, s:o}", "name", e->key, d->count_key,
			 (json_int_t)e->count, "share_pct", share_pct(r, e->count), d->rate_key,
			 json_rate(r, e->count));
}

static json_t *json_section(const struct report *r, const struct section_rows *s)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < s->n; i++) {
		if (json_array_append_new(arr, json_row(r, s->desc, s->rows[i]))) {
			json_decref(arr);
			arr = NULL;
		}
	}
	return arr;
}

static int write_json(FILE *f, const struct report *r, const struct section_rows *secs)
{
	json_t *root;
	int err = 0;

	root = json_pack("{s:i, s:I, s:I, s:I, s:I, s:o, s:I}", "schema_version",
			 REPORT_SCHEMA_VERSION, "trace_files", (json_int_t)r->trace_files,
			 "processes", (json_int_t)r->pids.n, "launches", (json_int_t)r->launches,
			 "wall_ns", (json_int_t)r->wall_ns, "launches_per_s",
			 json_rate(r, r->launches), "drops", (json_int_t)r->drops);
	for (int i = 0; root && i < SEC__COUNT; i++) {
		if (json_object_set_new(root, secs[i].desc->json_key, json_section(r, &secs[i]))) {
			json_decref(root);
			root = NULL;
		}
	}
	if (!root)
		return -ENOMEM;
	if (json_dumpf(root, f, JSON_INDENT(2)) || fputc('\n', f) == EOF)
		err = errno ? -errno : -EIO;
	json_decref(root);
	return err;
}

/* CSV format (RFC 4180): one table, the `section` column says which. */
static void csv_field(FILE *f, const char *s)
{
	if (!s[strcspn(s, ",\"\r\n")]) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void csv_row(FILE *f, const struct report *r, const struct section_desc *d,
		    const struct tally_entry *e)
{
	const char *name = row_name(d, e);
	double rate;

	fprintf(f, "%s,", d->id);
	csv_field(f, name ? name : "");
	if (d->by_thread)
		fprintf(f, ",%" PRId64 ",%" PRId64, e->a, e->b);
	else
		fputs(",,", f);
	fprintf(f, ",%" PRIu64 ",%.3f,", e->count, share_pct(r, e->count));
	if (per_second(r, e->count, &rate))
		fprintf(f, "%.3f", rate);
	fputc('\n', f);
}

static int write_csv(FILE *f, const struct report *r, const struct section_rows *secs)
{
	fputs("section,name,pid,tid,count,share_pct,per_s\n", f);
	for (int i = 0; i < SEC__COUNT; i++)
		for (size_t j = 0; j < secs[i].n; j++)
			csv_row(f, r, secs[i].desc, secs[i].rows[j]);
	return 0;
}

static int write_report(FILE *f, enum report_format fmt, const struct report *r,
			const struct section_rows *secs)
{
	int err;

	switch (fmt) {
	case FORMAT_JSON:
		err = write_json(f, r, secs);
		break;
	case FORMAT_CSV:
		err = write_csv(f, r, secs);
		break;
	default:
		err = write_text(f, r, secs);
		break;
	}
	if (!err && (fflush(f) || ferror(f)))
		err = errno ? -errno : -EIO;
	return err;
}

/* Writes to FILE.tmp, then renames it, so that FILE is never seen half written. */
static int write_output(const struct report_opts *o, const struct report *r,
			const struct section_rows *secs)
{
	char *tmp = NULL;
	FILE *f;
	int err;

	if (!o->out_path) {
		errno = 0;
		err = write_report(stdout, o->format, r, secs);
		if (err)
			report_err("cannot write the report: %s: check where standard output goes",
				   strerror(-err));
		return err;
	}
	if (asprintf(&tmp, "%s.tmp", o->out_path) < 0) {
		tmp = NULL;
		err = -ENOMEM;
		goto out;
	}
	f = fopen(tmp, "w");
	if (!f) {
		err = -errno;
		goto out;
	}
	errno = 0;
	err = write_report(f, o->format, r, secs);
	if (fclose(f) && !err)
		err = -errno;
	if (!err && rename(tmp, o->out_path))
		err = -errno;
	if (err)
		unlink(tmp);
out:
	if (err)
		report_err("cannot write %s: %s: check that its folder exists and is writable",
			   o->out_path, strerror(-err));
	free(tmp);
	return err;
}

static void warn_drops(const struct report *r)
{
	if (!r->drops)
		return;
	report_err("warning: %" PRIu64 " launch records were dropped while recording (the "
		   "ring buffer was full), so the counts are low by at least that many: record "
		   "again with a larger --ringbuf-size",
		   r->drops);
}

static const char usage_text[] =
	"Usage: cuprobe report [--format text|json|csv] [-o FILE] PATH...\n"
	"\n"
	"Counts launches per kernel, per API and per thread over trace files.\n"
	"PATH is a *.pt.trace.json file, or a folder searched at any depth for\n"
	"them (the output of cuprobe record); the counts of all of them add up.\n"
	"\n"
	"Options:\n"
	"      --format FORMAT  text (the default), json or csv\n"
	"  -o, --output FILE    write the report to FILE instead of standard output\n"
	"  -h, --help           show this help\n"
	"\n"
	"Examples:\n"
	"  cuprobe report cuprobe-runs                     every cycle of a recording\n"
	"  cuprobe report cuprobe-runs/run_0               one cycle, all its processes\n"
	"  cuprobe report --format json -o report.json cuprobe-runs\n"
	"  cuprobe report --format csv cuprobe-runs > launches.csv\n";

enum { OPT_FORMAT = 256 };

static int parse_format(const char *s, enum report_format *fmt)
{
	static const char *const names[] = {
		[FORMAT_TEXT] = "text",
		[FORMAT_JSON] = "json",
		[FORMAT_CSV] = "csv",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(s, names[i])) {
			*fmt = (enum report_format)i;
			return 0;
		}
	}
	return -EINVAL;
}

static void bad_option(char **argv, const char *problem)
{
	/* getopt names a short option in optopt, a long one only in argv. */
	if (optopt > 0 && optopt < OPT_FORMAT)
		report_err("%s -%c: see cuprobe report --help", problem, optopt);
	else
		report_err("%s %s: see cuprobe report --help", problem, argv[optind - 1]);
}

/* 0: run; 1: help was printed; -EINVAL: a usage error, already reported. */
static int parse_opts(int argc, char **argv, struct report_opts *o)
{
	static const struct option longopts[] = {
		{ "format", required_argument, NULL, OPT_FORMAT },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	int c;

	memset(o, 0, sizeof(*o));
	/* Rescan from the start (GNU): report_main may run more than once in a process. */
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":o:h", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_FORMAT:
			if (parse_format(optarg, &o->format)) {
				report_err("unknown format '%s': use text, json or csv", optarg);
				return -EINVAL;
			}
			break;
		case 'o':
			if (!*optarg) {
				report_err("empty output file name: give -o a file name");
				return -EINVAL;
			}
			o->out_path = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 1;
		case ':':
			bad_option(argv, "missing argument for");
			return -EINVAL;
		default:
			bad_option(argv, "unknown option");
			return -EINVAL;
		}
	}
	if (optind >= argc) {
		report_err("no trace given: pass trace files or folders (see cuprobe report --help)");
		return -EINVAL;
	}
	o->paths = argv + optind;
	o->npaths = argc - optind;
	return 0;
}

static int read_traces(const struct report_opts *o, struct report *r)
{
	struct path_list files = {};
	int err = 0;

	for (int i = 0; !err && i < o->npaths; i++)
		err = expand_path(o->paths[i], &files);
	if (err == -ENOMEM)
		report_err("out of memory listing traces: report on fewer traces at a time");
	for (size_t i = 0; !err && i < files.n; i++)
		err = report_add_file(r, files.v[i]);
	path_list_free(&files);
	return err;
}

int report_main(int argc, char **argv)
{
	struct section_rows secs[SEC__COUNT] = {};
	struct report_opts opts;
	struct report r = {};
	int err;

	err = parse_opts(argc, argv, &opts);
	if (err)
		return err > 0 ? 0 : 2;
	err = read_traces(&opts, &r);
	for (int i = 0; !err && i < SEC__COUNT; i++)
		err = section_sort(&r.sections[i], &section_descs[i], &secs[i]);
	if (!err) {
		warn_drops(&r);
		err = write_output(&opts, &r, secs);
	}
	for (int i = 0; i < SEC__COUNT; i++)
		free(secs[i].rows);
	report_free(&r);
	return err ? 1 : 0;
}
