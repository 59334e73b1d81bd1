// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "clock.h"
#include "agent.h"
#include "launch.h"
#include "trace/writer.h"

#define CUPROBE_VERSION "0.2.0"

struct trace {
	FILE *f;
	char *path;	/* final name */
	char *tmp;	/* name while being written */
	struct trace_meta m;
	char *host, *command;
	bool first;	/* no event written yet */
	/* GPU devices and streams seen, named in the metadata. */
	struct { uint32_t device, stream; } lanes[64];
	size_t nlanes;
	bool has_gpu;
	struct trace_gpu_summary gpu;
	char buf[1 << 20];
};

/* Length of the well-formed UTF-8 sequence at s, or 0. */
static int utf8_len(const unsigned char *s)
{
	int n = s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : s[0] >= 0xe0 ? 3 : s[0] >= 0xc2 ? 2 : 0;

	if (s[0] >= 0xf5)
		return 0;
	for (int i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

void json_write_str(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	fputc('"', f);
	while (*s) {
		int n;

		if (*s == '"' || *s == '\\') {
			fputc('\\', f);
			fputc(*s++, f);
		} else if (*s < 0x20) {
			fprintf(f, "\\u%04x", *s++);
		} else if (*s < 0x80) {
			const unsigned char *run = s;

			while (*s >= 0x20 && *s < 0x80 && *s != '"' && *s != '\\')
				s++;
			fwrite(run, 1, s - run, f);
		} else if ((n = utf8_len(s))) {
			fwrite(s, 1, n, f);
			s += n;
		} else {
			/* A name cut inside a character (comm is 15 bytes): keep the JSON valid. */
			fputs("\\ufffd", f);
			s++;
		}
	}
	fputc('"', f);
}

/* Kineto's ts: microseconds after baseTimeNanoseconds, with ns as decimals. */
static void write_us(FILE *f, int64_t ns)
{
	if (ns < 0) {
		fputc('-', f);
		ns = -ns;
	}
	fprintf(f, "%" PRId64 ".%03" PRId64, ns / 1000, ns % 1000);
}

static void write_ts(struct trace *t, uint64_t mono)
{
	write_us(t->f, (int64_t)(mono - t->m.start_mono));
}

static void begin_event(struct trace *t)
{
	fputs(t->first ? "\n  " : ",\n  ", t->f);
	t->first = false;
}

struct trace *trace__open(const char *dir, const struct trace_meta *m)
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
	if (asprintf(&t->path, "%s/%s_%d.%" PRIu64 ".pt.trace.json", dir, m->host, (int)m->pid,
		     now) < 0)
		t->path = NULL;
	if (!t->path ||
	    asprintf(&t->tmp, "%s.tmp", t->path) < 0) {
		t->tmp = NULL;
		goto fail;
	}
	t->f = fopen(t->tmp, "wxe");
	if (!t->f) {
		err = -errno;
		goto fail;
	}
	setvbuf(t->f, t->buf, _IOFBF, sizeof(t->buf));
	/* One thread writes a trace: no lock per fputc. */
	__fsetlocking(t->f, FSETLOCKING_BYCALLER);
	t->first = true;
	fprintf(t->f, "{\n \"schemaVersion\": 1,\n \"deviceProperties\": [],\n"
		      " \"distributedInfo\": {\"backend\": \"\", \"rank\": %d, \"world_size\": %d},\n"
		      " \"displayTimeUnit\": \"ms\",\n"
		      " \"baseTimeNanoseconds\": %" PRIu64 ",\n \"traceEvents\": [",
		m->rank < 0 ? 0 : m->rank, m->world_size < 0 ? 1 : m->world_size,
		m->start_mono + m->mono_to_real);
	return t;
fail:
	trace__free(t);
	errno = -err;
	return NULL;
}

static void write_dim(FILE *f, const char *key, const __u32 d[3])
{
	fprintf(f, ", \"%s\": [%u, %u, %u]", key, d[0], d[1], d[2]);
}

static char *put_lit(char *p, const char *s, size_t n)
{
	memcpy(p, s, n);
	return p + n;
}

#define PUT(p, lit) put_lit(p, lit, sizeof(lit) - 1)

static char *put_u64(char *p, uint64_t v)
{
	char tmp[20];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

static char *put_hex(char *p, uint64_t v)
{
	char tmp[16];
	int n = 0;

	do {
		tmp[n++] = "0123456789abcdef"[v & 15];
		v >>= 4;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

/* Kineto's microseconds with ns decimals, as write_us. */
static char *put_us(char *p, int64_t ns)
{
	uint64_t r;

	if (ns < 0) {
		*p++ = '-';
		ns = -ns;
	}
	p = put_u64(p, (uint64_t)ns / 1000);
	r = (uint64_t)ns % 1000;
	*p++ = '.';
	*p++ = (char)('0' + r / 100);
	*p++ = (char)('0' + r / 10 % 10);
	*p++ = (char)('0' + r % 10);
	return p;
}

static char *put_dim(char *p, const __u32 d[3])
{
	*p++ = '[';
	p = put_u64(p, d[0]);
	p = PUT(p, ", ");
	p = put_u64(p, d[1]);
	p = PUT(p, ", ");
	p = put_u64(p, d[2]);
	*p++ = ']';
	return p;
}

void trace__launch(struct trace *t, const struct launch_event *e, const char *kernel,
		   uint64_t correlation)
{
	const struct launch_api *api = &launch_apis[e->api];
	char buf[512], *p = buf;
	FILE *f = t->f;

	p = t->first ? PUT(p, "\n  ") : PUT(p, ",\n  ");
	t->first = false;
	p = launch_api_is_driver(e->api) ? PUT(p, "{\"ph\": \"X\", \"cat\": \"cuda_driver\", \"name\": \"")
					 : PUT(p, "{\"ph\": \"X\", \"cat\": \"cuda_runtime\", \"name\": \"");
	p = put_lit(p, api->name, strlen(api->name));
	p = PUT(p, "\", \"pid\": ");
	p = put_u64(p, e->tgid);
	p = PUT(p, ", \"tid\": ");
	p = put_u64(p, e->tid);
	p = PUT(p, ", \"ts\": ");
	p = put_us(p, (int64_t)(e->ts_ns - t->m.start_mono));
	p = PUT(p, ", \"dur\": ");
	p = put_us(p, (int64_t)e->dur_ns);
	p = PUT(p, ", \"args\": {\"cbid\": ");
	p = put_u64(p, (uint64_t)api->cbid);
	p = PUT(p, ", \"correlation\": ");
	p = put_u64(p, correlation);
	switch (launch_api_what(e->api)) {
	case LAUNCH_KERNEL:
		p = PUT(p, ", \"kernel\": ");
		fwrite(buf, 1, p - buf, f);
		json_write_str(f, kernel);
		p = buf;
		p = PUT(p, ", \"grid\": ");
		p = put_dim(p, e->grid);
		p = PUT(p, ", \"block\": ");
		p = put_dim(p, e->block);
		p = PUT(p, ", \"shared memory\": ");
		p = put_u64(p, e->shmem);
		break;
	case LAUNCH_GRAPH:
		p = PUT(p, ", \"graph\": \"0x");
		p = put_hex(p, e->func);
		*p++ = '"';
		break;
	case LAUNCH_MEMCPY:
		p = PUT(p, ", \"bytes\": ");
		p = put_u64(p, e->bytes);
		p = PUT(p, ", \"kind\": \"");
		p = put_lit(p, launch_memcpy_kind(e->kind), strlen(launch_memcpy_kind(e->kind)));
		*p++ = '"';
		break;
	case LAUNCH_MEMSET:
		p = PUT(p, ", \"bytes\": ");
		p = put_u64(p, e->bytes);
		p = PUT(p, ", \"value\": ");
		if ((int)e->kind < 0) {
			*p++ = '-';
			p = put_u64(p, (uint64_t)-(int64_t)(int)e->kind);
		} else {
			p = put_u64(p, (uint64_t)(int)e->kind);
		}
		break;
	}
	/* HTA takes a "stream" arg for GPU work: a CPU event names the handle otherwise. */
	p = PUT(p, ", \"stream handle\": \"0x");
	p = put_hex(p, e->stream);
	p = PUT(p, "\", \"step\": ");
	p = put_u64(p, e->step);
	p = PUT(p, "}}");
	fwrite(buf, 1, p - buf, f);
}

/* Hits, their estimated cost, and that cost's share of the span they fell in. */
static void write_overhead(FILE *f, int64_t hits, double probe_ns, uint64_t span_ns)
{
	if (hits < 0)
		return;
	fprintf(f, ", \"probe_hits\": %" PRId64, hits);
	if (probe_ns < 0)
		return;
	fprintf(f, ", \"probe_cost_ns\": %.0f", hits * probe_ns);
	if (span_ns)
		fprintf(f, ", \"probe_cost_share\": %.6f", hits * probe_ns / span_ns);
}

void trace__step(struct trace *t, const struct trace_step *st)
{
	begin_event(t);
	fprintf(t->f, "{\"ph\": \"X\", \"cat\": \"user_annotation\", \"name\": \"ProfilerStep#%" PRIu64
		      "\", \"pid\": %d, \"tid\": %d, \"ts\": ", st->step, (int)t->m.pid, (int)st->tid);
	write_ts(t, st->start_mono);
	fputs(", \"dur\": ", t->f);
	write_us(t->f, (int64_t)(st->end_mono - st->start_mono));
	fprintf(t->f, ", \"args\": {\"step\": %" PRIu64, st->step);
	write_overhead(t->f, st->probe_hits, st->probe_ns, st->end_mono - st->start_mono);
	fputs(st->partial ? ", \"partial\": true}}" : "}}", t->f);
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

static void begin_gpu(struct trace *t, const char *cat, const char *name, uint32_t device,
		      uint32_t stream, uint64_t start, uint64_t end)
{
	begin_event(t);
	fprintf(t->f, "{\"ph\": \"X\", \"cat\": \"%s\", \"name\": ", cat);
	json_write_str(t->f, name);
	fprintf(t->f, ", \"pid\": %u, \"tid\": %u, \"ts\": ", device, stream);
	write_ts(t, start);
	fputs(", \"dur\": ", t->f);
	write_us(t->f, end > start ? (int64_t)(end - start) : 0);
	note_lane(t, device, stream);
}

void trace__kernel(struct trace *t, const struct agent_kernel *k, const char *name)
{
	begin_gpu(t, "kernel", name, k->device, k->stream, k->start_ns, k->end_ns);
	fprintf(t->f, ", \"args\": {\"device\": %u, \"context\": %u, \"stream\": %u, "
		      "\"correlation\": %u, \"registers per thread\": %u, \"shared memory\": %u",
		k->device, k->context, k->stream, k->correlation, k->registers,
		k->dyn_shmem + k->static_shmem);
	write_dim(t->f, "grid", k->grid);
	write_dim(t->f, "block", k->block);
	if (k->graph_id)
		fprintf(t->f, ", \"graph id\": %u, \"graph node id\": %" PRIu64, k->graph_id,
			(uint64_t)k->graph_node_id);
	fputs("}}", t->f);
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
	begin_gpu(t, "gpu_memcpy", name, m->device, m->stream, m->start_ns, m->end_ns);
	fprintf(t->f, ", \"args\": {\"device\": %u, \"context\": %u, \"stream\": %u, "
		      "\"correlation\": %u, \"bytes\": %" PRIu64 ", \"memory bandwidth (GB/s)\": %.3f}}",
		m->device, m->context, m->stream, m->correlation, (uint64_t)m->bytes,
		dur ? (double)m->bytes / dur : 0.0);
}

void trace__memset(struct trace *t, const struct agent_memset *m)
{
	char name[64];

	snprintf(name, sizeof(name), "Memset (%s)", memory_kind(m->memory_kind));
	begin_gpu(t, "gpu_memset", name, m->device, m->stream, m->start_ns, m->end_ns);
	fprintf(t->f, ", \"args\": {\"device\": %u, \"context\": %u, \"stream\": %u, "
		      "\"correlation\": %u, \"bytes\": %" PRIu64 ", \"value\": %u}}",
		m->device, m->context, m->stream, m->correlation, (uint64_t)m->bytes, m->value);
}

void trace__flow(struct trace *t, bool start, int pid, int tid, uint64_t mono, uint64_t id)
{
	begin_event(t);
	fprintf(t->f, "{\"ph\": \"%s\", \"id\": %" PRIu64 ", \"pid\": %d, \"tid\": %d, \"ts\": ",
		start ? "s" : "f", id, pid, tid);
	write_ts(t, mono);
	fputs(start ? ", \"cat\": \"ac2g\", \"name\": \"ac2g\"}" :
		      ", \"cat\": \"ac2g\", \"name\": \"ac2g\", \"bp\": \"e\"}",
	      t->f);
}

void trace__set_gpu(struct trace *t, const struct trace_gpu_summary *g)
{
	t->has_gpu = true;
	t->gpu = *g;
}

static void write_meta(struct trace *t, const char *name, pid_t tid, const char *key,
		       const char *sval, long long ival)
{
	begin_event(t);
	fprintf(t->f, "{\"ph\": \"M\", \"name\": \"%s\", \"pid\": %d, \"tid\": %d, \"ts\": 0.000, "
		      "\"args\": {\"%s\": ", name, (int)t->m.pid, (int)tid, key);
	if (sval)
		json_write_str(t->f, sval);
	else
		fprintf(t->f, "%lld", ival);
	fputs("}}", t->f);
}

void trace__thread(struct trace *t, pid_t tid, const char *name)
{
	write_meta(t, "thread_name", tid, "name", name, 0);
	write_meta(t, "thread_sort_index", tid, "sort_index", NULL, tid);
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
		t->m.pid = dev;
		if (first_of_device) {
			snprintf(label, sizeof(label), "GPU %u", dev);
			write_meta(t, "process_name", 0, "name", t->command, 0);
			write_meta(t, "process_labels", 0, "labels", label, 0);
			write_meta(t, "process_sort_index", 0, "sort_index", NULL, 5000000 + dev);
		}
		snprintf(sname, sizeof(sname), "stream %u", stream);
		write_meta(t, "thread_name", stream, "name", sname, 0);
		write_meta(t, "thread_sort_index", stream, "sort_index", NULL, stream);
	}
	t->m.pid = pid;
}

static void write_gpu_summary(struct trace *t)
{
	const struct trace_gpu_summary *g = &t->gpu;

	if (!t->has_gpu)
		return;
	fprintf(t->f,
		", \"gpu\": {\"joined_launches\": %" PRIu64 ", \"launches_without_gpu\": %" PRIu64
		", \"launches_without_api_record\": %" PRIu64 ", \"gpu_without_launch\": %" PRIu64
		", \"clock_faults\": %" PRIu64 ", \"cupti_dropped\": %" PRIu64
		", \"malformed_chunks\": %" PRIu64
		", \"missing_at_timeout\": %" PRIu64 ", \"gpu_records\": %" PRIu64 "}"
		", \"cupti_overhead_ns\": %" PRIu64,
		g->matched, g->without_gpu, g->unmatched_launches, g->gpu_without_launch,
		g->clock_faults, g->dropped, g->bad_chunks, g->missing, g->gpu_records,
		g->overhead_ns);
}

static void write_trailer(struct trace *t, const struct trace_summary *s)
{
	uint64_t off = (uint64_t)t->m.mono_to_real;
	const char *name = strrchr(t->path, '/');

	write_meta(t, "process_name", 0, "name", t->command, 0);
	write_meta(t, "process_labels", 0, "labels", "CPU", 0);
	write_meta(t, "process_sort_index", 0, "sort_index", NULL, t->m.pid);
	write_lanes(t);
	fputs("\n ],\n \"traceName\": ", t->f);
	json_write_str(t->f, name ? name + 1 : t->path);
	fprintf(t->f, ",\n \"cuprobe\": {\"version\": \"%s\", \"pid\": %d, \"command\": ",
		CUPROBE_VERSION, (int)t->m.pid);
	json_write_str(t->f, t->command);
	fprintf(t->f,
		", \"cycle\": %u, \"partial\": %s, \"start_ns\": %" PRIu64 ", \"end_ns\": %" PRIu64
		", \"duration_ns\": %" PRIu64 ", \"launches\": %" PRIu64 ", \"unnamed_kernels\": %" PRIu64
		", \"late_launches\": %" PRIu64 ", \"drops\": %" PRIu64
		", \"nested_skipped\": %" PRIu64 ", \"lost_steps\": %" PRIu64,
		t->m.cycle, s->partial ? "true" : "false", t->m.start_mono + off, s->end_mono + off,
		s->end_mono - t->m.start_mono, s->launches, s->unnamed, s->late, s->drops, s->nested,
		s->lost_steps);
	if (s->first_step >= 0)
		fprintf(t->f, ", \"steps\": [%" PRId64 ", %" PRId64 "]", s->first_step, s->last_step);
	if (s->probe_ns >= 0)
		fprintf(t->f, ", \"probe_ns_per_hit\": %.1f", s->probe_ns);
	write_overhead(t->f, (int64_t)s->probe_hits, s->probe_ns, s->end_mono - t->m.start_mono);
	write_gpu_summary(t);
	fputs("}\n}\n", t->f);
}

int trace__close(struct trace *t, const struct trace_summary *s)
{
	int err = 0;

	write_trailer(t, s);
	if (fflush(t->f) || ferror(t->f) || fsync(fileno(t->f)))
		err = -errno ?: -EIO;
	if (fclose(t->f) && !err)
		err = -errno;
	t->f = NULL;
	if (!err && rename(t->tmp, t->path))
		err = -errno;
	if (err)
		unlink(t->tmp);
	return err;
}

void trace__discard(struct trace *t)
{
	if (t->f) {
		fclose(t->f);
		t->f = NULL;
	}
	unlink(t->tmp);
}

const char *trace__path(const struct trace *t)
{
	return t->path;
}

void trace__free(struct trace *t)
{
	if (!t)
		return;
	if (t->f)
		trace__discard(t);
	free(t->path);
	free(t->tmp);
	free(t->host);
	free(t->command);
	free(t);
}
