// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The handle probes (bpf/names.bpf.c), loaded from cuprobe's own object and
 * attached with the loader's attach code to local stand-ins with the exact
 * C signatures of the CUDA calls that make handles: each name_event is
 * checked against what the call was given and what it wrote. Needs root.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <cuda.h>
#include <cuda_runtime_api.h>
#include "bpf_test.h"
#include "schedule.h"

/* ---- stand-ins: each writes its handle, as the driver does --------------- */

static volatile uint64_t next_handle = 0x7f0000001000ull;

/* A name starting "missing" fails, and leaves a value in the slot all the same. */
static CUresult by_name(void **out, const char *name)
{
	if (!strncmp(name, "missing", 7)) {
		*out = (void *)0xbad0000;
		return CUDA_ERROR_NOT_FOUND;
	}
	*out = (void *)(uintptr_t)(next_handle += 0x10);
	return CUDA_SUCCESS;
}

STAND_IN CUresult sim_cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
	STAND_IN_FRAME();
	(void)hmod;
	return by_name((void **)hfunc, name);
}

/* Calls another probed function inside: each return must find its own entry. */
STAND_IN CUresult sim_cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
	CUfunction inner;

	STAND_IN_FRAME();
	if (sim_cuModuleGetFunction(&inner, (CUmodule)library, "inner_kernel") != CUDA_SUCCESS)
		return CUDA_ERROR_UNKNOWN;
	return by_name((void **)pKernel, name);
}

STAND_IN CUresult sim_cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
	STAND_IN_FRAME();
	(void)kernel;
	*pFunc = (CUfunction)(uintptr_t)(next_handle += 0x10);
	return CUDA_SUCCESS;
}

STAND_IN cudaError_t sim_cudaGetFuncBySymbol(cudaFunction_t *functionPtr, const void *symbolPtr)
{
	STAND_IN_FRAME();
	(void)symbolPtr;
	*functionPtr = (cudaFunction_t)(uintptr_t)(next_handle += 0x10);
	return cudaSuccess;
}

STAND_IN CUresult sim_cuModuleLoad(CUmodule *module, const char *fname)
{
	STAND_IN_FRAME();
	(void)fname;
	*module = (CUmodule)(uintptr_t)(next_handle += 0x10);
	return CUDA_SUCCESS;
}

STAND_IN CUresult sim_cuModuleLoadData(CUmodule *module, const void *image)
{
	STAND_IN_FRAME();
	(void)image;
	*module = (CUmodule)(uintptr_t)(next_handle += 0x10);
	return CUDA_SUCCESS;
}

static const char *const names[] = {
	"sim_cuModuleGetFunction", "sim_cuLibraryGetKernel", "sim_cuKernelGetFunction",
	"sim_cudaGetFuncBySymbol", "sim_cuModuleLoad",	      "sim_cuModuleLoadData",
};
static const uint64_t cookies[] = {
	NAME_cuModuleGetFunction, NAME_cuLibraryGetKernel, NAME_cuKernelGetFunction,
	NAME_cudaGetFuncBySymbol, NAME_cuModuleLoad,	   NAME_cuModuleLoadData,
};
#define NFUNCS (sizeof(names) / sizeof(names[0]))

static int setup(void **state)
{
	struct bt *t = bt__new(1 << 20);

	if (!t)
		return -1;
	if (bt__attach(t, PROG_NAME_RETURN, getpid(), names, cookies, NFUNCS) ||
	    bt__attach(t, PROG_NAME_ENTRY, getpid(), names, cookies, NFUNCS)) {
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

static void assert_name(const struct name_event *e, enum name_api api, uint64_t handle,
			uint64_t ref, const char *str, uint32_t flags)
{
	assert_int_equal(e->type, REC_NAME);
	assert_int_equal(e->api, api);
	assert_int_equal(e->tgid, getpid());
	assert_int_equal(e->handle, handle);
	assert_int_equal(e->ref, ref);
	assert_int_equal(e->flags, flags);
	if (str)
		assert_string_equal(e->str, str);
}

/* Every shape of call: the handle written, its second argument, the name or path. */
static void test_each_call(void **state)
{
	struct bt *t = *state;
	CUfunction f, g, fs;
	CUmodule mod, mod2;
	CUkernel k;
	static const char image[] = "an image", path[] = "/opt/k/gemm.cubin";

	assert_int_equal(bt__add_self(t, NULL, pack_state(0, 0, PHASE_NONE)), 0);
	assert_int_equal(sim_cuModuleLoad(&mod, path), CUDA_SUCCESS);
	assert_int_equal(sim_cuModuleLoadData(&mod2, image), CUDA_SUCCESS);
	assert_int_equal(sim_cuModuleGetFunction(&f, mod, "_Z4gemmPf"), CUDA_SUCCESS);
	assert_int_equal(sim_cuLibraryGetKernel(&k, (CUlibrary)mod2, "lib_kernel"), CUDA_SUCCESS);
	assert_int_equal(sim_cuKernelGetFunction(&g, k), CUDA_SUCCESS);
	assert_int_equal(sim_cudaGetFuncBySymbol(&fs, (const void *)test_each_call), cudaSuccess);
	bt__drain(t);
	assert_int_equal(t->n_names, 7);
	assert_name(&t->names[0], NAME_cuModuleLoad, (uintptr_t)mod, (uintptr_t)path, path,
		    NAME_F_STR);
	assert_name(&t->names[1], NAME_cuModuleLoadData, (uintptr_t)mod2, (uintptr_t)image, "", 0);
	assert_name(&t->names[2], NAME_cuModuleGetFunction, (uintptr_t)f, (uintptr_t)mod,
		    "_Z4gemmPf", NAME_F_STR);
	/* The call nested in cuLibraryGetKernel returns first, and is its own record. */
	assert_name(&t->names[3], NAME_cuModuleGetFunction, t->names[3].handle, (uintptr_t)mod2,
		    "inner_kernel", NAME_F_STR);
	assert_int_not_equal(t->names[3].handle, (uintptr_t)k);
	assert_name(&t->names[4], NAME_cuLibraryGetKernel, (uintptr_t)k, (uintptr_t)mod2,
		    "lib_kernel", NAME_F_STR);
	assert_name(&t->names[5], NAME_cuKernelGetFunction, (uintptr_t)g, (uintptr_t)k, "", 0);
	assert_name(&t->names[6], NAME_cudaGetFuncBySymbol, (uintptr_t)fs,
		    (uintptr_t)test_each_call, "", 0);
}

/* A failed call wrote something, but no handle: nothing is said. */
static void test_failed_call(void **state)
{
	struct bt *t = *state;
	CUfunction f = NULL;

	assert_int_equal(bt__add_self(t, NULL, pack_state(0, 0, PHASE_NONE)), 0);
	assert_int_equal(sim_cuModuleGetFunction(&f, NULL, "missing_kernel"), CUDA_ERROR_NOT_FOUND);
	assert_ptr_equal(f, (void *)0xbad0000);
	bt__drain(t);
	assert_int_equal(t->n_names, 0);
	assert_int_equal(t->n_other, 0);
}

/* Names of 255 bytes fit; longer ones are cut there and flagged. */
static void test_long_names(void **state)
{
	struct bt *t = *state;
	char fits[256], longer[400];
	uint64_t lost, truncated;
	CUfunction f;

	memset(fits, 'a', 255);
	fits[255] = 0;
	memset(longer, 'b', 399);
	longer[399] = 0;
	assert_int_equal(bt__add_self(t, NULL, pack_state(0, 0, PHASE_NONE)), 0);
	assert_int_equal(sim_cuModuleGetFunction(&f, NULL, fits), CUDA_SUCCESS);
	assert_int_equal(sim_cuModuleGetFunction(&f, NULL, longer), CUDA_SUCCESS);
	bt__drain(t);
	assert_int_equal(t->n_names, 2);
	assert_string_equal(t->names[0].str, fits);
	assert_int_equal(t->names[0].flags, NAME_F_STR);
	longer[255] = 0;
	assert_string_equal(t->names[1].str, longer);
	assert_int_equal(t->names[1].flags, NAME_F_STR | NAME_F_TRUNCATED);
	bpfobj__name_counters(t->obj, &lost, &truncated);
	assert_int_equal(lost, 0);
	assert_int_equal(truncated, 1);
}

/* A process cuprobe does not record (no proc_state) says nothing. */
static void test_not_a_target(void **state)
{
	struct bt *t = *state;
	CUfunction f;

	assert_int_equal(sim_cuModuleGetFunction(&f, NULL, "k"), CUDA_SUCCESS);
	bt__drain(t);
	assert_int_equal(t->n_names, 0);
}

/* A record that finds the ring full is counted, and the ring takes them again once read. */
static void test_lost_when_ring_full(void **state)
{
	const unsigned int burst = 40, fits = 4096 / (sizeof(struct name_event) + 8);
	struct bt *t = bt__new(4096);
	uint64_t lost, truncated;
	CUfunction f;

	(void)state;
	assert_non_null(t);
	assert_int_equal(bt__attach(t, PROG_NAME_RETURN, getpid(), names, cookies, NFUNCS), 0);
	assert_int_equal(bt__attach(t, PROG_NAME_ENTRY, getpid(), names, cookies, NFUNCS), 0);
	assert_int_equal(bt__add_self(t, NULL, pack_state(0, 0, PHASE_NONE)), 0);
	for (unsigned int i = 0; i < burst; i++)
		assert_int_equal(sim_cuModuleGetFunction(&f, NULL, "k"), CUDA_SUCCESS);
	bt__drain(t);
	bpfobj__name_counters(t->obj, &lost, &truncated);
	assert_int_equal(t->n_names, fits);
	assert_int_equal(lost, burst - fits);
	assert_int_equal(sim_cuModuleGetFunction(&f, NULL, "k"), CUDA_SUCCESS);
	bt__drain(t);
	assert_int_equal(t->n_names, fits + 1);
	bt__free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_each_call, setup, teardown),
		cmocka_unit_test_setup_teardown(test_failed_call, setup, teardown),
		cmocka_unit_test_setup_teardown(test_long_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_a_target, setup, teardown),
		cmocka_unit_test(test_lost_when_ring_full),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
