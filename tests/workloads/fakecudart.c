// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libfakecudart.so: the runtime calls that hand out kernel handles, for the
 * `names` workload, on the stand-in driver (fakecuda.c). Without a driver
 * the real libcudart fails these calls and writes no handle.
 *
 * As in CUDA 12 and 13's runtime, a runtime library (cudaLibraryLoadData,
 * cudaLibraryGetKernel) is the driver's library, got through the driver's
 * public entry points; cudaGetFuncBySymbol, cudaGetKernel and
 * __cudaGetKernel look the host stub up in what the runtime registered (here:
 * one handle per stub, the same each time, as the runtime's). A cudaKernel_t
 * may be given to cudaLaunchKernel in place of a stub, which forwards it to
 * cuLaunchKernel, as the runtime does.
 *
 * It also has what nvcc's host code calls (`-cudart none`): the fat binary
 * registration, the <<<>>> call configuration, and CUDA 13's launch path,
 * where each stub gets its kernel's handle once from __cudaGetKernel and
 * launches with __cudaLaunchKernel(handle, ...), which goes on to
 * cudaLaunchKernel with the handle in place of the stub.
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

/* The kernel of each host stub: made on first ask, the same handle ever after. */
static struct {
	const void *stub;
	cudaKernel_t kernel;
} kernels[64];

EXPORT cudaError_t CUDARTAPI cudaGetKernel(cudaKernel_t *kernelPtr, const void *entryFuncAddr)
{
	size_t i;

	for (i = 0; i < sizeof(kernels) / sizeof(kernels[0]) && kernels[i].stub; i++)
		if (kernels[i].stub == entryFuncAddr)
			break;
	if (i == sizeof(kernels) / sizeof(kernels[0]))
		return cudaErrorMemoryAllocation;
	if (!kernels[i].stub) {
		kernels[i].kernel = (cudaKernel_t)calloc(1, 32);
		if (!kernels[i].kernel)
			return cudaErrorMemoryAllocation;
		kernels[i].stub = entryFuncAddr;
	}
	*kernelPtr = kernels[i].kernel;
	return cudaSuccess;
}

EXPORT cudaError_t CUDARTAPI __cudaGetKernel(cudaKernel_t *kernelPtr, const void *entryFuncAddr)
{
	return cudaGetKernel(kernelPtr, entryFuncAddr);
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

/* ---- what nvcc's host code calls ---------------------------------------- */

EXPORT void **CUDARTAPI __cudaRegisterFatBinary(void *fatCubin)
{
	static void *handle;

	handle = fatCubin;
	return &handle;
}

EXPORT void CUDARTAPI __cudaRegisterFatBinaryEnd(void **fatCubinHandle)
{
	(void)fatCubinHandle;
}

EXPORT void CUDARTAPI __cudaUnregisterFatBinary(void **fatCubinHandle)
{
	(void)fatCubinHandle;
}

EXPORT void CUDARTAPI __cudaRegisterFunction(void **fatCubinHandle, const char *hostFun,
					     char *deviceFun, const char *deviceName,
					     int thread_limit, uint3 *tid, uint3 *bid, dim3 *bDim,
					     dim3 *gDim, int *wSize)
{
	(void)fatCubinHandle, (void)hostFun, (void)deviceFun, (void)deviceName;
	(void)thread_limit, (void)tid, (void)bid, (void)bDim, (void)gDim, (void)wSize;
}

EXPORT char CUDARTAPI __cudaInitModule(void **fatCubinHandle)
{
	(void)fatCubinHandle;
	return 0;
}

/* <<<grid, block, shmem, stream>>>: pushed by the caller, popped by the stub. */
static __thread struct {
	dim3 grid, block;
	size_t shmem;
	void *stream;
} pushed;

EXPORT unsigned CUDARTAPI __cudaPushCallConfiguration(dim3 gridDim, dim3 blockDim,
						      size_t sharedMem, struct CUstream_st *stream)
{
	pushed.grid = gridDim;
	pushed.block = blockDim;
	pushed.shmem = sharedMem;
	pushed.stream = stream;
	return 0;
}

EXPORT cudaError_t CUDARTAPI __cudaPopCallConfiguration(dim3 *gridDim, dim3 *blockDim,
							size_t *sharedMem, void *stream)
{
	*gridDim = pushed.grid;
	*blockDim = pushed.block;
	*sharedMem = pushed.shmem;
	*(void **)stream = pushed.stream;
	return cudaSuccess;
}

EXPORT cudaError_t CUDARTAPI __cudaLaunchKernel(cudaKernel_t kernel, dim3 gridDim, dim3 blockDim,
						void **args, size_t sharedMem, cudaStream_t stream)
{
	return cudaLaunchKernel((const void *)kernel, gridDim, blockDim, args, sharedMem, stream);
}
