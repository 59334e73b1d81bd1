// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A stand-in libcuda.so.1 for the kernel-name tests (the `names` workload):
 * the calls that load modules and libraries and hand out kernel handles, and
 * the two launch calls, with cuda.h's signatures. The toolkit's stub answers
 * every call with CUDA_ERROR_STUB_LIBRARY and writes no handle, so a
 * profiler's return probes would never see one; this library succeeds and
 * writes a fresh handle through the first argument, as the driver does.
 *
 * What a real driver does differently: it parses the image or file, fails
 * for a name the module lacks (as here only for names starting "missing"),
 * returns the same CUfunction each time a module is asked for the same name,
 * and is mostly called by the runtime and libraries through pointers from
 * cuGetProcAddress (here those are the exported functions themselves).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#define EXPORT __attribute__((visibility("default")))

/* What the handles point to: never read by the caller, only distinct. */
struct fake_object {
	char what[16];
	const void *from;
};

static void *fake_new(const char *what, const void *from)
{
	struct fake_object *o = calloc(1, sizeof(*o));

	if (o) {
		strncpy(o->what, what, sizeof(o->what) - 1);
		o->from = from;
	}
	return o;
}

/* cuprobe recognises a driver by cuInit, as every real one has it. */
EXPORT CUresult cuInit(unsigned int flags)
{
	(void)flags;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuModuleLoad(CUmodule *module, const char *fname)
{
	*module = fake_new("module", fname);
	return *module ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
	*module = fake_new("module", image);
	return *module ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
				   CUjit_option *options, void **optionValues)
{
	(void)numOptions, (void)options, (void)optionValues;
	return cuModuleLoadData(module, image);
}

EXPORT CUresult cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin)
{
	return cuModuleLoadData(module, fatCubin);
}

/*
 * A name the module does not have fails, as in the driver. The handle slot
 * is scribbled on all the same: a profiler must look at the result first.
 */
static CUresult get_by_name(void **out, const void *from, const char *name)
{
	if (!strncmp(name, "missing", 7)) {
		*out = (void *)(uintptr_t)0xbad0000;
		return CUDA_ERROR_NOT_FOUND;
	}
	*out = fake_new("kernel", from);
	return *out ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
	return get_by_name((void **)hfunc, hmod, name);
}

EXPORT CUresult cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions,
				  void **jitOptionsValues, unsigned int numJitOptions,
				  CUlibraryOption *libraryOptions, void **libraryOptionValues,
				  unsigned int numLibraryOptions)
{
	(void)jitOptions, (void)jitOptionsValues, (void)numJitOptions;
	(void)libraryOptions, (void)libraryOptionValues, (void)numLibraryOptions;
	*library = fake_new("library", code);
	return *library ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult cuLibraryLoadFromFile(CUlibrary *library, const char *fileName,
				      CUjit_option *jitOptions, void **jitOptionsValues,
				      unsigned int numJitOptions, CUlibraryOption *libraryOptions,
				      void **libraryOptionValues, unsigned int numLibraryOptions)
{
	return cuLibraryLoadData(library, fileName, jitOptions, jitOptionsValues, numJitOptions,
				 libraryOptions, libraryOptionValues, numLibraryOptions);
}

EXPORT CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
	return get_by_name((void **)pKernel, library, name);
}

EXPORT CUresult cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
	*pFunc = fake_new("function", kernel);
	return *pFunc ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
			       unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
			       unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
			       void **kernelParams, void **extra)
{
	(void)gridDimX, (void)gridDimY, (void)gridDimZ, (void)blockDimX, (void)blockDimY;
	(void)blockDimZ, (void)sharedMemBytes, (void)hStream, (void)kernelParams, (void)extra;
	return f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
				 void **extra)
{
	(void)config, (void)kernelParams, (void)extra;
	return f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* The driver's own lookup: here, the exported functions themselves. */
EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
				 cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus)
{
	static const struct {
		const char *name;
		void *fn;
	} table[] = {
		{ "cuModuleGetFunction", (void *)cuModuleGetFunction },
		{ "cuLibraryGetKernel", (void *)cuLibraryGetKernel },
		{ "cuKernelGetFunction", (void *)cuKernelGetFunction },
		{ "cuLaunchKernel", (void *)cuLaunchKernel },
	};

	(void)cudaVersion, (void)flags;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (!strcmp(symbol, table[i].name)) {
			*pfn = table[i].fn;
			if (symbolStatus)
				*symbolStatus = CU_GET_PROC_ADDRESS_SUCCESS;
			return CUDA_SUCCESS;
		}
	}
	*pfn = NULL;
	if (symbolStatus)
		*symbolStatus = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	return CUDA_ERROR_NOT_FOUND;
}
