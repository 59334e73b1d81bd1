// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/core/session/launch_queue.c: the queue between reading launches
 * and placing them keeps their order across its chunks, gives out no more than
 * asked, holds no more than its cap, and reuses what it gave back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "core/session/launch_queue.h"

struct seen {
	uint64_t next;	/* the ts_ns the next launch must have */
	size_t n;
};

static void take(void *ctx, const struct launch_event *e)
{
	struct seen *s = ctx;

	assert_int_equal(e->type, REC_LAUNCH);
	assert_int_equal(e->ts_ns, s->next);
	assert_int_equal(e->func, s->next * 3);
	s->next++;
	s->n++;
}

static void push(struct launch_queue *q, uint64_t i)
{
	struct launch_event e = { .type = REC_LAUNCH, .ts_ns = i, .func = i * 3 };

	assert_true(launch_queue__push(q, &e));
}

/* In and out in slices of odd sizes, across many chunks: first in, first out. */
static void test_order_across_chunks(void **state)
{
	struct launch_queue q;
	struct seen s = {};
	uint64_t pushed = 0;

	(void)state;
	launch_queue__init(&q);
	for (int round = 0; round < 20; round++) {
		for (int k = 0; k < 3001 + round * 517; k++)
			push(&q, pushed++);
		assert_int_equal(launch_queue__pop(&q, 2500, take, &s), 2500);
		assert_int_equal(q.len, pushed - s.n);
	}
	assert_int_equal(launch_queue__pop(&q, SIZE_MAX, take, &s), pushed - 50000);
	assert_int_equal(s.n, pushed);
	assert_int_equal(q.len, 0);
	assert_int_equal(launch_queue__pop(&q, 10, take, &s), 0);
	assert_true(q.peak > 4096);
	/* Empty, it takes launches again where it left off. */
	push(&q, pushed++);
	assert_int_equal(launch_queue__pop(&q, 10, take, &s), 1);
	launch_queue__free(&q);
}

/* At its cap the queue refuses (the caller places the launch at once), then takes again. */
static void test_cap(void **state)
{
	struct launch_queue q;
	struct launch_event e = { .type = REC_LAUNCH };
	struct seen s = {};

	(void)state;
	launch_queue__init(&q);
	assert_true(q.cap >= 1000000);
	q.cap = 5000;
	for (uint64_t i = 0; i < 5000; i++)
		push(&q, i);
	assert_false(launch_queue__push(&q, &e));
	assert_int_equal(q.len, 5000);
	assert_int_equal(launch_queue__pop(&q, 1, take, &s), 1);
	push(&q, 5000);
	assert_false(launch_queue__push(&q, &e));
	assert_int_equal(launch_queue__pop(&q, SIZE_MAX, take, &s), 5000);
	assert_int_equal(s.next, 5001);
	launch_queue__free(&q);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_order_across_chunks),
		cmocka_unit_test(test_cap),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
