// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libfakert_real.so: a stand-in for libcudart's cudaLaunchKernel that reaches
 * the real driver the way libcudart does: it dlopens libcuda.so.1 (the real
 * one, through LD_LIBRARY_PATH), asks cuGetProcAddress_v2 for cuLaunchKernel
 * and launches through that pointer, with a CUfunction handle that differs
 * from the host-stub pointer and the grid, block, shared memory and stream
 * unchanged. One user launch thus enters the probed runtime function and the
 * probed driver export inside it; cuprobe must count it once. The real
 * libcudart cannot be used for this here: without a device it fails before
 * it launches (tests/workloads/fakert.c does the same on the stub driver).
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

/* Real handles are opaque driver pointers; this one is merely distinct. */
#define FAKE_FUNCTION_BIT (1ULL << 62)

typedef CUresult (*proc_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
			      unsigned, unsigned, CUstream, void **, void **);

static launch_fn driver_launch(void)
{
	static launch_fn launch;
	CUdriverProcAddressQueryResult st;
	void *lib, *p = NULL;
	proc_fn proc;

	if (launch)
		return launch;
	lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	proc = lib ? (proc_fn)dlsym(lib, "cuGetProcAddress_v2") : NULL;
	if (!proc || proc("cuLaunchKernel", &p, 12000, CU_GET_PROC_ADDRESS_DEFAULT, &st) ||
	    st != CU_GET_PROC_ADDRESS_SUCCESS || !p) {
		fprintf(stderr, "fakert_real: no cuLaunchKernel from the driver's cuGetProcAddress_v2\n");
		return NULL;
	}
	launch = (launch_fn)p;
	return launch;
}

cudaError_t CUDARTAPI cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
				       size_t shmem, cudaStream_t stream)
{
	CUfunction f = (CUfunction)((uintptr_t)func | FAKE_FUNCTION_BIT);
	launch_fn launch = driver_launch();

	if (!launch)
		return cudaErrorInitializationError;
	return launch(f, grid.x, grid.y, grid.z, block.x, block.y, block.z, (unsigned int)shmem,
		      (CUstream)stream, args, NULL) == CUDA_SUCCESS ? cudaSuccess
								    : cudaErrorLaunchFailure;
}

/* cuprobe takes an object for a CUDA runtime only if it has cudaMalloc too. */
cudaError_t CUDARTAPI cudaMalloc(void **ptr, size_t size)
{
	(void)size;
	*ptr = NULL;
	return cudaErrorMemoryAllocation;
}
