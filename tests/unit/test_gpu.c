// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The GPU join (user/gpu.c): agent records built per include/agent.h are
 * joined to a cycle's launches, written to a real trace, and let go.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>
#include "agent.h"
#include "launch.h"
#include "schedule.h"
#include "core/gpu/gpu_store.h"
#include "cuda/launch_api.h"
#include "trace/format.h"
#include "trace/writer.h"

#define TID 77

/* A chunk of records, as the agent hands them out. */
struct chunk {
	_Alignas(8) unsigned char buf[CUPROBE_AGENT_CHUNK];
	size_t len;
};

static void put(struct chunk *c, void *rec, size_t size, uint32_t type)
{
	struct agent_rec_hdr *h = rec;

	h->type = type;
	h->size = size;
	assert_true(c->len + size <= sizeof(c->buf));
	memcpy(c->buf + c->len, rec, size);
	c->len += size;
}

static void api(struct chunk *c, enum cuprobe_api which, uint32_t corr, uint64_t start)
{
	struct agent_api a = {
		.start_ns = start, .end_ns = start + 500,
		.domain = launch_api_is_driver(which) ? AGENT_API_DRIVER : AGENT_API_RUNTIME,
		.cbid = launch_apis[which].cbid, .pid = 1, .tid = TID, .correlation = corr,
	};

	put(c, &a, sizeof(a), AGENT_REC_API);
}

static void kernel(struct chunk *c, uint32_t corr, uint64_t start)
{
	struct agent_kernel k = { .start_ns = start, .end_ns = start + 1000, .device = 0,
				  .stream = 7, .correlation = corr, .grid = { 1, 1, 1 },
				  .block = { 32, 1, 1 } };

	put(c, &k, sizeof(k), AGENT_REC_KERNEL);
}

static void memcpy_rec(struct chunk *c, uint32_t corr, uint64_t start)
{
	struct agent_memcpy m = { .start_ns = start, .end_ns = start + 300, .bytes = 4096,
				  .copy_kind = 1, .stream = 7, .correlation = corr };

	put(c, &m, sizeof(m), AGENT_REC_MEMCPY);
}

static struct gpu_launch launch(enum cuprobe_api which, uint64_t ts, uint64_t own)
{
	return (struct gpu_launch){
		.e = { .type = REC_LAUNCH, .api = which, .tgid = 1, .tid = TID, .ts_ns = ts,
		       .func = 0x1000, .stream = 0x2000, .step = 1, .phase = PHASE_RECORD },
		.kernel = "k", .own_correlation = own,
	};
}

struct fixture {
	struct gpu_store *g;
	char dir[64];
	char path[256];
	struct trace *t;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	snprintf(f->dir, sizeof(f->dir), "/tmp/cuprobe-test-gpu.XXXXXX");
	if (!mkdtemp(f->dir) || !(f->g = gpu_store__new()))
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	trace__free(f->t);
	if (f->path[0])
		unlink(f->path);
	rmdir(f->dir);
	gpu_store__free(f->g);
	free(f);
	return 0;
}

static void add(struct fixture *f, const struct chunk *c)
{
	assert_int_equal(gpu_store__add_chunk(f->g, c->buf, c->len), 0);
}

/* Joins launches made in [t0, t1] into a fresh trace. */
static struct gpu_join_stats join(struct fixture *f, struct gpu_launch *l, size_t n, uint64_t t0,
				  uint64_t t1)
{
	struct trace_meta m = { .pid = 1, .host = "h", .command = "c", .rank = -1,
				.world_size = -1, .start_mono = t0 };
	struct gpu_join_stats st;

	trace__free(f->t);
	if (f->path[0])
		unlink(f->path);
	f->t = trace__open(f->dir, &m);
	assert_non_null(f->t);
	assert_int_equal(gpu_store__join(f->g, l, n, t0, t1, f->t, &st), 0);
	return st;
}

/* Every figure of a join against want's. */
static void check_stats(const struct gpu_join_stats *st, const struct gpu_join_stats *want)
{
	assert_int_equal(st->matched, want->matched);
	assert_int_equal(st->without_gpu, want->without_gpu);
	assert_int_equal(st->unmatched_launches, want->unmatched_launches);
	assert_int_equal(st->gpu_without_launch, want->gpu_without_launch);
	assert_int_equal(st->clock_faults, want->clock_faults);
	assert_int_equal(st->dropped, want->dropped);
	assert_int_equal(st->bad_chunks, want->bad_chunks);
	assert_int_equal(st->overhead_ns, want->overhead_ns);
	assert_int_equal(st->gpu_records, want->gpu_records);
}

#define CHECK_STATS(st, ...) check_stats(&(st), &(struct gpu_join_stats){ __VA_ARGS__ })

/* Closes the trace; it holds this many kernels and flow starts and ends. */
static void check_trace(struct fixture *f, size_t kernels, size_t flow_starts, size_t flow_ends)
{
	struct trace_summary sum = { .end_mono = 100000, .first_step = -1, .last_step = -1 };
	size_t i, nk = 0, nfs = 0, nfe = 0;
	json_t *root, *ev, *e;

	assert_int_equal(trace__close(f->t, &sum), 0);
	snprintf(f->path, sizeof(f->path), "%s", trace__path(f->t));
	root = json_load_file(f->path, 0, NULL);
	assert_non_null(root);
	ev = json_object_get(root, TRACE_KEY_EVENTS);
	json_array_foreach(ev, i, e) {
		const char *cat = json_string_value(json_object_get(e, TRACE_KEY_CAT));
		const char *ph = json_string_value(json_object_get(e, TRACE_KEY_PH));

		if (!cat || !ph)
			continue;
		nk += !strcmp(cat, TRACE_CAT_KERNEL) && !strcmp(ph, TRACE_PH_COMPLETE);
		nfs += !strcmp(ph, TRACE_PH_FLOW_START);
		nfe += !strcmp(ph, TRACE_PH_FLOW_END);
	}
	json_decref(root);
	assert_int_equal(nk, kernels);
	assert_int_equal(nfs, flow_starts);
	assert_int_equal(nfe, flow_ends);
}

static void test_exact_join(void **state)
{
	struct fixture *f = *state;
	struct gpu_launch l[] = { launch(API_cudaLaunchKernel, 1000, 1),
				  launch(API_cudaMemcpyAsync, 3000, 2) };
	struct chunk c = {};
	struct gpu_join_stats st;

	api(&c, API_cudaLaunchKernel, 11, 1010);
	api(&c, API_cudaMemcpyAsync, 12, 3005);
	assert_false(gpu_store__complete(f->g, l, 2));
	kernel(&c, 11, 2000);
	memcpy_rec(&c, 12, 4000);
	add(f, &c);
	assert_true(gpu_store__complete(f->g, l, 2));
	st = join(f, l, 2, 500, 10000);
	CHECK_STATS(st, .matched = 2, .gpu_records = 2);
	check_trace(f, 1, 2, 2);
}

/* An interned kernel name, as the agent sends it: len of its total_len bytes. */
static void string_rec(struct chunk *c, uint32_t id, const char *s, uint32_t total)
{
	_Alignas(8) unsigned char buf[sizeof(struct agent_string) + 64] = {};
	struct agent_string *h = (struct agent_string *)buf;
	uint32_t len = (uint32_t)strlen(s);

	h->id = id;
	h->total_len = total;
	h->len = len;
	memcpy(buf + sizeof(*h), s, len);
	put(c, buf, sizeof(*h) + ((len + 7) & ~7u), AGENT_REC_STRING);
}

static void named_kernel(struct chunk *c, uint32_t corr, uint64_t start, uint32_t name_id)
{
	struct agent_kernel k = { .start_ns = start, .end_ns = start + 1000, .stream = 7,
				  .correlation = corr, .grid = { 1, 1, 1 }, .block = { 32, 1, 1 },
				  .name_id = name_id };

	put(c, &k, sizeof(k), AGENT_REC_KERNEL);
}

/* The kernel arg of the trace's launch event whose correlation is corr (closes the trace). */
static char *launch_kernel_arg(struct fixture *f, uint64_t corr)
{
	struct trace_summary sum = { .end_mono = 100000, .first_step = -1, .last_step = -1 };
	json_t *root, *e;
	char *found = NULL;
	size_t i;

	if (!f->path[0]) {
		assert_int_equal(trace__close(f->t, &sum), 0);
		snprintf(f->path, sizeof(f->path), "%s", trace__path(f->t));
	}
	root = json_load_file(f->path, 0, NULL);
	assert_non_null(root);
	json_array_foreach(json_object_get(root, TRACE_KEY_EVENTS), i, e) {
		json_t *args = json_object_get(e, TRACE_KEY_ARGS);
		const char *cat = json_string_value(json_object_get(e, TRACE_KEY_CAT));

		if (cat && (!strcmp(cat, TRACE_CAT_DRIVER) || !strcmp(cat, TRACE_CAT_RUNTIME)) &&
		    json_integer_value(json_object_get(args, TRACE_ARG_CORRELATION)) ==
			    (json_int_t)corr)
			found = strdup(json_string_value(json_object_get(args, TRACE_ARG_KERNEL)));
	}
	json_decref(root);
	assert_non_null(found);
	return found;
}

static void assert_kernel_arg(struct fixture *f, uint64_t corr, const char *want)
{
	char *k = launch_kernel_arg(f, corr);

	assert_string_equal(k, want);
	free(k);
}

/*
 * CUPTI names only the launches nothing else named (a handle made before
 * cuprobe attached, a stub in a stripped object), and only with a whole name;
 * each it names is counted.
 */
static void test_cupti_names_the_unnamed(void **state)
{
	struct fixture *f = *state;
	struct gpu_launch l[] = { launch(API_cuLaunchKernel, 1000, 1),
				  launch(API_cuLaunchKernel, 3000, 2),
				  launch(API_cudaLaunchKernel, 5000, 3),
				  launch(API_cuLaunchKernel, 7000, 4) };
	struct chunk c = {};
	struct gpu_join_stats st;

	l[0].kernel = "mine(int)";
	l[1].kernel = "CUfunction 0x1000", l[1].unnamed = true;
	l[2].kernel = "lib.so+0x40", l[2].unnamed = true;
	l[3].kernel = "CUfunction 0x1000", l[3].unnamed = true;
	string_rec(&c, 1, "_Z5cuptisi", 10);
	string_rec(&c, 2, "_Z4ha", 10); /* the rest never came */
	api(&c, API_cuLaunchKernel, 11, 1010);
	api(&c, API_cuLaunchKernel, 12, 3010);
	api(&c, API_cudaLaunchKernel, 13, 5010);
	api(&c, API_cuLaunchKernel, 14, 7010);
	named_kernel(&c, 11, 2000, 1);
	named_kernel(&c, 12, 4000, 1);
	named_kernel(&c, 13, 6000, 1);
	named_kernel(&c, 14, 8000, 2);
	add(f, &c);
	st = join(f, l, 4, 500, 10000);
	assert_int_equal(st.matched, 4);
	assert_int_equal(st.named_by_cupti, 2);
	assert_kernel_arg(f, 11, "mine(int)");
	assert_kernel_arg(f, 12, "cupti(short, int)");
	assert_kernel_arg(f, 13, "cupti(short, int)");
	assert_kernel_arg(f, 14, "CUfunction 0x1000");
}

/* A graph launch is one API record and many kernels: all of them are its. */
static void test_graph_one_to_many(void **state)
{
	struct fixture *f = *state;
	struct gpu_launch l = launch(API_cudaGraphLaunch, 1000, 1);
	struct chunk c = {};
	struct gpu_join_stats st;

	api(&c, API_cudaGraphLaunch, 21, 1020);
	for (int i = 0; i < 3; i++)
		kernel(&c, 21, 2000 + i * 1500);
	add(f, &c);
	st = join(f, &l, 1, 500, 10000);
	CHECK_STATS(st, .matched = 1, .gpu_records = 3);
	check_trace(f, 3, 1, 3);
}

/* GPU work cannot start before its launch: when it seems to, the clocks disagree. */
static void test_clock_fault(void **state)
{
	struct fixture *f = *state;
	struct gpu_launch l = launch(API_cuLaunchKernel, 5000, 1);
	struct chunk c = {};
	struct gpu_join_stats st;

	api(&c, API_cuLaunchKernel, 31, 5010);
	kernel(&c, 31, 4000);
	add(f, &c);
	st = join(f, &l, 1, 1000, 10000);
	CHECK_STATS(st, .matched = 1, .clock_faults = 1, .gpu_records = 1);
}

/* Launches without API records, API records without GPU work, GPU work without launches. */
static void test_unmatched(void **state)
{
	struct fixture *f = *state;
	struct gpu_launch l[] = { launch(API_cudaLaunchKernel, 1000, 1),
				  launch(API_cudaLaunchKernel, 2000, 2) };
	struct chunk c = {};
	struct gpu_join_stats st;

	api(&c, API_cudaLaunchKernel, 41, 1010); /* the first launch's; no kernel came */
	kernel(&c, 99, 3000);			 /* a cudaMemcpy's, say: in the window */
	kernel(&c, 98, 50000);			 /* after the window */
	add(f, &c);
	assert_false(gpu_store__complete(f->g, l, 2));
	st = join(f, l, 2, 500, 10000);
	CHECK_STATS(st, .matched = 1, .without_gpu = 1, .unmatched_launches = 1,
		    .gpu_without_launch = 1, .gpu_records = 1);
}

/* Lost records are reported once, by the next join, from DROPPED and FLUSHED. */
static void test_drops(void **state)
{
	struct fixture *f = *state;
	struct agent_dropped d = { .count = 5, .reason = AGENT_DROP_CUPTI };
	struct agent_flushed fl = { .ts_ns = 9000, .window = 1, .reason = AGENT_FLUSH_DISABLE,
				    .no_listener = 2 };
	struct chunk c = {}, bad = {};
	struct gpu_join_stats st;

	put(&c, &d, sizeof(d), AGENT_REC_DROPPED);
	put(&c, &fl, sizeof(fl), AGENT_REC_FLUSHED);
	add(f, &c);
	assert_int_equal(gpu_store__flushed_at(f->g), 9000);
	/* A record that claims more than the chunk holds: the chunk is refused. */
	put(&bad, &d, sizeof(d), AGENT_REC_DROPPED);
	((struct agent_rec_hdr *)bad.buf)->size = 4096;
	assert_int_equal(gpu_store__add_chunk(f->g, bad.buf, bad.len), -EINVAL);
	assert_int_equal(gpu_store__chunks(f->g), 2);
	st = join(f, NULL, 0, 0, 10000);
	CHECK_STATS(st, .dropped = 7, .bad_chunks = 1);
	st = join(f, NULL, 0, 10000, 20000);
	CHECK_STATS(st, .matched = 0);
}

/* A written cycle's records are let go; the next cycle's stay for it. */
static void test_prune(void **state)
{
	struct fixture *f = *state;
	struct gpu_launch first = launch(API_cudaLaunchKernel, 1000, 1);
	struct gpu_launch next = launch(API_cudaLaunchKernel, 12000, 2);
	struct chunk c = {};
	struct gpu_join_stats st;

	api(&c, API_cudaLaunchKernel, 51, 1010);
	kernel(&c, 51, 2000);
	api(&c, API_cudaLaunchKernel, 52, 12010);
	kernel(&c, 52, 13000);
	add(f, &c);
	st = join(f, &first, 1, 500, 10000);
	CHECK_STATS(st, .matched = 1, .gpu_records = 1);
	/* The first cycle again: its records are gone. */
	st = join(f, &first, 1, 500, 10000);
	CHECK_STATS(st, .unmatched_launches = 1);
	/* The next cycle finds its own. */
	st = join(f, &next, 1, 10000, 20000);
	CHECK_STATS(st, .matched = 1, .gpu_records = 1);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_exact_join), T(test_graph_one_to_many), T(test_clock_fault),
		T(test_unmatched), T(test_drops), T(test_prune),
		T(test_cupti_names_the_unnamed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
