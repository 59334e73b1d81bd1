// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The events ring swapped for a bigger one while launches flow: two threads
 * launch without end through cuprobe's launch program, and the ring BPF
 * writes to is swapped twice (64K, 256K, 1M) under them, the old ring read
 * to its end before it is let go, as the loader does (session_ring.c).
 * Every launch carries its thread and sequence number: each must arrive
 * exactly once, none dropped. Needs root.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <bpf/libbpf.h>
#include <cuda_runtime_api.h>
#include "bpf_test.h"
#include "schedule.h"
#include "util/clock.h"

#define WRITERS 2
#define PER_WRITER 60000
/* Launches in flight (written, not yet read) at most: they fit the smallest ring. */
#define IN_FLIGHT 256

static volatile unsigned long swap_calls;

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
STAND_IN cudaError_t swap_cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
					   size_t shmem, cudaStream_t stream)
{
	STAND_IN_FRAME();
	__atomic_fetch_add(&swap_calls, 1, __ATOMIC_RELAXED);
	return cudaSuccess;
}
#pragma GCC diagnostic pop

struct swap_run {
	struct bt *t;
	uint8_t seen[WRITERS][PER_WRITER];
	unsigned long received, dups, foreign;
	unsigned long launched; /* by all writers, atomically */
	bool stop;		/* the reader gave up waiting */
};

static void on_launch(void *ctx, const struct launch_event *e)
{
	struct swap_run *r = ctx;
	uint64_t w = e->stream >> 32, seq = (uint32_t)e->stream;

	if (e->api != API_cudaLaunchKernel || w >= WRITERS || seq >= PER_WRITER) {
		r->foreign++;
		return;
	}
	if (r->seen[w][seq]++)
		r->dups++;
	__atomic_store_n(&r->received, r->received + 1, __ATOMIC_RELEASE);
}

static int on_record(void *ctx, void *data, size_t size)
{
	bpfobj__each_launch(data, size, on_launch, ctx);
	return 0;
}

struct writer {
	struct swap_run *r;
	uint64_t id;
};

static void *write_launches(void *arg)
{
	struct writer *w = arg;
	struct swap_run *r = w->r;
	dim3 one = { 1, 1, 1 };

	for (uint64_t seq = 0; seq < PER_WRITER; seq++) {
		/* Never more in flight than the smallest ring holds: no drop is due to its size. */
		while (__atomic_load_n(&r->launched, __ATOMIC_ACQUIRE) -
			       __atomic_load_n(&r->received, __ATOMIC_ACQUIRE) >=
		       IN_FLIGHT) {
			if (__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE))
				return NULL;
			sched_yield();
		}
		__atomic_fetch_add(&r->launched, 1, __ATOMIC_ACQ_REL);
		swap_cudaLaunchKernel((void *)0x1000, one, one, NULL, 0,
				      (cudaStream_t)(w->id << 32 | seq));
	}
	return NULL;
}

/* The reader: every ring the manager holds, then what the stages hold. */
static void read_all(struct swap_run *r, struct ring_buffer *rb)
{
	assert_true(ring_buffer__consume(rb) >= 0);
	bpfobj__drain_stages(r->t->obj, on_launch, r);
}

static struct swap_run *the_run;

static int add_ring(void *ctx, int fd)
{
	return ring_buffer__add(ctx, fd, on_record, the_run);
}

/* A bigger ring swapped in; the old one read to its end, then let go. */
static struct ring_buffer *swap_ring(struct swap_run *r, struct ring_buffer *rb, uint64_t bytes)
{
	struct ring_buffer *fresh;
	uint64_t unread = 1;
	int fd = bpfobj__events_swap(r->t->obj, bytes, add_ring, rb);

	assert_true(fd >= 0);
	assert_int_equal(bpfobj__events_fd(r->t->obj), fd);
	assert_int_equal(bpfobj__events_bytes(r->t->obj), bytes);
	/* Another swap waits for the old ring to go. */
	assert_int_equal(bpfobj__events_swap(r->t->obj, bytes * 2, add_ring, rb), -EBUSY);
	/* The writers go on meanwhile; a program that found the old ring may still write to it. */
	for (uint64_t until = clock_mono_ns() + 20 * 1000000ull; clock_mono_ns() < until || unread;) {
		read_all(r, rb);
		assert_int_equal(bpfobj__ring_unread(bpfobj__events_retiring_fd(r->t->obj), &unread),
				 0);
	}
	fresh = ring_buffer__new(fd, on_record, r, NULL);
	assert_non_null(fresh);
	ring_buffer__free(rb);
	bpfobj__events_retire(r->t->obj);
	assert_int_equal(bpfobj__events_retiring_fd(r->t->obj), -1);
	return fresh;
}

static void test_swap_loses_nothing(void **state)
{
	struct swap_run *r = calloc(1, sizeof(*r));
	const char *name = "swap_cudaLaunchKernel";
	uint64_t cookie = API_cudaLaunchKernel, total = WRITERS * PER_WRITER, before;
	struct writer w[WRITERS];
	pthread_t th[WRITERS];
	struct ring_buffer *rb;
	struct proc_state ps;
	int swaps = 0;

	(void)state;
	assert_non_null(r);
	the_run = r;
	r->t = bt__new(64 << 10);
	assert_non_null(r->t);
	assert_int_equal(bpfobj__events_bytes(r->t->obj), 64 << 10);
	assert_int_equal(bt__attach(r->t, PROG_LAUNCH, getpid(), &name, &cookie, 1), 0);
	assert_int_equal(bt__add_self(r->t, NULL, pack_state(1, 0, PHASE_RECORD)), 0);
	rb = ring_buffer__new(bpfobj__events_fd(r->t->obj), on_record, r, NULL);
	assert_non_null(rb);
	for (int i = 0; i < WRITERS; i++) {
		w[i] = (struct writer){ .r = r, .id = (uint64_t)i };
		assert_int_equal(pthread_create(&th[i], NULL, write_launches, &w[i]), 0);
	}
	/* Swaps at a quarter and at half of the launches: before, during and after each. */
	/* A launch lost would stall the writers: the checks below then say which. */
	for (uint64_t idle_since = clock_mono_ns(), last = 0;
	     r->received < total && clock_mono_ns() - idle_since < 10 * 1000000000ull;) {
		unsigned long got = r->received;

		if (got != last) {
			last = got;
			idle_since = clock_mono_ns();
		}

		if ((swaps == 0 && got >= total / 4) || (swaps == 1 && got >= total / 2)) {
			before = got;
			rb = swap_ring(r, rb, (uint64_t)(256 << 10) << (2 * swaps));
			/* Launches came through while the old ring was being read out. */
			assert_true(r->received > before);
			assert_true(r->received < total);
			swaps++;
		}
		read_all(r, rb);
	}
	/* Writers stalled by a lost launch are let go. */
	__atomic_store_n(&r->stop, true, __ATOMIC_RELEASE);
	for (int i = 0; i < WRITERS; i++)
		pthread_join(th[i], NULL);
	read_all(r, rb);
	assert_int_equal(swaps, 2);
	assert_int_equal(bpfobj__events_bytes(r->t->obj), 1 << 20);
	ps = bt__state(r->t, getpid());
	assert_int_equal(swap_calls, total);
	assert_int_equal(ps.launch_hits, total);
	assert_int_equal(ps.drops, 0);
	assert_int_equal(r->received, total);
	assert_int_equal(r->dups, 0);
	assert_int_equal(r->foreign, 0);
	for (int i = 0; i < WRITERS; i++)
		for (int k = 0; k < PER_WRITER; k++)
			assert_int_equal(r->seen[i][k], 1);
	ring_buffer__free(rb);
	bt__free(r->t);
	free(r);
}

/* A ring the kernel refuses: said, and the ring before stays, taking launches. */
static void test_swap_refused_keeps_ring(void **state)
{
	struct swap_run *r = calloc(1, sizeof(*r));
	const char *name = "swap_cudaLaunchKernel";
	uint64_t cookie = API_cudaLaunchKernel;
	dim3 one = { 1, 1, 1 };
	struct ring_buffer *rb;
	int fd;

	(void)state;
	assert_non_null(r);
	r->t = bt__new(64 << 10);
	assert_non_null(r->t);
	fd = bpfobj__events_fd(r->t->obj);
	/* Not a power of two: BPF rings must be. */
	assert_true(bpfobj__events_swap(r->t->obj, 3 * 4096, NULL, NULL) < 0);
	assert_int_equal(bpfobj__events_fd(r->t->obj), fd);
	assert_int_equal(bpfobj__events_bytes(r->t->obj), 64 << 10);
	assert_int_equal(bpfobj__events_retiring_fd(r->t->obj), -1);
	assert_int_equal(bt__attach(r->t, PROG_LAUNCH, getpid(), &name, &cookie, 1), 0);
	assert_int_equal(bt__add_self(r->t, NULL, pack_state(1, 0, PHASE_RECORD)), 0);
	rb = ring_buffer__new(fd, on_record, r, NULL);
	assert_non_null(rb);
	for (uint64_t seq = 0; seq < 100; seq++)
		swap_cudaLaunchKernel((void *)0x1000, one, one, NULL, 0, (cudaStream_t)seq);
	read_all(r, rb);
	assert_int_equal(r->received, 100);
	assert_int_equal(r->dups, 0);
	assert_true(bpfobj__events_high(r->t->obj) > 0);
	assert_int_equal(bpfobj__events_high(r->t->obj), 0);
	ring_buffer__free(rb);
	bt__free(r->t);
	free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_swap_loses_nothing),
		cmocka_unit_test(test_swap_refused_keeps_ring),
	};

	return cmocka_run_group_tests_name("events ring swap", tests, NULL, NULL);
}
