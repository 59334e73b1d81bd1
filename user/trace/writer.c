// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Writes a cycle's trace through util/json_writer in the layout of
 * trace/format.h, into a file that util/safe_file names only when it is whole.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "agent.h"
#include "clock.h"
#include "launch.h"
#include "trace/format.h"
#include "trace/writer.h"
#include "util/json_writer.h"
#include "util/safe_file.h"

/* Kineto's ts and dur: microseconds with the nanoseconds as three decimals. */
#define US_DECIMALS 3

/*
 * The trace's names are literals from trace/format.h that need no escaping,
 * so they are written without a scan, which would otherwise be much of what
 * a launch costs.
 */
#define NAME(w, key) json_writer__name_raw(w, JSON_LITERAL(key))
#define FIELD_STR(w, key, s) json_writer__field_string_raw(w, JSON_LITERAL(key), s)
#define FIELD_U64(w, key, v) json_writer__field_u64_raw(w, JSON_LITERAL(key), v)
#define FIELD_I64(w, key, v) json_writer__field_i64_raw(w, JSON_LITERAL(key), v)
#define FIELD_US(w, key, ns) json_writer__field_fixed_raw(w, JSON_LITERAL(key), ns, US_DECIMALS)
#define FIELD_DOUBLE(w, key, v, decimals) (NAME(w, key), json_writer__double(w, v, decimals))
#define FIELD_BOOL(w, key, v) (NAME(w, key), json_writer__bool(w, v))
/* A string value that is a literal needing no escaping. */
#define LITERAL(w, lit) json_writer__raw(w, "\"" lit "\"", sizeof(lit) + 1)

struct trace {
	struct safe_file *sf;
	FILE *f;
	struct json_writer *w;
	char *path; /* final name, with its folder for messages */
	char *name; /* final name in its folder */
	struct trace_meta m;
	char *host, *command;
	/* GPU devices and streams seen, named in the metadata. */
	struct { uint32_t device, stream; } lanes[64];
	size_t nlanes;
	bool has_gpu;
	struct trace_gpu_summary gpu;
};

static void write_header(struct trace *t)
{
	const struct trace_meta *m = &t->m;
	struct json_writer *w = t->w;

	json_writer__lines(w, TRACE_INDENT_TOP);
	json_writer__start_object(w);
	FIELD_U64(w, TRACE_KEY_SCHEMA_VERSION, 1);
	NAME(w, TRACE_KEY_DEVICE_PROPERTIES);
	json_writer__start_array(w);
	json_writer__end_array(w);
	NAME(w, TRACE_KEY_DISTRIBUTED_INFO);
	json_writer__start_object(w);
	FIELD_STR(w, TRACE_KEY_BACKEND, "");
	FIELD_I64(w, TRACE_KEY_RANK, m->rank < 0 ? 0 : m->rank);
	FIELD_I64(w, TRACE_KEY_WORLD_SIZE, m->world_size < 0 ? 1 : m->world_size);
	json_writer__end_object(w);
	FIELD_STR(w, TRACE_KEY_DISPLAY_TIME_UNIT, "ms");
	FIELD_U64(w, TRACE_KEY_BASE_TIME, m->start_mono + (uint64_t)m->mono_to_real);
	NAME(w, TRACE_KEY_EVENTS);
	json_writer__lines(w, TRACE_INDENT_EVENT);
	json_writer__start_array(w);
}

/* Where the folder open as dirfd is, for messages; its name alone when unknown. */
static char *folder_path(int dirfd, const char *dir, const char *name)
{
	char proc[64], where[PATH_MAX], *path;
	ssize_t n;

	if (!dir) {
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", dirfd);
		n = readlink(proc, where, sizeof(where) - 1);
		where[n > 0 ? n : 0] = '\0';
		dir = where;
	}
	if (asprintf(&path, "%s%s%s", dir, *dir ? "/" : "", name) < 0)
		return NULL;
	return path;
}

/* The file, as a FILE the writer fills; the descriptor stays the safe_file's. */
static int open_stream(struct trace *t)
{
	int fd = fcntl(safe_file__fd(t->sf), F_DUPFD_CLOEXEC, 3);

	if (fd < 0)
		return -errno;
	t->f = fdopen(fd, "w");
	if (!t->f) {
		close(fd);
		return -errno;
	}
	/* The writer has its own large buffer: the FILE only passes it on. */
	setvbuf(t->f, NULL, _IONBF, 0);
	__fsetlocking(t->f, FSETLOCKING_BYCALLER);
	t->w = json_writer__new(t->f);
	return t->w ? 0 : -ENOMEM;
}

static struct trace *open_in(int dirfd, const char *dir, const struct trace_meta *m)
{
	struct trace *t = calloc(1, sizeof(*t));
	uint64_t now = clock_real_ns();
	int err = -ENOMEM;

	if (!t)
		goto fail;
	t->m = *m;
	t->host = strdup(m->host);
	t->command = strdup(m->command ? m->command : "");
	if (!t->host || !t->command)
		goto fail;
	if (asprintf(&t->name, "%s_%d.%" PRIu64 TRACE_SUFFIX, m->host, (int)m->pid, now) < 0) {
		t->name = NULL;
		goto fail;
	}
	t->path = folder_path(dirfd, dir, t->name);
	if (!t->path)
		goto fail;
	t->sf = safe_file__open(dirfd, t->name, SAFE_FILE_NEW, 0666);
	if (!t->sf) {
		err = -errno;
		goto fail;
	}
	err = open_stream(t);
	if (err)
		goto fail;
	write_header(t);
	return t;
fail:
	trace__free(t);
	errno = -err;
	return NULL;
}

struct trace *trace__openat(int dirfd, const struct trace_meta *m)
{
	return open_in(dirfd, NULL, m);
}

struct trace *trace__open(const char *dir, const struct trace_meta *m)
{
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), err;
	struct trace *t;

	if (dirfd < 0)
		return NULL;
	t = open_in(dirfd, dir, m);
	err = errno;
	close(dirfd);
	errno = err;
	return t;
}

/* Kineto's ts: microseconds after baseTimeNanoseconds. */
static void field_ts(struct trace *t, uint64_t mono)
{
	FIELD_US(t->w, TRACE_KEY_TS, (int64_t)(mono - t->m.start_mono));
}

static void field_dur(struct trace *t, int64_t ns)
{
	FIELD_US(t->w, TRACE_KEY_DUR, ns);
}

/* A handle as the string "0x<hex>", formatted by hand: every launch has one. */
static void write_hex(struct json_writer *w, uint64_t v)
{
	char buf[24], *end = buf + sizeof(buf), *p = end;

	*--p = '"';
	do {
		*--p = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	*--p = 'x';
	*--p = '0';
	*--p = '"';
	json_writer__raw(w, p, (size_t)(end - p));
}

static void write_dim(struct json_writer *w, const __u32 d[3])
{
	json_writer__start_array(w);
	for (int i = 0; i < 3; i++)
		json_writer__u64(w, d[i]);
	json_writer__end_array(w);
}

/* The args that say what the launch started: a kernel, a graph, a copy or a set. */
static void launch_what_args(struct json_writer *w, const struct launch_event *e,
			     const char *kernel)
{
	switch (launch_api_what(e->api)) {
	case LAUNCH_KERNEL:
		FIELD_STR(w, TRACE_ARG_KERNEL, kernel);
		NAME(w, TRACE_ARG_GRID);
		write_dim(w, e->grid);
		NAME(w, TRACE_ARG_BLOCK);
		write_dim(w, e->block);
		FIELD_U64(w, TRACE_ARG_SHARED_MEMORY, e->shmem);
		break;
	case LAUNCH_GRAPH:
		NAME(w, TRACE_ARG_GRAPH);
		write_hex(w, e->func);
		break;
	case LAUNCH_MEMCPY:
		FIELD_U64(w, TRACE_ARG_BYTES, e->bytes);
		FIELD_STR(w, TRACE_ARG_KIND, launch_memcpy_kind(e->kind));
		break;
	case LAUNCH_MEMSET:
		FIELD_U64(w, TRACE_ARG_BYTES, e->bytes);
		/* cudaMemsetAsync's value is an int. */
		FIELD_I64(w, TRACE_ARG_VALUE, (int)e->kind);
		break;
	}
}

void trace__launch(struct trace *t, const struct launch_event *e, const char *kernel,
		   uint64_t correlation)
{
	const struct launch_api *api = &launch_apis[e->api];
	struct json_writer *w = t->w;

	json_writer__start_object(w);
	NAME(w, TRACE_KEY_PH);
	LITERAL(w, TRACE_PH_COMPLETE);
	NAME(w, TRACE_KEY_CAT);
	if (launch_api_is_driver(e->api))
		LITERAL(w, TRACE_CAT_DRIVER);
	else
		LITERAL(w, TRACE_CAT_RUNTIME);
	FIELD_STR(w, TRACE_KEY_NAME, api->name);
	FIELD_U64(w, TRACE_KEY_PID, e->tgid);
	FIELD_U64(w, TRACE_KEY_TID, e->tid);
	field_ts(t, e->ts_ns);
	field_dur(t, (int64_t)e->dur_ns);
	NAME(w, TRACE_KEY_ARGS);
	json_writer__start_object(w);
	FIELD_U64(w, TRACE_ARG_CBID, (uint64_t)api->cbid);
	FIELD_U64(w, TRACE_ARG_CORRELATION, correlation);
	launch_what_args(w, e, kernel);
	NAME(w, TRACE_ARG_STREAM_HANDLE);
	write_hex(w, e->stream);
	FIELD_U64(w, TRACE_ARG_STEP, e->step);
	json_writer__end_object(w);
	json_writer__end_object(w);
}

/* Hits, their estimated cost, and that cost's share of the span they fell in. */
static void overhead_fields(struct json_writer *w, int64_t hits, double probe_ns, uint64_t span_ns)
{
	if (hits < 0)
		return;
	FIELD_I64(w, TRACE_KEY_PROBE_HITS, hits);
	if (probe_ns < 0)
		return;
	FIELD_DOUBLE(w, TRACE_KEY_PROBE_COST_NS, (double)hits * probe_ns, 0);
	if (span_ns)
		FIELD_DOUBLE(w, TRACE_KEY_PROBE_COST_SHARE,
			     (double)hits * probe_ns / (double)span_ns, 6);
}

/* An X event's head: its phase, category, name, lane and times. */
static void begin_complete(struct trace *t, const char *cat, const char *name, int64_t pid,
			   int64_t tid, uint64_t start, int64_t dur)
{
	struct json_writer *w = t->w;

	json_writer__start_object(w);
	NAME(w, TRACE_KEY_PH);
	LITERAL(w, TRACE_PH_COMPLETE);
	FIELD_STR(w, TRACE_KEY_CAT, cat);
	FIELD_STR(w, TRACE_KEY_NAME, name);
	FIELD_I64(w, TRACE_KEY_PID, pid);
	FIELD_I64(w, TRACE_KEY_TID, tid);
	field_ts(t, start);
	field_dur(t, dur);
	NAME(w, TRACE_KEY_ARGS);
	json_writer__start_object(w);
}

static void end_complete(struct trace *t)
{
	json_writer__end_object(t->w);
	json_writer__end_object(t->w);
}

void trace__step(struct trace *t, const struct trace_step *st)
{
	char name[sizeof(TRACE_STEP_PREFIX) + 24];

	snprintf(name, sizeof(name), TRACE_STEP_PREFIX "%" PRIu64, st->step);
	begin_complete(t, TRACE_CAT_STEP, name, t->m.pid, st->tid, st->start_mono,
		       (int64_t)(st->end_mono - st->start_mono));
	FIELD_U64(t->w, TRACE_ARG_STEP, st->step);
	overhead_fields(t->w, st->probe_hits, st->probe_ns, st->end_mono - st->start_mono);
	if (st->partial)
		FIELD_BOOL(t->w, TRACE_ARG_PARTIAL, true);
	end_complete(t);
}

static void note_lane(struct trace *t, uint32_t device, uint32_t stream)
{
	for (size_t i = 0; i < t->nlanes; i++)
		if (t->lanes[i].device == device && t->lanes[i].stream == stream)
			return;
	if (t->nlanes < sizeof(t->lanes) / sizeof(t->lanes[0])) {
		t->lanes[t->nlanes].device = device;
		t->lanes[t->nlanes++].stream = stream;
	}
}

/* GPU work: pid = device, tid = stream, and the args every kind has. */
static void begin_gpu(struct trace *t, const char *cat, const char *name, uint32_t device,
		      uint32_t context, uint32_t stream, uint32_t correlation, uint64_t start,
		      uint64_t end)
{
	begin_complete(t, cat, name, device, stream, start,
		       end > start ? (int64_t)(end - start) : 0);
	FIELD_U64(t->w, TRACE_ARG_DEVICE, device);
	FIELD_U64(t->w, TRACE_ARG_CONTEXT, context);
	FIELD_U64(t->w, TRACE_ARG_STREAM, stream);
	FIELD_U64(t->w, TRACE_ARG_CORRELATION, correlation);
	note_lane(t, device, stream);
}

void trace__kernel(struct trace *t, const struct agent_kernel *k, const char *name)
{
	struct json_writer *w = t->w;

	begin_gpu(t, TRACE_CAT_KERNEL, name, k->device, k->context, k->stream, k->correlation,
		  k->start_ns, k->end_ns);
	FIELD_U64(w, TRACE_ARG_REGISTERS, k->registers);
	FIELD_U64(w, TRACE_ARG_SHARED_MEMORY, (uint32_t)(k->dyn_shmem + k->static_shmem));
	NAME(w, TRACE_ARG_GRID);
	write_dim(w, k->grid);
	NAME(w, TRACE_ARG_BLOCK);
	write_dim(w, k->block);
	if (k->graph_id) {
		FIELD_U64(w, TRACE_ARG_GRAPH_ID, k->graph_id);
		FIELD_U64(w, TRACE_ARG_GRAPH_NODE_ID, k->graph_node_id);
	}
	end_complete(t);
}

/* CUpti_ActivityMemcpyKind and CUpti_ActivityMemoryKind, as Kineto names them. */
static const char *copy_kind(uint32_t k)
{
	static const char *const n[] = { "Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
					 "AtoD", "DtoA", "DtoD", "HtoH", "PtoP" };

	return k < sizeof(n) / sizeof(n[0]) ? n[k] : "Unknown";
}

static const char *memory_kind(uint32_t k)
{
	static const char *const n[] = { "Unknown", "Pageable", "Pinned", "Device", "Array",
					 "Managed", "Device Static", "Managed Static" };

	return k < sizeof(n) / sizeof(n[0]) ? n[k] : "Unknown";
}

void trace__memcpy(struct trace *t, const struct agent_memcpy *m)
{
	uint64_t dur = m->end_ns > m->start_ns ? m->end_ns - m->start_ns : 0;
	char name[96];

	snprintf(name, sizeof(name), "Memcpy %s (%s -> %s)", copy_kind(m->copy_kind),
		 memory_kind(m->src_kind), memory_kind(m->dst_kind));
	begin_gpu(t, TRACE_CAT_MEMCPY, name, m->device, m->context, m->stream, m->correlation,
		  m->start_ns, m->end_ns);
	FIELD_U64(t->w, TRACE_ARG_BYTES, m->bytes);
	FIELD_DOUBLE(t->w, TRACE_ARG_BANDWIDTH,
				  dur ? (double)m->bytes / (double)dur : 0.0, 3);
	end_complete(t);
}

void trace__memset(struct trace *t, const struct agent_memset *m)
{
	char name[64];

	snprintf(name, sizeof(name), "Memset (%s)", memory_kind(m->memory_kind));
	begin_gpu(t, TRACE_CAT_MEMSET, name, m->device, m->context, m->stream, m->correlation,
		  m->start_ns, m->end_ns);
	FIELD_U64(t->w, TRACE_ARG_BYTES, m->bytes);
	FIELD_U64(t->w, TRACE_ARG_VALUE, m->value);
	end_complete(t);
}

void trace__flow(struct trace *t, bool start, int pid, int tid, uint64_t mono, uint64_t id)
{
	struct json_writer *w = t->w;

	json_writer__start_object(w);
	FIELD_STR(w, TRACE_KEY_PH, start ? TRACE_PH_FLOW_START : TRACE_PH_FLOW_END);
	FIELD_U64(w, TRACE_KEY_ID, id);
	FIELD_I64(w, TRACE_KEY_PID, pid);
	FIELD_I64(w, TRACE_KEY_TID, tid);
	field_ts(t, mono);
	FIELD_STR(w, TRACE_KEY_CAT, TRACE_CAT_FLOW);
	FIELD_STR(w, TRACE_KEY_NAME, TRACE_CAT_FLOW);
	if (!start)
		FIELD_STR(w, TRACE_KEY_BP, TRACE_BP_ENCLOSING);
	json_writer__end_object(w);
}

void trace__set_gpu(struct trace *t, const struct trace_gpu_summary *g)
{
	t->has_gpu = true;
	t->gpu = *g;
}

/* A metadata event: a string arg when sval is given, else the number ival. */
static void write_meta(struct trace *t, const char *name, pid_t tid, const char *key,
		       const char *sval, long long ival)
{
	struct json_writer *w = t->w;

	json_writer__start_object(w);
	NAME(w, TRACE_KEY_PH);
	LITERAL(w, TRACE_PH_METADATA);
	FIELD_STR(w, TRACE_KEY_NAME, name);
	FIELD_I64(w, TRACE_KEY_PID, t->m.pid);
	FIELD_I64(w, TRACE_KEY_TID, tid);
	FIELD_US(w, TRACE_KEY_TS, 0);
	NAME(w, TRACE_KEY_ARGS);
	json_writer__start_object(w);
	if (sval)
		json_writer__field_string(w, key, sval);
	else
		json_writer__field_i64(w, key, ival);
	json_writer__end_object(w);
	json_writer__end_object(w);
}

void trace__thread(struct trace *t, pid_t tid, const char *name)
{
	write_meta(t, TRACE_META_THREAD_NAME, tid, TRACE_ARG_META_NAME, name, 0);
	write_meta(t, TRACE_META_THREAD_SORT, tid, TRACE_ARG_SORT_INDEX, NULL, tid);
}

/* GPU lanes: pid = device ("GPU n"), tid = stream, as Kineto lays them out. */
static void write_lanes(struct trace *t)
{
	pid_t pid = t->m.pid;

	for (size_t i = 0; i < t->nlanes; i++) {
		uint32_t dev = t->lanes[i].device, stream = t->lanes[i].stream;
		char label[32], sname[32];
		bool first_of_device = true;

		for (size_t k = 0; k < i; k++)
			first_of_device &= t->lanes[k].device != dev;
		t->m.pid = (pid_t)dev;
		if (first_of_device) {
			snprintf(label, sizeof(label), "GPU %u", dev);
			write_meta(t, TRACE_META_PROCESS_NAME, 0, TRACE_ARG_META_NAME, t->command, 0);
			write_meta(t, TRACE_META_PROCESS_LABELS, 0, TRACE_ARG_LABELS, label, 0);
			write_meta(t, TRACE_META_PROCESS_SORT, 0, TRACE_ARG_SORT_INDEX, NULL,
				   5000000 + dev);
		}
		snprintf(sname, sizeof(sname), "stream %u", stream);
		write_meta(t, TRACE_META_THREAD_NAME, (pid_t)stream, TRACE_ARG_META_NAME, sname, 0);
		write_meta(t, TRACE_META_THREAD_SORT, (pid_t)stream, TRACE_ARG_SORT_INDEX, NULL,
			   stream);
	}
	t->m.pid = pid;
}

/* Counts, a member each, under names that are literals. */
struct count_field {
	const char *name;
	size_t len;
	uint64_t value;
};

static void write_counts(struct json_writer *w, const struct count_field *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		json_writer__field_u64_raw(w, f[i].name, f[i].len, f[i].value);
}

static void write_gpu_summary(struct trace *t)
{
	const struct trace_gpu_summary *g = &t->gpu;
	const struct count_field counts[] = {
		{ JSON_LITERAL(TRACE_GPU_JOINED), g->matched },
		{ JSON_LITERAL(TRACE_GPU_WITHOUT_GPU), g->without_gpu },
		{ JSON_LITERAL(TRACE_GPU_WITHOUT_API), g->unmatched_launches },
		{ JSON_LITERAL(TRACE_GPU_WITHOUT_LAUNCH), g->gpu_without_launch },
		{ JSON_LITERAL(TRACE_GPU_CLOCK_FAULTS), g->clock_faults },
		{ JSON_LITERAL(TRACE_GPU_DROPPED), g->dropped },
		{ JSON_LITERAL(TRACE_GPU_BAD_CHUNKS), g->bad_chunks },
		{ JSON_LITERAL(TRACE_GPU_MISSING), g->missing },
		{ JSON_LITERAL(TRACE_GPU_RECORDS), g->gpu_records },
	};
	struct json_writer *w = t->w;

	if (!t->has_gpu)
		return;
	NAME(w, TRACE_KEY_GPU);
	json_writer__start_object(w);
	write_counts(w, counts, sizeof(counts) / sizeof(counts[0]));
	json_writer__end_object(w);
	FIELD_U64(w, TRACE_KEY_CUPTI_OVERHEAD_NS, g->overhead_ns);
}

static void write_cuprobe(struct trace *t, const struct trace_summary *s)
{
	uint64_t off = (uint64_t)t->m.mono_to_real, start = t->m.start_mono;
	const struct count_field counts[] = {
		{ JSON_LITERAL(TRACE_KEY_START_NS), start + off },
		{ JSON_LITERAL(TRACE_KEY_END_NS), s->end_mono + off },
		{ JSON_LITERAL(TRACE_KEY_DURATION_NS), s->end_mono - start },
		{ JSON_LITERAL(TRACE_KEY_LAUNCHES), s->launches },
		{ JSON_LITERAL(TRACE_KEY_UNNAMED_KERNELS), s->unnamed },
		{ JSON_LITERAL(TRACE_KEY_LATE_LAUNCHES), s->late },
		{ JSON_LITERAL(TRACE_KEY_DROPS), s->drops },
		{ JSON_LITERAL(TRACE_KEY_NESTED_SKIPPED), s->nested },
		{ JSON_LITERAL(TRACE_KEY_LOST_STEPS), s->lost_steps },
	};
	struct json_writer *w = t->w;

	NAME(w, TRACE_KEY_CUPROBE);
	json_writer__start_object(w);
	FIELD_STR(w, TRACE_KEY_VERSION, TRACE_VERSION);
	FIELD_I64(w, TRACE_KEY_PID, t->m.pid);
	FIELD_STR(w, TRACE_KEY_COMMAND, t->command);
	FIELD_U64(w, TRACE_KEY_CYCLE, t->m.cycle);
	FIELD_BOOL(w, TRACE_KEY_PARTIAL, s->partial);
	write_counts(w, counts, sizeof(counts) / sizeof(counts[0]));
	if (s->first_step >= 0) {
		NAME(w, TRACE_KEY_STEPS);
		json_writer__start_array(w);
		json_writer__i64(w, s->first_step);
		json_writer__i64(w, s->last_step);
		json_writer__end_array(w);
	}
	if (s->probe_ns >= 0)
		FIELD_DOUBLE(w, TRACE_KEY_PROBE_NS_PER_HIT, s->probe_ns, 1);
	overhead_fields(w, (int64_t)s->probe_hits, s->probe_ns, s->end_mono - start);
	write_gpu_summary(t);
	json_writer__end_object(w);
}

static void write_trailer(struct trace *t, const struct trace_summary *s)
{
	write_meta(t, TRACE_META_PROCESS_NAME, 0, TRACE_ARG_META_NAME, t->command, 0);
	write_meta(t, TRACE_META_PROCESS_LABELS, 0, TRACE_ARG_LABELS, "CPU", 0);
	write_meta(t, TRACE_META_PROCESS_SORT, 0, TRACE_ARG_SORT_INDEX, NULL, t->m.pid);
	write_lanes(t);
	json_writer__end_array(t->w);
	FIELD_STR(t->w, TRACE_KEY_TRACE_NAME, t->name);
	write_cuprobe(t, s);
	json_writer__end_object(t->w);
}

/* Everything written reaches the file, or the first error says why not. */
static int finish_stream(struct trace *t)
{
	int err = json_writer__flush(t->w);

	if (!err && (fputc('\n', t->f) == EOF || fflush(t->f) || ferror(t->f)))
		err = errno ? -errno : -EIO;
	if (fclose(t->f) && !err)
		err = errno ? -errno : -EIO;
	t->f = NULL;
	return err;
}

int trace__close(struct trace *t, const struct trace_summary *s)
{
	int err;

	write_trailer(t, s);
	errno = 0;
	err = finish_stream(t);
	/* Synced, then named: a full disk or a name taken leaves nothing. */
	if (!err)
		err = safe_file__publish(t->sf);
	safe_file__free(t->sf);
	t->sf = NULL;
	return err;
}

void trace__discard(struct trace *t)
{
	if (t->f) {
		fclose(t->f);
		t->f = NULL;
	}
	safe_file__free(t->sf);
	t->sf = NULL;
}

const char *trace__path(const struct trace *t)
{
	return t->path;
}

void trace__free(struct trace *t)
{
	if (!t)
		return;
	trace__discard(t);
	json_writer__free(t->w);
	free(t->path);
	free(t->name);
	free(t->host);
	free(t->command);
	free(t);
}
