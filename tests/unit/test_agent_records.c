// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests (cmocka, no root) of the agent's record path without CUPTI:
 * CUPTI records through convert__record, the emitter's chunks and interned
 * names, and the decoder's checks of malformed chunks.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "agent/convert.h"
#include "agent/emit.h"
#include "core/gpu/agent_records.h"

/* ---- a sink that keeps every chunk -------------------------------------- */

#define MAX_CHUNKS 256

struct sink {
	bool listening;
	int n;
	size_t len[MAX_CHUNKS];
	unsigned char data[MAX_CHUNKS][CUPROBE_AGENT_CHUNK];
};

static bool keep_chunk(const void *chunk, size_t len, void *ctx)
{
	struct sink *s = ctx;

	assert_true(len > 0 && len <= CUPROBE_AGENT_CHUNK);
	assert_int_equal(len % 8, 0);
	if (!s->listening)
		return false;
	assert_true(s->n < MAX_CHUNKS);
	memcpy(s->data[s->n], chunk, len);
	s->len[s->n++] = len;
	return true;
}

/* What the decoded chunks held. */
struct seen {
	int by_type[16];
	int kernels;
	__u32 last_name_id;
	char name[CUPROBE_AGENT_STRING_MAX + 1];
	__u32 name_len;
	int name_pieces;
	__u64 flushed_records, flushed_no_listener;
	__u64 dropped_no_listener;
	int counted; /* records between markers */
};

static int collect(const struct agent_record *r, void *ctx)
{
	struct seen *s = ctx;

	s->by_type[r->type & 0xf]++;
	switch (r->type) {
	case AGENT_REC_STRING:
		if (!r->string.offset)
			s->name_len = 0;
		assert_int_equal(r->string.offset, s->name_len);
		memcpy(s->name + r->string.offset, r->bytes, r->bytes_len);
		s->name_len += r->bytes_len;
		s->name_pieces++;
		s->counted++;
		break;
	case AGENT_REC_KERNEL:
		s->kernels++;
		s->last_name_id = r->kernel.name_id;
		s->counted++;
		break;
	case AGENT_REC_FLUSHED:
		s->flushed_records = r->flushed.records;
		s->flushed_no_listener = r->flushed.no_listener;
		break;
	case AGENT_REC_STARTED:
		break;
	case AGENT_REC_DROPPED:
		if (r->dropped.reason == AGENT_DROP_NO_LISTENER)
			s->dropped_no_listener += r->dropped.count;
		s->counted++;
		break;
	default:
		s->counted++;
		break;
	}
	return 0;
}

static void decode_all(const struct sink *k, struct seen *s)
{
	int i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < k->n; i++)
		assert_int_equal(agent_records__decode(k->data[i], k->len[i], collect, s), 0);
}

static struct agent_kernel a_kernel(void)
{
	struct agent_kernel k = { .type = AGENT_REC_KERNEL, .size = sizeof(k), .correlation = 7 };

	return k;
}

/* ---- convert ------------------------------------------------------------ */

static void test_convert_kernel(void **state)
{
	CUpti_ActivityKernel10 k;
	union agent_any out;
	const char *name;

	(void)state;
	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = 100;
	k.end = 250;
	k.deviceId = 1;
	k.contextId = 2;
	k.streamId = 13;
	k.correlationId = 42;
	k.gridX = 3;
	k.gridY = 4;
	k.gridZ = 5;
	k.blockX = 32;
	k.blockY = 2;
	k.blockZ = 1;
	k.dynamicSharedMemory = 512;
	k.staticSharedMemory = 64;
	k.registersPerThread = 40;
	k.graphId = 9;
	k.graphNodeId = 0x900000001ull;
	k.launchType = CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE;
	k.name = "_Z6kernelv";
	assert_int_equal(convert__record((CUpti_Activity *)&k, &out, &name), AGENT_REC_KERNEL);
	assert_string_equal(name, "_Z6kernelv");
	assert_int_equal(out.kernel.size, sizeof(struct agent_kernel));
	assert_int_equal(out.kernel.start_ns, 100);
	assert_int_equal(out.kernel.end_ns, 250);
	assert_int_equal(out.kernel.stream, 13);
	assert_int_equal(out.kernel.correlation, 42);
	assert_int_equal(out.kernel.grid[2], 5);
	assert_int_equal(out.kernel.block[1], 2);
	assert_int_equal(out.kernel.dyn_shmem, 512);
	assert_int_equal(out.kernel.static_shmem, 64);
	assert_int_equal(out.kernel.registers, 40);
	assert_int_equal(out.kernel.graph_id, 9);
	assert_int_equal(out.kernel.graph_node_id, 0x900000001ull);
	assert_int_equal(out.kernel.launch_type, 1);
}

static void test_convert_api_copy_set_overhead(void **state)
{
	CUpti_ActivityAPI a = { .kind = CUPTI_ACTIVITY_KIND_DRIVER, .cbid = 307, .start = 1,
				.end = 2, .processId = 10, .threadId = 11, .correlationId = 12,
				.returnValue = 34 };
	CUpti_ActivityMemcpy6 m;
	CUpti_ActivityMemset4 s;
	CUpti_ActivityOverhead3 o;
	CUpti_Activity other = { .kind = CUPTI_ACTIVITY_KIND_CONTEXT };
	union agent_any out;
	const char *name;

	(void)state;
	assert_int_equal(convert__record((CUpti_Activity *)&a, &out, &name), AGENT_REC_API);
	assert_int_equal(out.api.domain, AGENT_API_DRIVER);
	assert_int_equal(out.api.cbid, 307);
	assert_int_equal(out.api.tid, 11);
	assert_int_equal(out.api.ret, 34);
	a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	convert__record((CUpti_Activity *)&a, &out, &name);
	assert_int_equal(out.api.domain, AGENT_API_RUNTIME);

	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
	m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
	m.bytes = 1 << 20;
	m.correlationId = 5;
	m.graphId = 3;
	assert_int_equal(convert__record((CUpti_Activity *)&m, &out, &name), AGENT_REC_MEMCPY);
	assert_int_equal(out.memcpy.copy_kind, 2);
	assert_int_equal(out.memcpy.dst_kind, 2);
	assert_int_equal(out.memcpy.bytes, 1 << 20);
	assert_int_equal(out.memcpy.graph_id, 3);

	memset(&s, 0, sizeof(s));
	s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	s.value = 0x21;
	s.bytes = 2048;
	s.correlationId = 6;
	assert_int_equal(convert__record((CUpti_Activity *)&s, &out, &name), AGENT_REC_MEMSET);
	assert_int_equal(out.memset.value, 0x21);
	assert_int_equal(out.memset.bytes, 2048);

	memset(&o, 0, sizeof(o));
	o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
	o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
	o.objectKind = CUPTI_ACTIVITY_OBJECT_STREAM;
	o.objectId.dcs.deviceId = 1;
	o.objectId.dcs.contextId = 2;
	o.objectId.dcs.streamId = 3;
	assert_int_equal(convert__record((CUpti_Activity *)&o, &out, &name), AGENT_REC_OVERHEAD);
	assert_int_equal(out.overhead.object_id[2], 3);

	assert_int_equal(convert__record(&other, &out, &name), 0);
}

/* ---- emitter ------------------------------------------------------------ */

static void test_emit_names_once_per_window(void **state)
{
	struct sink *k = calloc(1, sizeof(*k));
	struct seen *s = calloc(1, sizeof(*s));
	struct emitter *em = emitter__new(keep_chunk, k);
	struct agent_kernel kr = a_kernel();
	__u32 first;
	int i;

	(void)state;
	k->listening = true;
	emitter__new_window(em);
	for (i = 0; i < 3; i++) {
		kr = a_kernel();
		emitter__kernel(em, &kr, "_Z3fooi");
	}
	first = kr.name_id;
	assert_int_not_equal(first, 0);
	kr = a_kernel();
	emitter__kernel(em, &kr, "_Z3bari");
	assert_int_not_equal(kr.name_id, first);
	kr = a_kernel();
	emitter__kernel(em, &kr, NULL);
	assert_int_equal(kr.name_id, 0);
	emitter__flushed(em, 1, 1, AGENT_FLUSH_DISABLE);
	decode_all(k, s);
	assert_int_equal(s->kernels, 5);
	assert_int_equal(s->by_type[AGENT_REC_STRING & 0xf], 2);
	assert_int_equal(s->flushed_records, 7);

	/* A new window sends the name again, with the same id. */
	k->n = 0;
	emitter__new_window(em);
	kr = a_kernel();
	emitter__kernel(em, &kr, "_Z3fooi");
	assert_int_equal(kr.name_id, first);
	emitter__flushed(em, 2, 2, AGENT_FLUSH_EXIT);
	decode_all(k, s);
	assert_int_equal(s->by_type[AGENT_REC_STRING & 0xf], 1);
	assert_int_equal(s->flushed_records, 2);
	emitter__free(em);
	free(s);
	free(k);
}

static void test_emit_long_name_in_pieces(void **state)
{
	struct sink *k = calloc(1, sizeof(*k));
	struct seen *s = calloc(1, sizeof(*s));
	struct emitter *em = emitter__new(keep_chunk, k);
	struct agent_kernel kr = a_kernel();
	size_t n = 3 * CUPROBE_AGENT_CHUNK + 123;
	char *name = malloc(n + 1);

	(void)state;
	memset(name, 'x', n);
	name[n] = '\0';
	k->listening = true;
	emitter__new_window(em);
	emitter__kernel(em, &kr, name);
	emitter__flush(em);
	decode_all(k, s);
	assert_int_equal(s->name_pieces, 4);
	assert_int_equal(s->name_len, n);
	assert_memory_equal(s->name, name, n);
	assert_int_equal(s->kernels, 1);
	/* Every chunk holds whole records and stays within the bound. */
	assert_true(k->n >= 4);
	emitter__free(em);
	free(name);
	free(s);
	free(k);
}

static void test_emit_counts_unheard(void **state)
{
	struct sink *k = calloc(1, sizeof(*k));
	struct seen *s = calloc(1, sizeof(*s));
	struct emitter *em = emitter__new(keep_chunk, k);
	struct agent_kernel kr;
	int i;

	(void)state;
	k->listening = false;
	emitter__new_window(em);
	for (i = 0; i < 100; i++) {
		kr = a_kernel();
		emitter__kernel(em, &kr, "_Z1kv");
	}
	emitter__flush(em);
	k->listening = true;
	emitter__dropped(em, AGENT_DROP_CUPTI, 3);
	emitter__flushed(em, 5, 1, AGENT_FLUSH_DISABLE);
	decode_all(k, s);
	/* 100 kernels and 1 string went unheard; the report and CUPTI's count were heard. */
	assert_int_equal(s->dropped_no_listener, 101);
	assert_int_equal(s->flushed_no_listener, 101);
	assert_int_equal(s->flushed_records, 2);
	assert_int_equal(s->counted, 2);
	emitter__free(em);
	free(s);
	free(k);
}

static void test_emit_error_and_started(void **state)
{
	struct sink *k = calloc(1, sizeof(*k));
	struct seen *s = calloc(1, sizeof(*s));
	struct emitter *em = emitter__new(keep_chunk, k);
	char msg[1000];

	(void)state;
	memset(msg, 'm', sizeof(msg) - 1);
	msg[sizeof(msg) - 1] = '\0';
	k->listening = true;
	emitter__started(em, 10, 1, 130001, 99);
	emitter__error(em, 39, AGENT_STAGE_CALLBACKS, 1, msg);
	emitter__flushed(em, 11, 1, AGENT_FLUSH_DISABLE);
	decode_all(k, s);
	assert_int_equal(s->by_type[AGENT_REC_STARTED & 0xf], 1);
	assert_int_equal(s->by_type[AGENT_REC_ERROR & 0xf], 1);
	assert_int_equal(s->flushed_records, 1);
	emitter__free(em);
	free(s);
	free(k);
}

/* ---- decoder ------------------------------------------------------------ */

static int count_cb(const struct agent_record *r, void *ctx)
{
	(void)r;
	(*(int *)ctx)++;
	return 0;
}

static int stop_cb(const struct agent_record *r, void *ctx)
{
	(void)r;
	(void)ctx;
	return 17;
}

static size_t put_api(unsigned char *p)
{
	struct agent_api a = { .type = AGENT_REC_API, .size = sizeof(a), .domain = AGENT_API_RUNTIME };

	memcpy(p, &a, sizeof(a));
	return sizeof(a);
}

static size_t put_string(unsigned char *p, const char *text, __u32 id)
{
	struct agent_string s = { .type = AGENT_REC_STRING, .id = id, .len = strlen(text) };

	s.total_len = s.len;
	s.size = sizeof(s) + ((s.len + 7) & ~7u);
	memset(p, 0, s.size);
	memcpy(p, &s, sizeof(s));
	memcpy(p + sizeof(s), text, s.len);
	return s.size;
}

static void test_decode_valid(void **state)
{
	unsigned char buf[256] __attribute__((aligned(8)));
	struct agent_rec_hdr unknown = { .type = 0x1ff, .size = 16 };
	size_t n = 0;
	int seen = 0;

	(void)state;
	n += put_api(buf + n);
	n += put_string(buf + n, "_Z3fooi", 1);
	memset(buf + n, 0xaa, 16);
	memcpy(buf + n, &unknown, sizeof(unknown));
	n += 16;
	/* Unaligned input decodes the same. */
	memmove(buf + 1, buf, n);
	assert_int_equal(agent_records__decode(buf + 1, n, count_cb, &seen), 0);
	assert_int_equal(seen, 3);
	assert_int_equal(agent_records__decode(buf + 1, n, stop_cb, NULL), 17);
	assert_int_equal(agent_records__decode(buf, 0, count_cb, &seen), 0);
}

static void expect_einval(const unsigned char *buf, size_t len)
{
	int seen = 0;

	assert_int_equal(agent_records__decode(buf, len, count_cb, &seen), -EINVAL);
	assert_int_equal(seen, 0); /* nothing of a bad chunk reaches the reader */
}

static void test_decode_malformed(void **state)
{
	unsigned char buf[2 * CUPROBE_AGENT_CHUNK] __attribute__((aligned(8)));
	struct agent_rec_hdr *h = (struct agent_rec_hdr *)buf;
	struct agent_string *s;
	struct agent_error *e;
	size_t n;

	(void)state;
	n = put_api(buf);
	expect_einval(buf, n - 1);	  /* record cut short */
	expect_einval(buf, n + 4);	  /* trailing bytes shorter than a header */
	h->size = 44;
	expect_einval(buf, n);		  /* not a multiple of 8 */
	h->size = 56;
	memset(buf + 48, 0, 8);
	expect_einval(buf, 56);		  /* wrong size for a known type */
	h->size = 0;
	expect_einval(buf, n);		  /* a zero size never ends */
	put_api(buf);
	((struct agent_api *)buf)->domain = 7;
	expect_einval(buf, n);		  /* unknown API domain */
	expect_einval(buf, CUPROBE_AGENT_CHUNK + 8); /* longer than a chunk */
	expect_einval(NULL, 8);

	n = put_string(buf, "_Z3fooi", 1);
	s = (struct agent_string *)buf;
	s->id = 0;
	expect_einval(buf, n);		  /* id 0 */
	s->id = 1;
	s->len = 9;
	expect_einval(buf, n);		  /* len beyond the record */
	s->len = 7;
	buf[sizeof(*s) + 7] = 'x';
	expect_einval(buf, n);		  /* padding not zero */
	buf[sizeof(*s) + 7] = 0;
	s->offset = 1;
	expect_einval(buf, n);		  /* piece beyond the string */
	s->offset = 0;
	s->total_len = CUPROBE_AGENT_STRING_MAX + 1;
	expect_einval(buf, n);

	memset(buf, 0, sizeof(buf));
	e = (struct agent_error *)buf;
	e->type = AGENT_REC_ERROR;
	e->stage = AGENT_STAGE_ENABLE;
	e->len = CUPROBE_AGENT_ERROR_MAX + 8;
	e->size = sizeof(*e) + e->len;
	expect_einval(buf, e->size);	  /* message too long */
	e->len = 3;
	e->size = sizeof(*e) + 8;
	e->stage = 0;
	expect_einval(buf, e->size);	  /* unknown stage */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_convert_kernel),
		cmocka_unit_test(test_convert_api_copy_set_overhead),
		cmocka_unit_test(test_emit_names_once_per_window),
		cmocka_unit_test(test_emit_long_name_in_pieces),
		cmocka_unit_test(test_emit_counts_unheard),
		cmocka_unit_test(test_emit_error_and_started),
		cmocka_unit_test(test_decode_valid),
		cmocka_unit_test(test_decode_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
