// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libfakecudart.so: the runtime calls that hand out kernel handles, for the
 * `names` workload, on the stand-in driver (fakecuda.c). Without a driver
 * the real libcudart fails these calls and writes no handle.
 *
 * As in CUDA 12 and 13's runtime, a runtime library (cudaLibraryLoadData,
 * cudaLibraryGetKernel) is the driver's library, got through the driver's
 * public entry points; cudaGetFuncBySymbol and cudaGetKernel look the host
 * stub up in what the runtime registered (here: a fresh handle). A
 * cudaKernel_t may be given to cudaLaunchKernel in place of a stub, which
 * forwards it to cuLaunchKernel, as the runtime does.
 */
#include <stdint.h>
#include <stdlib.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#define EXPORT __attribute__((visibility("default")))

static cudaError_t rt_error(CUresult res)
{
	return res == CUDA_SUCCESS ? cudaSuccess : cudaErrorInvalidValue;
}

EXPORT cudaError_t CUDARTAPI cudaGetFuncBySymbol(cudaFunction_t *functionPtr,
						 const void *symbolPtr)
{
	*functionPtr = (cudaFunction_t)calloc(1, 32);
	(void)symbolPtr;
	return *functionPtr ? cudaSuccess : cudaErrorMemoryAllocation;
}

EXPORT cudaError_t CUDARTAPI cudaGetKernel(cudaKernel_t *kernelPtr, const void *entryFuncAddr)
{
	*kernelPtr = (cudaKernel_t)calloc(1, 32);
	(void)entryFuncAddr;
	return *kernelPtr ? cudaSuccess : cudaErrorMemoryAllocation;
}

EXPORT cudaError_t CUDARTAPI cudaLibraryLoadData(cudaLibrary_t *library, const void *code,
						 enum cudaJitOption *jitOptions,
						 void **jitOptionsValues, unsigned int numJitOptions,
						 enum cudaLibraryOption *libraryOptions,
						 void **libraryOptionValues,
						 unsigned int numLibraryOptions)
{
	(void)jitOptions, (void)jitOptionsValues, (void)numJitOptions;
	(void)libraryOptions, (void)libraryOptionValues, (void)numLibraryOptions;
	return rt_error(cuLibraryLoadData((CUlibrary *)library, code, NULL, NULL, 0, NULL, NULL, 0));
}

EXPORT cudaError_t CUDARTAPI cudaLibraryGetKernel(cudaKernel_t *pKernel, cudaLibrary_t library,
						  const char *name)
{
	return rt_error(cuLibraryGetKernel((CUkernel *)pKernel, (CUlibrary)library, name));
}

EXPORT cudaError_t CUDARTAPI cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
					      size_t shmem, cudaStream_t stream)
{
	return rt_error(cuLaunchKernel((CUfunction)func, grid.x, grid.y, grid.z, block.x, block.y,
				       block.z, (unsigned int)shmem, (CUstream)stream, args, NULL));
}

/* cuprobe takes an object for a CUDA runtime only if it has cudaMalloc too. */
EXPORT cudaError_t CUDARTAPI cudaMalloc(void **ptr, size_t size)
{
	(void)size;
	*ptr = NULL;
	return cudaErrorMemoryAllocation;
}
