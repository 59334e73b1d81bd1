// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/cuda/launch_api.c and the records of include/launch.h: the API
 * table against CUPTI's callback ids, the API classes, and the record layout
 * that bpf/launch.bpf.c writes and the loader reads.
 */
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>
#include "cuda/launch_api.h"
#include "hold.h"
#include "launch.h"
#include "proc_state.h"
#include "records.h"
#include "schedule.h"
#include "step.h"

/*
 * When CUPTI's headers are on the include path (-I$(CUDA_HOME)/include), the
 * expected ids come from them. Otherwise these are CUDA 13.0's values, copied
 * by hand from cupti_runtime_cbid.h (lines 54, 64, 224, 227, 238, 248,
 * 282-283, 324-325, 443-444) and cupti_driver_cbid.h (lines 320, 455,
 * 527-528, 665-666).
 */
#if __has_include(<cupti_runtime_cbid.h>) && __has_include(<cupti_driver_cbid.h>)
#include <cupti_runtime_cbid.h>
#include <cupti_driver_cbid.h>
#define CBIDS_FROM "CUPTI headers"
#else
#define CBIDS_FROM "CUDA 13.0 values"
enum {
	CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020 = 41,
	CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020 = 51,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000 = 211,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000 = 214,
	CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000 = 225,
	CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_ptsz_v7000 = 235,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000 = 269,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000 = 270,
	CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000 = 311,
	CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000 = 312,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060 = 430,
	CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060 = 431,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel = 307,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz = 442,
	CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch = 514,
	CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz = 515,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx = 652,
	CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz = 653,
};
#endif

static const struct {
	enum cuprobe_api api;
	const char *name;
	int cbid;
	bool driver;
	enum launch_what what;
} expected[] = {
	{ API_cudaLaunchKernel, "cudaLaunchKernel",
	  CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, false, LAUNCH_KERNEL },
	{ API_cudaLaunchKernel_ptsz, "cudaLaunchKernel_ptsz",
	  CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000, false, LAUNCH_KERNEL },
	{ API_cudaLaunchKernelExC, "cudaLaunchKernelExC",
	  CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060, false, LAUNCH_KERNEL },
	{ API_cudaLaunchKernelExC_ptsz, "cudaLaunchKernelExC_ptsz",
	  CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060, false, LAUNCH_KERNEL },
	{ API_cudaLaunchCooperativeKernel, "cudaLaunchCooperativeKernel",
	  CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000, false, LAUNCH_KERNEL },
	{ API_cudaLaunchCooperativeKernel_ptsz, "cudaLaunchCooperativeKernel_ptsz",
	  CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000, false, LAUNCH_KERNEL },
	{ API_cudaGraphLaunch, "cudaGraphLaunch",
	  CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, false, LAUNCH_GRAPH },
	{ API_cudaGraphLaunch_ptsz, "cudaGraphLaunch_ptsz",
	  CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000, false, LAUNCH_GRAPH },
	{ API_cudaMemcpyAsync, "cudaMemcpyAsync",
	  CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020, false, LAUNCH_MEMCPY },
	{ API_cudaMemcpyAsync_ptsz, "cudaMemcpyAsync_ptsz",
	  CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000, false, LAUNCH_MEMCPY },
	{ API_cudaMemsetAsync, "cudaMemsetAsync",
	  CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020, false, LAUNCH_MEMSET },
	{ API_cudaMemsetAsync_ptsz, "cudaMemsetAsync_ptsz",
	  CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_ptsz_v7000, false, LAUNCH_MEMSET },
	{ API_cuLaunchKernel, "cuLaunchKernel",
	  CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, true, LAUNCH_KERNEL },
	{ API_cuLaunchKernel_ptsz, "cuLaunchKernel_ptsz",
	  CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz, true, LAUNCH_KERNEL },
	{ API_cuLaunchKernelEx, "cuLaunchKernelEx",
	  CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx, true, LAUNCH_KERNEL },
	{ API_cuLaunchKernelEx_ptsz, "cuLaunchKernelEx_ptsz",
	  CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz, true, LAUNCH_KERNEL },
	{ API_cuGraphLaunch, "cuGraphLaunch",
	  CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, true, LAUNCH_GRAPH },
	{ API_cuGraphLaunch_ptsz, "cuGraphLaunch_ptsz",
	  CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz, true, LAUNCH_GRAPH },
};

#define NEXPECTED (sizeof(expected) / sizeof(expected[0]))

static void test_every_api_is_listed_once(void **state)
{
	bool seen[API__COUNT] = { false };

	(void)state;
	assert_int_equal(API__COUNT, 18);
	assert_int_equal(NEXPECTED, API__COUNT);
	for (size_t i = 0; i < NEXPECTED; i++) {
		assert_true(expected[i].api < API__COUNT);
		assert_false(seen[expected[i].api]);
		seen[expected[i].api] = true;
	}
}

static void test_api_names(void **state)
{
	(void)state;
	for (size_t i = 0; i < NEXPECTED; i++) {
		const char *name = launch_apis[expected[i].api].name;

		assert_non_null(name);
		assert_string_equal(name, expected[i].name);
	}
}

static void test_api_names_are_distinct(void **state)
{
	(void)state;
	for (int i = 0; i < API__COUNT; i++)
		for (int j = i + 1; j < API__COUNT; j++)
			assert_string_not_equal(launch_apis[i].name, launch_apis[j].name);
}

/* Each API is followed by its per-thread default stream variant. */
static void test_each_api_is_followed_by_its_ptsz(void **state)
{
	char want[128];

	(void)state;
	for (int i = 0; i < API__COUNT; i += 2) {
		snprintf(want, sizeof(want), "%s_ptsz", launch_apis[i].name);
		assert_string_equal(launch_apis[i + 1].name, want);
		assert_null(strstr(launch_apis[i].name, "_ptsz"));
	}
}

static void test_cbids_match_cupti(void **state)
{
	(void)state;
	for (size_t i = 0; i < NEXPECTED; i++) {
		int got = launch_apis[expected[i].api].cbid;

		if (got != expected[i].cbid)
			fail_msg("%s: cbid %d, %s say %d", expected[i].name, got, CBIDS_FROM,
				 expected[i].cbid);
	}
}

static void test_is_driver(void **state)
{
	(void)state;
	assert_int_equal(API_FIRST_DRIVER, API_cuLaunchKernel);
	for (size_t i = 0; i < NEXPECTED; i++)
		assert_int_equal(launch_api_is_driver(expected[i].api), expected[i].driver);
	/* Driver names start with "cu" but not "cuda". */
	for (int i = 0; i < API__COUNT; i++)
		assert_int_equal(launch_api_is_driver(i),
				 strncmp(launch_apis[i].name, "cuda", 4) != 0);
}

static void test_what_each_api_launches(void **state)
{
	(void)state;
	for (size_t i = 0; i < NEXPECTED; i++)
		if (launch_api_what(expected[i].api) != expected[i].what)
			fail_msg("%s: launch_api_what %d, want %d", expected[i].name,
				 launch_api_what(expected[i].api), expected[i].what);
}

static void test_memcpy_kind_names(void **state)
{
	(void)state;
	/* enum cudaMemcpyKind in CUDA's driver_types.h */
	assert_string_equal(launch_memcpy_kind(0), "HtoH");
	assert_string_equal(launch_memcpy_kind(1), "HtoD");
	assert_string_equal(launch_memcpy_kind(2), "DtoH");
	assert_string_equal(launch_memcpy_kind(3), "DtoD");
	assert_string_equal(launch_memcpy_kind(4), "Default");
}

static void test_memcpy_kind_out_of_range(void **state)
{
	(void)state;
	assert_string_equal(launch_memcpy_kind(5), "Unknown");
	assert_string_equal(launch_memcpy_kind(1000), "Unknown");
	assert_string_equal(launch_memcpy_kind(UINT_MAX), "Unknown");
}

static void test_api_names_in_enum_order(void **state)
{
	const char *names[API__COUNT + 1];

	(void)state;
	memset(names, 0, sizeof(names));
	names[API__COUNT] = "guard";
	launch_api_names(names);
	for (size_t i = 0; i < NEXPECTED; i++) {
		assert_non_null(names[expected[i].api]);
		assert_string_equal(names[expected[i].api], expected[i].name);
	}
	assert_string_equal(names[API__COUNT], "guard");
}

static void test_record_types_and_constants(void **state)
{
	(void)state;
	assert_int_equal(REC_LAUNCH, 1);
	assert_int_equal(REC_LIBMAP, 2);
	assert_int_equal(REC_STEP, 3);
	assert_int_equal(REC_THREAD, 4);
	assert_int_equal(PHASE_NONE, 0);
	assert_int_equal(PHASE_WARMUP, 1);
	assert_int_equal(PHASE_RECORD, 2);
	assert_int_equal(PHASE_RECORD_AND_SAVE, 3);
	assert_int_equal(LAUNCH_F_HAS_DUR, 1);
	assert_int_equal(MAX_RUNTIME_RANGES, 64);
}

#define assert_field(type, field, off, size)                                                      \
	do {                                                                                       \
		assert_int_equal(offsetof(struct type, field), off);                               \
		assert_int_equal(sizeof(((struct type *)0)->field), size);                         \
	} while (0)

/* Every record starts with its __u32 type: the reader dispatches on it. */
static void test_records_start_with_type(void **state)
{
	(void)state;
	assert_field(launch_event, type, 0, 4);
	assert_field(libmap_event, type, 0, 4);
	assert_field(step_event, type, 0, 4);
	assert_field(thread_event, type, 0, 4);
}

static void test_launch_event_layout(void **state)
{
	(void)state;
	assert_int_equal(sizeof(struct launch_event), 128);
	assert_field(launch_event, api, 4, 4);
	assert_field(launch_event, tgid, 8, 4);
	assert_field(launch_event, tid, 12, 4);
	assert_field(launch_event, ts_ns, 16, 8);
	assert_field(launch_event, dur_ns, 24, 8);
	assert_field(launch_event, func, 32, 8);
	assert_field(launch_event, stream, 40, 8);
	assert_field(launch_event, shmem, 48, 8);
	assert_field(launch_event, bytes, 56, 8);
	assert_field(launch_event, grid, 64, 12);
	assert_field(launch_event, block, 76, 12);
	assert_field(launch_event, kind, 88, 4);
	assert_field(launch_event, step, 92, 4);
	assert_field(launch_event, phase, 96, 4);
	assert_field(launch_event, flags, 100, 4);
	assert_field(launch_event, capture, 120, 4);
}

static void test_other_event_layouts(void **state)
{
	(void)state;
	assert_int_equal(sizeof(struct libmap_event), 32);
	assert_field(libmap_event, tgid, 4, 4);
	assert_field(libmap_event, ts_ns, 8, 8);
	assert_field(libmap_event, seq, 16, 8);
	assert_field(libmap_event, held, 24, 4);

	assert_int_equal(sizeof(struct step_event), 64);
	assert_field(step_event, tgid, 4, 4);
	assert_field(step_event, tid, 8, 4);
	assert_field(step_event, step, 12, 4);
	assert_field(step_event, ts_ns, 16, 8);
	assert_field(step_event, phase, 24, 4);
	assert_field(step_event, launch_hits, 32, 8);
	assert_field(step_event, drops, 40, 8);
	assert_field(step_event, nested, 48, 8);
	assert_field(step_event, stale, 56, 8);

	assert_int_equal(sizeof(struct thread_event), 32);
	assert_field(thread_event, tgid, 4, 4);
	assert_field(thread_event, tid, 8, 4);
	assert_field(thread_event, comm, 16, 16); /* TASK_COMM_LEN */
}

/* The loader reads these straight out of the BPF object's .bss. */
static void test_counters_and_code_range_layout(void **state)
{
	(void)state;
	assert_int_equal(sizeof(struct cuprobe_counters), 48);
	assert_field(cuprobe_counters, hits, 0, 8);
	assert_field(cuprobe_counters, nested, 8, 8);
	assert_field(cuprobe_counters, drops, 16, 8);
	assert_field(cuprobe_counters, lat_misses, 24, 8);
	assert_field(cuprobe_counters, agent_bad, 32, 8);
	assert_field(cuprobe_counters, agent_drops, 40, 8);

	/* The guardian reads proc_state.stops against proc_conf.holds_answered. */
	assert_int_equal(sizeof(struct proc_state), 144);
	assert_field(proc_state, captures_open, 112, 4);
	assert_field(launch_slot, captures_open, 4, 4);
	assert_field(proc_state, stale, 88, 8);
	/* One trap per launch: the loader reads what BPF learned. */
	assert_field(proc_state, learned, 96, 8);
	assert_field(proc_state, nested_at_learned, 104, 8);
	assert_field(proc_state, graph_nested, 128, 8);
	assert_field(proc_state, graph_unnested, 136, 8);
	assert_field(proc_state, stops, 40, 8);
	assert_field(proc_state, lost_ctrl, 48, 8);
	assert_field(proc_state, last_stop_ns, 56, 8);
	assert_int_equal(sizeof(struct proc_conf), 56);
	assert_field(proc_conf, wake_ahead, 48, 4);
	assert_field(proc_conf, flags, 40, 4);
	assert_field(proc_conf, link_gen, 44, 4);
	assert_field(proc_conf, sched, 0, 24);
	assert_field(proc_conf, step_every, 24, 4);
	assert_field(proc_conf, gen, 28, 4);
	assert_field(proc_conf, holds_answered, 32, 8);

	assert_int_equal(sizeof(struct code_range), 16);
	assert_field(code_range, lo, 0, 8);
	assert_field(code_range, hi, 8, 8);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_api_is_listed_once),
		cmocka_unit_test(test_api_names),
		cmocka_unit_test(test_api_names_are_distinct),
		cmocka_unit_test(test_each_api_is_followed_by_its_ptsz),
		cmocka_unit_test(test_cbids_match_cupti),
		cmocka_unit_test(test_is_driver),
		cmocka_unit_test(test_what_each_api_launches),
		cmocka_unit_test(test_memcpy_kind_names),
		cmocka_unit_test(test_memcpy_kind_out_of_range),
		cmocka_unit_test(test_api_names_in_enum_order),
		cmocka_unit_test(test_record_types_and_constants),
		cmocka_unit_test(test_records_start_with_type),
		cmocka_unit_test(test_launch_event_layout),
		cmocka_unit_test(test_other_event_layouts),
		cmocka_unit_test(test_counters_and_code_range_layout),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
