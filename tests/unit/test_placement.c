// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/core/probes/placement.c: where a probe goes, from a function's
 * first bytes. The kernel emulates nops (not the 5-byte nopl), relative
 * jmp/call/jcc and push of a register; it single-steps the rest. Only cmp,
 * test, nops and endbr64 may run ahead of a moved probe.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "core/probes/placement.h"

static struct placement decide(const uint8_t *code, size_t len)
{
	struct placement p;

	assert_int_equal(placement_decide(code, len, false, &p), 0);
	return p;
}

#define DECIDE(...)                                                                                \
	({                                                                                         \
		static const uint8_t c_[] = { __VA_ARGS__ };                                       \
		decide(c_, sizeof(c_));                                                            \
	})

/* libcuda 535's cuLaunchKernel: cmpl $0x321cba00,d(%rip); je; jmp *d(%rip). */
#define DRIVER_THUNK 0x81, 0x3d, 0x3e, 0x93, 0x8d, 0x01, 0x00, 0xba, 0x1c, 0x32, 0x74, 0x0c, \
		     0xff, 0x25, 0xc6, 0x18, 0x7e, 0x01

static void driver_thunk_moves_to_the_je(void **state)
{
	struct placement p = DECIDE(DRIVER_THUNK);
	char line[256];

	(void)state;
	assert_int_equal(p.shift, 10);
	assert_false(p.stepped);
	assert_string_equal(p.insn, "je");
	assert_string_equal(p.entry, "cmpl (rip-relative)");
	placement_describe("cuLaunchKernel", &p, line, sizeof(line));
	assert_string_equal(line, "cuLaunchKernel: probe at +10 (je), the entry's cmpl "
				  "(rip-relative) would be single-stepped");
}

/*
 * torch 2.15's record_function_exit_new: mov (%rdi),%rdi; add $0x10,%rdi; jmp
 * at::RecordFunction::end@plt. The mov writes an argument: stepped at the entry
 * for a program that reads the call, at the emulated jmp for one that reads nothing.
 */
static void blind_probe_passes_writers_to_the_jmp(void **state)
{
	static const uint8_t exit_new[] = { 0x48, 0x8b, 0x3f, 0x48, 0x83, 0xc7, 0x10,
					    0xe9, 0x10, 0x20, 0x30, 0x00 };
	static const uint8_t call_first[] = { 0x48, 0x8b, 0x3f, 0xe8, 0x10, 0x20, 0x30, 0x00 };
	struct placement p;

	(void)state;
	assert_int_equal(placement_decide(exit_new, sizeof(exit_new), false, &p), 0);
	assert_int_equal(p.shift, 0);
	assert_true(p.stepped);
	assert_int_equal(placement_decide(exit_new, sizeof(exit_new), true, &p), 0);
	assert_int_equal(p.shift, 7);
	assert_false(p.stepped);
	assert_string_equal(p.insn, "jmp");
	/* A call is emulated too, and the first such instruction takes the probe. */
	assert_int_equal(placement_decide(call_first, sizeof(call_first), true, &p), 0);
	assert_int_equal(p.shift, 3);
	assert_string_equal(p.insn, "callq");
}

static void push_first_stays(void **state)
{
	struct placement p = DECIDE(0x55, 0x48, 0x89, 0xe5);	/* push %rbp; mov %rsp,%rbp */

	(void)state;
	assert_int_equal(p.shift, 0);
	assert_false(p.stepped);
	p = DECIDE(0x41, 0x54, 0x55);	/* push %r12 */
	assert_int_equal(p.shift, 0);
	assert_false(p.stepped);
}

/* A write to an argument register, the stack pointer or memory is never passed. */
static void writers_keep_the_entry_stepped(void **state)
{
	struct placement p = DECIDE(0x48, 0x89, 0xfb, 0x55);	/* mov %rdi,%rbx; push %rbp */

	(void)state;
	assert_int_equal(p.shift, 0);
	assert_true(p.stepped);
	assert_string_equal(p.entry, "movq");
	p = DECIDE(0x48, 0x83, 0xec, 0x08, 0x55);	/* sub $8,%rsp; push %rbp */
	assert_int_equal(p.shift, 0);
	assert_true(p.stepped);
	p = DECIDE(0x89, 0x3d, 0x00, 0x01, 0x00, 0x00, 0x74, 0x00);	/* mov %edi,d(%rip); je */
	assert_int_equal(p.shift, 0);
	assert_true(p.stepped);
	/* cmp; mov %rsi,%rdi; je: the mov stops the walk even though a je follows. */
	p = DECIDE(0x48, 0x39, 0xf7, 0x48, 0x89, 0xf7, 0x74, 0x00);
	assert_int_equal(p.shift, 0);
	assert_true(p.stepped);
}

/* endbr64 is single-stepped by this kernel (measured), and harmless: it is passed. */
static void endbr64_is_passed(void **state)
{
	struct placement p = DECIDE(0xf3, 0x0f, 0x1e, 0xfa, 0x55);	/* endbr64; push %rbp */

	(void)state;
	assert_int_equal(p.shift, 4);
	assert_false(p.stepped);
	assert_string_equal(p.entry, "endbr64");
	p = DECIDE(0xf3, 0x0f, 0x1e, 0xfa, 0x48, 0x83, 0xec, 0x08);	/* endbr64; sub $8,%rsp */
	assert_int_equal(p.shift, 0);
	assert_true(p.stepped);
}

static void test_and_nops_are_passed(void **state)
{
	struct placement p = DECIDE(0x85, 0xc0, 0x74, 0x02);	/* test %eax,%eax; je */

	(void)state;
	assert_int_equal(p.shift, 2);
	/* The 5-byte nopl is not emulated outside a USDT site here; the 1-byte nop is. */
	p = DECIDE(0x0f, 0x1f, 0x44, 0x00, 0x00, 0x55);
	assert_int_equal(p.shift, 5);
	p = DECIDE(0x90, 0x48, 0x83, 0xec, 0x08);
	assert_int_equal(p.shift, 0);
	assert_false(p.stepped);
}

static void ret_and_garbage_stay(void **state)
{
	struct placement p = DECIDE(0xc3);	/* _dl_debug_state */

	(void)state;
	assert_int_equal(p.shift, 0);
	assert_true(p.stepped);
	p = DECIDE(0x06);	/* invalid in 64-bit mode */
	assert_int_equal(p.shift, 0);
	assert_false(p.decoded);
	/* A walk that runs out of bytes keeps the entry. */
	p = DECIDE(0x85, 0xc0, 0x85, 0xc0);
	assert_int_equal(p.shift, 0);
	assert_true(p.stepped);
}

/* placement_adjust reads each function from the file, moves it, skips absent ones. */
static void adjust_moves_offsets_in_a_file(void **state)
{
	static const uint8_t thunk[] = { DRIVER_THUNK };
	static const uint8_t push[] = { 0x55, 0xc3 };
	char path[] = "/tmp/test_placement.XXXXXX";
	const char *names[] = { "thunk", "push", "absent", NULL };
	uint64_t offs[] = { 0x100, 0x200, 0, 0x100 };
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	unlink(path);
	assert_int_equal(pwrite(fd, thunk, sizeof(thunk), 0x100), sizeof(thunk));
	assert_int_equal(pwrite(fd, push, sizeof(push), 0x200), sizeof(push));
	assert_int_equal(placement_adjust(fd, "test", names, 4, offs), 0);
	assert_int_equal(offs[0], 0x10a);
	assert_int_equal(offs[1], 0x200);
	assert_int_equal(offs[2], 0);
	assert_int_equal(offs[3], 0x100);	/* no name: not one to place */
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(driver_thunk_moves_to_the_je),
		cmocka_unit_test(blind_probe_passes_writers_to_the_jmp),
		cmocka_unit_test(push_first_stays),
		cmocka_unit_test(writers_keep_the_entry_stepped),
		cmocka_unit_test(endbr64_is_passed),
		cmocka_unit_test(test_and_nops_are_passed),
		cmocka_unit_test(ret_and_garbage_stay),
		cmocka_unit_test(adjust_moves_offsets_in_a_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
