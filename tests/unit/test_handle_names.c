// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/core/proc/handle_names.c: the per-process table from kernel
 * handle to (name, module) that the handle probes' records fill. Records are
 * made here as BPF makes them; host stubs are functions of this binary.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "core/proc/handle_names.h"
#include "core/proc/symbols.h"

static volatile int sink;

/* A host stub, as cudaGetFuncBySymbol is given one. */
__attribute__((noinline, used)) int handle_names_test_stub(int x)
{
	for (int i = 0; i < x; i++)
		sink += i;
	return sink;
}

struct fixture {
	struct handle_names *h;
	struct symbols *syms;
	pid_t pid;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	f->h = handle_names__new();
	f->syms = symbols__new();
	f->pid = getpid();
	*state = f;
	return f->h && f->syms ? 0 : -1;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	handle_names__free(f->h);
	symbols__free(f->syms);
	free(f);
	return 0;
}

static struct name_event rec(pid_t pid, enum name_api api, uint64_t handle, uint64_t ref,
			     const char *str)
{
	struct name_event e = { .type = REC_NAME, .api = api, .tgid = pid, .handle = handle,
				.ref = ref };

	if (str) {
		snprintf(e.str, sizeof(e.str), "%s", str);
		e.flags = NAME_F_STR;
	}
	return e;
}

static void add(struct fixture *f, struct name_event e)
{
	assert_int_equal(handle_names__add(f->h, f->syms, &e), 0);
}

static const char *find(struct fixture *f, uint64_t handle, const char **module, bool *unnamed)
{
	return handle_names__find(f->h, f->pid, handle, module, unnamed);
}

/* Names are demangled as runtime launches' are; the module is the load's path. */
static void test_by_name_and_module(void **state)
{
	struct fixture *f = *state;
	const char *module = "?";
	bool unnamed = true;

	add(f, rec(f->pid, NAME_cuModuleLoad, 0x100, 0, "/opt/k/gemm.cubin"));
	add(f, rec(f->pid, NAME_cuModuleGetFunction, 0x200, 0x100, "_Z4gemmPfi"));
	assert_string_equal(find(f, 0x200, &module, &unnamed), "gemm(float*, int)");
	assert_string_equal(module, "/opt/k/gemm.cubin");
	assert_false(unnamed);
	/* A kernel of a module whose load was not seen: named, module unknown. */
	add(f, rec(f->pid, NAME_cuLibraryGetKernel, 0x300, 0x999, "plain_c_kernel"));
	assert_string_equal(find(f, 0x300, &module, NULL), "plain_c_kernel");
	assert_null(module);
	/* Not a handle any record made, and another process's table. */
	assert_null(find(f, 0x400, NULL, NULL));
	assert_null(handle_names__find(f->h, f->pid + 1, 0x200, NULL, NULL));
}

/* A module loaded from memory no file maps is labelled by its address. */
static void test_module_in_memory(void **state)
{
	struct fixture *f = *state;
	char *image = malloc(64);
	char want[64];
	const char *module;

	assert_non_null(image);
	add(f, rec(f->pid, NAME_cuModuleLoadData, 0x100, (uintptr_t)image, NULL));
	add(f, rec(f->pid, NAME_cuModuleGetFunction, 0x200, 0x100, "triton_poi_fused_add_0"));
	assert_string_equal(find(f, 0x200, &module, NULL), "triton_poi_fused_add_0");
	snprintf(want, sizeof(want), "memory %p", (void *)image);
	assert_string_equal(module, want);
	free(image);
}

/* cuKernelGetFunction: the kernel's name under the function's handle, if the kernel was seen. */
static void test_kernel_get_function(void **state)
{
	struct fixture *f = *state;

	add(f, rec(f->pid, NAME_cuLibraryGetKernel, 0x300, 0x1, "_Z3libv"));
	add(f, rec(f->pid, NAME_cuKernelGetFunction, 0x310, 0x300, NULL));
	assert_string_equal(find(f, 0x310, NULL, NULL), "lib()");
	/* A kernel made before cuprobe attached: its function stays unnamed. */
	add(f, rec(f->pid, NAME_cuKernelGetFunction, 0x320, 0x777, NULL));
	assert_null(find(f, 0x320, NULL, NULL));
}

/* By host stub: the stub's symbol, as a runtime launch of it is named. */
static void test_by_stub(void **state)
{
	struct fixture *f = *state;
	bool unnamed = true;

	add(f, rec(f->pid, NAME_cudaGetFuncBySymbol, 0x500, (uintptr_t)handle_names_test_stub,
		   NULL));
	assert_string_equal(find(f, 0x500, NULL, &unnamed), "handle_names_test_stub");
	assert_false(unnamed);
	/* A stub no symbol covers: the fallback name, counted unnamed as a runtime launch is. */
	add(f, rec(f->pid, NAME_cudaGetKernel, 0x510, 0x10, NULL));
	assert_string_equal(find(f, 0x510, NULL, &unnamed), "0x10");
	assert_true(unnamed);
}

/*
 * A handle made again for another kernel takes the new name; the old name,
 * still held by a launch waiting for its GPU records, stays as it was.
 */
static void test_handle_made_again(void **state)
{
	struct fixture *f = *state;
	const char *old;

	add(f, rec(f->pid, NAME_cuModuleGetFunction, 0x200, 0x1, "first_kernel"));
	old = find(f, 0x200, NULL, NULL);
	add(f, rec(f->pid, NAME_cuModuleGetFunction, 0x200, 0x1, "second_kernel"));
	assert_string_equal(find(f, 0x200, NULL, NULL), "second_kernel");
	assert_string_equal(old, "first_kernel");
}

/* A name BPF could not read names nothing: never a guess. */
static void test_unreadable_name(void **state)
{
	struct fixture *f = *state;

	add(f, rec(f->pid, NAME_cuModuleGetFunction, 0x200, 0x1, NULL));
	assert_null(find(f, 0x200, NULL, NULL));
	add(f, rec(f->pid, NAME__COUNT + 3, 0x200, 0x1, "x"));
	assert_null(find(f, 0x200, NULL, NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_by_name_and_module, setup, teardown),
		cmocka_unit_test_setup_teardown(test_module_in_memory, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kernel_get_function, setup, teardown),
		cmocka_unit_test_setup_teardown(test_by_stub, setup, teardown),
		cmocka_unit_test_setup_teardown(test_handle_made_again, setup, teardown),
		cmocka_unit_test_setup_teardown(test_unreadable_name, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
