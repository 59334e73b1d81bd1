// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for include/capture.h and user/core/probes/capture_api.c: the
 * stream keys the capture probes and the launch probe share (the legacy
 * stream is no one's, the per-thread default stream is its thread's), the
 * API table against the names libcudart and libcuda export, and what each
 * API does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "capture.h"
#include "core/probes/capture_api.h"
#include "graph.h"

static void test_legacy_stream_has_no_key(void **state)
{
	struct capture_key k;

	(void)state;
	assert_int_equal(capture_key_of(&k, 10, 11, 0, 0), 0);
	assert_int_equal(capture_key_of(&k, 10, 11, CAPTURE_STREAM_LEGACY, 0), 0);
	assert_int_equal(capture_key_of(&k, 10, 11, CAPTURE_STREAM_LEGACY, 1), 0);
}

static void test_per_thread_stream_is_the_threads(void **state)
{
	struct capture_key a, b, c;

	(void)state;
	/* cudaStreamPerThread from a plain entry, and stream 0 from a _ptsz one: the same. */
	assert_int_equal(capture_key_of(&a, 10, 11, CAPTURE_STREAM_PER_THREAD, 0), 1);
	assert_int_equal(capture_key_of(&b, 10, 11, 0, 1), 1);
	assert_memory_equal(&a, &b, sizeof(a));
	assert_int_equal(a.tid, 11);
	/* Another thread's default stream is another stream. */
	assert_int_equal(capture_key_of(&c, 10, 12, CAPTURE_STREAM_PER_THREAD, 0), 1);
	assert_memory_not_equal(&a, &c, sizeof(a));
}

static void test_other_streams_are_the_processs(void **state)
{
	struct capture_key a, b;

	(void)state;
	assert_int_equal(capture_key_of(&a, 10, 11, 0x5000, 0), 1);
	assert_int_equal(capture_key_of(&b, 10, 12, 0x5000, 1), 1);
	assert_memory_equal(&a, &b, sizeof(a));
	assert_int_equal(a.tid, 0);
	assert_int_equal(a.stream, 0x5000);
}

static void test_api_table(void **state)
{
	(void)state;
	for (unsigned api = 0; api < CAP__COUNT; api++) {
		const char *n = capture_apis[api];
		size_t len;

		assert_non_null(n);
		len = strlen(n);
		/* The pairs: the _ptsz form follows its plain one, and only there. */
		if (api >= CAP_FIRST_GRAPH) {
			/* A graph call's _ptsz form takes no stream of its own: no pair rule. */
			assert_false(capture_api_ptsz(api));
		} else if (capture_api_ptsz(api)) {
			assert_true(len > 5 && !strcmp(n + len - 5, "_ptsz"));
			assert_int_equal(strncmp(n, capture_apis[api - 1], len - 5), 0);
		} else {
			assert_false(len > 5 && !strcmp(n + len - 5, "_ptsz"));
		}
		assert_int_equal(capture_api_is_driver(api), strncmp(n, "cuda", 4) != 0);
	}
}

static void test_api_kinds(void **state)
{
	(void)state;
	assert_int_equal(capture_api_kind(CAP_cudaStreamBeginCaptureToGraph_ptsz), CAPTURE_BEGIN);
	assert_int_equal(capture_api_kind(CAP_cuStreamBeginCapture_v2), CAPTURE_BEGIN);
	assert_int_equal(capture_api_kind(CAP_cuStreamEndCapture_ptsz), CAPTURE_END);
	assert_int_equal(capture_api_kind(CAP_cuEventRecordWithFlags), CAPTURE_RECORD);
	assert_int_equal(capture_api_kind(CAP_cudaStreamWaitEvent_ptsz), CAPTURE_WAIT);
	assert_int_equal(capture_api_kind(CAP_cuThreadExchangeStreamCaptureMode), CAPTURE_MODE);
	assert_int_equal(capture_api_kind(CAP_cudaGraphCreate), CAPTURE_GRAPH);
	assert_int_equal(capture_api_kind(CAP_cuGraphExecDestroy), CAPTURE_GRAPH);
	/* Begins, ends and graph calls are told at their return; the event and mode calls not. */
	for (unsigned api = 0; api < CAP__COUNT; api++)
		assert_int_equal(capture_api_has_return(api),
				 strstr(capture_apis[api], "BeginCapture") != NULL ||
					 strstr(capture_apis[api], "EndCapture") != NULL ||
					 strstr(capture_apis[api], "Graph") != NULL);
}

/* Every graph call has its op, from its name; every end is a capture's graph. */
static void test_graph_ops(void **state)
{
	static const struct {
		const char *part;
		enum graph_op op;
	} by_name[] = {
		{ "EndCapture", GOP_CAPTURED },	   { "GraphCreate", GOP_CREATE },
		{ "GraphClone", GOP_CLONE },	   { "AddKernelNode", GOP_ADD_KERNEL },
		{ "AddMemcpyNode", GOP_ADD_COPY }, { "AddMemsetNode", GOP_ADD_SET },
		{ "AddChildGraph", GOP_ADD_CHILD }, { "AddEmptyNode", GOP_ADD_OTHER },
		{ "AddHostNode", GOP_ADD_OTHER },  { "AddEventRecordNode", GOP_ADD_OTHER },
		{ "AddEventWaitNode", GOP_ADD_OTHER },
		{ "ExecKernelNodeSetParams", GOP_EXEC_PARAMS },
		{ "GraphKernelNodeSetParams", GOP_NODE_PARAMS },
		{ "Instantiate", GOP_INSTANTIATE }, { "ExecUpdate", GOP_UPDATE },
		{ "ExecDestroy", GOP_EXEC_DESTROY }, { "GraphDestroy", GOP_DESTROY },
	};

	(void)state;
	for (unsigned api = 0; api < CAP__COUNT; api++) {
		enum graph_op want = GOP_NONE;

		for (size_t i = 0; i < sizeof(by_name) / sizeof(by_name[0]); i++)
			if (strstr(capture_apis[api], by_name[i].part)) {
				want = by_name[i].op;
				break;
			}
		assert_int_equal(capture_graph_op(api), want);
		assert_int_equal(capture_graph_copy(api) != GCOPY_NONE, want == GOP_ADD_COPY);
	}
	assert_int_equal(capture_graph_copy(CAP_cuGraphAddMemcpyNode), GCOPY_3D_DRV);
	assert_int_equal(capture_graph_copy(CAP_cudaGraphAddMemcpyNodeFromSymbol), GCOPY_1D);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_legacy_stream_has_no_key),
		cmocka_unit_test(test_per_thread_stream_is_the_threads),
		cmocka_unit_test(test_other_streams_are_the_processs),
		cmocka_unit_test(test_api_table),
		cmocka_unit_test(test_api_kinds),
		cmocka_unit_test(test_graph_ops),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
