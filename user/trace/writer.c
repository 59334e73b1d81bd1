// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Writes a cycle's trace through util/json_writer in the layout of
 * trace/format.h, into a file that util/safe_file names only when it is whole.
 * --stack's spans are writer_stacks.c's.
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
#include "launch.h"
#include "cuda/launch_api.h"
#include "trace/format.h"
#include "trace/graphs.h"
#include "trace/writer.h"
#include "trace/writer_int.h"
#include "util/clock.h"
#include "util/json_writer.h"
#include "util/safe_file.h"

static void write_header(struct trace *t)
{
	const struct trace_meta *m = &t->m;
	struct json_writer *w = t->w;

	json_writer__lines(w, TRACE_INDENT_TOP);
	json_writer__start_object(w);
	json_writer__field_u64(w, TRACE_KEY_SCHEMA_VERSION, 1);
	json_writer__name(w, TRACE_KEY_DEVICE_PROPERTIES);
	json_writer__start_array(w);
	json_writer__end_array(w);
	json_writer__name(w, TRACE_KEY_DISTRIBUTED_INFO);
	json_writer__start_object(w);
	json_writer__field_string(w, TRACE_KEY_BACKEND, "");
	json_writer__field_i64(w, TRACE_KEY_RANK, m->rank < 0 ? 0 : m->rank);
	json_writer__field_i64(w, TRACE_KEY_WORLD_SIZE, m->world_size < 0 ? 1 : m->world_size);
	json_writer__end_object(w);
	json_writer__field_string(w, TRACE_KEY_DISPLAY_TIME_UNIT, "ms");
	json_writer__field_u64(w, TRACE_KEY_BASE_TIME, m->start_mono + (uint64_t)m->mono_to_real);
	json_writer__name(w, TRACE_KEY_EVENTS);
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

/*
 * Each launch reads the trace's fields: they get cache lines of their own,
 * which no other thread's allocations share and write.
 */
static struct trace *trace_alloc(void)
{
	size_t size = (sizeof(struct trace) + 63) & ~(size_t)63;
	struct trace *t = aligned_alloc(64, size);

	if (t) {
		memset(t, 0, size);
		trace_graphs__init(&t->graphs);
	}
	return t;
}

static struct trace *open_in(int dirfd, const char *dir, const struct trace_meta *m)
{
	struct trace *t = trace_alloc();
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
	t->sf = safe_file__open(dirfd, t->name, SAFE_FILE_NEW, m->file_mode ? m->file_mode : 0600);
	if (!t->sf) {
		err = -errno;
		goto fail;
	}
	if (m->share_group && fchown(safe_file__fd(t->sf), (uid_t)-1, m->gid)) {
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

uint64_t trace__bytes(const struct trace *t)
{
	return json_writer__bytes(t->w);
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

/* A handle as the string "0x<hex>", formatted by hand: every launch has one. */
static inline void field_hex(struct json_writer *w, struct json_cursor *c, const char *name,
			     size_t len, uint64_t v)
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
	json_cursor__name(w, c, name, len);
	json_cursor__raw(w, c, p, (size_t)(end - p));
}

static inline void field_dim(struct json_writer *w, struct json_cursor *c, const char *name,
			     size_t len, const __u32 d[3])
{
	json_cursor__name(w, c, name, len);
	json_cursor__start_array(w, c);
	for (int i = 0; i < 3; i++)
		json_cursor__u64(w, c, d[i]);
	json_cursor__end_array(w, c);
}

/* The args that say what the launch started: a kernel, a graph, a copy or a set. */
static inline void launch_what_args(struct json_writer *w, struct json_cursor *c,
				    const struct launch_event *e, const char *kernel,
				    const struct graph_content *graph)
{
	switch (launch_api_what(e->api)) {
	case LAUNCH_KERNEL:
		FIELD_STR(w, c, TRACE_ARG_KERNEL, kernel);
		field_dim(w, c, JSON_LITERAL(TRACE_ARG_GRID), e->grid);
		field_dim(w, c, JSON_LITERAL(TRACE_ARG_BLOCK), e->block);
		FIELD_U64(w, c, TRACE_ARG_SHARED_MEMORY, e->shmem);
		break;
	case LAUNCH_GRAPH:
		field_hex(w, c, JSON_LITERAL(TRACE_ARG_GRAPH), e->func);
		FIELD_U64(w, c, TRACE_ARG_GRAPH_CONTENT, graph ? graph->id : 0);
		if (graph) {
			FIELD_U64(w, c, TRACE_ARG_GRAPH_NODES, graph->nodes.len);
			FIELD_U64(w, c, TRACE_ARG_GRAPH_KERNELS, graph->kernels);
		}
		break;
	case LAUNCH_MEMCPY:
		FIELD_U64(w, c, TRACE_ARG_BYTES, e->bytes);
		FIELD_STR(w, c, TRACE_ARG_KIND, launch_memcpy_kind(e->kind));
		break;
	case LAUNCH_MEMSET:
		FIELD_U64(w, c, TRACE_ARG_BYTES, e->bytes);
		/* cudaMemsetAsync's value is an int. */
		FIELD_I64(w, c, TRACE_ARG_VALUE, (int)e->kind);
		break;
	}
}

void trace__launch(struct trace *t, const struct launch_event *e, const char *kernel,
		   uint64_t correlation, const struct graph_content *graph)
{
	const struct launch_api *api = &launch_apis[e->api];
	uint64_t parent = t->stack_get ? trace_stack_spans(t, e) : 0;
	struct json_writer *w = t->w;
	struct json_cursor c = json_writer__cursor(w);

	json_cursor__start_object(w, &c);
	FIELD_LIT(w, &c, TRACE_KEY_PH, TRACE_PH_COMPLETE);
	if (e->flags & LAUNCH_F_CAPTURED)
		FIELD_LIT(w, &c, TRACE_KEY_CAT, TRACE_CAT_CAPTURE);
	else if (launch_api_is_driver(e->api))
		FIELD_LIT(w, &c, TRACE_KEY_CAT, TRACE_CAT_DRIVER);
	else
		FIELD_LIT(w, &c, TRACE_KEY_CAT, TRACE_CAT_RUNTIME);
	FIELD_STR(w, &c, TRACE_KEY_NAME, api->name);
	FIELD_U64(w, &c, TRACE_KEY_PID, e->tgid);
	FIELD_U64(w, &c, TRACE_KEY_TID, e->tid);
	field_ts(t, &c, e->ts_ns);
	FIELD_US(w, &c, TRACE_KEY_DUR, (int64_t)e->dur_ns);
	NAME(w, &c, TRACE_KEY_ARGS);
	json_cursor__start_object(w, &c);
	FIELD_U64(w, &c, TRACE_ARG_CBID, (uint64_t)api->cbid);
	FIELD_U64(w, &c, TRACE_ARG_CORRELATION, correlation);
	launch_what_args(w, &c, e, kernel, graph);
	/* A replay's content goes once into the trailer (short of memory, it is only counted). */
	if (launch_api_what(e->api) == LAUNCH_GRAPH && !(e->flags & LAUNCH_F_CAPTURED))
		trace_graphs__replay(&t->graphs, graph);
	field_hex(w, &c, JSON_LITERAL(TRACE_ARG_STREAM_HANDLE), e->stream);
	FIELD_U64(w, &c, TRACE_ARG_STEP, e->step);
	if (e->flags & LAUNCH_F_CAPTURED)
		FIELD_U64(w, &c, TRACE_ARG_CAPTURE_ID, e->capture);
	if (parent)
		FIELD_U64(w, &c, TRACE_ARG_PY_PARENT, parent);
	json_cursor__end_object(w, &c);
	json_cursor__end_object(w, &c);
	json_writer__cursor_close(w, c);
}

/* Hits, their estimated cost, and that cost's share of the span they fell in. */
static void overhead_fields(struct json_writer *w, struct json_cursor *c, int64_t hits,
			    double probe_ns, uint64_t span_ns)
{
	if (hits < 0)
		return;
	FIELD_I64(w, c, TRACE_KEY_PROBE_HITS, hits);
	if (probe_ns < 0)
		return;
	FIELD_DOUBLE(w, c, TRACE_KEY_PROBE_COST_NS, (double)hits * probe_ns, 0);
	if (span_ns)
		FIELD_DOUBLE(w, c, TRACE_KEY_PROBE_COST_SHARE,
			     (double)hits * probe_ns / (double)span_ns, 6);
}

void trace__step(struct trace *t, const struct trace_step *st)
{
	char name[sizeof(TRACE_STEP_PREFIX) + 24];
	struct json_cursor c;

	snprintf(name, sizeof(name), TRACE_STEP_PREFIX "%" PRIu64, st->step);
	begin_complete(t, &c, TRACE_CAT_STEP, name, t->m.pid, st->tid, st->start_mono,
		       (int64_t)(st->end_mono - st->start_mono));
	FIELD_U64(t->w, &c, TRACE_ARG_STEP, st->step);
	overhead_fields(t->w, &c, st->probe_hits, st->probe_ns, st->end_mono - st->start_mono);
	if (st->partial)
		FIELD_BOOL(t->w, &c, TRACE_ARG_PARTIAL, true);
	end_complete(t, &c);
}

void trace__annotation(struct trace *t, pid_t tid, const char *name, uint64_t start_mono,
		       uint64_t end_mono)
{
	struct json_cursor c;

	begin_complete(t, &c, TRACE_CAT_STEP, name, t->m.pid, tid, start_mono,
		       (int64_t)(end_mono - start_mono));
	end_complete(t, &c);
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
static inline void begin_gpu(struct trace *t, struct json_cursor *c, const char *cat,
			     const char *name, uint32_t device, uint32_t context, uint32_t stream,
			     uint32_t correlation, uint64_t start, uint64_t end)
{
	struct json_writer *w = t->w;

	begin_complete(t, c, cat, name, device, stream, start,
		       end > start ? (int64_t)(end - start) : 0);
	FIELD_U64(w, c, TRACE_ARG_DEVICE, device);
	FIELD_U64(w, c, TRACE_ARG_CONTEXT, context);
	FIELD_U64(w, c, TRACE_ARG_STREAM, stream);
	FIELD_U64(w, c, TRACE_ARG_CORRELATION, correlation);
	note_lane(t, device, stream);
}

void trace__kernel(struct trace *t, const struct agent_kernel *k, const char *name)
{
	struct json_writer *w = t->w;
	struct json_cursor c;

	begin_gpu(t, &c, TRACE_CAT_KERNEL, name, k->device, k->context, k->stream,
		  k->correlation, k->start_ns, k->end_ns);
	FIELD_U64(w, &c, TRACE_ARG_REGISTERS, k->registers);
	FIELD_U64(w, &c, TRACE_ARG_SHARED_MEMORY, (uint32_t)(k->dyn_shmem + k->static_shmem));
	field_dim(w, &c, JSON_LITERAL(TRACE_ARG_GRID), k->grid);
	field_dim(w, &c, JSON_LITERAL(TRACE_ARG_BLOCK), k->block);
	if (k->graph_id) {
		FIELD_U64(w, &c, TRACE_ARG_GRAPH_ID, k->graph_id);
		FIELD_U64(w, &c, TRACE_ARG_GRAPH_NODE_ID, k->graph_node_id);
	}
	end_complete(t, &c);
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
	struct json_cursor c;
	char name[96];

	snprintf(name, sizeof(name), "Memcpy %s (%s -> %s)", copy_kind(m->copy_kind),
		 memory_kind(m->src_kind), memory_kind(m->dst_kind));
	begin_gpu(t, &c, TRACE_CAT_MEMCPY, name, m->device, m->context, m->stream,
		  m->correlation, m->start_ns, m->end_ns);
	FIELD_U64(t->w, &c, TRACE_ARG_BYTES, m->bytes);
	FIELD_DOUBLE(t->w, &c, TRACE_ARG_BANDWIDTH, dur ? (double)m->bytes / (double)dur : 0.0, 3);
	end_complete(t, &c);
}

void trace__memset(struct trace *t, const struct agent_memset *m)
{
	struct json_cursor c;
	char name[64];

	snprintf(name, sizeof(name), "Memset (%s)", memory_kind(m->memory_kind));
	begin_gpu(t, &c, TRACE_CAT_MEMSET, name, m->device, m->context, m->stream,
		  m->correlation, m->start_ns, m->end_ns);
	FIELD_U64(t->w, &c, TRACE_ARG_BYTES, m->bytes);
	FIELD_U64(t->w, &c, TRACE_ARG_VALUE, m->value);
	end_complete(t, &c);
}

void trace__flow(struct trace *t, bool start, int pid, int tid, uint64_t mono, uint64_t id)
{
	struct json_writer *w = t->w;
	struct json_cursor c = json_writer__cursor(w);

	json_cursor__start_object(w, &c);
	if (start)
		FIELD_LIT(w, &c, TRACE_KEY_PH, TRACE_PH_FLOW_START);
	else
		FIELD_LIT(w, &c, TRACE_KEY_PH, TRACE_PH_FLOW_END);
	FIELD_U64(w, &c, TRACE_KEY_ID, id);
	FIELD_I64(w, &c, TRACE_KEY_PID, pid);
	FIELD_I64(w, &c, TRACE_KEY_TID, tid);
	field_ts(t, &c, mono);
	FIELD_LIT(w, &c, TRACE_KEY_CAT, TRACE_CAT_FLOW);
	FIELD_LIT(w, &c, TRACE_KEY_NAME, TRACE_CAT_FLOW);
	if (!start)
		FIELD_LIT(w, &c, TRACE_KEY_BP, TRACE_BP_ENCLOSING);
	json_cursor__end_object(w, &c);
	json_writer__cursor_close(w, c);
}

void trace__set_gpu(struct trace *t, const struct trace_gpu_summary *g)
{
	t->has_gpu = true;
	t->gpu = *g;
	t->graphs.gpu = true;
	t->graphs.gpu_kernels = g->graph_gpu_kernels;
	t->graphs.mismatches = g->graph_mismatches;
}

/* A metadata event: a string arg when sval is given, else the number ival. */
static void write_meta(struct trace *t, const char *name, pid_t tid, const char *key,
		       size_t key_len, const char *sval, long long ival)
{
	struct json_writer *w = t->w;
	struct json_cursor c = json_writer__cursor(w);

	json_cursor__start_object(w, &c);
	FIELD_LIT(w, &c, TRACE_KEY_PH, TRACE_PH_METADATA);
	FIELD_STR(w, &c, TRACE_KEY_NAME, name);
	FIELD_I64(w, &c, TRACE_KEY_PID, t->m.pid);
	FIELD_I64(w, &c, TRACE_KEY_TID, tid);
	FIELD_US(w, &c, TRACE_KEY_TS, 0);
	NAME(w, &c, TRACE_KEY_ARGS);
	json_cursor__start_object(w, &c);
	json_cursor__name(w, &c, key, key_len);
	if (sval)
		json_cursor__string(w, &c, sval);
	else
		json_cursor__i64(w, &c, ival);
	json_cursor__end_object(w, &c);
	json_cursor__end_object(w, &c);
	json_writer__cursor_close(w, c);
}

void trace__thread(struct trace *t, pid_t tid, const char *name)
{
	write_meta(t, TRACE_META_THREAD_NAME, tid, JSON_LITERAL(TRACE_ARG_META_NAME), name, 0);
	write_meta(t, TRACE_META_THREAD_SORT, tid, JSON_LITERAL(TRACE_ARG_SORT_INDEX), NULL, tid);
}

/* A GPU device's process: its name, its "GPU n" label, its place. */
static void write_device(struct trace *t, uint32_t dev)
{
	char label[32];

	snprintf(label, sizeof(label), "GPU %u", dev);
	write_meta(t, TRACE_META_PROCESS_NAME, 0, JSON_LITERAL(TRACE_ARG_META_NAME), t->command,
		   0);
	write_meta(t, TRACE_META_PROCESS_LABELS, 0, JSON_LITERAL(TRACE_ARG_LABELS), label, 0);
	write_meta(t, TRACE_META_PROCESS_SORT, 0, JSON_LITERAL(TRACE_ARG_SORT_INDEX), NULL,
		   5000000 + dev);
}

/* GPU lanes: pid = device ("GPU n"), tid = stream, as Kineto lays them out. */
static void write_lanes(struct trace *t)
{
	pid_t pid = t->m.pid;

	for (size_t i = 0; i < t->nlanes; i++) {
		uint32_t dev = t->lanes[i].device, stream = t->lanes[i].stream;
		bool first_of_device = true;
		char sname[32];

		for (size_t k = 0; k < i; k++)
			first_of_device &= t->lanes[k].device != dev;
		t->m.pid = (pid_t)dev;
		if (first_of_device)
			write_device(t, dev);
		snprintf(sname, sizeof(sname), "stream %u", stream);
		write_meta(t, TRACE_META_THREAD_NAME, (pid_t)stream,
			   JSON_LITERAL(TRACE_ARG_META_NAME), sname, 0);
		write_meta(t, TRACE_META_THREAD_SORT, (pid_t)stream,
			   JSON_LITERAL(TRACE_ARG_SORT_INDEX), NULL, stream);
	}
	t->m.pid = pid;
}

void trace_write_counts(struct json_writer *w, struct json_cursor *c,
			const struct count_field *f, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		json_cursor__name(w, c, f[i].name, f[i].len);
		json_cursor__u64(w, c, f[i].value);
	}
}

static void write_gpu_summary(struct trace *t, struct json_cursor *c)
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
	NAME(w, c, TRACE_KEY_GPU);
	json_cursor__start_object(w, c);
	trace_write_counts(w, c, counts, sizeof(counts) / sizeof(counts[0]));
	json_cursor__end_object(w, c);
	FIELD_U64(w, c, TRACE_KEY_CUPTI_OVERHEAD_NS, g->overhead_ns);
}

static void write_steps(struct json_writer *w, struct json_cursor *c,
			const struct trace_summary *s)
{
	if (s->first_step < 0)
		return;
	NAME(w, c, TRACE_KEY_STEPS);
	json_cursor__start_array(w, c);
	json_cursor__i64(w, c, s->first_step);
	json_cursor__i64(w, c, s->last_step);
	json_cursor__end_array(w, c);
}

/* Where a cycle that reached a size bound was cut, and what it did not write. */
static void write_cut(struct json_writer *w, struct json_cursor *c, const struct trace_summary *s,
		      uint64_t off)
{
	if (!s->cut_reason)
		return;
	NAME(w, c, TRACE_KEY_CUT);
	json_cursor__start_object(w, c);
	FIELD_STR(w, c, TRACE_CUT_BOUND, s->cut_reason);
	FIELD_I64(w, c, TRACE_CUT_STEP, s->cut_step);
	FIELD_U64(w, c, TRACE_CUT_NS, s->cut_mono + off);
	FIELD_U64(w, c, TRACE_CUT_LAUNCHES, s->cut_launches);
	json_cursor__end_object(w, c);
}

/* The holds since the process's previous trace: how many, and how long in all and at most. */
static void write_holds(struct json_writer *w, struct json_cursor *c, const struct trace_holds *h)
{
	NAME(w, c, TRACE_KEY_HOLDS);
	json_cursor__start_object(w, c);
	FIELD_U64(w, c, TRACE_HOLDS_COUNT, h->count);
	FIELD_DOUBLE(w, c, TRACE_HOLDS_TOTAL_MS, h->total_ns / 1e6, 3);
	FIELD_DOUBLE(w, c, TRACE_HOLDS_MAX_MS, h->max_ns / 1e6, 3);
	json_cursor__end_object(w, c);
}

/* The cuprobe object: the cycle's facts, on one line. */
static void write_cuprobe(struct trace *t, const struct trace_summary *s)
{
	uint64_t off = (uint64_t)t->m.mono_to_real, start = t->m.start_mono;
	const struct count_field counts[] = {
		{ JSON_LITERAL(TRACE_KEY_START_NS), start + off },
		{ JSON_LITERAL(TRACE_KEY_END_NS), s->end_mono + off },
		{ JSON_LITERAL(TRACE_KEY_DURATION_NS), s->end_mono - start },
		{ JSON_LITERAL(TRACE_KEY_LAUNCHES), s->launches },
		{ JSON_LITERAL(TRACE_KEY_CAPTURED), s->captured },
		{ JSON_LITERAL(TRACE_KEY_UNNAMED_KERNELS), s->unnamed },
		{ JSON_LITERAL(TRACE_KEY_LATE_LAUNCHES), s->late },
		{ JSON_LITERAL(TRACE_KEY_DROPS), s->drops },
		{ JSON_LITERAL(TRACE_KEY_NESTED_SKIPPED), s->nested },
		{ JSON_LITERAL(TRACE_KEY_STALE_LINK_HITS), s->stale },
		{ JSON_LITERAL(TRACE_KEY_LOST_STEPS), s->lost_steps },
		{ JSON_LITERAL(TRACE_KEY_UNPROBED_NS), s->unprobed_ns },
	};
	struct json_writer *w = t->w;
	struct json_cursor c;

	json_writer__name(w, TRACE_KEY_CUPROBE);
	c = json_writer__cursor(w);
	json_cursor__start_object(w, &c);
	FIELD_LIT(w, &c, TRACE_KEY_VERSION, TRACE_VERSION);
	FIELD_I64(w, &c, TRACE_KEY_PID, t->m.pid);
	FIELD_STR(w, &c, TRACE_KEY_COMMAND, t->command);
	FIELD_U64(w, &c, TRACE_KEY_CYCLE, t->m.cycle);
	FIELD_BOOL(w, &c, TRACE_KEY_PARTIAL, s->partial);
	trace_write_counts(w, &c, counts, sizeof(counts) / sizeof(counts[0]));
	write_steps(w, &c, s);
	if (s->probe_ns >= 0)
		FIELD_DOUBLE(w, &c, TRACE_KEY_PROBE_NS_PER_HIT, s->probe_ns, 1);
	overhead_fields(w, &c, (int64_t)s->probe_hits, s->probe_ns, s->end_mono - start);
	trace_graphs__write(&t->graphs, w, &c);
	write_gpu_summary(t, &c);
	trace_write_stack_counts(t, &c);
	write_cut(w, &c, s, off);
	write_holds(w, &c, &s->holds);
	if (s->no_driver)
		FIELD_BOOL(w, &c, TRACE_KEY_DRIVER_LOADED, false);
	json_cursor__end_object(w, &c);
	json_writer__cursor_close(w, c);
}

static void write_trailer(struct trace *t, const struct trace_summary *s)
{
	write_meta(t, TRACE_META_PROCESS_NAME, 0, JSON_LITERAL(TRACE_ARG_META_NAME), t->command,
		   0);
	write_meta(t, TRACE_META_PROCESS_LABELS, 0, JSON_LITERAL(TRACE_ARG_LABELS), "CPU", 0);
	write_meta(t, TRACE_META_PROCESS_SORT, 0, JSON_LITERAL(TRACE_ARG_SORT_INDEX), NULL,
		   t->m.pid);
	write_lanes(t);
	json_writer__end_array(t->w);
	json_writer__field_string(t->w, TRACE_KEY_TRACE_NAME, t->name);
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

	trace_stack_spans_close(t);
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
	trace_stack_spans_free(t);
	trace_graphs__free(&t->graphs);
	free(t);
}
