// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The launch programs (bpf/launch.bpf.c), loaded from cuprobe's own object
 * and attached with the loader's attach code to local stand-ins that have
 * the exact C signatures of the CUDA entry points: every field of every
 * launch_event is checked against the arguments passed. Needs root.
 */
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include "bpf_test.h"
#include "schedule.h"
#include "util/clock.h"

/* ---- stand-ins for the entry points ------------------------------------- */

static volatile unsigned long calls[API__COUNT + 2];
static volatile uint64_t last_ret_addr;

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
/*
 * One stand-in: it counts its calls and keeps its return address, which the
 * nested check compares with the runtime's ranges.
 */
#define SIM(ret, ok, name, id, ...)                                                                \
	STAND_IN ret name(__VA_ARGS__)                                                             \
	{                                                                                          \
		STAND_IN_FRAME();                                                                  \
		calls[id]++;                                                                       \
		last_ret_addr = (uint64_t)__builtin_return_address(0);                             \
		return ok;                                                                         \
	}
#define RT(name, ...) SIM(cudaError_t, cudaSuccess, sim_##name, API_##name, __VA_ARGS__)
#define DRV(name, ...) SIM(CUresult, CUDA_SUCCESS, sim_##name, API_##name, __VA_ARGS__)

#define LAUNCH_ARGS                                                                                \
	const void *func, dim3 grid, dim3 block, void **args, size_t shmem, cudaStream_t stream
#define LAUNCH_EXC_ARGS const cudaLaunchConfig_t *config, const void *func, void **args
#define MEMCPY_ARGS                                                                                \
	void *dst, const void *src, size_t count, enum cudaMemcpyKind kind, cudaStream_t stream
#define MEMSET_ARGS void *ptr, int value, size_t count, cudaStream_t stream
#define CU_LAUNCH_ARGS                                                                             \
	CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,          \
		unsigned int by, unsigned int bz, unsigned int shmem, CUstream stream,             \
		void **params, void **extra
#define CU_LAUNCH_EX_ARGS const CUlaunchConfig *config, CUfunction f, void **params, void **extra

RT(cudaLaunchKernel, LAUNCH_ARGS)
RT(cudaLaunchKernel_ptsz, LAUNCH_ARGS)
RT(cudaLaunchCooperativeKernel, LAUNCH_ARGS)
RT(cudaLaunchCooperativeKernel_ptsz, LAUNCH_ARGS)
RT(cudaLaunchKernelExC, LAUNCH_EXC_ARGS)
RT(cudaLaunchKernelExC_ptsz, LAUNCH_EXC_ARGS)
RT(cudaGraphLaunch, cudaGraphExec_t exec, cudaStream_t stream)
RT(cudaGraphLaunch_ptsz, cudaGraphExec_t exec, cudaStream_t stream)
RT(cudaMemcpyAsync, MEMCPY_ARGS)
RT(cudaMemcpyAsync_ptsz, MEMCPY_ARGS)
RT(cudaMemsetAsync, MEMSET_ARGS)
RT(cudaMemsetAsync_ptsz, MEMSET_ARGS)
DRV(cuLaunchKernel, CU_LAUNCH_ARGS)
DRV(cuLaunchKernel_ptsz, CU_LAUNCH_ARGS)
DRV(cuLaunchKernelEx, CU_LAUNCH_EX_ARGS)
DRV(cuLaunchKernelEx_ptsz, CU_LAUNCH_EX_ARGS)
DRV(cuGraphLaunch, CUgraphExec exec, CUstream stream)
DRV(cuGraphLaunch_ptsz, CUgraphExec exec, CUstream stream)

/* A launch that takes a while, for the latency path. */
STAND_IN cudaError_t sim_slow_cudaLaunchKernel(const void *func, dim3 grid, dim3 block,
					       void **args, size_t shmem, cudaStream_t stream)
{
	STAND_IN_FRAME();
	calls[API__COUNT]++;
	usleep(2000);
	return cudaSuccess;
}
#pragma GCC diagnostic pop

/* In enum cuprobe_api's order. */
static const char *const names[API__COUNT] = {
	"sim_cudaLaunchKernel",		  "sim_cudaLaunchKernel_ptsz",
	"sim_cudaLaunchKernelExC",	  "sim_cudaLaunchKernelExC_ptsz",
	"sim_cudaLaunchCooperativeKernel", "sim_cudaLaunchCooperativeKernel_ptsz",
	"sim_cudaGraphLaunch",		  "sim_cudaGraphLaunch_ptsz",
	"sim_cudaMemcpyAsync",		  "sim_cudaMemcpyAsync_ptsz",
	"sim_cudaMemsetAsync",		  "sim_cudaMemsetAsync_ptsz",
	"sim_cuLaunchKernel",		  "sim_cuLaunchKernel_ptsz",
	"sim_cuLaunchKernelEx",		  "sim_cuLaunchKernelEx_ptsz",
	"sim_cuGraphLaunch",		  "sim_cuGraphLaunch_ptsz",
};

/* ---- expected events and the calls that make them ------------------------ */

enum api_shape { SHAPE_LAUNCH, SHAPE_LAUNCH_EXC, SHAPE_GRAPH, SHAPE_MEMCPY, SHAPE_MEMSET,
		 SHAPE_CU_LAUNCH, SHAPE_CU_LAUNCH_EX };

static enum api_shape shape_of(enum cuprobe_api api)
{
	switch (api) {
	case API_cudaLaunchKernelExC:
	case API_cudaLaunchKernelExC_ptsz:
		return SHAPE_LAUNCH_EXC;
	case API_cudaGraphLaunch:
	case API_cudaGraphLaunch_ptsz:
	case API_cuGraphLaunch:
	case API_cuGraphLaunch_ptsz:
		return SHAPE_GRAPH;
	case API_cudaMemcpyAsync:
	case API_cudaMemcpyAsync_ptsz:
		return SHAPE_MEMCPY;
	case API_cudaMemsetAsync:
	case API_cudaMemsetAsync_ptsz:
		return SHAPE_MEMSET;
	case API_cuLaunchKernel:
	case API_cuLaunchKernel_ptsz:
		return SHAPE_CU_LAUNCH;
	case API_cuLaunchKernelEx:
	case API_cuLaunchKernelEx_ptsz:
		return SHAPE_CU_LAUNCH_EX;
	default:
		return SHAPE_LAUNCH;
	}
}

/* Distinct values per API and per call, in the fields that API carries; the rest 0. */
static struct launch_event expected(enum cuprobe_api api, unsigned int k)
{
	enum api_shape s = shape_of(api);
	unsigned int v = api * 16 + k;
	struct launch_event w = { .type = REC_LAUNCH, .api = api };

	w.stream = 0x7f00000000a000ull + v;
	if (s == SHAPE_MEMCPY || s == SHAPE_MEMSET) {
		w.bytes = 0x100000000ull + v; /* above 4 GiB: a size_t, not an int */
		w.kind = s == SHAPE_MEMCPY ? cudaMemcpyDeviceToHost : 0x5a00 + v;
		return w;
	}
	w.func = 0x7f1234560000ull + v;
	if (s == SHAPE_GRAPH)
		return w;
	w.shmem = 0x1000 + v;
	for (int i = 0; i < 3; i++) {
		w.grid[i] = 100000 + v * 10 + i;
		w.block[i] = 1 + i + v % 7;
	}
	return w;
}

#define PTR(x) ((void *)(uintptr_t)(x))

static void call_launch(enum cuprobe_api api, const struct launch_event *w)
{
	dim3 g = { w->grid[0], w->grid[1], w->grid[2] }, b = { w->block[0], w->block[1], w->block[2] };
	cudaError_t (*fn)(const void *, dim3, dim3, void **, size_t, cudaStream_t) =
		api == API_cudaLaunchKernel			? sim_cudaLaunchKernel
		: api == API_cudaLaunchKernel_ptsz		? sim_cudaLaunchKernel_ptsz
		: api == API_cudaLaunchCooperativeKernel	? sim_cudaLaunchCooperativeKernel
								: sim_cudaLaunchCooperativeKernel_ptsz;

	fn(PTR(w->func), g, b, PTR(0xa1), w->shmem, PTR(w->stream));
}

static void call_driver(enum cuprobe_api api, const struct launch_event *w)
{
	CUresult (*fn)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,
		       unsigned int, unsigned int, unsigned int, CUstream, void **, void **) =
		api == API_cuLaunchKernel ? sim_cuLaunchKernel : sim_cuLaunchKernel_ptsz;

	fn(PTR(w->func), w->grid[0], w->grid[1], w->grid[2], w->block[0], w->block[1], w->block[2],
	   w->shmem, PTR(w->stream), PTR(0xa1), PTR(0xa2));
}

static void call_api(enum cuprobe_api api, const struct launch_event *w)
{
	cudaLaunchConfig_t rc = { .gridDim = { w->grid[0], w->grid[1], w->grid[2] },
				  .blockDim = { w->block[0], w->block[1], w->block[2] },
				  .dynamicSmemBytes = w->shmem, .stream = PTR(w->stream) };
	CUlaunchConfig dc = { w->grid[0], w->grid[1], w->grid[2], w->block[0], w->block[1],
			      w->block[2], w->shmem, PTR(w->stream), NULL, 0 };
	bool ptsz = api & 1;

	switch (shape_of(api)) {
	case SHAPE_LAUNCH:
		call_launch(api, w);
		break;
	case SHAPE_LAUNCH_EXC:
		(ptsz ? sim_cudaLaunchKernelExC_ptsz : sim_cudaLaunchKernelExC)(&rc, PTR(w->func),
										  PTR(0xa1));
		break;
	case SHAPE_GRAPH:
		if (api >= API_FIRST_DRIVER)
			(ptsz ? sim_cuGraphLaunch_ptsz : sim_cuGraphLaunch)(PTR(w->func),
									    PTR(w->stream));
		else
			(ptsz ? sim_cudaGraphLaunch_ptsz : sim_cudaGraphLaunch)(PTR(w->func),
										PTR(w->stream));
		break;
	case SHAPE_MEMCPY:
		(ptsz ? sim_cudaMemcpyAsync_ptsz : sim_cudaMemcpyAsync)(PTR(0xd0), PTR(0x50), w->bytes,
									w->kind, PTR(w->stream));
		break;
	case SHAPE_MEMSET:
		(ptsz ? sim_cudaMemsetAsync_ptsz : sim_cudaMemsetAsync)(PTR(0xd0), (int)w->kind,
									w->bytes, PTR(w->stream));
		break;
	case SHAPE_CU_LAUNCH:
		call_driver(api, w);
		break;
	case SHAPE_CU_LAUNCH_EX:
		(ptsz ? sim_cuLaunchKernelEx_ptsz : sim_cuLaunchKernelEx)(&dc, PTR(w->func),
									  PTR(0xa1), PTR(0xa2));
		break;
	}
}

/* Every field of got against want, ts within [t0, t1], from this thread at step/phase. */
static void check_event(const struct launch_event *got, const struct launch_event *want,
			uint64_t t0, uint64_t t1, uint32_t step, uint32_t phase)
{
	assert_int_equal(got->type, REC_LAUNCH);
	assert_int_equal(got->api, want->api);
	assert_int_equal(got->tgid, getpid());
	assert_int_equal(got->tid, bt__gettid());
	assert_in_range(got->ts_ns, t0, t1);
	assert_int_equal(got->func, want->func);
	assert_int_equal(got->stream, want->stream);
	assert_int_equal(got->shmem, want->shmem);
	assert_int_equal(got->bytes, want->bytes);
	assert_int_equal(got->kind, want->kind);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(got->grid[i], want->grid[i]);
		assert_int_equal(got->block[i], want->block[i]);
	}
	assert_int_equal(got->step, step);
	assert_int_equal(got->phase, phase);
	if (got->flags & LAUNCH_F_HAS_DUR) {
		assert_int_equal(got->flags, LAUNCH_F_HAS_DUR);
		assert_true(got->ts_ns + got->dur_ns <= t1);
	} else {
		assert_int_equal(got->flags, 0);
		assert_int_equal(got->dur_ns, 0);
	}
}

/* ---- fixtures ------------------------------------------------------------- */

/*
 * The tests run twice: launch probes with the process's slot in their
 * cookies (as the loader attaches them), then without (proc_state looked
 * up per hit: adopted children, calibration).
 */
static bool by_lookup;

static struct bt *new_bt(uint64_t ring_bytes)
{
	struct bt *t = bt__new(ring_bytes);

	if (t)
		t->no_slots = by_lookup;
	return t;
}

/* The hits counted in proc_state itself: none when they came by the slot. */
static uint64_t hits_in_map(struct bt *t)
{
	struct proc_state ps = {};
	__u32 key = getpid();

	assert_int_equal(bpf_map_lookup_elem(bpfobj__state_fd(t->obj), &key, &ps), 0);
	return ps.launch_hits;
}

static int setup(void **state)
{
	uint64_t cookies[API__COUNT];
	struct bt *t = new_bt(1 << 20);

	if (!t)
		return -1;
	for (int a = 0; a < API__COUNT; a++)
		cookies[a] = a;
	if (bt__attach(t, PROG_LAUNCH, getpid(), names, cookies, API__COUNT)) {
		bt__free(t);
		return -1;
	}
	*state = t;
	return 0;
}

static int teardown(void **state)
{
	bt__free(*state);
	return 0;
}

/* Calls every API in turn, each checked on its own. */
static void call_every_api(struct bt *t, uint32_t step, uint32_t phase)
{
	for (int a = 0; a < API__COUNT; a++) {
		struct launch_event w = expected(a, 1);
		size_t before = t->n_launches;
		uint64_t t0 = clock_mono_ns(), t1;

		call_api(a, &w);
		t1 = clock_mono_ns();
		bt__drain(t);
		assert_int_equal(t->n_launches, before + 1);
		check_event(&t->launches[before], &w, t0, t1, step, phase);
	}
	assert_int_equal(t->n_other, 0);
}

/* ---- tests ------------------------------------------------------------------ */

static void test_every_api_every_field(void **state)
{
	struct bt *t = *state;
	struct proc_state ps;

	assert_int_equal(bt__add_self(t, NULL, pack_state(7, 0, PHASE_RECORD)), 0);
	call_every_api(t, 7, PHASE_RECORD);
	ps = bt__state(t, getpid());
	assert_int_equal(ps.launch_hits, API__COUNT);
	assert_int_equal(ps.drops, 0);
	assert_int_equal(ps.nested, 0);
	assert_int_equal(hits_in_map(t), by_lookup ? API__COUNT : 0);
	assert_int_equal(ps.slot != 0, true);
}

/* The process without state (calibration): recorded at step 0, counted in the shared counters. */
static void test_no_state(void **state)
{
	struct bt *t = *state;
	struct cuprobe_counters c;

	call_every_api(t, 0, PHASE_RECORD);
	bpfobj__counters(t->obj, &c);
	assert_int_equal(c.hits, API__COUNT);
	assert_int_equal(c.drops, 0);
	assert_int_equal(c.nested, 0);
}

static void test_phase_gating(void **state)
{
	static const uint32_t quiet[] = { PHASE_NONE, PHASE_WARMUP };
	struct bt *t = *state;

	for (size_t i = 0; i < sizeof(quiet) / sizeof(quiet[0]); i++) {
		assert_int_equal(bt__add_self(t, NULL, pack_state(3 + i, 0, quiet[i])), 0);
		for (int a = 0; a < API__COUNT; a++) {
			struct launch_event w = expected(a, 2);

			call_api(a, &w);
		}
		bt__drain(t);
		assert_int_equal(t->n_launches, 0);
		assert_int_equal(bt__state(t, getpid()).launch_hits, API__COUNT);
	}
	/* The last step of a cycle records too. */
	assert_int_equal(bt__add_self(t, NULL, pack_state(9, 0, PHASE_RECORD_AND_SAVE)), 0);
	call_every_api(t, 9, PHASE_RECORD_AND_SAVE);
	/* The thread is named at its first recorded launch, not at its first hit. */
	assert_int_equal(t->n_threads, 1);
}

/* Keeps this thread on the CPU it is on (its stage), until unpin. */
static void pin_here(cpu_set_t *was)
{
	cpu_set_t one;

	assert_int_equal(sched_getaffinity(0, sizeof(*was), was), 0);
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu(), &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);
}

static void unpin(const cpu_set_t *was)
{
	assert_int_equal(sched_setaffinity(0, sizeof(*was), was), 0);
}

/*
 * Launches go to the ring a batch at a time, in the order of their calls;
 * the rest waits in the CPU's stage until the loader takes it.
 */
static void test_batches(void **state)
{
	const unsigned int n = 2 * LAUNCH_BATCH_N + 5;
	struct bt *t = *state;
	struct launch_event w[2 * LAUNCH_BATCH_N + 5];
	uint64_t t0 = clock_mono_ns();
	cpu_set_t was;

	assert_int_equal(bt__add_self(t, NULL, pack_state(4, 0, PHASE_RECORD)), 0);
	pin_here(&was);
	for (unsigned int i = 0; i < n; i++) {
		w[i] = expected(API_cudaLaunchKernel, i % 16);
		w[i].stream += (uint64_t)i << 20; /* each call told apart */
		call_api(API_cudaLaunchKernel, &w[i]);
	}
	unpin(&was);
	/* The ring alone: the full batches, not the five left in the stage. */
	ring_buffer__consume(t->events);
	assert_int_equal(t->n_batches, 2);
	assert_int_equal(t->n_launches, 2 * LAUNCH_BATCH_N);
	bt__drain(t);
	assert_int_equal(t->n_launches, n);
	for (unsigned int i = 0; i < n; i++)
		check_event(&t->launches[i], &w[i], t0, clock_mono_ns(), 4, PHASE_RECORD);
	assert_int_equal(bt__state(t, getpid()).launch_hits, n);
	assert_int_equal(bt__state(t, getpid()).drops, 0);
	assert_int_equal(t->n_other, 0);
}

/*
 * A stage someone holds (a probe preempted in the middle of its write, or
 * the loader emptying it): the launch goes to the ring alone, whole, and is
 * not written into the stage.
 */
static void test_busy_stage_goes_to_ring(void **state)
{
	struct launch_event w = expected(API_cudaLaunchKernel, 2);
	struct bt *t = *state;
	uint64_t t0 = clock_mono_ns();
	size_t held;

	assert_int_equal(bt__add_self(t, NULL, pack_state(5, 0, PHASE_RECORD)), 0);
	held = bt__hold_stages(t, STAGE_LOADER);
	assert_true(held >= 1);
	call_api(API_cudaLaunchKernel, &w);
	ring_buffer__consume(t->events);
	assert_int_equal(t->n_launches, 1);
	assert_int_equal(t->n_batches, 0);
	check_event(&t->launches[0], &w, t0, clock_mono_ns(), 5, PHASE_RECORD);
	/* Let go: the stages hold nothing of this launch. */
	bt__hold_stages(t, STAGE_FREE);
	bt__drain(t);
	assert_int_equal(t->n_launches, 1);
	assert_int_equal(bt__state(t, getpid()).launch_hits, 1);
}

/*
 * A ring too small for the burst: what does not fit is counted, nothing else
 * is lost. The ring takes whole batches, and the CPU's stage holds one more
 * batch (the test runs on one CPU: its calls do not migrate mid-burst, or the
 * other CPU's stage would hold some more; pinned below).
 */
static void test_drops_when_ring_full(void **state)
{
	const unsigned int burst = 200,
			   fits = (4096 / (sizeof(struct launch_batch) + 8) + 1) * LAUNCH_BATCH_N;
	struct launch_event w = expected(API_cudaLaunchKernel, 3);
	struct bt *t = new_bt(4096);
	const char *name = names[API_cudaLaunchKernel];
	uint64_t cookie = API_cudaLaunchKernel;
	struct proc_state ps;
	cpu_set_t was;

	(void)state;
	assert_non_null(t);
	assert_int_equal(bt__attach(t, PROG_LAUNCH, getpid(), &name, &cookie, 1), 0);
	assert_int_equal(bt__add_self(t, NULL, pack_state(1, 0, PHASE_RECORD)), 0);
	pin_here(&was);
	for (unsigned int i = 0; i < burst; i++)
		call_api(API_cudaLaunchKernel, &w);
	unpin(&was);
	bt__drain(t);
	ps = bt__state(t, getpid());
	assert_int_equal(ps.launch_hits, burst);
	assert_int_equal(t->n_launches, fits);
	assert_int_equal(t->n_batches, fits / LAUNCH_BATCH_N - 1);
	assert_int_equal(ps.drops, burst - fits);
	/* Once drained, the ring takes launches again. */
	call_api(API_cudaLaunchKernel, &w);
	bt__drain(t);
	assert_int_equal(t->n_launches, fits + 1);
	assert_int_equal(bt__state(t, getpid()).drops, burst - fits);
	bt__free(t);
}

/*
 * Two windows' links on one function: the old window's, still closing, and
 * the new one's. Only the generation the step's state names records; the
 * other's hits are counted as stale, and no launch is counted twice.
 */
static void test_stale_links_record_nothing(void **state)
{
	struct launch_event w = expected(API_cudaLaunchKernel, 5);
	struct bt *t = new_bt(1 << 20);
	const char *name = names[API_cudaLaunchKernel];
	uint64_t old = API_cudaLaunchKernel | 1ull << COOKIE_GEN_SHIFT;
	uint64_t cur = API_cudaLaunchKernel | 2ull << COOKIE_GEN_SHIFT;
	struct proc_state ps;

	(void)state;
	assert_non_null(t);
	assert_int_equal(bt__attach(t, PROG_LAUNCH, getpid(), &name, &old, 1), 0);
	assert_int_equal(bt__attach(t, PROG_LAUNCH, getpid(), &name, &cur, 1), 0);
	assert_int_equal(bt__add_self(t, NULL, pack_state(5, 2, PHASE_RECORD)), 0);
	for (int i = 0; i < 10; i++)
		call_api(API_cudaLaunchKernel, &w);
	bt__drain(t);
	ps = bt__state(t, getpid());
	assert_int_equal(t->n_launches, 10);
	assert_int_equal(ps.launch_hits, 20);
	assert_int_equal(ps.stale, 10);
	bt__free(t);
}

/* One call site of the driver, so that its return address can be named a runtime's. */
static __attribute__((noipa)) void driver_call_site(const struct launch_event *w)
{
	call_driver(API_cuLaunchKernel, w);
}

static void test_nested_driver_call(void **state)
{
	struct launch_event w = expected(API_cuLaunchKernel, 4);
	struct runtime_ranges rr = { .n = 1 };
	struct bt *t = *state;
	struct proc_state ps;

	assert_int_equal(bt__add_self(t, NULL, pack_state(2, 0, PHASE_RECORD)), 0);
	/* Not yet inside a runtime: a launch, and where it returns to. */
	driver_call_site(&w);
	bt__drain(t);
	assert_int_equal(t->n_launches, 1);
	rr.r[0].lo = last_ret_addr;
	rr.r[0].hi = last_ret_addr + 1;
	assert_int_equal(bpfobj__set_runtime_ranges(t->obj, getpid(), &rr), 0);
	/* Called from the runtime's range: nested, no event. */
	driver_call_site(&w);
	call_driver(API_cuLaunchKernel_ptsz, &w);
	bt__drain(t);
	assert_int_equal(t->n_launches, 2);
	assert_int_equal(t->launches[1].api, API_cuLaunchKernel_ptsz);
	ps = bt__state(t, getpid());
	assert_int_equal(ps.nested, 1);
	assert_int_equal(ps.launch_hits, 3);
	/* A runtime API is never nested, whatever calls it. */
	rr.r[0].lo = 0;
	rr.r[0].hi = UINT64_MAX;
	assert_int_equal(bpfobj__set_runtime_ranges(t->obj, getpid(), &rr), 0);
	w = expected(API_cudaLaunchKernel, 4);
	call_api(API_cudaLaunchKernel, &w);
	w = expected(API_cuGraphLaunch, 4);
	call_api(API_cuGraphLaunch, &w);
	bt__drain(t);
	assert_int_equal(t->n_launches, 3);
	assert_int_equal(t->launches[2].api, API_cudaLaunchKernel);
	assert_int_equal(bt__state(t, getpid()).nested, 2);
}

/*
 * One trap per launch: with RR_ONE_TRAP, a driver entry called from the
 * runtime's range whose runtime probe did not fire is the runtime's launch;
 * its CUfunction was not learned, so it comes as the handle (LAUNCH_F_HANDLE)
 * with the driver's arguments. Without the flag it stays nested.
 */
static void test_one_trap_driver_call(void **state)
{
	struct launch_event w = expected(API_cuLaunchKernel, 6);
	struct runtime_ranges rr = { .n = 1 };
	struct bt *t = *state;
	const struct launch_event *e;

	assert_int_equal(bt__add_self(t, NULL, pack_state(3, 0, PHASE_RECORD)), 0);
	driver_call_site(&w);
	bt__drain(t);
	assert_int_equal(t->n_launches, 1);
	rr.r[0].lo = last_ret_addr;
	rr.r[0].hi = last_ret_addr + 1;
	assert_int_equal(bpfobj__set_runtime_ranges(t->obj, getpid(), &rr), 0);
	/* Both probes on: nested (a runtime call this thread left open is closed here). */
	driver_call_site(&w);
	driver_call_site(&w);
	bt__drain(t);
	assert_int_equal(t->n_launches, 1);
	assert_int_equal(bt__state(t, getpid()).nested, 2);
	rr.flags = RR_ONE_TRAP;
	assert_int_equal(bpfobj__set_runtime_ranges(t->obj, getpid(), &rr), 0);
	driver_call_site(&w);
	bt__drain(t);
	assert_int_equal(t->n_launches, 2);
	e = &t->launches[1];
	assert_int_equal(e->api, API_cudaLaunchKernel);
	assert_int_equal(e->flags, LAUNCH_F_HANDLE);
	assert_int_equal(e->func, w.func);
	assert_memory_equal(e->grid, w.grid, sizeof(w.grid));
	assert_memory_equal(e->block, w.block, sizeof(w.block));
	assert_int_equal(e->shmem, w.shmem);
	assert_int_equal(e->stream, w.stream);
	assert_int_equal(bt__state(t, getpid()).nested, 2);
}

/* --latency: the entry waits for its return, and one event carries the call's duration. */
static void test_latency(void **state)
{
	const char *name = "sim_slow_cudaLaunchKernel";
	uint64_t cookie = API_cudaLaunchKernel_ptsz | COOKIE_LATENCY, zero = 0;
	struct launch_event w = expected(API_cudaLaunchKernel_ptsz, 5);
	dim3 g = { w.grid[0], w.grid[1], w.grid[2] }, b = { w.block[0], w.block[1], w.block[2] };
	struct bt *t = *state;
	struct cuprobe_counters c;
	uint64_t t0, t1;

	/* The return program first, as a --latency window attaches it. */
	assert_int_equal(bt__attach(t, PROG_LAUNCH_RETURN, getpid(), &name, &zero, 1), 0);
	assert_int_equal(bt__attach(t, PROG_LAUNCH, getpid(), &name, &cookie, 1), 0);
	assert_int_equal(bt__add_self(t, NULL, pack_state(5, 0, PHASE_RECORD)), 0);
	t0 = clock_mono_ns();
	sim_slow_cudaLaunchKernel(PTR(w.func), g, b, NULL, w.shmem, PTR(w.stream));
	t1 = clock_mono_ns();
	bt__drain(t);
	assert_int_equal(t->n_launches, 1);
	check_event(&t->launches[0], &w, t0, t1, 5, PHASE_RECORD);
	assert_int_equal(t->launches[0].flags, LAUNCH_F_HAS_DUR);
	assert_in_range(t->launches[0].dur_ns, 2000000, t1 - t0);
	bpfobj__counters(t->obj, &c);
	assert_int_equal(c.lat_misses, 0);
	assert_int_equal(bt__state(t, getpid()).drops, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_every_api_every_field, setup, teardown),
		cmocka_unit_test_setup_teardown(test_no_state, setup, teardown),
		cmocka_unit_test_setup_teardown(test_phase_gating, setup, teardown),
		cmocka_unit_test(test_drops_when_ring_full),
		cmocka_unit_test_setup_teardown(test_batches, setup, teardown),
		cmocka_unit_test_setup_teardown(test_busy_stage_goes_to_ring, setup, teardown),
		cmocka_unit_test(test_stale_links_record_nothing),
		cmocka_unit_test_setup_teardown(test_nested_driver_call, setup, teardown),
		cmocka_unit_test_setup_teardown(test_one_trap_driver_call, setup, teardown),
		cmocka_unit_test_setup_teardown(test_latency, setup, teardown),
	};

	int failed = cmocka_run_group_tests_name("launch probes by slot", tests, NULL, NULL);

	by_lookup = true;
	return failed + cmocka_run_group_tests_name("launch probes by lookup", tests, NULL, NULL);
}
