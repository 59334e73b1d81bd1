// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Trace files into the report. Each file is read into a report of its own,
 * which is then added to the whole: a trace in cuprobe record's layout a
 * line at a time (stream.c), any other (torch.profiler's) a value at a time
 * (scan.c), so that memory follows the report's tables and not the file.
 * Keys come from trace/format.h.
 *
 * An event the report uses (a launch, a step, GPU work, a thread's name)
 * with a field missing or of the wrong type is not used but counted, and
 * so is any other event whose times are wrong, and an element that is not
 * an object: the report says how many it skipped rather than guess.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "report/err.h"
#include "report/graphs.h"
#include "report/read.h"
#include "trace/format.h"
#include "util/safe_file.h"

static const char *str_member(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

static int64_t int_member(const json_t *obj, const char *key)
{
	return json_integer_value(json_object_get(obj, key));
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

/* A count in the cuprobe object; 0 when absent or negative. */
static uint64_t meta_count(const json_t *meta, const char *key)
{
	const json_t *v = json_object_get(meta, key);

	return json_is_integer(v) && json_integer_value(v) > 0 ? (uint64_t)json_integer_value(v)
							       : 0;
}

/* ---- which events are used, and whether they are whole ---- */

enum event_use { USE_NONE, USE_SPAN, USE_THREAD_NAME, USE_LAUNCH, USE_STEP, USE_GPU, USE_BAD };

static bool is_cat(const char *cat, const char *want)
{
	return !strcmp(cat, want);
}

/* What the report does with an X event of this category. */
static enum event_use complete_use(const char *cat)
{
	if (is_cat(cat, TRACE_CAT_RUNTIME) || is_cat(cat, TRACE_CAT_DRIVER))
		return USE_LAUNCH;
	if (is_cat(cat, TRACE_CAT_STEP))
		return USE_STEP;
	if (is_cat(cat, TRACE_CAT_KERNEL) || is_cat(cat, TRACE_CAT_MEMCPY) ||
	    is_cat(cat, TRACE_CAT_MEMSET))
		return USE_GPU;
	return USE_SPAN;
}

static enum event_use event_use(const json_t *ev)
{
	const char *ph = str_member(ev, TRACE_KEY_PH), *what, *cat;

	if (!json_is_object(ev) || !ph)
		return USE_BAD;
	if (!strcmp(ph, TRACE_PH_METADATA)) {
		what = str_member(ev, TRACE_KEY_NAME);
		if (!what)
			return USE_BAD;
		return strcmp(what, TRACE_META_THREAD_NAME) ? USE_NONE : USE_THREAD_NAME;
	}
	if (strcmp(ph, TRACE_PH_COMPLETE))
		return USE_SPAN;
	/* Every X event has a category: TensorBoard's plugin fails without one. */
	cat = str_member(ev, TRACE_KEY_CAT);
	return cat ? complete_use(cat) : USE_BAD;
}

/* A time present is a number from 0; a duration present is a number. */
/*
 * ts is relative to baseTimeNanoseconds and may be negative (work that
 * began before the cycle, such as a launch racing its step's boundary); a
 * duration may not.
 */
static bool times_ok(const json_t *ev)
{
	const json_t *ts = json_object_get(ev, TRACE_KEY_TS);
	const json_t *dur = json_object_get(ev, TRACE_KEY_DUR);

	return (!ts || json_is_number(ts)) &&
	       (!dur || (json_is_number(dur) && json_number_value(dur) >= 0));
}

static bool id_ok(const json_t *id)
{
	return json_is_integer(id) && json_integer_value(id) >= 0;
}

/* What every event the report counts must have right: its lane, name, times and args. */
static bool fields_ok(const json_t *ev)
{
	const json_t *args = json_object_get(ev, TRACE_KEY_ARGS);

	return id_ok(json_object_get(ev, TRACE_KEY_PID)) &&
	       id_ok(json_object_get(ev, TRACE_KEY_TID)) && str_member(ev, TRACE_KEY_NAME) &&
	       times_ok(ev) && (!args || json_is_object(args));
}

/* A launch's graph content, when it has one, is an id from 0. */
static bool graph_ok(const json_t *ev)
{
	int64_t content;

	return graphs__replay(json_object_get(ev, TRACE_KEY_ARGS), &content) != REPLAY_BAD;
}

/* ---- the events ---- */

/* Names the work a launch started; the README's report section lists the rules. */
static const char *launch_key(struct report *r, const char *api, const json_t *args)
{
	const char *kernel = str_member(args, TRACE_ARG_KERNEL);
	const char *graph = str_member(args, TRACE_ARG_GRAPH);
	const char *kind = str_member(args, TRACE_ARG_KIND);

	if (kernel)
		return kernel;
	if (graph || strstr(api, "GraphLaunch"))
		return report__scratch(r, "graph%s%s", graph ? " " : "", graph ? graph : "");
	if (strstr(api, "Memcpy"))
		return report__scratch(r, "Memcpy%s%s", kind ? " " : "", kind ? kind : "");
	if (strstr(api, "Memset"))
		return "Memset";
	return report__scratch(r, "[%s]", api);
}

/* A launch with a correlation id is kept until the end of the file for the GPU join. */
static int keep_correlation(struct file_scan *fs, const json_t *ev, int64_t pid,
			    const json_t *step)
{
	const json_t *corr = json_object_get(json_object_get(ev, TRACE_KEY_ARGS),
					     TRACE_ARG_CORRELATION);
	const json_t *ts = json_object_get(ev, TRACE_KEY_TS);

	if (!json_is_integer(corr) || !json_is_number(ts))
		return 0;
	return file_scan__keep_launch(fs, json_integer_value(corr), json_number_value(ts), pid,
				      json_is_integer(step), json_integer_value(step));
}

static int consume_launch(struct report *r, const json_t *ev, struct file_scan *fs)
{
	const char *api = str_member(ev, TRACE_KEY_NAME);
	const json_t *args = json_object_get(ev, TRACE_KEY_ARGS);
	const json_t *step = json_object_get(args, TRACE_ARG_STEP);
	int64_t pid = int_member(ev, TRACE_KEY_PID), content;
	const char *key;
	int err;

	/* A graph's kernels come at the end of the file, when its content is known. */
	if (graphs__replay(args, &content) == REPLAY_OF && file_scan__keep_replay(fs, content))
		return -ENOMEM;

	/* Counted whether or not the step has a span: only spans make rows. */
	if (json_is_integer(step) &&
	    count_table__add(&r->step_launches, NULL, pid, json_integer_value(step), 0))
		return -ENOMEM;
	if (keep_correlation(fs, ev, pid, step))
		return -ENOMEM;
	key = launch_key(r, api, args);
	if (!key)
		return -ENOMEM;
	err = count_table__add(&r->sections[SEC_KERNEL], key, 0, 0, 0);
	if (!err)
		err = count_table__add(&r->sections[SEC_API], api, 0, 0, 0);
	if (!err)
		err = count_table__add(&r->sections[SEC_THREAD], NULL, pid,
				       int_member(ev, TRACE_KEY_TID), 0);
	if (!err)
		err = count_table__add(&r->pids, NULL, pid, 0, 0);
	if (!err)
		r->launches++;
	return err;
}

static int consume_thread_name(struct report *r, const json_t *ev)
{
	const char *name = str_member(json_object_get(ev, TRACE_KEY_ARGS), TRACE_ARG_META_NAME);
	struct count_row *row;

	if (!name || !*name)
		return 0;
	row = count_table__get(&r->sections[SEC_THREAD], NULL, int_member(ev, TRACE_KEY_PID),
			       int_member(ev, TRACE_KEY_TID), 0);
	if (!row)
		return -ENOMEM;
	/* The first name wins, so a thread renamed between cycles keeps one row. */
	if (!row->label && !(row->label = strdup(name)))
		return -ENOMEM;
	return 0;
}

/*
 * The overhead keys of a cuprobe object or a step's args; wall_ns is the time
 * they fell in. The share is computed here, from the cost and wall_ns, rather
 * than read, so that it is exact and stays right when rows add up.
 */
static void overhead_read(const json_t *obj, uint64_t wall_ns, struct overhead *o)
{
	const json_t *per_hit = json_object_get(obj, TRACE_KEY_PROBE_NS_PER_HIT);

	memset(o, 0, sizeof(*o));
	o->has_hits = count_member(obj, TRACE_KEY_PROBE_HITS, &o->hits);
	o->has_cost = count_member(obj, TRACE_KEY_PROBE_COST_NS, &o->cost_ns);
	o->cost_wall_ns = o->has_cost ? wall_ns : 0;
	o->has_cupti = count_member(obj, TRACE_KEY_CUPTI_OVERHEAD_NS, &o->cupti_ns);
	if (json_is_number(per_hit) && json_number_value(per_hit) >= 0) {
		o->per_hit_min = o->per_hit_max = json_number_value(per_hit);
		o->has_per_hit = true;
	}
}

/* args.step, else the number in the name (torch.profiler's spans have no args.step). */
static bool step_number(const char *name, const json_t *args, int64_t *step)
{
	const json_t *arg = json_object_get(args, TRACE_ARG_STEP);
	const char *digits = name + strlen(TRACE_STEP_PREFIX);
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

/* The part of a step a range is: the DataLoader's, the optimizer's, or neither. */
static enum range_part part_of(const char *name)
{
	if (!strncmp(name, "enumerate(DataLoader)#", 22))
		return PART_DATA;
	if (!strncmp(name, "Optimizer.", 10))
		return PART_OPTIMIZER;
	return PART_NONE;
}

/* A record_function range: counted, and its time summed, by name; kept for its step's parts. */
static int consume_annotation(struct report *r, const json_t *ev, const char *name,
			      const json_t *dur)
{
	const json_t *ts = json_object_get(ev, TRACE_KEY_TS);
	uint64_t ns = json_is_number(dur) ? us_to_ns(json_number_value(dur)) : 0;
	enum range_part part = part_of(name);
	struct part_span *p;

	if (count_table__add(&r->annotation_calls, name, 0, 0, 0) ||
	    count_table__add_n(&r->annotation_ns, name, 0, 0, 0, ns))
		return -ENOMEM;
	if (part == PART_NONE || !json_is_number(ts))
		return 0;
	p = vec__push(&r->part_spans);
	if (!p)
		return -ENOMEM;
	p->pid = int_member(ev, TRACE_KEY_PID);
	p->start_ns = (int64_t)us_to_ns(json_number_value(ts));
	p->end_ns = p->start_ns + (int64_t)ns;
	p->part = part;
	return 0;
}

static int consume_step(struct report *r, const json_t *ev)
{
	const json_t *ts = json_object_get(ev, TRACE_KEY_TS);
	const char *name = str_member(ev, TRACE_KEY_NAME);
	const json_t *args = json_object_get(ev, TRACE_KEY_ARGS);
	const json_t *dur = json_object_get(ev, TRACE_KEY_DUR);
	struct step_row *s;
	int64_t step;

	if (strncmp(name, TRACE_STEP_PREFIX, strlen(TRACE_STEP_PREFIX)))
		return consume_annotation(r, ev, name, dur);
	if (!step_number(name, args, &step))
		return 0;
	s = vec__push(&r->steps);
	if (!s)
		return -ENOMEM;
	s->pid = int_member(ev, TRACE_KEY_PID);
	s->step = step;
	s->wall_ns = json_is_number(dur) ? us_to_ns(json_number_value(dur)) : 0;
	s->start_ns = json_is_number(ts) ? (int64_t)us_to_ns(json_number_value(ts)) : 0;
	overhead_read(args, s->wall_ns, &s->ovh);
	s->partial = json_is_true(json_object_get(args, TRACE_ARG_PARTIAL));
	return 0;
}

/*
 * A GPU event becomes its sample at once; the join to its launch waits for
 * the end of the file, since the launch may come after it.
 */
static int consume_gpu(struct report *r, const json_t *ev, struct file_scan *fs)
{
	const json_t *args = json_object_get(ev, TRACE_KEY_ARGS);
	const json_t *corr = json_object_get(args, TRACE_ARG_CORRELATION);
	const json_t *device = json_object_get(args, TRACE_ARG_DEVICE);
	const json_t *ts = json_object_get(ev, TRACE_KEY_TS);
	const json_t *dur = json_object_get(ev, TRACE_KEY_DUR);
	struct count_row *name = count_table__get(&r->gpu_names, str_member(ev, TRACE_KEY_NAME),
						  0, 0, 0);
	struct gpu_sample *s;

	if (!name || !(s = vec__push(&r->gpu_samples)))
		return -ENOMEM;
	name->count++;
	s->name = name->name;
	s->dur_ns = json_is_number(dur) ? us_to_ns(json_number_value(dur)) : 0;
	if (!json_is_integer(corr) || !json_is_number(ts))
		return 0;
	/* Kineto puts GPU work on pid = device: the same number, should args lack it. */
	return file_scan__keep_gpu(fs, r->gpu_samples.len - 1, json_integer_value(corr),
				   json_number_value(ts),
				   json_is_integer(device) ? json_integer_value(device)
							   : int_member(ev, TRACE_KEY_PID));
}

/* First and last moments of a file's timed events, for traces without a duration. */
static void extend_span(struct file_scan *fs, const json_t *ev)
{
	const json_t *ts = json_object_get(ev, TRACE_KEY_TS);
	double start;

	if (!json_is_number(ts))
		return;
	start = json_number_value(ts);
	file_scan__extend(fs, start,
			  start + json_number_value(json_object_get(ev, TRACE_KEY_DUR)));
}

int read__event(struct report *r, const json_t *ev, struct file_scan *fs)
{
	enum event_use use = event_use(ev);

	if (use == USE_NONE)
		return 0;
	if (use == USE_BAD || (use == USE_SPAN ? !times_ok(ev) : !fields_ok(ev)) ||
	    (use == USE_LAUNCH && !graph_ok(ev))) {
		r->malformed++;
		return 0;
	}
	if (use == USE_THREAD_NAME)
		return consume_thread_name(r, ev);
	extend_span(fs, ev);
	switch (use) {
	case USE_LAUNCH:
		return consume_launch(r, ev, fs);
	case USE_STEP:
		return consume_step(r, ev);
	case USE_GPU:
		return consume_gpu(r, ev, fs);
	default:
		return 0;
	}
}

/* ---- the cuprobe object ---- */

/* cuprobe's duration when the trace has one, else the span of its events. */
static uint64_t file_wall_ns(const json_t *meta, const struct file_scan *fs)
{
	const json_t *dur = json_object_get(meta, TRACE_KEY_DURATION_NS);

	if (json_is_integer(dur) && json_integer_value(dur) >= 0)
		return (uint64_t)json_integer_value(dur);
	return fs->any_time ? us_to_ns(fs->last_us - fs->first_us) : 0;
}

/* The cycle row of a trace cuprobe wrote; launches are the ones counted in it. */
static int add_cycle(struct report *r, const json_t *meta, uint64_t launches, uint64_t wall_ns)
{
	const json_t *steps = json_object_get(meta, TRACE_KEY_STEPS);
	const json_t *first = json_array_get(steps, 0), *last = json_array_get(steps, 1);
	const char *command = str_member(meta, TRACE_KEY_COMMAND);
	struct cycle_row *c = vec__push(&r->cycles);

	if (!c || (command && !(c->command = strdup(command))))
		return -ENOMEM;
	c->cycle = int_member(meta, TRACE_KEY_CYCLE);
	c->pid = int_member(meta, TRACE_KEY_PID);
	c->has_steps = json_is_integer(first) && json_is_integer(last);
	c->first_step = json_integer_value(first);
	c->last_step = json_integer_value(last);
	c->partial = json_is_true(json_object_get(meta, TRACE_KEY_PARTIAL));
	c->launches = launches;
	c->duration_ns = wall_ns;
	c->late_launches = meta_count(meta, TRACE_KEY_LATE_LAUNCHES);
	overhead_read(meta, wall_ns, &c->ovh);
	overhead__add(&r->ovh, &c->ovh);
	c->seq = r->cycles.len - 1;
	return 0;
}

/* cuprobe.gpu: what joining launches to CUPTI's records found (--cupti). */
static void consume_gpu_counts(struct report *r, const json_t *gpu)
{
	if (!json_is_object(gpu))
		return;
	for (int i = 0; i < GPU__COUNT; i++)
		r->gpu_counts[i] += meta_count(gpu, gpu_count_keys[i]);
	r->has_gpu_counts = true;
	/* This trace's steps have their GPU work in it, if they had any. */
	for (size_t i = 0; i < r->steps.len; i++)
		vec_at(&r->steps, struct step_row, i)->has_gpu = true;
}

/* Whether version a.b.c is older than b; a version that does not parse is not. */
static bool version_before(const char *a, const char *b)
{
	unsigned int x[3], y[3];

	if (!a || sscanf(a, "%u.%u.%u", &x[0], &x[1], &x[2]) != 3 ||
	    sscanf(b, "%u.%u.%u", &y[0], &y[1], &y[2]) != 3)
		return false;
	for (int i = 0; i < 3; i++)
		if (x[i] != y[i])
			return x[i] < y[i];
	return false;
}

/*
 * The folder of the recording a trace belongs to: the one above its run_<k>
 * folder, where cuprobe record puts each cycle, else its own folder.
 */
static int recording_folder(const char *path, struct stat *st)
{
	char *dir = strdup(path), *slash, *base;
	unsigned long k;
	char end;
	int err = 0;

	if (!dir)
		return -ENOMEM;
	slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	else
		strcpy(dir, ".");
	base = strrchr(dir, '/');
	if (base && sscanf(base + 1, "run_%lu%c", &k, &end) == 1)
		*base = '\0';
	if (stat(*dir ? dir : "/", st))
		err = -errno;
	free(dir);
	return err;
}

/*
 * Traces before 0.2.0 carry the whole recording's drops in every file, as
 * counted when that file was written: each (recording, process) counts once,
 * with the largest value it gave. Later traces' drops are their own.
 */
static int add_drops(struct report *r, const json_t *meta, const struct file_scan *fs)
{
	uint64_t drops = meta_count(meta, TRACE_KEY_DROPS);
	struct count_row *row;
	struct stat st;

	if (!drops || !version_before(str_member(meta, TRACE_KEY_VERSION),
				      TRACE_VERSION_DROPS_PER_CYCLE)) {
		r->drops += drops;
		return 0;
	}
	if (recording_folder(fs->path, &st)) {
		r->drops += drops; /* the folder is gone: nothing to tell recordings apart by */
		return 0;
	}
	row = count_table__get(&r->recording_drops, NULL, (int64_t)st.st_dev, (int64_t)st.st_ino,
			       json_is_integer(json_object_get(meta, TRACE_KEY_PID)) ?
				       int_member(meta, TRACE_KEY_PID) : -1);
	if (!row)
		return -ENOMEM;
	if (drops > row->count)
		row->count = drops;
	return 0;
}

/* r holds this file alone (see report__read_file): its launches and steps are the file's. */
static int consume_meta(struct report *r, const json_t *meta, const struct file_scan *fs)
{
	const json_t *pid = json_object_get(meta, TRACE_KEY_PID);
	uint64_t wall_ns = file_wall_ns(meta, fs);
	int err;

	consume_gpu_counts(r, json_object_get(meta, TRACE_KEY_GPU));
	r->wall_ns += wall_ns;
	r->late_launches += meta_count(meta, TRACE_KEY_LATE_LAUNCHES);
	r->lost_steps += meta_count(meta, TRACE_KEY_LOST_STEPS);
	r->unprobed_ns += meta_count(meta, TRACE_KEY_UNPROBED_NS);
	r->no_driver = json_is_false(json_object_get(meta, TRACE_KEY_DRIVER_LOADED));
	r->nested_skipped += meta_count(meta, TRACE_KEY_NESTED_SKIPPED);
	r->unnamed_kernels += meta_count(meta, TRACE_KEY_UNNAMED_KERNELS);
	r->captured += meta_count(meta, TRACE_KEY_CAPTURED);
	err = add_drops(r, meta, fs);
	if (err)
		return err;
	/* A process that made no launch in the window still took part. */
	if (json_is_integer(pid) &&
	    !count_table__get(&r->pids, NULL, json_integer_value(pid), 0, 0))
		return -ENOMEM;
	/* torch.profiler's traces have no cuprobe object, and no cycle. */
	return json_is_object(meta) ? add_cycle(r, meta, r->launches, wall_ns) : 0;
}

int read__file_end(struct report *r, const json_t *root, struct file_scan *fs)
{
	const json_t *meta = json_object_get(root, TRACE_KEY_CUPROBE);
	int err = file_scan__join(r, fs);

	if (!err)
		err = graphs__expand(r, meta, fs);
	if (!err)
		err = consume_meta(r, meta, fs);
	return err;
}

/* ---- files ---- */

/* A FILE for reading fd from its start; fd stays open. NULL and errno on failure. */
static FILE *stream_from_start(int fd)
{
	int dup_fd;
	FILE *f;

	if (lseek(fd, 0, SEEK_SET) < 0)
		return NULL;
	dup_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	if (dup_fd < 0)
		return NULL;
	f = fdopen(dup_fd, "r");
	if (!f)
		close(dup_fd);
	return f;
}

static int read_error(const char *path, int err)
{
	report_err("cannot read %s: %s: check that the file is readable", path, strerror(-err));
	return err;
}

/* Reads a trace a value at a time: any layout, any writer. */
static int scan_whole(struct report *r, int fd, const char *path)
{
	FILE *f = stream_from_start(fd);
	int err;

	if (!f)
		return read_error(path, -errno);
	err = scan__read(r, f, path);
	fclose(f);
	return err;
}

/*
 * Opens a trace without blocking on a FIFO or a device, and refuses what is
 * not a regular file. The descriptor, or -errno once reported.
 */
static int open_trace(const char *path, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC), err;

	if (fd < 0) {
		err = -errno;
		report_err("unable to open %s: %s: %s", path, strerror(-err),
			   err == -EACCES ? REPORT_PRIVATE_FIX : "check that the file is readable");
		return err;
	}
	if (fstat(fd, st)) {
		err = read_error(path, -errno);
		close(fd);
		return err;
	}
	if (!S_ISREG(st->st_mode)) {
		report_err("%s: not a regular file (%s): pass a trace file or a folder of them",
			   path, safe_file__kind(st->st_mode));
		close(fd);
		return -EINVAL;
	}
	return fd;
}

/* Line by line when the file is in cuprobe's layout, else a value at a time. */
static int read_into(struct report *f, int fd, const char *path)
{
	FILE *stream = stream_from_start(fd);
	int err;

	if (!stream)
		return read_error(path, -errno);
	err = stream__read(f, stream, path);
	fclose(stream);
	if (err && err != -ENOMEM) {
		report__free(f);
		report__init(f);
		err = scan_whole(f, fd, path);
	}
	return err;
}

/* Reads the file into a report of its own, then adds that to r, unless read before. */
static int read_once(struct report *r, int fd, const char *path, const struct stat *st)
{
	struct count_row *seen;
	struct report f;
	int err;

	/* Given twice, or through two paths: read once. */
	seen = count_table__get(&r->files, NULL, (int64_t)st->st_dev, (int64_t)st->st_ino, 0);
	if (!seen)
		return -ENOMEM;
	if (seen->count++)
		return 0;
	report__init(&f);
	err = read_into(&f, fd, path);
	if (!err)
		err = report__merge(r, &f);
	report__free(&f);
	if (!err)
		r->trace_files++;
	return err;
}

int report__read_file(struct report *r, const char *path)
{
	struct stat st;
	int fd, err;

	fd = open_trace(path, &st);
	if (fd < 0)
		return fd;
	err = read_once(r, fd, path, &st);
	close(fd);
	/* Reading errors were reported where they were found; memory can run out anywhere. */
	if (err == -ENOMEM)
		report_err("%s: out of memory: report on fewer traces at a time", path);
	return err;
}
