// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libfakert.so: a stand-in for libcudart's cudaLaunchKernel, for the nested
 * workload. The real libcudart launches by calling libcuda's exported
 * cuLaunchKernel, so one user launch enters both probed functions; cuprobe
 * must count it once. Without a driver the real libcudart fails before it
 * reaches libcuda, so that path cannot be exercised here. This library does
 * what it does on a GPU machine: it exports cudaLaunchKernel with the real
 * signature and forwards the launch to the (stub) driver's cuLaunchKernel,
 * with a CUfunction handle that differs from the host-stub pointer and the
 * grid, block, shared memory and stream unchanged.
 */
#include <stdint.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

/* Real handles are opaque driver pointers; this one is merely distinct. */
#define FAKE_FUNCTION_BIT (1ULL << 62)

cudaError_t CUDARTAPI cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
				       size_t shmem, cudaStream_t stream)
{
	CUfunction f = (CUfunction)((uintptr_t)func | FAKE_FUNCTION_BIT);
	CUresult res;

	res = cuLaunchKernel(f, grid.x, grid.y, grid.z, block.x, block.y, block.z,
			     (unsigned int)shmem, (CUstream)stream, args, NULL);
	return res == CUDA_SUCCESS ? cudaSuccess : cudaErrorLaunchFailure;
}

/*
 * cuprobe takes an object for a CUDA runtime only if it has cudaMalloc too,
 * as every real one (shared or static) has: a library that merely wraps the
 * launch functions is not probed.
 */
cudaError_t CUDARTAPI cudaMalloc(void **ptr, size_t size)
{
	(void)size;
	*ptr = NULL;
	return cudaErrorMemoryAllocation;
}
