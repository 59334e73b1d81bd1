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
 *
 * For the `capture` workload it has streams, events, the async copy and set,
 * and stream capture (begin, end, the thread's mode, and the event record
 * and wait that join a stream to a capture), with the real signatures.
 */
#include <pthread.h>
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

/* ---- streams, events, copies and stream capture (the `capture` workload) ----- */

/*
 * Handles are fresh heap blocks, as the runtime's are. A capture's rules as
 * CUDA 13 keeps them, as far as the workload needs: the legacy stream cannot
 * be captured; a stream captured already cannot begin again; a stream that
 * waits on an event recorded in a captured stream joins that capture; only
 * the stream a capture began on ends it, and every joined stream leaves
 * with it. The per-thread default stream is the calling thread's.
 */
#define MAX_CAPTURED 64

static struct {
	cudaStream_t stream;
	long tid;	/* the thread, for cudaStreamPerThread; 0 for others */
	unsigned id;	/* its capture, 0: the slot is free */
	int origin;
} captured[MAX_CAPTURED];

static struct {
	cudaEvent_t event;
	unsigned id;	/* the capture it was recorded in, 0: none */
} recorded[MAX_CAPTURED];

static unsigned capture_ids;

static long stream_tid(cudaStream_t s)
{
	return s == cudaStreamPerThread ? (long)pthread_self() : 0;
}

static int capture_find(cudaStream_t s)
{
	for (int i = 0; i < MAX_CAPTURED; i++)
		if (captured[i].id && captured[i].stream == s && captured[i].tid == stream_tid(s))
			return i;
	return -1;
}

static cudaError_t capture_add(cudaStream_t s, unsigned id, int origin)
{
	for (int i = 0; i < MAX_CAPTURED; i++) {
		if (captured[i].id)
			continue;
		captured[i].stream = s;
		captured[i].tid = stream_tid(s);
		captured[i].id = id;
		captured[i].origin = origin;
		return cudaSuccess;
	}
	return cudaErrorMemoryAllocation;
}

EXPORT cudaError_t CUDARTAPI cudaStreamCreate(cudaStream_t *pStream)
{
	*pStream = (cudaStream_t)calloc(1, 32);
	return *pStream ? cudaSuccess : cudaErrorMemoryAllocation;
}

EXPORT cudaError_t CUDARTAPI cudaEventCreate(cudaEvent_t *event)
{
	*event = (cudaEvent_t)calloc(1, 32);
	return *event ? cudaSuccess : cudaErrorMemoryAllocation;
}

EXPORT cudaError_t CUDARTAPI cudaStreamBeginCapture(cudaStream_t stream,
						    enum cudaStreamCaptureMode mode)
{
	(void)mode;
	if (!stream || stream == cudaStreamLegacy)
		return cudaErrorStreamCaptureUnsupported;
	if (capture_find(stream) >= 0)
		return cudaErrorIllegalState;
	return capture_add(stream, ++capture_ids, 1);
}

EXPORT cudaError_t CUDARTAPI cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph)
{
	int i = capture_find(stream);
	unsigned id;

	if (i < 0)
		return cudaErrorIllegalState;
	if (!captured[i].origin)
		return cudaErrorStreamCaptureUnmatched;
	id = captured[i].id;
	for (int k = 0; k < MAX_CAPTURED; k++)
		if (captured[k].id == id)
			captured[k].id = 0;
	for (int k = 0; k < MAX_CAPTURED; k++)
		if (recorded[k].id == id)
			recorded[k].id = 0;
	*pGraph = (cudaGraph_t)calloc(1, 32);
	return *pGraph ? cudaSuccess : cudaErrorMemoryAllocation;
}

EXPORT cudaError_t CUDARTAPI cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode)
{
	static __thread enum cudaStreamCaptureMode current = cudaStreamCaptureModeGlobal;
	enum cudaStreamCaptureMode old = current;

	current = *mode;
	*mode = old;
	return cudaSuccess;
}

EXPORT cudaError_t CUDARTAPI cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
	int i = capture_find(stream), free_slot = -1;

	for (int k = 0; k < MAX_CAPTURED; k++) {
		if (recorded[k].event == event) {
			recorded[k].id = i >= 0 ? captured[i].id : 0;
			return cudaSuccess;
		}
		if (!recorded[k].event && free_slot < 0)
			free_slot = k;
	}
	if (free_slot < 0)
		return cudaErrorMemoryAllocation;
	recorded[free_slot].event = event;
	recorded[free_slot].id = i >= 0 ? captured[i].id : 0;
	return cudaSuccess;
}

EXPORT cudaError_t CUDARTAPI cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
						 unsigned int flags)
{
	(void)flags;
	for (int k = 0; k < MAX_CAPTURED; k++)
		if (recorded[k].event == event && recorded[k].id && capture_find(stream) < 0)
			return capture_add(stream, recorded[k].id, 0);
	return cudaSuccess;
}

EXPORT cudaError_t CUDARTAPI cudaMemcpyAsync(void *dst, const void *src, size_t count,
					     enum cudaMemcpyKind kind, cudaStream_t stream)
{
	(void)dst, (void)src, (void)count, (void)kind, (void)stream;
	return cudaSuccess;
}

EXPORT cudaError_t CUDARTAPI cudaMemsetAsync(void *devPtr, int value, size_t count,
					     cudaStream_t stream)
{
	(void)devPtr, (void)value, (void)count, (void)stream;
	return cudaSuccess;
}
