// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * librealrt.so: a stand-in runtime on NVIDIA's real driver, for the
 * real_nested workload and the nested benchmark (bench/real_loop). It takes the driver's cuLaunchKernel the way libcudart does, from
 * cuGetProcAddress_v2 on the driver dlopened by path (REAL_LIBCUDA), and its
 * cudaLaunchKernel forwards each launch there: one user launch enters a
 * runtime entry (a push, emulated) and the driver's (its thunk). cudaMalloc
 * marks it as a runtime for cuprobe, as in every real one.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cuda.h>
#include <cuda_runtime_api.h>

static CUresult (*drv_launch)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
			      unsigned, unsigned, CUstream, void **, void **);

__attribute__((constructor)) static void real_rt_init(void)
{
	CUresult (*get)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
	CUdriverProcAddressQueryResult q;
	const char *path = getenv("REAL_LIBCUDA");
	void *h = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;

	get = h ? (__typeof__(get))dlsym(h, "cuGetProcAddress_v2") : NULL;
	if (!get || get("cuLaunchKernel", (void **)&drv_launch, 12000, CU_GET_PROC_ADDRESS_DEFAULT,
			&q) != CUDA_SUCCESS || !drv_launch) {
		fprintf(stderr, "librealrt: no cuLaunchKernel from %s (set REAL_LIBCUDA)\n",
			path ? path : "(unset)");
		exit(1);
	}
}

cudaError_t CUDARTAPI cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
				       size_t shmem, cudaStream_t stream)
{
	CUfunction f = (CUfunction)((uintptr_t)func | (1ULL << 62));

	return drv_launch(f, grid.x, grid.y, grid.z, block.x, block.y, block.z,
			  (unsigned)shmem, (CUstream)stream, args, NULL) == CUDA_SUCCESS
		       ? cudaSuccess
		       : cudaErrorInitializationError;
}

cudaError_t CUDARTAPI cudaMalloc(void **ptr, size_t size)
{
	(void)size;
	*ptr = NULL;
	return cudaErrorMemoryAllocation;
}
