// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * --stack in BPF (bpf/stack.bpf.h): the launch program, loaded with its
 * stack maps on and attached to a stand-in of cudaLaunchKernel in this
 * binary, takes the user stack of a call made through a known chain; and
 * walks the Python frames of an interpreter laid out in this process's
 * memory exactly as CPython 3.11 and 3.12 lay theirs out (the offsets are
 * pyproc.c's), with this thread's state among others. Needs root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <cmocka.h>
#include "bpf_test.h"
#include "schedule.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
static volatile unsigned long calls;

STAND_IN int sim_launch(const void *func, uint64_t grid, uint32_t gz, uint64_t block, uint32_t bz,
			void **args, size_t shmem, void *stream)
{
	STAND_IN_FRAME();
	calls++;
	return 0;
}
#pragma GCC diagnostic pop

STAND_IN void chain_inner(void)
{
	STAND_IN_FRAME();
	sim_launch(NULL, 1, 1, 1, 1, NULL, 0, NULL);
	asm volatile("" ::: "memory");
}

STAND_IN void chain_outer(void)
{
	STAND_IN_FRAME();
	chain_inner();
	asm volatile("" ::: "memory");
}

static int setup(void **state)
{
	static const char *const names[] = { "sim_launch" };
	static const uint64_t cookies[] = { API_cudaLaunchKernel };
	struct bt *t = bt__new_stack(1 << 20);

	if (!t)
		return -1;
	if (bt__attach(t, PROG_LAUNCH, getpid(), names, cookies, 1) ||
	    bt__add_self(t, NULL, pack_state(1, 0, PHASE_RECORD))) {
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

static __attribute__((noinline)) struct launch_event *one_launch(struct bt *t, void (*fn)(void))
{
	size_t before = t->n_launches;

	fn();
	bt__drain(t);
	assert_int_equal(t->n_launches, before + 1);
	return &t->launches[before];
}

/* The stack is the stand-in's entry, then the return addresses into inner and outer. */
static void test_native_chain(void **state)
{
	struct bt *t = *state;
	struct launch_event *e = NULL;
	struct ustack us;
	uint64_t keys[2] = { 1, 2 };

	/* The same stack twice (one call site) is the same key: one entry per unique stack. */
	for (volatile int i = 0; i < 2; i++) {
		e = one_launch(t, chain_outer);
		keys[i] = e->ustack;
	}
	assert_int_equal(keys[0], keys[1]);
	assert_true(e->flags & LAUNCH_F_USTACK);
	assert_false(e->flags & (LAUNCH_F_ULOST | LAUNCH_F_PYSTACK | LAUNCH_F_PYLOST));
	assert_int_equal(bpf_map_lookup_elem(bpfobj__stacks_fd(t->obj), &keys[0], &us), 0);
	assert_true(us.n >= 4 && us.n < STACK_MAX_DEPTH);
	assert_int_equal(us.truncated, 0);
	assert_int_equal(us.ip[0], (uint64_t)(uintptr_t)sim_launch);
	assert_true(us.ip[1] > (uint64_t)(uintptr_t)chain_inner &&
		    us.ip[1] < (uint64_t)(uintptr_t)chain_inner + 64);
	assert_true(us.ip[2] > (uint64_t)(uintptr_t)chain_outer &&
		    us.ip[2] < (uint64_t)(uintptr_t)chain_outer + 64);
	assert_true(us.ip[3] > (uint64_t)(uintptr_t)one_launch &&
		    us.ip[3] < (uint64_t)(uintptr_t)one_launch + 128);
}

/* Deeper than STACK_MAX_DEPTH: cut, and said. */
static STAND_IN void recurse(int n)
{
	STAND_IN_FRAME();
	if (n > 0)
		recurse(n - 1);
	else
		chain_outer();
	asm volatile("" ::: "memory");
}

static void deep(void)
{
	recurse(STACK_MAX_DEPTH + 10);
}

static void test_native_truncated(void **state)
{
	struct bt *t = *state;
	struct launch_event *e = one_launch(t, deep);
	struct ustack us;

	assert_true(e->flags & LAUNCH_F_USTACK);
	assert_int_equal(bpf_map_lookup_elem(bpfobj__stacks_fd(t->obj), &e->ustack, &us), 0);
	assert_int_equal(us.n, STACK_MAX_DEPTH);
	assert_int_equal(us.truncated, 1);
	assert_true(us.ip[10] > (uint64_t)(uintptr_t)recurse &&
		    us.ip[10] < (uint64_t)(uintptr_t)recurse + 64);
}

/* A fake interpreter: _PyRuntime, one interpreter, two thread states, frames. */
struct fake_py {
	uint8_t runtime[64], interp[128], other[256], mine[256], cframe[16];
	uint8_t frames[4][128];
};

/* One fake for every test: a thread's cached state then always points into it. */
static struct fake_py fake;

static void put64(uint8_t *base, uint16_t off, uint64_t v)
{
	memcpy(base + off, &v, sizeof(v));
}

static void put8(uint8_t *base, uint16_t off, uint8_t v)
{
	base[off] = v;
}

/* CPython 3.11's offsets (pyproc.c's table). */
static const struct py_offsets off311 = {
	.version = 0x030b, .runtime_interp_head = 40, .interp_threads_head = 16, .tstate_next = 8,
	.tstate_native_tid = 160, .tstate_thread_id = 152, .tstate_frame = 56, .cframe_frame = 8,
	.frame_code = 32, .frame_back = 48, .frame_instr = 56, .frame_instr_size = 8,
	.frame_owner = 69, .frame_is_entry = 68,
};

/* CPython 3.12's: no is_entry; a C call leaves a shim frame owned by the C stack (3). */
static const struct py_offsets off312 = {
	.version = 0x030c, .runtime_interp_head = 40, .interp_threads_head = 72, .tstate_next = 8,
	.tstate_native_tid = 144, .tstate_thread_id = 136, .tstate_frame = 56, .cframe_frame = 0,
	.frame_code = 0, .frame_back = 8, .frame_instr = 56, .frame_instr_size = 8,
	.frame_owner = 70, .frame_is_entry = PY_NONE,
};

/*
 * Lays out three Python frames (leaf first: codes 0x1000, 0x2000, 0x3000)
 * on this thread's state, the second listed; with shim, a C-stack frame
 * sits between the second and the third.
 */
static void fake_build(struct fake_py *p, const struct py_offsets *o, bool shim, bool entry2)
{
	uint8_t *chain[4];
	size_t n = 0;

	memset(p, 0, sizeof(*p));
	put64(p->runtime, o->runtime_interp_head, (uintptr_t)p->interp);
	put64(p->interp, o->interp_threads_head, (uintptr_t)p->other);
	put64(p->other, o->tstate_next, (uintptr_t)p->mine);
	put64(p->other, o->tstate_native_tid, 1);
	put64(p->mine, o->tstate_native_tid, (uint64_t)bt__gettid());
	if (o->cframe_frame != PY_NONE) {
		put64(p->mine, o->tstate_frame, (uintptr_t)p->cframe);
		put64(p->cframe, o->cframe_frame, (uintptr_t)p->frames[0]);
	} else {
		put64(p->mine, o->tstate_frame, (uintptr_t)p->frames[0]);
	}
	for (int i = 0; i < 3; i++) {
		chain[n++] = p->frames[i];
		if (i == 1 && shim)
			chain[n++] = p->frames[3];
	}
	for (size_t i = 0; i < n; i++) {
		uint8_t *f = chain[i];
		uint64_t code = f == p->frames[3] ? 0xdead : 0x1000 * ((uint64_t)(f - p->frames[0]) / 128 + 1);

		put64(f, o->frame_code, code);
		put64(f, o->frame_instr, code + 0x10);
		put64(f, o->frame_back, i + 1 < n ? (uintptr_t)chain[i + 1] : 0);
		if (f == p->frames[3])
			put8(f, o->frame_owner, 3);
		if (f == p->frames[1] && entry2 && o->frame_is_entry != PY_NONE)
			put8(f, o->frame_is_entry, 1);
	}
}

static void check_py(struct bt *t, const struct launch_event *e, uint64_t entry)
{
	struct py_stack st;

	assert_true(e->flags & LAUNCH_F_PYSTACK);
	assert_int_equal(bpf_map_lookup_elem(bpfobj__py_stacks_fd(t->obj), &e->pystack, &st), 0);
	assert_int_equal(st.n, 3);
	assert_int_equal(st.truncated, 0);
	for (uint32_t i = 0; i < 3; i++) {
		assert_int_equal(st.f[i].code, 0x1000 * (i + 1));
		assert_int_equal(st.f[i].instr, 0x1000 * (i + 1) + 0x10);
	}
	assert_int_equal(st.entry, entry);
}

static void test_python_311(void **state)
{
	struct bt *t = *state;
	struct py_offsets o = off311;

	fake_build(&fake, &o, false, true);
	o.runtime = (uintptr_t)fake.runtime;
	assert_int_equal(bpfobj__set_py_proc(t->obj, getpid(), &o), 0);
	check_py(t, one_launch(t, chain_outer), 1u << 1);
	/* Again, from the thread's cached state: the same stack, the same key. */
	check_py(t, one_launch(t, chain_outer), 1u << 1);
	bpfobj__remove_py_proc(t->obj, getpid());
	assert_false(one_launch(t, chain_outer)->flags & LAUNCH_F_PYSTACK);
}

static void test_python_312_shim(void **state)
{
	struct bt *t = *state;
	struct py_offsets o = off312;

	fake_build(&fake, &o, true, false);
	o.runtime = (uintptr_t)fake.runtime;
	assert_int_equal(bpfobj__set_py_proc(t->obj, getpid(), &o), 0);
	/* The shim is skipped; the frame above it began its evaluation. */
	check_py(t, one_launch(t, chain_outer), 1u << 1);
	bpfobj__remove_py_proc(t->obj, getpid());
}

/*
 * A frame whose head ends right before an unmapped page: the one read of
 * the whole head fails, and its fields are read one by one.
 */
static void test_python_frame_at_mapping_end(void **state)
{
	struct bt *t = *state;
	struct py_offsets o = off311;
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *m = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t *last;

	assert_true(m != MAP_FAILED);
	assert_int_equal(mprotect(m + page, page, PROT_NONE), 0);
	fake_build(&fake, &o, false, true);
	/* The third frame moves to the page's last 72 bytes (3.11's head is 70). */
	last = m + page - 72;
	memcpy(last, fake.frames[2], 72);
	put64(fake.frames[1], o.frame_back, (uintptr_t)last);
	o.runtime = (uintptr_t)fake.runtime;
	assert_int_equal(bpfobj__set_py_proc(t->obj, getpid(), &o), 0);
	check_py(t, one_launch(t, chain_outer), 1u << 1);
	bpfobj__remove_py_proc(t->obj, getpid());
	munmap(m, 2 * page);
}

/* A thread that is in no interpreter's list has no Python frames: none are made up. */
static void test_python_not_this_thread(void **state)
{
	struct bt *t = *state;
	struct py_offsets o = off311;

	fake_build(&fake, &o, false, false);
	put64(fake.mine, o.tstate_native_tid, 2);
	o.runtime = (uintptr_t)fake.runtime;
	assert_int_equal(bpfobj__set_py_proc(t->obj, getpid(), &o), 0);
	assert_false(one_launch(t, chain_outer)->flags & (LAUNCH_F_PYSTACK | LAUNCH_F_PYLOST));
	bpfobj__remove_py_proc(t->obj, getpid());
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_native_chain),
		cmocka_unit_test(test_native_truncated),
		cmocka_unit_test(test_python_311),
		cmocka_unit_test(test_python_312_shim),
		cmocka_unit_test(test_python_frame_at_mapping_end),
		cmocka_unit_test(test_python_not_this_thread),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
