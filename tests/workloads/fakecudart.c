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
 *
 * For the `graphs` workload it has CUDA graphs, each call forwarding to the
 * stand-in driver's (fakecuda.c) as CUDA 13's runtime does, so that a graph
 * or exec handle is the driver's: cudaGraphAddKernelNode passes the driver
 * the kernel handle of the host stub it is given, cudaGraphLaunch enters
 * cuGraphLaunch. A launch, copy or set into a capturing stream becomes a
 * node of the capture's graph, which cudaStreamEndCapture hands out.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "fakecuda.h"

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
static pthread_mutex_t kernels_mu = PTHREAD_MUTEX_INITIALIZER;

/* Under kernels_mu: the slot of stub (-1: none and no room), *known whether it has a kernel. */
static int kernel_slot(const void *stub, int *known)
{
	size_t i;

	for (i = 0; i < sizeof(kernels) / sizeof(kernels[0]) && kernels[i].stub; i++)
		if (kernels[i].stub == stub)
			break;
	if (i == sizeof(kernels) / sizeof(kernels[0]))
		return -1;
	*known = kernels[i].stub != NULL;
	return (int)i;
}

EXPORT cudaError_t CUDARTAPI cudaGetKernel(cudaKernel_t *kernelPtr, const void *entryFuncAddr)
{
	cudaError_t err = cudaSuccess;
	int i, known;

	pthread_mutex_lock(&kernels_mu);
	i = kernel_slot(entryFuncAddr, &known);
	if (i < 0) {
		err = cudaErrorMemoryAllocation;
	} else if (!known) {
		kernels[i].kernel = (cudaKernel_t)calloc(1, 32);
		if (kernels[i].kernel)
			kernels[i].stub = entryFuncAddr;
		else
			err = cudaErrorMemoryAllocation;
	}
	if (!err)
		*kernelPtr = kernels[i].kernel;
	pthread_mutex_unlock(&kernels_mu);
	return err;
}

/*
 * What the driver is given for a function the runtime is given: a kernel
 * handle of cudaGetKernel's stays as it is; anything else is taken for a host
 * stub and becomes its kernel.
 */
static CUfunction kernel_of(const void *func)
{
	cudaKernel_t k = NULL;
	int is_kernel = 0;

	pthread_mutex_lock(&kernels_mu);
	for (size_t i = 0; i < sizeof(kernels) / sizeof(kernels[0]) && kernels[i].stub; i++)
		is_kernel |= (const void *)kernels[i].kernel == func;
	pthread_mutex_unlock(&kernels_mu);
	if (is_kernel)
		return (CUfunction)func;
	return cudaGetKernel(&k, func) == cudaSuccess ? (CUfunction)k : NULL;
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

static CUgraph capture_graph(cudaStream_t s);

/* Into a capturing stream, the launch is a node of the capture's graph (the driver's, in CUDA). */
EXPORT cudaError_t CUDARTAPI cudaLaunchKernel(const void *func, dim3 grid, dim3 block, void **args,
					      size_t shmem, cudaStream_t stream)
{
	CUgraph g = capture_graph(stream);

	if (g) {
		CUDA_KERNEL_NODE_PARAMS p = {
			.func = (CUfunction)func, .gridDimX = grid.x, .gridDimY = grid.y,
			.gridDimZ = grid.z, .blockDimX = block.x, .blockDimY = block.y,
			.blockDimZ = block.z, .sharedMemBytes = (unsigned int)shmem,
			.kernelParams = args,
		};

		if (fakecuda_capture_kernel(g, &p) != CUDA_SUCCESS)
			return cudaErrorStreamCaptureInvalidated;
	}
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
 * Stream and event handles are fresh heap blocks, as the runtime's are; a
 * capture's graph is the driver's. A capture's rules as
 * CUDA 13 keeps them, as far as the workload needs: the legacy stream cannot
 * be captured; a stream captured already cannot begin again; a stream that
 * waits on an event recorded in a captured stream joins that capture; only
 * the stream a capture began on ends it, and every joined stream leaves
 * with it. The per-thread default stream is the calling thread's.
 */
#define MAX_CAPTURED 64

static pthread_mutex_t cap_mu = PTHREAD_MUTEX_INITIALIZER;

static struct {
	cudaStream_t stream;
	long tid;	/* the thread, for cudaStreamPerThread; 0 for others */
	unsigned id;	/* its capture, 0: the slot is free */
	int origin;
	CUgraph graph;	/* what the capture fills */
} captured[MAX_CAPTURED];

static struct {
	cudaEvent_t event;
	unsigned id;	/* the capture it was recorded in, 0: none */
} recorded[MAX_CAPTURED];

static unsigned capture_ids;
/* Slots in use: read without the lock, so that a launch outside any capture stays cheap. */
static int live_captures;

static long stream_tid(cudaStream_t s)
{
	return s == cudaStreamPerThread ? (long)pthread_self() : 0;
}

/* Under cap_mu, as every use of the tables below. */
static int capture_find(cudaStream_t s)
{
	for (int i = 0; i < MAX_CAPTURED; i++)
		if (captured[i].id && captured[i].stream == s && captured[i].tid == stream_tid(s))
			return i;
	return -1;
}

static cudaError_t capture_add(cudaStream_t s, unsigned id, int origin, CUgraph graph)
{
	for (int i = 0; i < MAX_CAPTURED; i++) {
		if (captured[i].id)
			continue;
		captured[i].stream = s;
		captured[i].tid = stream_tid(s);
		captured[i].id = id;
		captured[i].origin = origin;
		captured[i].graph = graph;
		__atomic_add_fetch(&live_captures, 1, __ATOMIC_RELEASE);
		return cudaSuccess;
	}
	return cudaErrorMemoryAllocation;
}

/* The graph of the capture stream s is in, NULL when it is in none. */
static CUgraph capture_graph(cudaStream_t s)
{
	CUgraph g = NULL;
	int i;

	if (!__atomic_load_n(&live_captures, __ATOMIC_ACQUIRE))
		return NULL;
	pthread_mutex_lock(&cap_mu);
	i = capture_find(s);
	if (i >= 0)
		g = captured[i].graph;
	pthread_mutex_unlock(&cap_mu);
	return g;
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
	cudaError_t err;
	CUgraph graph;

	(void)mode;
	if (!stream || stream == cudaStreamLegacy)
		return cudaErrorStreamCaptureUnsupported;
	pthread_mutex_lock(&cap_mu);
	if (capture_find(stream) >= 0)
		err = cudaErrorIllegalState;
	else if (fakecuda_graph_new(&graph) != CUDA_SUCCESS)
		err = cudaErrorMemoryAllocation;
	else
		err = capture_add(stream, ++capture_ids, 1, graph);
	pthread_mutex_unlock(&cap_mu);
	return err;
}

/* Ends the capture stream began, with every stream joined to it; *pGraph holds its nodes. */
static cudaError_t capture_end(cudaStream_t stream, cudaGraph_t *pGraph)
{
	int i = capture_find(stream);
	unsigned id;

	if (i < 0)
		return cudaErrorIllegalState;
	if (!captured[i].origin)
		return cudaErrorStreamCaptureUnmatched;
	id = captured[i].id;
	*pGraph = (cudaGraph_t)captured[i].graph;
	for (int k = 0; k < MAX_CAPTURED; k++) {
		if (captured[k].id == id) {
			captured[k].id = 0;
			__atomic_sub_fetch(&live_captures, 1, __ATOMIC_RELEASE);
		}
	}
	for (int k = 0; k < MAX_CAPTURED; k++)
		if (recorded[k].id == id)
			recorded[k].id = 0;
	return cudaSuccess;
}

EXPORT cudaError_t CUDARTAPI cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph)
{
	cudaError_t err;

	pthread_mutex_lock(&cap_mu);
	err = capture_end(stream, pGraph);
	pthread_mutex_unlock(&cap_mu);
	return err;
}

EXPORT cudaError_t CUDARTAPI cudaThreadExchangeStreamCaptureMode(enum cudaStreamCaptureMode *mode)
{
	static __thread enum cudaStreamCaptureMode current = cudaStreamCaptureModeGlobal;
	enum cudaStreamCaptureMode old = current;

	current = *mode;
	*mode = old;
	return cudaSuccess;
}

static cudaError_t event_record(cudaEvent_t event, cudaStream_t stream)
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

EXPORT cudaError_t CUDARTAPI cudaEventRecord(cudaEvent_t event, cudaStream_t stream)
{
	cudaError_t err;

	pthread_mutex_lock(&cap_mu);
	err = event_record(event, stream);
	pthread_mutex_unlock(&cap_mu);
	return err;
}

/* A stream that waits on an event recorded in a capture joins it, and fills its graph. */
static cudaError_t stream_wait(cudaStream_t stream, cudaEvent_t event)
{
	for (int k = 0; k < MAX_CAPTURED; k++) {
		if (recorded[k].event != event || !recorded[k].id || capture_find(stream) >= 0)
			continue;
		for (int i = 0; i < MAX_CAPTURED; i++)
			if (captured[i].id == recorded[k].id)
				return capture_add(stream, recorded[k].id, 0, captured[i].graph);
	}
	return cudaSuccess;
}

EXPORT cudaError_t CUDARTAPI cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event,
						 unsigned int flags)
{
	cudaError_t err;

	(void)flags;
	pthread_mutex_lock(&cap_mu);
	err = stream_wait(stream, event);
	pthread_mutex_unlock(&cap_mu);
	return err;
}

EXPORT cudaError_t CUDARTAPI cudaMemcpyAsync(void *dst, const void *src, size_t count,
					     enum cudaMemcpyKind kind, cudaStream_t stream)
{
	CUgraph g = capture_graph(stream);

	(void)dst, (void)src;
	return g ? rt_error(fakecuda_capture_copy(g, count, (int)kind)) : cudaSuccess;
}

EXPORT cudaError_t CUDARTAPI cudaMemsetAsync(void *devPtr, int value, size_t count,
					     cudaStream_t stream)
{
	CUgraph g = capture_graph(stream);

	(void)devPtr;
	return g ? rt_error(fakecuda_capture_set(g, count, (unsigned char)value)) : cudaSuccess;
}

/* ---- graphs (the `graphs` workload): each call is the driver's -------------- */

EXPORT cudaError_t CUDARTAPI cudaGraphCreate(cudaGraph_t *pGraph, unsigned int flags)
{
	return rt_error(cuGraphCreate((CUgraph *)pGraph, flags));
}

/* The driver's parameters for the runtime's: func, a host stub or a kernel, becomes a kernel. */
static int driver_kernel_params(const struct cudaKernelNodeParams *p, CUDA_KERNEL_NODE_PARAMS *d)
{
	if (!p)
		return -1;
	*d = (CUDA_KERNEL_NODE_PARAMS){
		.func = kernel_of(p->func), .gridDimX = p->gridDim.x, .gridDimY = p->gridDim.y,
		.gridDimZ = p->gridDim.z, .blockDimX = p->blockDim.x, .blockDimY = p->blockDim.y,
		.blockDimZ = p->blockDim.z, .sharedMemBytes = p->sharedMemBytes,
		.kernelParams = p->kernelParams, .extra = p->extra,
	};
	return d->func ? 0 : -1;
}

EXPORT cudaError_t CUDARTAPI cudaGraphAddKernelNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
						    const cudaGraphNode_t *pDependencies,
						    size_t numDependencies,
						    const struct cudaKernelNodeParams *pNodeParams)
{
	CUDA_KERNEL_NODE_PARAMS d;

	if (driver_kernel_params(pNodeParams, &d))
		return cudaErrorInvalidValue;
	return rt_error(cuGraphAddKernelNode_v2((CUgraphNode *)pGraphNode, (CUgraph)graph,
						(const CUgraphNode *)pDependencies,
						numDependencies, &d));
}

EXPORT cudaError_t CUDARTAPI cudaGraphKernelNodeSetParams(
	cudaGraphNode_t node, const struct cudaKernelNodeParams *pNodeParams)
{
	CUDA_KERNEL_NODE_PARAMS d;

	if (driver_kernel_params(pNodeParams, &d))
		return cudaErrorInvalidValue;
	return rt_error(cuGraphKernelNodeSetParams_v2((CUgraphNode)node, &d));
}

EXPORT cudaError_t CUDARTAPI cudaGraphExecKernelNodeSetParams(
	cudaGraphExec_t hGraphExec, cudaGraphNode_t node,
	const struct cudaKernelNodeParams *pNodeParams)
{
	CUDA_KERNEL_NODE_PARAMS d;

	if (driver_kernel_params(pNodeParams, &d))
		return cudaErrorInvalidValue;
	return rt_error(cuGraphExecKernelNodeSetParams_v2((CUgraphExec)hGraphExec,
							  (CUgraphNode)node, &d));
}

/* A 1D copy as the driver takes every copy: a 3D one of one row, the memory types from kind. */
EXPORT cudaError_t CUDARTAPI cudaGraphAddMemcpyNode1D(
	cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *pDependencies,
	size_t numDependencies, void *dst, const void *src, size_t count, enum cudaMemcpyKind kind)
{
	static const CUmemorytype types[][2] = {
		[cudaMemcpyHostToHost] = { CU_MEMORYTYPE_HOST, CU_MEMORYTYPE_HOST },
		[cudaMemcpyHostToDevice] = { CU_MEMORYTYPE_HOST, CU_MEMORYTYPE_DEVICE },
		[cudaMemcpyDeviceToHost] = { CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_HOST },
		[cudaMemcpyDeviceToDevice] = { CU_MEMORYTYPE_DEVICE, CU_MEMORYTYPE_DEVICE },
		[cudaMemcpyDefault] = { CU_MEMORYTYPE_UNIFIED, CU_MEMORYTYPE_UNIFIED },
	};
	CUDA_MEMCPY3D c = { 0 };

	if ((unsigned)kind > cudaMemcpyDefault)
		return cudaErrorInvalidMemcpyDirection;
	c.srcMemoryType = types[kind][0];
	c.dstMemoryType = types[kind][1];
	c.srcHost = src;
	c.srcDevice = (CUdeviceptr)(uintptr_t)src;
	c.dstHost = dst;
	c.dstDevice = (CUdeviceptr)(uintptr_t)dst;
	c.WidthInBytes = count;
	c.Height = 1;
	c.Depth = 1;
	return rt_error(cuGraphAddMemcpyNode((CUgraphNode *)pGraphNode, (CUgraph)graph,
					     (const CUgraphNode *)pDependencies, numDependencies,
					     &c, NULL));
}

EXPORT cudaError_t CUDARTAPI cudaGraphAddMemsetNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
						    const cudaGraphNode_t *pDependencies,
						    size_t numDependencies,
						    const struct cudaMemsetParams *pMemsetParams)
{
	CUDA_MEMSET_NODE_PARAMS m;

	if (!pMemsetParams)
		return cudaErrorInvalidValue;
	m = (CUDA_MEMSET_NODE_PARAMS){
		.dst = (CUdeviceptr)(uintptr_t)pMemsetParams->dst, .pitch = pMemsetParams->pitch,
		.value = pMemsetParams->value, .elementSize = pMemsetParams->elementSize,
		.width = pMemsetParams->width, .height = pMemsetParams->height,
	};
	return rt_error(cuGraphAddMemsetNode((CUgraphNode *)pGraphNode, (CUgraph)graph,
					     (const CUgraphNode *)pDependencies, numDependencies,
					     &m, NULL));
}

EXPORT cudaError_t CUDARTAPI cudaGraphAddChildGraphNode(
	cudaGraphNode_t *pGraphNode, cudaGraph_t graph, const cudaGraphNode_t *pDependencies,
	size_t numDependencies, cudaGraph_t childGraph)
{
	return rt_error(cuGraphAddChildGraphNode((CUgraphNode *)pGraphNode, (CUgraph)graph,
						 (const CUgraphNode *)pDependencies,
						 numDependencies, (CUgraph)childGraph));
}

EXPORT cudaError_t CUDARTAPI cudaGraphAddEmptyNode(cudaGraphNode_t *pGraphNode, cudaGraph_t graph,
						   const cudaGraphNode_t *pDependencies,
						   size_t numDependencies)
{
	return rt_error(cuGraphAddEmptyNode((CUgraphNode *)pGraphNode, (CUgraph)graph,
					    (const CUgraphNode *)pDependencies, numDependencies));
}

EXPORT cudaError_t CUDARTAPI cudaGraphClone(cudaGraph_t *pGraphClone, cudaGraph_t originalGraph)
{
	return rt_error(cuGraphClone((CUgraph *)pGraphClone, (CUgraph)originalGraph));
}

EXPORT cudaError_t CUDARTAPI cudaGraphGetNodes(cudaGraph_t graph, cudaGraphNode_t *nodes,
					       size_t *numNodes)
{
	return rt_error(cuGraphGetNodes((CUgraph)graph, (CUgraphNode *)nodes, numNodes));
}

EXPORT cudaError_t CUDARTAPI cudaGraphInstantiate(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
						  unsigned long long flags)
{
	return rt_error(cuGraphInstantiateWithFlags((CUgraphExec *)pGraphExec, (CUgraph)graph,
						    flags));
}

EXPORT cudaError_t CUDARTAPI cudaGraphInstantiateWithFlags(cudaGraphExec_t *pGraphExec,
							   cudaGraph_t graph,
							   unsigned long long flags)
{
	return rt_error(cuGraphInstantiateWithFlags((CUgraphExec *)pGraphExec, (CUgraph)graph,
						    flags));
}

EXPORT cudaError_t CUDARTAPI cudaGraphExecUpdate(cudaGraphExec_t hGraphExec, cudaGraph_t hGraph,
						 cudaGraphExecUpdateResultInfo *resultInfo)
{
	CUgraphExecUpdateResultInfo info;
	CUresult res;

	if (!resultInfo)
		return cudaErrorInvalidValue;
	res = cuGraphExecUpdate_v2((CUgraphExec)hGraphExec, (CUgraph)hGraph, &info);
	resultInfo->result = (enum cudaGraphExecUpdateResult)info.result;
	resultInfo->errorNode = (cudaGraphNode_t)info.errorNode;
	resultInfo->errorFromNode = (cudaGraphNode_t)info.errorFromNode;
	if (res == CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE)
		return cudaErrorGraphExecUpdateFailure;
	return rt_error(res);
}

/* Exported by libcudart 13 (nm -D), declared by its headers only for per-thread streams. */
cudaError_t CUDARTAPI cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream);

EXPORT cudaError_t CUDARTAPI cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)
{
	/* Refused here, as a runtime refuses a replay it cannot make: no driver call. */
	if (!graphExec)
		return cudaErrorInvalidResourceHandle;
	return rt_error(cuGraphLaunch((CUgraphExec)graphExec, (CUstream)stream));
}

EXPORT cudaError_t CUDARTAPI cudaGraphLaunch_ptsz(cudaGraphExec_t graphExec, cudaStream_t stream)
{
	return rt_error(cuGraphLaunch_ptsz((CUgraphExec)graphExec, (CUstream)stream));
}

EXPORT cudaError_t CUDARTAPI cudaGraphExecDestroy(cudaGraphExec_t graphExec)
{
	return rt_error(cuGraphExecDestroy((CUgraphExec)graphExec));
}

EXPORT cudaError_t CUDARTAPI cudaGraphDestroy(cudaGraph_t graph)
{
	return rt_error(cuGraphDestroy((CUgraph)graph));
}
