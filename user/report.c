// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cuprobe report: counts the launch events of Kineto trace files per kernel,
 * per API and per thread, times the steps of traces recorded with --step,
 * lists each trace's cycle with what cuprobe's probes cost in it, gives the
 * GPU time and launch-to-start delay of each kernel and the GPU busy time of
 * each step when the traces carry CUPTI's GPU work, and prints it all as
 * text, JSON or CSV.
 *
 * Files are read one at a time into a report of their own, which is then
 * added to the whole. A trace in cuprobe record's layout, one event a line,
 * is read a line at a time, so memory follows the report's tables and not the
 * file; any other (torch.profiler's) is loaded whole and freed once counted.
 * The work is linear in the number of events plus one sort of the distinct keys.
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
/* The name of a step's span, as torch.profiler and cuprobe record write it. */
#define STEP_PREFIX "ProfilerStep#"
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

/* The count of a key, without adding it. */
static uint64_t tally_count(const struct tally *t, const char *key, int64_t a, int64_t b)
{
	const struct tally_entry *e;

	if (!t->cap)
		return 0;
	e = tally_slot(t->slots, t->cap, key_hash(key, a, b), key, a, b);
	return e->used ? e->count : 0;
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

/* A growing array of fixed-size rows (steps, cycles). */
struct row_vec {
	void *v;
	size_t n, cap;
};

/* A new zeroed row at the end; NULL when out of memory. */
static void *row_vec_push(struct row_vec *rv, size_t size)
{
	char *row;

	if (rv->n == rv->cap) {
		size_t ncap = rv->cap ? rv->cap * 2 : 16;
		void *v = realloc(rv->v, ncap * size);

		if (!v)
			return NULL;
		rv->v = v;
		rv->cap = ncap;
	}
	row = (char *)rv->v + rv->n++ * size;
	memset(row, 0, size);
	return row;
}

/*
 * What cuprobe itself cost in a step, a cycle or the whole report, from the
 * keys cuprobe record writes. Any part may be unknown (older traces, partial
 * steps, torch.profiler's traces): sums add only the parts that are known.
 */
struct overhead {
	uint64_t hits;	       /* launch probe hits */
	uint64_t cost_ns;      /* hits x the per-hit cost measured when recording */
	uint64_t cost_wall_ns; /* wall time of the parts whose cost is known */
	uint64_t cupti_ns;     /* CUPTI's own overhead */
	double per_hit_min, per_hit_max; /* ns per hit, over the traces that measured it */
	bool has_hits, has_cost, has_per_hit, has_cupti;
};

/* One step of one process: a ProfilerStep span, and the launches made in it. */
struct step_row {
	int64_t pid, step;
	uint64_t wall_ns;
	uint64_t launches;
	uint64_t gpu_busy_ns; /* union of its GPU work's intervals, summed over devices */
	struct overhead ovh;
	bool partial; /* cut short by the end of the recording */
	bool has_gpu; /* its span is in a trace with a cuprobe.gpu object: busy time known */
};

/* Step wall time over the complete steps of one process. */
struct step_stat {
	int64_t pid;
	uint64_t steps;
	double mean_ns;
	uint64_t p50_ns, p99_ns, max_ns;
};

/* One trace written by cuprobe record: one process in one cycle. */
struct cycle_row {
	int64_t cycle, pid;
	char *command; /* NULL when the trace has none */
	int64_t first_step, last_step;
	bool has_steps; /* recorded with --step */
	bool partial;
	uint64_t launches, duration_ns, late_launches;
	struct overhead ovh;
	size_t seq; /* order read: keeps rows of equal (cycle, pid) apart */
};

/* One GPU event: its duration, and its delay when it was joined to its launch. */
struct gpu_sample {
	const char *name; /* owned by report.gpu_names */
	uint64_t dur_ns;
	int64_t delay_ns; /* GPU start - launch; negative on a clock fault */
	bool joined;
};

/* A GPU event whose launch was made in a step, for that step's busy time. */
struct gpu_interval {
	int64_t pid, step, device;
	int64_t start_ns, end_ns;
};

/* GPU time and launch-to-start delay of the GPU events of one name. */
struct gpu_kernel_stat {
	const char *name; /* owned by report.gpu_names */
	uint64_t count, total_ns, p50_ns, p99_ns;
	double mean_ns;
	uint64_t delays; /* events joined to their launch; 0: delays unknown */
	double delay_mean_ns;
	int64_t delay_p50_ns, delay_p99_ns;
};

/*
 * The join counts of cuprobe.gpu, in the order the text header says them;
 * the records come last, since the header gives them first on their own.
 */
enum gpu_count {
	GPU_JOINED,
	GPU_WITHOUT_GPU,
	GPU_WITHOUT_API,
	GPU_WITHOUT_LAUNCH,
	GPU_CLOCK_FAULTS,
	GPU_DROPPED,
	GPU_MISSING,
	GPU_RECORDS,
	GPU__COUNT
};

static const char *const gpu_count_keys[GPU__COUNT] = {
	[GPU_JOINED] = "joined_launches",
	[GPU_WITHOUT_GPU] = "launches_without_gpu",
	[GPU_WITHOUT_API] = "launches_without_api_record",
	[GPU_WITHOUT_LAUNCH] = "gpu_without_launch",
	[GPU_CLOCK_FAULTS] = "clock_faults",
	[GPU_DROPPED] = "cupti_dropped",
	[GPU_MISSING] = "missing_at_timeout",
	[GPU_RECORDS] = "gpu_records",
};

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
	uint64_t late_launches;
	struct overhead ovh; /* over all cycles */
	struct tally step_launches; /* launches per (pid, args.step) */
	struct row_vec steps;	    /* struct step_row, sorted and merged by report_finish */
	struct row_vec stats;	    /* struct step_stat, made by report_finish */
	struct row_vec cycles;	    /* struct cycle_row */
	uint64_t gpu_counts[GPU__COUNT]; /* summed over the traces' cuprobe.gpu */
	bool has_gpu_counts;		 /* some trace has a cuprobe.gpu object */
	struct tally gpu_names;		 /* GPU events per name; owns the names */
	struct row_vec gpu_samples;	 /* struct gpu_sample */
	struct row_vec gpu_intervals;	 /* struct gpu_interval */
	struct row_vec gpu_kernels;	 /* struct gpu_kernel_stat, made by report_finish */
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
	tally_free(&r->step_launches);
	for (size_t i = 0; i < r->cycles.n; i++)
		free(((struct cycle_row *)r->cycles.v)[i].command);
	free(r->cycles.v);
	free(r->steps.v);
	free(r->stats.v);
	tally_free(&r->gpu_names);
	free(r->gpu_samples.v);
	free(r->gpu_intervals.v);
	free(r->gpu_kernels.v);
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

/*
 * A launch of the file being read that has a correlation id, kept until the
 * end of the file so that its GPU work can find it, wherever that stands.
 */
struct corr_launch {
	int64_t correlation;
	double ts_us;
	int64_t pid, step;
	bool has_step;
	size_t seq; /* order read: when ids repeat, the first launch wins */
};

static int keep_correlation(struct row_vec *launches, const json_t *ev, int64_t pid,
			    const json_t *step)
{
	const json_t *corr = json_object_get(json_object_get(ev, "args"), "correlation");
	const json_t *ts = json_object_get(ev, "ts");
	struct corr_launch *l;

	if (!json_is_integer(corr) || !json_is_number(ts))
		return 0;
	l = row_vec_push(launches, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->correlation = json_integer_value(corr);
	l->ts_us = json_number_value(ts);
	l->pid = pid;
	l->has_step = json_is_integer(step);
	l->step = json_integer_value(step);
	l->seq = launches->n - 1;
	return 0;
}

static int consume_launch(struct report *r, const json_t *ev, struct row_vec *launches)
{
	const char *api = str_member(ev, "name");
	const json_t *args = json_object_get(ev, "args");
	const json_t *step = json_object_get(args, "step");
	int64_t pid = int_member(ev, "pid");
	const char *key;
	int err;

	if (!api)
		api = "?";
	/* Counted whether or not the step has a span: only spans make rows. */
	if (json_is_integer(step) &&
	    tally_add(&r->step_launches, NULL, pid, json_integer_value(step)))
		return -ENOMEM;
	if (keep_correlation(launches, ev, pid, step))
		return -ENOMEM;
	key = launch_key(r, api, args);
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

/* Trace times are microseconds with three decimals: round to whole nanoseconds. */
static uint64_t us_to_ns(double us)
{
	double ns = us * 1000.0;

	if (!(ns > 0))
		return 0;
	/* Garbage times must not overflow the conversion. */
	return ns < 1e18 ? (uint64_t)llround(ns) : (uint64_t)1e18;
}

/* A count or a time in ns: a number at least 0, rounded; false when absent or garbage. */
static bool count_member(const json_t *obj, const char *key, uint64_t *v)
{
	const json_t *j = json_object_get(obj, key);
	double d;

	if (json_is_integer(j) && json_integer_value(j) >= 0) {
		*v = (uint64_t)json_integer_value(j);
		return true;
	}
	d = json_is_real(j) ? json_real_value(j) : -1;
	if (!(d >= 0 && d < 1e18))
		return false;
	*v = (uint64_t)llround(d);
	return true;
}

/*
 * The overhead keys of a cuprobe object or a step's args; wall_ns is the time
 * they fell in. The share is computed here, from the cost and wall_ns, rather
 * than read, so that it is exact and stays right when rows add up.
 */
static void overhead_read(const json_t *obj, uint64_t wall_ns, struct overhead *o)
{
	const json_t *per_hit = json_object_get(obj, "probe_ns_per_hit");

	memset(o, 0, sizeof(*o));
	o->has_hits = count_member(obj, "probe_hits", &o->hits);
	o->has_cost = count_member(obj, "probe_cost_ns", &o->cost_ns);
	o->cost_wall_ns = o->has_cost ? wall_ns : 0;
	o->has_cupti = count_member(obj, "cupti_overhead_ns", &o->cupti_ns);
	if (json_is_number(per_hit) && json_number_value(per_hit) >= 0) {
		o->per_hit_min = o->per_hit_max = json_number_value(per_hit);
		o->has_per_hit = true;
	}
}

static void overhead_add(struct overhead *sum, const struct overhead *o)
{
	if (o->has_hits) {
		sum->hits += o->hits;
		sum->has_hits = true;
	}
	if (o->has_cost) {
		sum->cost_ns += o->cost_ns;
		sum->cost_wall_ns += o->cost_wall_ns;
		sum->has_cost = true;
	}
	if (o->has_cupti) {
		sum->cupti_ns += o->cupti_ns;
		sum->has_cupti = true;
	}
	if (!o->has_per_hit)
		return;
	if (!sum->has_per_hit || o->per_hit_min < sum->per_hit_min)
		sum->per_hit_min = o->per_hit_min;
	if (!sum->has_per_hit || o->per_hit_max > sum->per_hit_max)
		sum->per_hit_max = o->per_hit_max;
	sum->has_per_hit = true;
}

/* The cost as a fraction of the wall time it fell in; false when either is unknown. */
static bool overhead_share(const struct overhead *o, double *share)
{
	if (!o->has_cost || !o->cost_wall_ns)
		return false;
	*share = (double)o->cost_ns / (double)o->cost_wall_ns;
	return true;
}

/* args.step, else the number in the name (torch.profiler's spans have no args.step). */
static bool step_number(const char *name, const json_t *args, int64_t *step)
{
	const json_t *arg = json_object_get(args, "step");
	const char *digits = name + strlen(STEP_PREFIX);
	char *end;

	if (json_is_integer(arg)) {
		*step = json_integer_value(arg);
		return true;
	}
	if (*digits < '0' || *digits > '9')
		return false;
	errno = 0;
	*step = strtoll(digits, &end, 10);
	return !*end && !errno;
}

static int consume_step(struct report *r, const json_t *ev)
{
	const char *name = str_member(ev, "name");
	const json_t *args = json_object_get(ev, "args");
	const json_t *dur = json_object_get(ev, "dur");
	struct step_row *s;
	int64_t step;

	if (!name || strncmp(name, STEP_PREFIX, strlen(STEP_PREFIX)) ||
	    !step_number(name, args, &step))
		return 0;
	s = row_vec_push(&r->steps, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->pid = int_member(ev, "pid");
	s->step = step;
	s->wall_ns = json_is_number(dur) ? us_to_ns(json_number_value(dur)) : 0;
	overhead_read(args, s->wall_ns, &s->ovh);
	s->partial = json_is_true(json_object_get(args, "partial"));
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

/*
 * A GPU event that may join a launch: what the join needs of it, so that the
 * event itself can be freed as soon as it is read.
 */
struct gpu_pending {
	size_t sample; /* index in report.gpu_samples */
	int64_t correlation;
	double ts_us;
	int64_t device;
};

/* What reading one file keeps until its last event. */
struct file_scan {
	struct span span;
	struct row_vec launches; /* struct corr_launch */
	struct row_vec gpu;	 /* struct gpu_pending: joined once every launch is read */
};

static void file_scan_free(struct file_scan *fs)
{
	free(fs->launches.v);
	free(fs->gpu.v);
	memset(fs, 0, sizeof(*fs));
}

static bool is_gpu_work(const char *cat)
{
	return !strcmp(cat, "kernel") || !strcmp(cat, "gpu_memcpy") || !strcmp(cat, "gpu_memset");
}

/*
 * A GPU event becomes its sample at once; the join to its launch waits for
 * the end of the file, since the launch may come after it.
 */
static int consume_gpu(struct report *r, const json_t *ev, struct file_scan *fs)
{
	const char *name = str_member(ev, "name");
	const json_t *args = json_object_get(ev, "args");
	const json_t *corr = json_object_get(args, "correlation");
	const json_t *device = json_object_get(args, "device");
	const json_t *ts = json_object_get(ev, "ts");
	const json_t *dur = json_object_get(ev, "dur");
	struct tally_entry *e = tally_get(&r->gpu_names, name ? name : "?", 0, 0);
	struct gpu_pending *p;
	struct gpu_sample *s;

	if (!e || !(s = row_vec_push(&r->gpu_samples, sizeof(*s))))
		return -ENOMEM;
	e->count++;
	s->name = e->key;
	s->dur_ns = json_is_number(dur) ? us_to_ns(json_number_value(dur)) : 0;
	if (!json_is_integer(corr) || !json_is_number(ts))
		return 0;
	p = row_vec_push(&fs->gpu, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->sample = r->gpu_samples.n - 1;
	p->correlation = json_integer_value(corr);
	p->ts_us = json_number_value(ts);
	/* Kineto puts GPU work on pid = device: the same number, should args lack it. */
	p->device = json_is_integer(device) ? json_integer_value(device) : int_member(ev, "pid");
	return 0;
}

static int consume_event(struct report *r, const json_t *ev, struct file_scan *fs)
{
	const char *ph = str_member(ev, "ph");
	const char *cat;

	if (!ph)
		return 0;
	if (!strcmp(ph, "M"))
		return consume_metadata(r, ev);
	span_extend(&fs->span, ev);
	if (strcmp(ph, "X"))
		return 0;
	cat = str_member(ev, "cat");
	if (!cat)
		return 0;
	if (!strcmp(cat, "cuda_runtime") || !strcmp(cat, "cuda_driver"))
		return consume_launch(r, ev, &fs->launches);
	if (!strcmp(cat, "user_annotation"))
		return consume_step(r, ev);
	if (!is_gpu_work(cat))
		return 0;
	return consume_gpu(r, ev, fs);
}

/* A time, or a difference of times, in µs as whole ns; garbage cannot overflow. */
static int64_t us_to_ns_signed(double us)
{
	double ns = us * 1000.0;

	if (!(ns < 1e18))
		return (int64_t)1e18;
	return ns > -1e18 ? (int64_t)llround(ns) : (int64_t)-1e18;
}

static int cmp_corr_launch(const void *pa, const void *pb)
{
	const struct corr_launch *x = pa, *y = pb;

	if (x->correlation != y->correlation)
		return (x->correlation > y->correlation) - (x->correlation < y->correlation);
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/* The first launch read with that correlation id; launches are sorted by it. */
static const struct corr_launch *find_launch(const struct row_vec *launches, int64_t corr)
{
	const struct corr_launch *l = launches->v;
	size_t lo = 0, hi = launches->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (l[mid].correlation < corr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < launches->n && l[lo].correlation == corr ? &l[lo] : NULL;
}

/* The interval of GPU work whose launch was made in a step, for the step's busy time. */
static int add_interval(struct report *r, const struct corr_launch *l,
			const struct gpu_pending *p, int64_t start_ns, uint64_t dur_ns)
{
	struct gpu_interval *iv = row_vec_push(&r->gpu_intervals, sizeof(*iv));

	if (!iv)
		return -ENOMEM;
	iv->pid = l->pid;
	iv->step = l->step;
	iv->device = p->device;
	iv->start_ns = start_ns;
	iv->end_ns = start_ns + (int64_t)dur_ns;
	return 0;
}

/* A GPU event, joined to the launch of the same file with its correlation id. */
static int join_gpu(struct report *r, const struct gpu_pending *p,
		    const struct row_vec *launches)
{
	const struct corr_launch *l = find_launch(launches, p->correlation);
	struct gpu_sample *s = (struct gpu_sample *)r->gpu_samples.v + p->sample;

	if (!l)
		return 0;
	/* The difference first: absolute times in µs lose nanoseconds in a double. */
	s->delay_ns = us_to_ns_signed(p->ts_us - l->ts_us);
	s->joined = true;
	if (!l->has_step)
		return 0;
	return add_interval(r, l, p, us_to_ns_signed(p->ts_us), s->dur_ns);
}

static int consume_gpu_work(struct report *r, struct file_scan *fs)
{
	const struct gpu_pending *p = fs->gpu.v;
	int err = 0;

	if (fs->launches.n)
		qsort(fs->launches.v, fs->launches.n, sizeof(struct corr_launch), cmp_corr_launch);
	for (size_t i = 0; !err && i < fs->gpu.n; i++)
		err = join_gpu(r, &p[i], &fs->launches);
	return err;
}

/* cuprobe's duration when the trace has one, else the span of its events. */
static uint64_t file_wall_ns(const json_t *meta, const struct span *s)
{
	const json_t *dur = json_object_get(meta, "duration_ns");

	if (json_is_integer(dur) && json_integer_value(dur) >= 0)
		return (uint64_t)json_integer_value(dur);
	return s->any ? us_to_ns(s->last_us - s->first_us) : 0;
}

/* A count in the cuprobe object; 0 when absent or negative. */
static uint64_t meta_count(const json_t *meta, const char *key)
{
	const json_t *v = json_object_get(meta, key);

	return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v)
							       : 0;
}

/* The cycle row of a trace cuprobe wrote; launches are the ones counted in it. */
static int add_cycle(struct report *r, const json_t *meta, uint64_t launches, uint64_t wall_ns)
{
	const json_t *steps = json_object_get(meta, "steps");
	const json_t *first = json_array_get(steps, 0), *last = json_array_get(steps, 1);
	const char *command = str_member(meta, "command");
	struct cycle_row *c = row_vec_push(&r->cycles, sizeof(*c));

	if (!c || (command && !(c->command = strdup(command))))
		return -ENOMEM;
	c->cycle = int_member(meta, "cycle");
	c->pid = int_member(meta, "pid");
	c->has_steps = json_is_integer(first) && json_is_integer(last);
	c->first_step = json_integer_value(first);
	c->last_step = json_integer_value(last);
	c->partial = json_is_true(json_object_get(meta, "partial"));
	c->launches = launches;
	c->duration_ns = wall_ns;
	c->late_launches = meta_count(meta, "late_launches");
	overhead_read(meta, wall_ns, &c->ovh);
	overhead_add(&r->ovh, &c->ovh);
	c->seq = r->cycles.n - 1;
	return 0;
}

/* cuprobe.gpu: what joining launches to CUPTI's records found (--cupti). */
static void consume_gpu_counts(struct report *r, const json_t *gpu, struct step_row *steps,
			       size_t nsteps)
{
	if (!json_is_object(gpu))
		return;
	for (int i = 0; i < GPU__COUNT; i++)
		r->gpu_counts[i] += meta_count(gpu, gpu_count_keys[i]);
	r->has_gpu_counts = true;
	/* This trace's steps have their GPU work in it, if they had any. */
	for (size_t i = 0; i < nsteps; i++)
		steps[i].has_gpu = true;
}

/* r holds this file alone (see report_add_file): its launches and steps are the file's. */
static int consume_meta(struct report *r, const json_t *meta, const struct span *span)
{
	const json_t *pid = json_object_get(meta, "pid");
	uint64_t wall_ns = file_wall_ns(meta, span);
	uint64_t launches = r->launches;

	consume_gpu_counts(r, json_object_get(meta, "gpu"), r->steps.v, r->steps.n);
	r->wall_ns += wall_ns;
	r->drops += meta_count(meta, "drops");
	r->late_launches += meta_count(meta, "late_launches");
	/* A process that made no launch in the window still took part. */
	if (json_is_integer(pid) && !tally_get(&r->pids, NULL, json_integer_value(pid), 0))
		return -ENOMEM;
	/* torch.profiler's traces have no cuprobe object, and no cycle. */
	return json_is_object(meta) ? add_cycle(r, meta, launches, wall_ns) : 0;
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

/* What needs every event of the file read: the GPU joins, then the top-level keys. */
static int consume_file_end(struct report *r, const json_t *root, struct file_scan *fs)
{
	int err = consume_gpu_work(r, fs);

	if (!err)
		err = consume_meta(r, json_object_get(root, "cuprobe"), &fs->span);
	return err;
}

/* Reads a trace loaded whole: any layout, any writer. */
static int load_whole(struct report *r, const char *path)
{
	struct file_scan fs = {};
	json_error_t jerr;
	json_t *root, *ev;
	size_t i;
	int err = 0;

	root = json_load_file(path, 0, &jerr);
	if (!root)
		return load_error(path, &jerr);
	if (!json_is_array(json_object_get(root, "traceEvents"))) {
		report_err("%s: not a trace (no traceEvents array): pass a *.pt.trace.json file "
			   "written by cuprobe record",
			   path);
		json_decref(root);
		return -EINVAL;
	}
	json_array_foreach(json_object_get(root, "traceEvents"), i, ev) {
		err = consume_event(r, ev, &fs);
		if (err)
			break;
	}
	if (!err)
		err = consume_file_end(r, root, &fs);
	file_scan_free(&fs);
	json_decref(root);
	return err;
}

/*
 * cuprobe record writes one event a line between these two lines (see
 * user/trace/writer.c), so that its traces can be read a line at a time. Lines are
 * bounded so that a file in another layout (one long line) is given up early.
 */
#define EVENTS_OPEN " \"traceEvents\": ["
#define EVENT_PREFIX "  {"
#define TRACE_LINE_MAX (16u << 20)
#define TRACE_DOC_MAX (16u << 20) /* everything but the events */

struct line_reader {
	FILE *f;
	char *buf;
	size_t cap, pos, end; /* [pos, end) is read but not returned */
	bool eof;
};

/* 1: the next line, without its '\n'; 0: end of file; -E2BIG, -EIO or -ENOMEM. */
static int line_next(struct line_reader *lr, const char **line, size_t *len)
{
	const char *nl;
	size_t n;

	for (;;) {
		nl = lr->end > lr->pos ? memchr(lr->buf + lr->pos, '\n', lr->end - lr->pos) : NULL;
		if (nl || (lr->eof && lr->end > lr->pos)) {
			*line = lr->buf + lr->pos;
			*len = (nl ? (size_t)(nl - lr->buf) : lr->end) - lr->pos;
			lr->pos += *len + (nl ? 1 : 0);
			return 1;
		}
		if (lr->eof)
			return 0;
		if (lr->pos) {
			memmove(lr->buf, lr->buf + lr->pos, lr->end - lr->pos);
			lr->end -= lr->pos;
			lr->pos = 0;
		}
		if (lr->end == lr->cap) {
			size_t ncap = lr->cap ? lr->cap * 2 : 1u << 16;
			char *buf;

			if (ncap > TRACE_LINE_MAX)
				return -E2BIG;
			buf = realloc(lr->buf, ncap);
			if (!buf)
				return -ENOMEM;
			lr->buf = buf;
			lr->cap = ncap;
		}
		n = fread(lr->buf + lr->end, 1, lr->cap - lr->end, lr->f);
		lr->end += n;
		if (!n && ferror(lr->f))
			return -EIO;
		lr->eof = !n;
	}
}

/* The lines of a trace that are not events: its top-level keys. */
struct doc_text {
	char *v;
	size_t n, cap;
};

static int doc_put(struct doc_text *d, const char *s, size_t len)
{
	if (d->n + len > d->cap) {
		size_t ncap = d->cap ? d->cap : 4096;
		char *v;

		while (ncap < d->n + len)
			ncap *= 2;
		if (ncap > TRACE_DOC_MAX)
			return -E2BIG;
		v = realloc(d->v, ncap);
		if (!v)
			return -ENOMEM;
		d->v = v;
		d->cap = ncap;
	}
	memcpy(d->v + d->n, s, len);
	d->n += len;
	return 0;
}

static int doc_add_line(struct doc_text *d, const char *line, size_t len)
{
	int err = doc_put(d, line, len);

	return err ? err : doc_put(d, "\n", 1);
}

static bool line_is(const char *line, size_t len, const char *s)
{
	return len == strlen(s) && !memcmp(line, s, len);
}

/*
 * The header, closed right after the events' '[', must be a whole JSON
 * object: then that '[' opens the top-level traceEvents, not one nested deeper.
 */
static int check_header(struct doc_text *d)
{
	size_t n = d->n;
	json_error_t jerr;
	json_t *head;
	int err = doc_put(d, "]}", 2);

	if (err)
		return err;
	head = json_loadb(d->v, d->n, 0, &jerr);
	d->n = n;
	err = json_is_object(head) ? 0 : -EINVAL;
	json_decref(head);
	return err;
}

/* What reading a trace a line at a time has seen so far. */
struct line_scan {
	enum { PART_HEADER, PART_EVENTS, PART_TRAILER } part;
	uint64_t events;
	bool comma; /* the last event line ended with ',' */
	struct doc_text doc;
	struct file_scan fs;
};

static int scan_event(struct report *r, struct line_scan *ls, const char *line, size_t len)
{
	json_error_t jerr;
	json_t *ev;
	int err;

	/* Commas between the events, none after the last, as the whole file needs. */
	if (ls->events && !ls->comma)
		return -EINVAL;
	ls->comma = line[len - 1] == ',';
	ev = json_loadb(line, len - ls->comma, 0, &jerr);
	if (!ev)
		return -EINVAL;
	err = consume_event(r, ev, &ls->fs);
	json_decref(ev);
	ls->events++;
	return err;
}

static int scan_line(struct report *r, struct line_scan *ls, const char *line, size_t len)
{
	int err;

	switch (ls->part) {
	case PART_HEADER:
		err = doc_add_line(&ls->doc, line, len);
		if (err || !line_is(line, len, EVENTS_OPEN))
			return err;
		ls->part = PART_EVENTS;
		return check_header(&ls->doc);
	case PART_EVENTS:
		if (len >= strlen(EVENT_PREFIX) && !memcmp(line, EVENT_PREFIX, strlen(EVENT_PREFIX)))
			return scan_event(r, ls, line, len);
		if (!line_is(line, len, " ],") && !line_is(line, len, " ]"))
			return -EINVAL;
		if (ls->events && ls->comma)
			return -EINVAL;
		ls->part = PART_TRAILER;
		return doc_add_line(&ls->doc, line, len);
	default:
		return doc_add_line(&ls->doc, line, len);
	}
}

/*
 * The top-level keys, read from the file less its events: what the whole
 * file gives, since jansson keeps the last of two equal keys and duplicates
 * (one could hide the events' array) send the file to the whole-file path.
 */
static int scan_end(struct report *r, struct line_scan *ls)
{
	const json_t *events;
	json_error_t jerr;
	json_t *root;
	int err;

	if (ls->part != PART_TRAILER)
		return -EINVAL;
	root = json_loadb(ls->doc.v, ls->doc.n, JSON_REJECT_DUPLICATES, &jerr);
	events = json_object_get(root, "traceEvents");
	if (!json_is_object(root) || !json_is_array(events) || json_array_size(events)) {
		json_decref(root);
		return -EINVAL;
	}
	err = consume_file_end(r, root, &ls->fs);
	json_decref(root);
	return err;
}

/* Files read a line at a time since the program started; the unit tests check it. */
unsigned long report_streamed_files;

/*
 * Reads a trace in cuprobe's layout a line at a time, so that memory follows
 * the report's tables, not the file. 0 when read; -ENOMEM; any other error
 * when the file is not in that layout or not valid, and nothing can be told
 * of it from here: the caller then loads it whole, which says what is wrong.
 */
static int stream_trace(struct report *r, const char *path)
{
	struct line_reader lr = {};
	struct line_scan ls = {};
	const char *line;
	size_t len;
	int err = 0, rc;

	lr.f = fopen(path, "re");
	if (!lr.f)
		return -errno;
	while (!err && (rc = line_next(&lr, &line, &len)) > 0)
		err = scan_line(r, &ls, line, len);
	if (!err && rc < 0)
		err = rc;
	if (!err)
		err = scan_end(r, &ls);
	if (!err)
		report_streamed_files++;
	file_scan_free(&ls.fs);
	free(ls.doc.v);
	free(lr.buf);
	fclose(lr.f);
	return err;
}

static int tally_merge(struct tally *dst, const struct tally *src)
{
	for (size_t i = 0; i < src->cap; i++) {
		const struct tally_entry *s = &src->slots[i];
		struct tally_entry *e;

		if (!s->used)
			continue;
		e = tally_get(dst, s->key, s->a, s->b);
		if (!e)
			return -ENOMEM;
		e->count += s->count;
		/* The first name wins, as within a file. */
		if (s->label && !e->label && !(e->label = strdup(s->label)))
			return -ENOMEM;
	}
	return 0;
}

static int row_vec_append(struct row_vec *dst, const struct row_vec *src, size_t size)
{
	if (dst->n + src->n > dst->cap) {
		size_t ncap = dst->cap ? dst->cap : 16;
		void *v;

		while (ncap < dst->n + src->n)
			ncap *= 2;
		v = realloc(dst->v, ncap * size);
		if (!v)
			return -ENOMEM;
		dst->v = v;
		dst->cap = ncap;
	}
	if (src->n)
		memcpy((char *)dst->v + dst->n * size, src->v, src->n * size);
	dst->n += src->n;
	return 0;
}

/* Cycles take their commands from f; each gets its place in r's order. */
static int merge_cycles(struct report *r, struct report *f)
{
	struct cycle_row *c = f->cycles.v;
	size_t before = r->cycles.n;

	if (row_vec_append(&r->cycles, &f->cycles, sizeof(*c)))
		return -ENOMEM;
	for (size_t i = 0; i < f->cycles.n; i++)
		c[i].command = NULL;
	c = r->cycles.v;
	for (size_t i = before; i < r->cycles.n; i++)
		c[i].seq = i;
	return 0;
}

/* GPU samples name their kernel with a string of f's: they take r's instead. */
static int merge_gpu_samples(struct report *r, const struct report *f)
{
	struct gpu_sample *s;
	struct tally_entry *e = NULL;
	size_t before = r->gpu_samples.n;

	if (row_vec_append(&r->gpu_samples, &f->gpu_samples, sizeof(*s)))
		return -ENOMEM;
	s = r->gpu_samples.v;
	for (size_t i = before; i < r->gpu_samples.n; i++) {
		if (!e || strcmp(e->key, s[i].name))
			e = tally_get(&r->gpu_names, s[i].name, 0, 0);
		if (!e)
			return -ENOMEM;
		e->count++;
		s[i].name = e->key;
	}
	return 0;
}

/* Adds f, the report of one file, to r. */
static int report_merge(struct report *r, struct report *f)
{
	int err = 0;

	for (int i = 0; !err && i < SEC__COUNT; i++)
		err = tally_merge(&r->sections[i], &f->sections[i]);
	if (!err)
		err = tally_merge(&r->pids, &f->pids);
	if (!err)
		err = tally_merge(&r->step_launches, &f->step_launches);
	if (!err)
		err = row_vec_append(&r->steps, &f->steps, sizeof(struct step_row));
	if (!err)
		err = merge_cycles(r, f);
	if (!err)
		err = merge_gpu_samples(r, f);
	if (!err)
		err = row_vec_append(&r->gpu_intervals, &f->gpu_intervals,
				     sizeof(struct gpu_interval));
	if (err)
		return err;
	r->launches += f->launches;
	r->wall_ns += f->wall_ns;
	r->drops += f->drops;
	r->late_launches += f->late_launches;
	overhead_add(&r->ovh, &f->ovh);
	for (int i = 0; i < GPU__COUNT; i++)
		r->gpu_counts[i] += f->gpu_counts[i];
	r->has_gpu_counts |= f->has_gpu_counts;
	return 0;
}

/*
 * Each file is read into a report of its own, then added to r: a file that
 * turns out not to stream can be read again whole without being counted twice.
 */
static int report_add_file(struct report *r, const char *path)
{
	struct report f = {};
	bool seen;
	int err;

	err = seen_before(r, path, &seen);
	if (err || seen)
		goto out;
	err = stream_trace(&f, path);
	if (err && err != -ENOMEM) {
		report_free(&f);
		memset(&f, 0, sizeof(f));
		err = load_whole(&f, path);
	}
	if (!err)
		err = report_merge(r, &f);
	report_free(&f);
	if (!err)
		r->trace_files++;
out:
	/* Reading errors were reported where they were found; memory can run out anywhere. */
	if (err == -ENOMEM)
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

static int cmp_i64(int64_t x, int64_t y)
{
	return (x > y) - (x < y);
}

static int cmp_step(const void *pa, const void *pb)
{
	const struct step_row *x = pa, *y = pb;

	return x->pid != y->pid ? cmp_i64(x->pid, y->pid) : cmp_i64(x->step, y->step);
}

static int cmp_cycle(const void *pa, const void *pb)
{
	const struct cycle_row *x = pa, *y = pb;

	if (x->cycle != y->cycle)
		return cmp_i64(x->cycle, y->cycle);
	if (x->pid != y->pid)
		return cmp_i64(x->pid, y->pid);
	return (x->seq > y->seq) - (x->seq < y->seq);
}

/*
 * Sorts the steps by pid and step and gives each its launches. A step met
 * twice (one pid in two recordings) is one row whose times add up, as its
 * launches do.
 */
static void merge_steps(struct report *r)
{
	struct step_row *s = r->steps.v;
	size_t n = 0;

	if (!r->steps.n)
		return;
	qsort(s, r->steps.n, sizeof(*s), cmp_step);
	for (size_t i = 0; i < r->steps.n; i++) {
		if (n && !cmp_step(&s[n - 1], &s[i])) {
			s[n - 1].wall_ns += s[i].wall_ns;
			s[n - 1].partial |= s[i].partial;
			s[n - 1].has_gpu |= s[i].has_gpu;
			overhead_add(&s[n - 1].ovh, &s[i].ovh);
			continue;
		}
		s[n++] = s[i];
	}
	r->steps.n = n;
	for (size_t i = 0; i < n; i++)
		s[i].launches = tally_count(&r->step_launches, NULL, s[i].pid, s[i].step);
}

static int cmp_u64(const void *pa, const void *pb)
{
	uint64_t x = *(const uint64_t *)pa, y = *(const uint64_t *)pb;

	return (x > y) - (x < y);
}

/*
 * The index, in n sorted values, of the nearest-rank percentile: the smallest
 * value with pct% of them at or below it.
 */
static size_t rank_index(size_t n, unsigned int pct)
{
	size_t rank = (pct * n + 99) / 100;

	return rank ? rank - 1 : 0;
}

static uint64_t nearest_rank(const uint64_t *sorted, size_t n, unsigned int pct)
{
	return sorted[rank_index(n, pct)];
}

/* Adds the stats of one process's complete steps (none: no row); tmp holds n values. */
static int add_step_stat(struct report *r, const struct step_row *s, size_t n, uint64_t *tmp)
{
	struct step_stat *st;
	double sum = 0;
	size_t m = 0;

	for (size_t i = 0; i < n; i++) {
		if (!s[i].partial)
			tmp[m++] = s[i].wall_ns;
	}
	if (!m)
		return 0;
	st = row_vec_push(&r->stats, sizeof(*st));
	if (!st)
		return -ENOMEM;
	qsort(tmp, m, sizeof(*tmp), cmp_u64);
	for (size_t i = 0; i < m; i++)
		sum += (double)tmp[i];
	st->pid = s[0].pid;
	st->steps = m;
	st->mean_ns = sum / (double)m;
	st->p50_ns = nearest_rank(tmp, m, 50);
	st->p99_ns = nearest_rank(tmp, m, 99);
	st->max_ns = tmp[m - 1];
	return 0;
}

/* A partial step was cut short by the recording, not by the program: it is left out. */
static int step_stats(struct report *r)
{
	const struct step_row *s = r->steps.v;
	uint64_t *tmp;
	size_t i, j;
	int err = 0;

	if (!r->steps.n)
		return 0;
	tmp = malloc(r->steps.n * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	/* The steps are sorted by pid: [i, j) are one process's. */
	for (i = 0; !err && i < r->steps.n; i = j) {
		for (j = i + 1; j < r->steps.n && s[j].pid == s[i].pid; j++)
			;
		err = add_step_stat(r, s + i, j - i, tmp);
	}
	free(tmp);
	return err;
}

static int cmp_interval(const void *pa, const void *pb)
{
	const struct gpu_interval *x = pa, *y = pb;

	if (x->pid != y->pid)
		return cmp_i64(x->pid, y->pid);
	if (x->step != y->step)
		return cmp_i64(x->step, y->step);
	if (x->device != y->device)
		return cmp_i64(x->device, y->device);
	return cmp_i64(x->start_ns, y->start_ns);
}

static struct step_row *find_step(const struct report *r, int64_t pid, int64_t step)
{
	const struct step_row key = { .pid = pid, .step = step };

	if (!r->steps.n)
		return NULL;
	return bsearch(&key, r->steps.v, r->steps.n, sizeof(key), cmp_step);
}

/* The time covered by sorted intervals of one step on one device: overlaps count once. */
static uint64_t interval_union(const struct gpu_interval *iv, size_t n)
{
	int64_t start = iv[0].start_ns, end = iv[0].end_ns;
	uint64_t covered = 0;

	for (size_t i = 1; i < n; i++) {
		if (iv[i].start_ns > end) {
			covered += (uint64_t)(end - start);
			start = iv[i].start_ns;
			end = iv[i].end_ns;
		} else if (iv[i].end_ns > end) {
			end = iv[i].end_ns;
		}
	}
	return covered + (uint64_t)(end - start);
}

static bool same_step_device(const struct gpu_interval *x, const struct gpu_interval *y)
{
	return x->pid == y->pid && x->step == y->step && x->device == y->device;
}

/*
 * Each step's GPU busy time: the union of its GPU work's intervals on each
 * device, so that streams running at once count once, summed over devices.
 * Work of a step without a span (a step outside every saved cycle) is left out.
 */
static void gpu_busy(struct report *r)
{
	struct gpu_interval *iv = r->gpu_intervals.v;
	size_t n = r->gpu_intervals.n, i, j;
	struct step_row *s;

	if (!n)
		return;
	qsort(iv, n, sizeof(*iv), cmp_interval);
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && same_step_device(&iv[i], &iv[j]); j++)
			;
		s = find_step(r, iv[i].pid, iv[i].step);
		if (s)
			s->gpu_busy_ns += interval_union(iv + i, j - i);
	}
}

static int cmp_sample(const void *pa, const void *pb)
{
	const struct gpu_sample *x = pa, *y = pb;
	/* Samples of one name share its string: most comparisons need no strcmp. */
	int c = x->name == y->name ? 0 : strcmp(x->name, y->name);

	return c ? c : (x->dur_ns > y->dur_ns) - (x->dur_ns < y->dur_ns);
}

static int cmp_i64p(const void *pa, const void *pb)
{
	return cmp_i64(*(const int64_t *)pa, *(const int64_t *)pb);
}

/* The stats of n samples of one name, sorted by duration; tmp holds n delays. */
static int add_gpu_kernel(struct report *r, const struct gpu_sample *s, size_t n, int64_t *tmp)
{
	struct gpu_kernel_stat *k = row_vec_push(&r->gpu_kernels, sizeof(*k));
	double delay_sum = 0;
	size_t m = 0;

	if (!k)
		return -ENOMEM;
	k->name = s[0].name;
	k->count = n;
	for (size_t i = 0; i < n; i++) {
		k->total_ns += s[i].dur_ns;
		if (s[i].joined)
			tmp[m++] = s[i].delay_ns;
	}
	k->mean_ns = (double)k->total_ns / (double)n;
	k->p50_ns = s[rank_index(n, 50)].dur_ns;
	k->p99_ns = s[rank_index(n, 99)].dur_ns;
	k->delays = m;
	if (!m)
		return 0;
	qsort(tmp, m, sizeof(*tmp), cmp_i64p);
	for (size_t i = 0; i < m; i++)
		delay_sum += (double)tmp[i];
	k->delay_mean_ns = delay_sum / (double)m;
	k->delay_p50_ns = tmp[rank_index(m, 50)];
	k->delay_p99_ns = tmp[rank_index(m, 99)];
	return 0;
}

/* Most GPU time first; equal times by name in byte order. */
static int cmp_gpu_kernel(const void *pa, const void *pb)
{
	const struct gpu_kernel_stat *x = pa, *y = pb;

	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* One row per GPU event name: GPU time and launch-to-start delay. */
static int gpu_kernel_stats(struct report *r)
{
	struct gpu_sample *s = r->gpu_samples.v;
	size_t n = r->gpu_samples.n, i, j;
	int64_t *tmp;
	int err = 0;

	if (!n)
		return 0;
	tmp = malloc(n * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	qsort(s, n, sizeof(*s), cmp_sample);
	for (i = 0; !err && i < n; i = j) {
		for (j = i + 1; j < n && s[j].name == s[i].name; j++)
			;
		err = add_gpu_kernel(r, s + i, j - i, tmp);
	}
	free(tmp);
	if (!err)
		qsort(r->gpu_kernels.v, r->gpu_kernels.n, sizeof(struct gpu_kernel_stat),
		      cmp_gpu_kernel);
	return err;
}

/* Puts steps and cycles in report order and computes the step and GPU stats. */
static int report_finish(struct report *r)
{
	int err;

	merge_steps(r);
	gpu_busy(r);
	if (r->cycles.n)
		qsort(r->cycles.v, r->cycles.n, sizeof(struct cycle_row), cmp_cycle);
	err = step_stats(r);
	if (!err)
		err = gpu_kernel_stats(r);
	if (err)
		report_err("out of memory computing step and GPU times: report on fewer traces "
			   "at a time");
	return err;
}

static double share_pct(const struct report *r, uint64_t count)
{
	return r->launches ? 100.0 * (double)count / (double)r->launches : 0.0;
}

/* count per second of ns; false when the time is unknown (zero). */
static bool rate_per_s(uint64_t count, uint64_t ns, double *rate)
{
	if (!ns)
		return false;
	*rate = (double)count * 1e9 / (double)ns;
	return true;
}

/* Events per second of wall time; false when the wall time is unknown (zero). */
static bool per_second(const struct report *r, uint64_t count, double *rate)
{
	return rate_per_s(count, r->wall_ns, rate);
}

static const char *row_name(const struct section_desc *d, const struct tally_entry *e)
{
	return d->by_thread ? e->label : e->key;
}

/*
 * Text format: tables whose numbers are right-aligned, and whose name column,
 * when there is one, comes last so that it needs no width.
 */
#define TEXT_COLS 9

struct text_row {
	char c[TEXT_COLS][48];
	const char *name; /* NULL prints "-" */
};

struct text_table {
	const char *title;
	const char *heads[TEXT_COLS]; /* right-aligned columns, up to the first NULL */
	const char *name_head;	      /* NULL: no name column */
	size_t nrows;
	const void *ctx;
	void (*fill)(const struct report *r, const void *ctx, size_t i, struct text_row *row);
};

#define CELL(row, col, ...) snprintf((row)->c[col], sizeof((row)->c[col]), __VA_ARGS__)

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

static int text_widths(const struct report *r, const struct text_table *t, int *width)
{
	struct text_row row;
	int ncols = 0;

	while (ncols < TEXT_COLS && t->heads[ncols]) {
		width[ncols] = (int)strlen(t->heads[ncols]);
		ncols++;
	}
	for (size_t i = 0; i < t->nrows; i++) {
		t->fill(r, t->ctx, i, &row);
		for (int c = 0; c < ncols; c++)
			if ((int)strlen(row.c[c]) > width[c])
				width[c] = (int)strlen(row.c[c]);
	}
	return ncols;
}

static void text_table(FILE *f, const struct report *r, const struct text_table *t)
{
	int width[TEXT_COLS], ncols = text_widths(r, t, width);
	struct text_row row;

	fprintf(f, "\n%s\n", t->title);
	for (int c = 0; c < ncols; c++)
		fprintf(f, "  %*s", width[c], t->heads[c]);
	if (t->name_head)
		fprintf(f, "  %s", t->name_head);
	fputc('\n', f);
	for (size_t i = 0; i < t->nrows; i++) {
		t->fill(r, t->ctx, i, &row);
		for (int c = 0; c < ncols; c++)
			fprintf(f, "  %*s", width[c], row.c[c]);
		if (!t->name_head) {
			fputc('\n', f);
			continue;
		}
		fputs("  ", f);
		text_name(f, row.name ? row.name : "-");
	}
}

static void fill_section(const struct report *r, const void *ctx, size_t i, struct text_row *row)
{
	const struct section_rows *s = ctx;
	const struct tally_entry *e = s->rows[i];
	double rate;
	int c = 0;

	if (s->desc->by_thread) {
		CELL(row, c++, "%" PRId64, e->a);
		CELL(row, c++, "%" PRId64, e->b);
	}
	CELL(row, c++, "%" PRIu64, e->count);
	CELL(row, c++, "%.2f%%", share_pct(r, e->count));
	if (per_second(r, e->count, &rate))
		CELL(row, c, "%.1f", rate);
	else
		CELL(row, c, "-");
	row->name = row_name(s->desc, e);
}

static void text_section(FILE *f, const struct report *r, const struct section_rows *s)
{
	const struct section_desc *d = s->desc;
	struct text_table t = { .title = d->title, .name_head = d->name_head, .nrows = s->n,
				.ctx = s, .fill = fill_section };
	int c = 0;

	if (d->by_thread) {
		t.heads[c++] = "PID";
		t.heads[c++] = "TID";
	}
	t.heads[c++] = d->count_head;
	t.heads[c++] = "SHARE";
	t.heads[c] = d->rate_head;
	text_table(f, r, &t);
}

/* Overhead cells: "-" for what the traces did not say. */
static void cell_hits(struct text_row *row, int col, const struct overhead *o)
{
	if (o->has_hits)
		CELL(row, col, "%" PRIu64, o->hits);
	else
		CELL(row, col, "-");
}

static void cell_cost_pct(struct text_row *row, int col, const struct overhead *o)
{
	double share;

	if (overhead_share(o, &share))
		CELL(row, col, "%.2f", share * 100);
	else
		CELL(row, col, "-");
}

/* Whole ns per hit, or "min-max" when the traces measured different costs. */
static void per_hit_text(const struct overhead *o, char *buf, size_t size)
{
	char max[32];
	int n;

	if (!o->has_per_hit) {
		snprintf(buf, size, "-");
		return;
	}
	n = snprintf(buf, size, "%.0f", o->per_hit_min);
	snprintf(max, sizeof(max), "%.0f", o->per_hit_max);
	if (n > 0 && (size_t)n < size && strcmp(buf, max))
		snprintf(buf + n, size - (size_t)n, "-%s", max);
}

/* ctx points to a bool: whether the table has the GPU BUSY MS column. */
static void fill_step(const struct report *r, const void *ctx, size_t i, struct text_row *row)
{
	const struct step_row *s = (const struct step_row *)r->steps.v + i;
	int c = 0;

	CELL(row, c++, "%" PRId64, s->pid);
	CELL(row, c++, "%" PRId64, s->step);
	CELL(row, c++, "%.3f", (double)s->wall_ns / 1e6);
	if (*(const bool *)ctx) {
		if (s->has_gpu)
			CELL(row, c++, "%.3f", (double)s->gpu_busy_ns / 1e6);
		else
			CELL(row, c++, "-");
	}
	CELL(row, c++, "%" PRIu64, s->launches);
	if (s->wall_ns)
		CELL(row, c++, "%.3f", (double)s->launches * 1e6 / (double)s->wall_ns);
	else
		CELL(row, c++, "-");
	cell_hits(row, c++, &s->ovh);
	cell_cost_pct(row, c++, &s->ovh);
	CELL(row, c, "%s", s->partial ? "yes" : "no");
}

static void fill_step_stat(const struct report *r, const void *ctx, size_t i,
			   struct text_row *row)
{
	const struct step_stat *st = (const struct step_stat *)r->stats.v + i;

	(void)ctx;
	CELL(row, 0, "%" PRId64, st->pid);
	CELL(row, 1, "%" PRIu64, st->steps);
	CELL(row, 2, "%.3f", st->mean_ns / 1e6);
	CELL(row, 3, "%.3f", (double)st->p50_ns / 1e6);
	CELL(row, 4, "%.3f", (double)st->p99_ns / 1e6);
	CELL(row, 5, "%.3f", (double)st->max_ns / 1e6);
}

static void fill_cycle(const struct report *r, const void *ctx, size_t i, struct text_row *row)
{
	const struct cycle_row *c = (const struct cycle_row *)r->cycles.v + i;

	(void)ctx;
	CELL(row, 0, "%" PRId64, c->cycle);
	CELL(row, 1, "%" PRId64, c->pid);
	if (c->has_steps)
		CELL(row, 2, "%" PRId64 "-%" PRId64, c->first_step, c->last_step);
	else
		CELL(row, 2, "-");
	CELL(row, 3, "%" PRIu64, c->launches);
	CELL(row, 4, "%.3f", (double)c->duration_ns / 1e9);
	CELL(row, 5, "%" PRIu64, c->late_launches);
	CELL(row, 6, "%s", c->partial ? "yes" : "no");
	row->name = c->command;
}

/* One row per cycle, then the total of them all. */
static void fill_overhead(const struct report *r, const void *ctx, size_t i,
			  struct text_row *row)
{
	const struct overhead *o = &r->ovh;

	(void)ctx;
	if (i < r->cycles.n) {
		const struct cycle_row *c = (const struct cycle_row *)r->cycles.v + i;

		CELL(row, 0, "%" PRId64, c->cycle);
		CELL(row, 1, "%" PRId64, c->pid);
		o = &c->ovh;
	} else {
		CELL(row, 0, "total");
		CELL(row, 1, "-");
	}
	cell_hits(row, 2, o);
	per_hit_text(o, row->c[3], sizeof(row->c[3]));
	if (o->has_cost)
		CELL(row, 4, "%.3f", (double)o->cost_ns / 1e6);
	else
		CELL(row, 4, "-");
	cell_cost_pct(row, 5, o);
	if (o->has_cupti)
		CELL(row, 6, "%.3f", (double)o->cupti_ns / 1e6);
	else
		CELL(row, 6, "-");
}

/* A duration in ns as µs with 3 decimals: whole nanoseconds. */
static void cell_us(struct text_row *row, int col, double ns)
{
	CELL(row, col, "%.3f", ns / 1e3);
}

static void fill_gpu_kernel(const struct report *r, const void *ctx, size_t i,
			    struct text_row *row)
{
	const struct gpu_kernel_stat *k = (const struct gpu_kernel_stat *)r->gpu_kernels.v + i;

	(void)ctx;
	CELL(row, 0, "%" PRIu64, k->count);
	CELL(row, 1, "%.3f", (double)k->total_ns / 1e6);
	cell_us(row, 2, k->mean_ns);
	cell_us(row, 3, (double)k->p50_ns);
	cell_us(row, 4, (double)k->p99_ns);
	if (k->delays) {
		cell_us(row, 5, k->delay_mean_ns);
		cell_us(row, 6, (double)k->delay_p50_ns);
		cell_us(row, 7, (double)k->delay_p99_ns);
	} else {
		for (int c = 5; c < 8; c++)
			CELL(row, c, "-");
	}
	row->name = k->name;
}

/* Only for traces that carry GPU events. */
static void text_gpu_kernels(FILE *f, const struct report *r)
{
	const struct text_table t = {
		.title = "GPU kernels",
		.heads = { "COUNT", "TOTAL MS", "MEAN US", "P50 US", "P99 US", "DELAY MEAN US",
			   "DELAY P50 US", "DELAY P99 US" },
		.name_head = "KERNEL",
		.nrows = r->gpu_kernels.n,
		.fill = fill_gpu_kernel,
	};

	if (r->gpu_kernels.n)
		text_table(f, r, &t);
}

/* GPU work in the traces: GPU events, or a cuprobe.gpu object. */
static bool report_has_gpu(const struct report *r)
{
	return r->gpu_kernels.n || r->has_gpu_counts;
}

/* Steps and their stats only for traces that have steps; cycles for cuprobe's traces. */
static void text_steps_and_cycles(FILE *f, const struct report *r)
{
	const bool show_gpu = report_has_gpu(r);
	struct text_table steps = {
		.title = "Steps",
		.heads = { "PID", "STEP", "WALL MS", "LAUNCHES", "LAUNCHES/MS", "PROBE HITS",
			   "COST %", "PARTIAL" },
		.nrows = r->steps.n,
		.ctx = &show_gpu,
		.fill = fill_step,
	};
	const struct text_table stats = {
		.title = "Step wall time (complete steps)",
		.heads = { "PID", "STEPS", "MEAN MS", "P50 MS", "P99 MS", "MAX MS" },
		.nrows = r->stats.n,
		.fill = fill_step_stat,
	};
	const struct text_table cycles = {
		.title = "Cycles",
		.heads = { "CYCLE", "PID", "STEPS", "LAUNCHES", "WALL S", "LATE", "PARTIAL" },
		.name_head = "COMMAND",
		.nrows = r->cycles.n,
		.fill = fill_cycle,
	};
	const struct text_table overhead = {
		.title = "Overhead",
		.heads = { "CYCLE", "PID", "PROBE HITS", "NS/HIT", "COST MS", "COST %",
			   "CUPTI MS" },
		.nrows = r->cycles.n + 1,
		.fill = fill_overhead,
	};

	if (show_gpu) {
		/* After WALL MS, which it is best read against. */
		memmove(&steps.heads[4], &steps.heads[3], 5 * sizeof(steps.heads[0]));
		steps.heads[3] = "GPU BUSY MS";
	}
	if (r->steps.n)
		text_table(f, r, &steps);
	if (r->stats.n)
		text_table(f, r, &stats);
	if (r->cycles.n) {
		text_table(f, r, &cycles);
		text_table(f, r, &overhead);
	}
}

/* 1234567 as "1,234,567". */
static void group_digits(uint64_t v, char *buf, size_t size)
{
	char digits[24];
	size_t n = (size_t)snprintf(digits, sizeof(digits), "%" PRIu64, v), j = 0;

	for (size_t i = 0; i < n && j + 2 < size; i++) {
		if (i && (n - i) % 3 == 0)
			buf[j++] = ',';
		buf[j++] = digits[i];
	}
	buf[j] = '\0';
}

/* "Overhead   0.16% of wall time (1,234 probe hits x 1340 ns)", "-" for unknowns. */
static void text_overhead_line(FILE *f, const struct overhead *o)
{
	char hits[32], per_hit[64];
	double share;

	fputs("Overhead   ", f);
	if (overhead_share(o, &share))
		fprintf(f, "%.2f%% of wall time", share * 100);
	else
		fputc('-', f);
	if (o->has_hits) {
		group_digits(o->hits, hits, sizeof(hits));
		per_hit_text(o, per_hit, sizeof(per_hit));
		if (o->has_per_hit)
			fprintf(f, " (%s probe hits x %s ns)", hits, per_hit);
		else
			fprintf(f, " (%s probe hits, cost per hit not measured)", hits);
	}
	if (o->has_cupti)
		fprintf(f, ", CUPTI %.3f ms", (double)o->cupti_ns / 1e6);
	fputc('\n', f);
}

/* "GPU        1,234 records; 360 launches joined, ...": the join counts of cuprobe.gpu. */
static void text_gpu_line(FILE *f, const struct report *r)
{
	static const char *const what[GPU__COUNT] = {
		[GPU_JOINED] = "launches joined",
		[GPU_WITHOUT_GPU] = "without GPU work",
		[GPU_WITHOUT_API] = "without CUPTI record",
		[GPU_WITHOUT_LAUNCH] = "GPU records without launch",
		[GPU_CLOCK_FAULTS] = "clock faults",
		[GPU_DROPPED] = "dropped",
		[GPU_MISSING] = "missing at timeout",
	};
	char n[32];

	if (!r->has_gpu_counts)
		return;
	group_digits(r->gpu_counts[GPU_RECORDS], n, sizeof(n));
	fprintf(f, "GPU        %s records;", n);
	for (int i = 0; i < GPU_RECORDS; i++) {
		group_digits(r->gpu_counts[i], n, sizeof(n));
		fprintf(f, "%s %s %s", i ? "," : "", n, what[i]);
	}
	fputc('\n', f);
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
	fprintf(f, "Late       %" PRIu64 "%s\n", r->late_launches,
		r->late_launches ? " (arrived after their cycle was written: in no trace)" : "");
	text_gpu_line(f, r);
	text_overhead_line(f, &r->ovh);
	for (int i = 0; i < SEC__COUNT; i++)
		text_section(f, r, &secs[i]);
	text_gpu_kernels(f, r);
	text_steps_and_cycles(f, r);
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

/* Appends item to arr (taking it); on failure frees both and returns NULL. */
static json_t *json_push(json_t *arr, json_t *item)
{
	if (!arr) {
		json_decref(item);
		return NULL;
	}
	if (json_array_append_new(arr, item)) {
		json_decref(arr);
		return NULL;
	}
	return arr;
}

static json_t *json_section(const struct report *r, const struct section_rows *s)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < s->n; i++)
		arr = json_push(arr, json_row(r, s->desc, s->rows[i]));
	return arr;
}

/* Overhead values: null for what the traces did not say. */
static json_t *json_count_or_null(bool known, uint64_t v)
{
	return known ? json_integer((json_int_t)v) : json_null();
}

static json_t *json_share(const struct overhead *o)
{
	double share;

	return overhead_share(o, &share) ? json_real(share) : json_null();
}

static json_t *json_per_hit(const struct overhead *o, double ns)
{
	return o->has_per_hit ? json_real(ns) : json_null();
}

/*
 * Adds probe_hits, probe_cost_ns and probe_cost_share to obj, and for a cycle
 * also probe_ns_per_hit and cupti_overhead_ns. Takes obj; NULL on failure.
 */
static json_t *json_with_overhead(json_t *obj, const struct overhead *o, bool cycle)
{
	int err;

	if (!obj)
		return NULL;
	err = json_object_set_new(obj, "probe_hits", json_count_or_null(o->has_hits, o->hits));
	if (cycle)
		err |= json_object_set_new(obj, "probe_ns_per_hit", json_per_hit(o, o->per_hit_min));
	err |= json_object_set_new(obj, "probe_cost_ns",
				   json_count_or_null(o->has_cost, o->cost_ns));
	err |= json_object_set_new(obj, "probe_cost_share", json_share(o));
	if (cycle)
		err |= json_object_set_new(obj, "cupti_overhead_ns",
					   json_count_or_null(o->has_cupti, o->cupti_ns));
	if (err) {
		json_decref(obj);
		return NULL;
	}
	return obj;
}

/* The report's overhead object: the sums over all cycles. */
static json_t *json_overhead(const struct overhead *o)
{
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "probe_hits",
			 json_count_or_null(o->has_hits, o->hits), "probe_cost_ns",
			 json_count_or_null(o->has_cost, o->cost_ns), "share", json_share(o),
			 "probe_ns_per_hit_min", json_per_hit(o, o->per_hit_min),
			 "probe_ns_per_hit_max", json_per_hit(o, o->per_hit_max),
			 "cupti_overhead_ns", json_count_or_null(o->has_cupti, o->cupti_ns));
}

static json_t *json_step(const struct step_row *s)
{
	json_t *rate = s->wall_ns ? json_real((double)s->launches * 1e6 / (double)s->wall_ns)
				  : json_null();

	return json_with_overhead(json_pack("{s:I, s:I, s:I, s:o, s:I, s:o, s:b}", "pid",
					    (json_int_t)s->pid, "step", (json_int_t)s->step,
					    "wall_ns", (json_int_t)s->wall_ns, "gpu_busy_ns",
					    json_count_or_null(s->has_gpu, s->gpu_busy_ns),
					    "launches", (json_int_t)s->launches,
					    "launches_per_ms", rate, "partial", s->partial),
				  &s->ovh, false);
}

static json_t *json_delay(const struct gpu_kernel_stat *k, int64_t ns)
{
	return k->delays ? json_integer((json_int_t)ns) : json_null();
}

static json_t *json_gpu_kernel(const struct gpu_kernel_stat *k)
{
	return json_pack("{s:s, s:I, s:I, s:f, s:I, s:I, s:o, s:o, s:o}", "name", k->name,
			 "count", (json_int_t)k->count, "total_ns", (json_int_t)k->total_ns,
			 "mean_ns", k->mean_ns, "p50_ns", (json_int_t)k->p50_ns, "p99_ns",
			 (json_int_t)k->p99_ns, "delay_mean_ns",
			 k->delays ? json_real(k->delay_mean_ns) : json_null(), "delay_p50_ns",
			 json_delay(k, k->delay_p50_ns), "delay_p99_ns",
			 json_delay(k, k->delay_p99_ns));
}

static json_t *json_gpu_kernels(const struct report *r)
{
	const struct gpu_kernel_stat *k = r->gpu_kernels.v;
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < r->gpu_kernels.n; i++)
		arr = json_push(arr, json_gpu_kernel(&k[i]));
	return arr;
}

/* The summed cuprobe.gpu counts; null when no trace has them. NULL when out of memory. */
static json_t *json_gpu_counts(const struct report *r)
{
	json_t *obj;

	if (!r->has_gpu_counts)
		return json_null();
	obj = json_object();
	for (int i = 0; obj && i < GPU__COUNT; i++) {
		if (json_object_set_new(obj, gpu_count_keys[i],
					json_integer((json_int_t)r->gpu_counts[i]))) {
			json_decref(obj);
			obj = NULL;
		}
	}
	return obj;
}

static json_t *json_step_stat(const struct step_stat *st)
{
	return json_pack("{s:I, s:I, s:f, s:I, s:I, s:I}", "pid", (json_int_t)st->pid, "steps",
			 (json_int_t)st->steps, "mean_ns", st->mean_ns, "p50_ns",
			 (json_int_t)st->p50_ns, "p99_ns", (json_int_t)st->p99_ns, "max_ns",
			 (json_int_t)st->max_ns);
}

static json_t *json_step_bound(const struct cycle_row *c, int64_t step)
{
	return c->has_steps ? json_integer(step) : json_null();
}

static json_t *json_cycle(const struct cycle_row *c)
{
	json_t *obj = json_pack("{s:I, s:I, s:s?, s:o, s:o, s:I, s:I, s:b, s:I}", "cycle",
				(json_int_t)c->cycle, "pid", (json_int_t)c->pid, "command",
				c->command, "first_step", json_step_bound(c, c->first_step),
				"last_step", json_step_bound(c, c->last_step), "launches",
				(json_int_t)c->launches, "duration_ns", (json_int_t)c->duration_ns,
				"partial", c->partial, "late_launches",
				(json_int_t)c->late_launches);

	return json_with_overhead(obj, &c->ovh, true);
}

/* Sets the steps, step_stats and cycles arrays; false when out of memory. */
static bool json_steps_and_cycles(json_t *root, const struct report *r)
{
	const struct step_row *steps = r->steps.v;
	const struct step_stat *stats = r->stats.v;
	const struct cycle_row *cycles = r->cycles.v;
	json_t *a = json_array(), *b = json_array(), *c = json_array();
	int err;

	for (size_t i = 0; i < r->steps.n; i++)
		a = json_push(a, json_step(&steps[i]));
	for (size_t i = 0; i < r->stats.n; i++)
		b = json_push(b, json_step_stat(&stats[i]));
	for (size_t i = 0; i < r->cycles.n; i++)
		c = json_push(c, json_cycle(&cycles[i]));
	/* Each call takes its array, also when it fails: all three run so that none leaks. */
	err = json_object_set_new(root, "steps", a);
	err |= json_object_set_new(root, "step_stats", b);
	err |= json_object_set_new(root, "cycles", c);
	return !err;
}

static int write_json(FILE *f, const struct report *r, const struct section_rows *secs)
{
	json_t *root;
	int err = 0;

	root = json_pack("{s:i, s:I, s:I, s:I, s:I, s:o, s:I, s:I, s:o, s:o}", "schema_version",
			 REPORT_SCHEMA_VERSION, "trace_files", (json_int_t)r->trace_files,
			 "processes", (json_int_t)r->pids.n, "launches", (json_int_t)r->launches,
			 "wall_ns", (json_int_t)r->wall_ns, "launches_per_s",
			 json_rate(r, r->launches), "drops", (json_int_t)r->drops,
			 "late_launches", (json_int_t)r->late_launches, "overhead",
			 json_overhead(&r->ovh), "gpu", json_gpu_counts(r));
	for (int i = 0; root && i < SEC__COUNT; i++) {
		if (json_object_set_new(root, secs[i].desc->json_key, json_section(r, &secs[i]))) {
			json_decref(root);
			root = NULL;
		}
	}
	if (root && json_object_set_new(root, "gpu_kernels", json_gpu_kernels(r))) {
		json_decref(root);
		root = NULL;
	}
	if (root && !json_steps_and_cycles(root, r)) {
		json_decref(root);
		root = NULL;
	}
	if (!root)
		return -ENOMEM;
	if (json_dumpf(root, f, JSON_INDENT(2)) || fputc('\n', f) == EOF)
		err = errno ? -errno : -EIO;
	json_decref(root);
	return err;
}

/*
 * CSV format (RFC 4180): one table, the `section` column says which. Steps
 * and cycles fill the columns after per_s, GPU kernels and steps the GPU
 * columns at the end; other rows leave them empty.
 */
#define CSV_HEAD                                                                               \
	"section,name,pid,tid,count,share_pct,per_s,"                                          \
	"step,cycle,first_step,last_step,wall_ns,partial,late_launches,"                       \
	"probe_hits,probe_cost_ns,probe_cost_share,cupti_overhead_ns,"                         \
	"gpu_total_ns,gpu_mean_ns,gpu_p50_ns,gpu_p99_ns,"                                      \
	"delay_mean_ns,delay_p50_ns,delay_p99_ns,gpu_busy_ns\n"
/* The step .. cupti_overhead_ns columns of a kernel, API, thread or GPU kernel row. */
#define CSV_NO_STEP ",,,,,,,,,,,"
/* The gpu_total_ns .. gpu_busy_ns columns of a kernel, API, thread or cycle row. */
#define CSV_NO_GPU ",,,,,,,,"

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
	fputs(CSV_NO_STEP CSV_NO_GPU "\n", f);
}

/* count is the GPU events; share_pct and per_s, which are of launches, stay empty. */
static void csv_gpu_kernel(FILE *f, const struct gpu_kernel_stat *k)
{
	fputs("gpu_kernel,", f);
	csv_field(f, k->name);
	fprintf(f, ",,,%" PRIu64 ",," CSV_NO_STEP, k->count);
	fprintf(f, ",%" PRIu64 ",%.3f,%" PRIu64 ",%" PRIu64, k->total_ns, k->mean_ns, k->p50_ns,
		k->p99_ns);
	if (k->delays)
		fprintf(f, ",%.3f,%" PRId64 ",%" PRId64, k->delay_mean_ns, k->delay_p50_ns,
			k->delay_p99_ns);
	else
		fputs(",,,", f);
	fputs(",\n", f);
}

/* count, share_pct and per_s: per second of the row's own wall time. */
static void csv_counts(FILE *f, const struct report *r, uint64_t count, uint64_t ns)
{
	double rate;

	fprintf(f, ",%" PRIu64 ",%.3f,", count, share_pct(r, count));
	if (rate_per_s(count, ns, &rate))
		fprintf(f, "%.3f", rate);
}

/* ",probe_hits,probe_cost_ns,probe_cost_share,cupti_overhead_ns", empty when unknown. */
static void csv_overhead(FILE *f, const struct overhead *o)
{
	double share;

	fputc(',', f);
	if (o->has_hits)
		fprintf(f, "%" PRIu64, o->hits);
	fputc(',', f);
	if (o->has_cost)
		fprintf(f, "%" PRIu64, o->cost_ns);
	fputc(',', f);
	if (overhead_share(o, &share))
		fprintf(f, "%.6f", share);
	fputc(',', f);
	if (o->has_cupti)
		fprintf(f, "%" PRIu64, o->cupti_ns);
}

static void csv_step(FILE *f, const struct report *r, const struct step_row *s)
{
	fprintf(f, "step,,%" PRId64 ",", s->pid);
	csv_counts(f, r, s->launches, s->wall_ns);
	fprintf(f, ",%" PRId64 ",,,,%" PRIu64 ",%s,", s->step, s->wall_ns,
		s->partial ? "true" : "false");
	csv_overhead(f, &s->ovh);
	/* gpu_total_ns .. delay_p99_ns are empty, then gpu_busy_ns. */
	fputs(",,,,,,,,", f);
	if (s->has_gpu)
		fprintf(f, "%" PRIu64, s->gpu_busy_ns);
	fputc('\n', f);
}

static void csv_cycle(FILE *f, const struct report *r, const struct cycle_row *c)
{
	fputs("cycle,", f);
	csv_field(f, c->command ? c->command : "");
	fprintf(f, ",%" PRId64 ",", c->pid);
	csv_counts(f, r, c->launches, c->duration_ns);
	fprintf(f, ",,%" PRId64 ",", c->cycle);
	if (c->has_steps)
		fprintf(f, "%" PRId64 ",%" PRId64, c->first_step, c->last_step);
	else
		fputc(',', f);
	fprintf(f, ",%" PRIu64 ",%s,%" PRIu64, c->duration_ns, c->partial ? "true" : "false",
		c->late_launches);
	csv_overhead(f, &c->ovh);
	fputs(CSV_NO_GPU "\n", f);
}

static int write_csv(FILE *f, const struct report *r, const struct section_rows *secs)
{
	fputs(CSV_HEAD, f);
	for (int i = 0; i < SEC__COUNT; i++)
		for (size_t j = 0; j < secs[i].n; j++)
			csv_row(f, r, secs[i].desc, secs[i].rows[j]);
	for (size_t i = 0; i < r->gpu_kernels.n; i++)
		csv_gpu_kernel(f, (const struct gpu_kernel_stat *)r->gpu_kernels.v + i);
	for (size_t i = 0; i < r->steps.n; i++)
		csv_step(f, r, (const struct step_row *)r->steps.v + i);
	for (size_t i = 0; i < r->cycles.n; i++)
		csv_cycle(f, r, (const struct cycle_row *)r->cycles.v + i);
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

static void warn_late(const struct report *r)
{
	if (!r->late_launches)
		return;
	report_err("warning: %" PRIu64 " launches arrived after their cycle was written, so they "
		   "are in no trace and the counts are low by that many: the Cycles table shows "
		   "which traces noted them (each in the next file its process wrote)",
		   r->late_launches);
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

static void warn_gpu(const struct report *r)
{
	const uint64_t *n = r->gpu_counts;

	if (!n[GPU_CLOCK_FAULTS] && !n[GPU_DROPPED] && !n[GPU_MISSING])
		return;
	report_err("warning: GPU records are incomplete or skewed: %" PRIu64 " start before "
		   "their launch (clock faults: their delays are negative), %" PRIu64 " were "
		   "dropped by CUPTI or the agent, %" PRIu64 " launches had no GPU work yet when "
		   "their cycle was written, so GPU times and busy times miss the dropped and "
		   "missing work: record again, with a longer --cupti-wait if work was missing",
		   n[GPU_CLOCK_FAULTS], n[GPU_DROPPED], n[GPU_MISSING]);
}

static const char usage_text[] =
	"Usage: cuprobe report [--format text|json|csv] [-o FILE] PATH...\n"
	"\n"
	"Counts launches per kernel, per API and per thread over trace files.\n"
	"PATH is a *.pt.trace.json file, or a folder searched at any depth for\n"
	"them (the output of cuprobe record); the counts of all of them add up.\n"
	"Traces recorded with --step also give each step's wall time and launches,\n"
	"and every trace of cuprobe record gives a row per process and cycle, with\n"
	"an estimate of what cuprobe's probes cost it. Traces recorded with --cupti\n"
	"also give each kernel's GPU time and launch-to-start delay, and each\n"
	"step's GPU busy time.\n"
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
	if (!err)
		err = report_finish(&r);
	for (int i = 0; !err && i < SEC__COUNT; i++)
		err = section_sort(&r.sections[i], &section_descs[i], &secs[i]);
	if (!err) {
		warn_drops(&r);
		warn_late(&r);
		warn_gpu(&r);
		err = write_output(&opts, &r, secs);
	}
	for (int i = 0; i < SEC__COUNT; i++)
		free(secs[i].rows);
	report_free(&r);
	return err ? 1 : 0;
}
