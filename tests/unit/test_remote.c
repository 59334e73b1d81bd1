// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/core/proc/remote.c (symbols of an object file, their
 * addresses in a process through its maps, reads of its memory) on this very
 * process and on a child running another program; and inject_has_agent.
 */
#include <elf.h>
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "core/gpu/inject.h"
#include "core/proc/remote.h"

/* Looked up by name in this test's own .symtab. */
volatile uint64_t remote_test_value = 0x1122334455667788ull;

static void test_data_symbol_of_self(void **state)
{
	uint64_t value = 0, addr = 0;
	int type = -1;

	(void)state;
	assert_int_equal(remote_elf_symbol("/proc/self/exe", "remote_test_value", &value, &type), 0);
	assert_int_equal(type, STT_OBJECT);
	assert_int_equal(remote_symbol_addr(getpid(), "/proc/self/exe", value, &addr), 0);
	assert_ptr_equal((void *)(uintptr_t)addr, (void *)&remote_test_value);
}

static void test_function_symbol_of_self(void **state)
{
	uint64_t value = 0, addr = 0;
	int type = -1;

	(void)state;
	assert_int_equal(remote_elf_symbol("/proc/self/exe", "test_data_symbol_of_self", &value,
					   &type), 0);
	assert_int_equal(type, STT_FUNC);
	assert_int_equal(remote_symbol_addr(getpid(), "/proc/self/exe", value, &addr), 0);
	assert_ptr_equal((void *)(uintptr_t)addr, (void *)test_data_symbol_of_self);
}

static void test_read_self(void **state)
{
	uint64_t got = 0;

	(void)state;
	assert_int_equal(remote_read(getpid(), (uintptr_t)&remote_test_value, &got, sizeof(got)), 0);
	assert_true(got == 0x1122334455667788ull);
}

static void test_read_unmapped_fails(void **state)
{
	uint64_t got;

	(void)state;
	assert_true(remote_read(getpid(), 8, &got, sizeof(got)) < 0);
}

static void test_missing_symbol(void **state)
{
	uint64_t value;
	int type;

	(void)state;
	assert_int_equal(remote_elf_symbol("/proc/self/exe", "no_such_symbol_here", &value, &type),
			 -ENOENT);
}

static void test_not_elf(void **state)
{
	char path[] = "/tmp/cuprobe-test-remote.XXXXXX";
	int fd = mkstemp(path);
	uint64_t value;
	int type;

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "not an ELF file\n", 16), 16);
	close(fd);
	assert_int_equal(remote_elf_symbol(path, "main", &value, &type), -ENOEXEC);
	assert_int_equal(remote_elf_symbol("/no/such/file", "main", &value, &type), -ENOENT);
	unlink(path);
}

/* A file the process does not map: -ENOENT, never an address. */
static void test_symbol_not_mapped_in_other_process(void **state)
{
	uint64_t value, addr = 0;
	int type, status;
	pid_t pid;

	(void)state;
	assert_int_equal(remote_elf_symbol("/proc/self/exe", "remote_test_value", &value, &type), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		execl("/bin/sleep", "sleep", "10", (char *)NULL);
		_exit(127);
	}
	usleep(100000);
	assert_int_equal(remote_symbol_addr(pid, "/proc/self/exe", value, &addr), -ENOENT);
	assert_int_equal(inject_has_agent(pid, NULL), 0);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}

static void test_no_agent_in_self(void **state)
{
	(void)state;
	assert_int_equal(inject_has_agent(getpid(), "/no/such/libcuprobe-agent.so"), 0);
	assert_true(inject_has_agent(999999999, NULL) < 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_data_symbol_of_self),
		cmocka_unit_test(test_function_symbol_of_self),
		cmocka_unit_test(test_read_self),
		cmocka_unit_test(test_read_unmapped_fails),
		cmocka_unit_test(test_missing_symbol),
		cmocka_unit_test(test_not_elf),
		cmocka_unit_test(test_symbol_not_mapped_in_other_process),
		cmocka_unit_test(test_no_agent_in_self),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
