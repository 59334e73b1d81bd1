// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The graph store (user/core/graphs/graph_store.c): captured launches read
 * after their capture's end and instantiation, the runtime's second return
 * of each call, a destroyed handle given again, and the budget: a store that
 * runs out says replays are of unknown content and counts it, never fails
 * and never hands out a content short of a node.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "core/graphs/graph_store.h"

#define GRAPH 0x1000
#define EXEC 0x2000

static struct graph_event ev(unsigned api, uint64_t ts, uint64_t out, uint64_t a, uint64_t b)
{
	return (struct graph_event){ .type = REC_GRAPH, .api = api, .ts_ns = ts, .out = out,
				     .a = a, .b = b };
}

static void capture_launch(struct graph_store *gs, uint32_t capture, uint64_t ts, unsigned g)
{
	struct launch_event e = { .type = REC_LAUNCH, .api = API_cudaLaunchKernel, .ts_ns = ts,
				  .flags = LAUNCH_F_CAPTURED, .capture = capture,
				  .grid = { g, 1, 1 }, .block = { 32, 1, 1 } };

	assert_int_equal(graph_store__captured(gs, &e, "k"), 0);
}

static void event(struct graph_store *gs, struct graph_event e)
{
	assert_int_equal(graph_store__event(gs, &e, "k"), 0);
}

/* The end and the instantiation read before two of the capture's three launches. */
static void test_captured_late(void **state)
{
	struct graph_store *gs = graph_store__new(NULL);
	struct graph_event end = ev(CAP_cudaStreamEndCapture, 50, GRAPH, 0, 0);
	const struct graph_content *c;

	(void)state;
	assert_non_null(gs);
	end.capture = 1;
	capture_launch(gs, 1, 10, 1);
	event(gs, end);
	/* The driver's return, then the runtime's: one executable graph. */
	event(gs, ev(CAP_cuGraphInstantiateWithFlags, 60, EXEC, GRAPH, 0));
	event(gs, ev(CAP_cudaGraphInstantiate, 61, EXEC, GRAPH, 0));
	capture_launch(gs, 1, 20, 2);
	capture_launch(gs, 1, 30, 3);
	c = graph_store__replay(gs, EXEC, 100);
	assert_non_null(c);
	assert_int_equal(c->kernels, 3);
	assert_string_equal(c->origin, "capture");
	/* After a replay was handed out, a late node is counted, not added. */
	capture_launch(gs, 1, 40, 4);
	assert_int_equal(graph_store__replay(gs, EXEC, 101)->kernels, 3);
	graph_store__free(gs);
}

/* A destroyed executable graph's handle given to another: each replay gets its own. */
static void test_handle_reused(void **state)
{
	struct graph_store *gs = graph_store__new(NULL);
	struct graph_event add = ev(CAP_cudaGraphAddKernelNode, 0, 0, GRAPH, 0);
	const struct graph_content *first, *second;

	(void)state;
	event(gs, ev(CAP_cudaGraphCreate, 1, GRAPH, 0, 0));
	add.ts_ns = 2, add.out = 0x11;
	event(gs, add);
	event(gs, ev(CAP_cudaGraphInstantiate, 3, EXEC, GRAPH, 0));
	event(gs, ev(CAP_cudaGraphExecDestroy, 10, 0, EXEC, 0));
	add.ts_ns = 11, add.out = 0x12;
	event(gs, add);
	event(gs, ev(CAP_cudaGraphInstantiate, 12, EXEC, GRAPH, 0));
	/* Replays read late, after the handle came back: by their time. */
	first = graph_store__replay(gs, EXEC, 5);
	second = graph_store__replay(gs, EXEC, 20);
	assert_non_null(first);
	assert_non_null(second);
	assert_int_equal(first->kernels, 1);
	assert_int_equal(second->kernels, 2);
	/* Between the destroy and the new instantiation it ran nothing cuprobe knows. */
	assert_null(graph_store__replay(gs, EXEC, 11));
	/* An executable graph never seen made: unknown, never guessed. */
	assert_null(graph_store__replay(gs, 0x9999, 20));
	graph_store__free(gs);
}

/*
 * A budget of a few items: a graph that does not fit is of unknown content,
 * counted; nothing fails, and what was kept before is still right.
 */
static void test_budget(void **state)
{
	struct graph_budget b = { .max = 6 };
	struct graph_store *gs = graph_store__new(&b);
	struct graph_event add = ev(CAP_cudaGraphAddKernelNode, 2, 0x11, GRAPH, 0);
	struct graph_store_stats st;

	(void)state;
	event(gs, ev(CAP_cudaGraphCreate, 1, GRAPH, 0, 0)); /* 1: the graph */
	event(gs, add);					  /* 2: its node */
	event(gs, ev(CAP_cudaGraphInstantiate, 3, EXEC, GRAPH, 0)); /* 3-6: exec, content, node, span */
	assert_non_null(graph_store__replay(gs, EXEC, 4));
	assert_int_equal(b.used, 6);
	/* The budget is spent: a second graph and its replays are not followed. */
	event(gs, ev(CAP_cudaGraphCreate, 5, GRAPH + 1, 0, 0));
	add.a = GRAPH + 1, add.out = 0x21, add.ts_ns = 6;
	event(gs, add);
	event(gs, ev(CAP_cudaGraphInstantiate, 7, EXEC + 1, GRAPH + 1, 0));
	assert_null(graph_store__replay(gs, EXEC + 1, 8));
	assert_int_equal(graph_store__replay(gs, EXEC, 8)->kernels, 1);
	graph_store__stats(gs, &st);
	assert_true(st.full > 0);
	graph_store__free(gs);
	/* The store's items go back with it. */
	assert_int_equal(b.used, 0);
}

/* A capture never ended stops growing at the budget; its graph is then of unknown content. */
static void test_capture_bounded(void **state)
{
	struct graph_budget b = { .max = 4 };
	struct graph_store *gs = graph_store__new(&b);
	struct graph_event end = ev(CAP_cudaStreamEndCapture, 1000, GRAPH, 0, 0);

	(void)state;
	for (unsigned i = 0; i < 100; i++)
		capture_launch(gs, 7, 10 + i, i);
	assert_true(b.used <= b.max);
	end.capture = 7;
	event(gs, end);
	event(gs, ev(CAP_cudaGraphInstantiate, 1001, EXEC, GRAPH, 0));
	assert_null(graph_store__replay(gs, EXEC, 1002));
	graph_store__free(gs);
	assert_int_equal(b.used, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_captured_late),
		cmocka_unit_test(test_handle_reused),
		cmocka_unit_test(test_budget),
		cmocka_unit_test(test_capture_bounded),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
