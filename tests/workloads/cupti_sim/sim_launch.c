// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The CUDA launch functions the simulator interposes when it is preloaded.
 * Each forwards to the real function (so libcudart's entry, where cuprobe's
 * uprobe sits, still runs) and, while CUPTI kinds are on, makes what CUPTI
 * would: an API record around the call with a new correlation id, and GPU
 * records (kernel, memcpy, memset; N kernels for a graph) that start after
 * the call ends. GPU records are made even when the real call fails, which it
 * does without a GPU.
 *
 * nvcc's launch stubs call __cudaLaunchKernel, which jumps to cudaLaunchKernel
 * inside libcudart (not through the PLT): both are interposed, and a
 * per-thread depth keeps a call that re-enters another from counting twice.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "sim.h"

/* Declared only under per-thread default-stream builds in the CUDA headers. */
cudaError_t cudaLaunchKernel_ptsz(const void *, dim3, dim3, void **, size_t, cudaStream_t);
cudaError_t __cudaLaunchKernel(const void *, dim3, dim3, void **, size_t, cudaStream_t);
cudaError_t __cudaLaunchKernel_ptsz(const void *, dim3, dim3, void **, size_t, cudaStream_t);
cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *, const void *, void **);
cudaError_t cudaLaunchCooperativeKernel_ptsz(const void *, dim3, dim3, void **, size_t,
					     cudaStream_t);
cudaError_t cudaMemcpyAsync_ptsz(void *, const void *, size_t, enum cudaMemcpyKind, cudaStream_t);
cudaError_t cudaMemsetAsync_ptsz(void *, int, size_t, cudaStream_t);
cudaError_t cudaGraphLaunch_ptsz(cudaGraphExec_t, cudaStream_t);
CUresult cuLaunchKernel_ptsz(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,
			     unsigned int, unsigned int, unsigned int, CUstream, void **, void **);
CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig *, CUfunction, void **, void **);
CUresult cuGraphLaunch_ptsz(CUgraphExec, CUstream);

static __thread int depth;

/*
 * CUPTI's small stream ids, not handles: the legacy default stream is 7 on
 * current drivers; other handles get ids from 13 on, in order of first use.
 */
#define MAX_STREAMS 256

static pthread_mutex_t streams_lock = PTHREAD_MUTEX_INITIALIZER;
static const void *stream_handles[MAX_STREAMS];
static unsigned int n_streams;

static uint32_t sim_stream_id(const void *handle)
{
	uint32_t id = 0;
	unsigned int i;

	if (!handle)
		return 7;
	pthread_mutex_lock(&streams_lock);
	for (i = 0; i < n_streams && stream_handles[i] != handle; i++)
		;
	if (i == n_streams && n_streams < MAX_STREAMS)
		stream_handles[n_streams++] = handle;
	id = i < MAX_STREAMS ? 13 + i : (uint32_t)(uintptr_t)handle;
	pthread_mutex_unlock(&streams_lock);
	return id;
}

/* The next definition of name: RTLD_NEXT, or the library itself when it was
 * dlopen'd locally (a kernel library that brought libcudart in). */
static void *real_fn(const char *name, const char *lib)
{
	void *p = dlsym(RTLD_NEXT, name), *h;

	if (p)
		return p;
	h = dlopen(lib, RTLD_LAZY | RTLD_NOLOAD);
	return h ? dlsym(h, name) : NULL;
}

#define REAL(type, name, lib)                                                                    \
	static _Atomic(type) real_##name;                                                        \
	type fn = atomic_load(&real_##name);                                                     \
	if (!fn) {                                                                               \
		fn = (type)real_fn(#name, lib);                                                  \
		atomic_store(&real_##name, fn);                                                  \
	}

#define CUDART "libcudart.so.13"
#define CUDADRV "libcuda.so.1"

/* One intercepted call. */
struct call {
	bool on; /* CUPTI kinds were on when it began */
	uint32_t correlation;
	uint64_t start, end;
};

static void call_begin(struct call *c)
{
	c->on = depth++ == 0 && sim_tracing();
	if (!c->on)
		return;
	c->correlation = sim_next_correlation();
	c->start = sim_now();
}

/* Ends the call and writes its API record; false when nothing more is due. */
static bool call_end(struct call *c, CUpti_ActivityKind domain, uint32_t cbid, uint32_t ret)
{
	CUpti_ActivityAPI a = { 0 };

	depth--;
	if (!c->on)
		return false;
	c->end = sim_now();
	if (sim_kind_on(domain)) {
		a.kind = domain;
		a.cbid = cbid;
		a.start = c->start;
		a.end = c->end;
		a.processId = (uint32_t)getpid();
		a.threadId = sim_thread_id();
		a.correlationId = c->correlation;
		a.returnValue = ret;
		sim_emit(&a, sizeof(a), false);
	}
	return true;
}

static void gpu_times(const struct call *c, unsigned int nth, uint64_t *start, uint64_t *end)
{
	if (sim_cfg.skew_ns)
		*start = c->start > sim_cfg.skew_ns ? c->start - sim_cfg.skew_ns : 0;
	else
		*start = c->end + sim_cfg.gpu_delay_ns;
	*start += (uint64_t)nth * sim_cfg.gpu_dur_ns;
	*end = *start + sim_cfg.gpu_dur_ns;
}

struct kernel_launch {
	const char *name;
	unsigned int grid[3], block[3];
	unsigned int shmem;
	const void *stream;
	uint8_t launch_type;
};

static void kernel_record(const struct call *c, const struct kernel_launch *k, unsigned int nth,
			  uint32_t graph_id, uint64_t graph_node)
{
	CUpti_ActivityKernel10 r;

	if (!sim_kind_on(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) &&
	    !sim_kind_on(CUPTI_ACTIVITY_KIND_KERNEL))
		return;
	memset(&r, 0, sizeof(r));
	r.kind = sim_kind_on(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			 ? CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
			 : CUPTI_ACTIVITY_KIND_KERNEL;
	gpu_times(c, nth, &r.start, &r.end);
	r.completed = r.end;
	r.deviceId = 0;
	r.contextId = 1;
	r.streamId = sim_stream_id(k->stream);
	r.gridX = k->grid[0];
	r.gridY = k->grid[1];
	r.gridZ = k->grid[2];
	r.blockX = k->block[0];
	r.blockY = k->block[1];
	r.blockZ = k->block[2];
	r.dynamicSharedMemory = k->shmem;
	r.staticSharedMemory = 0;
	r.registersPerThread = 32;
	r.correlationId = c->correlation;
	r.gridId = c->correlation;
	r.name = k->name;
	r.launchType = k->launch_type;
	r.graphId = graph_id;
	r.graphNodeId = graph_node;
	sim_emit(&r, sizeof(r), true);
}

static cudaError_t runtime_launch(const void *func, dim3 g, dim3 b, size_t shmem,
				 const void *stream, uint8_t launch_type, uint32_t cbid,
				 cudaError_t ret, struct call *c)
{
	struct kernel_launch k = {
		.grid = { g.x, g.y, g.z },
		.block = { b.x, b.y, b.z },
		.shmem = (unsigned int)shmem,
		.stream = stream,
		.launch_type = launch_type,
	};

	if (call_end(c, CUPTI_ACTIVITY_KIND_RUNTIME, cbid, ret)) {
		k.name = sim_kernel_name(func);
		kernel_record(c, &k, 0, 0, 0);
	}
	return ret;
}

#define RUNTIME_LAUNCH(name, cbid, launch_type)                                                  \
	SIM_EXPORT cudaError_t name(const void *func, dim3 g, dim3 b, void **args, size_t shmem, \
				    cudaStream_t stream)                                         \
	{                                                                                        \
		typedef cudaError_t (*fn_t)(const void *, dim3, dim3, void **, size_t,           \
					    cudaStream_t);                                       \
		REAL(fn_t, name, CUDART);                                                        \
		struct call c;                                                                   \
		cudaError_t ret;                                                                 \
                                                                                                 \
		call_begin(&c);                                                                  \
		ret = fn ? fn(func, g, b, args, shmem, stream) : cudaErrorUnknown;               \
		return runtime_launch(func, g, b, shmem, stream, launch_type, cbid, ret, &c);    \
	}

/* Without a GPU CUPTI has no record of its own for __cudaLaunchKernel's jump:
 * the call is the cudaLaunchKernel it ends in. */
RUNTIME_LAUNCH(cudaLaunchKernel, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
	       CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR)
RUNTIME_LAUNCH(__cudaLaunchKernel, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
	       CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR)
RUNTIME_LAUNCH(cudaLaunchKernel_ptsz, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
	       CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR)
RUNTIME_LAUNCH(__cudaLaunchKernel_ptsz, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
	       CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR)
RUNTIME_LAUNCH(cudaLaunchCooperativeKernel,
	       CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
	       CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE)
RUNTIME_LAUNCH(cudaLaunchCooperativeKernel_ptsz,
	       CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
	       CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE)

#define RUNTIME_LAUNCH_EX(name, cbid)                                                            \
	SIM_EXPORT cudaError_t name(const cudaLaunchConfig_t *cfg, const void *func, void **args) \
	{                                                                                        \
		typedef cudaError_t (*fn_t)(const cudaLaunchConfig_t *, const void *, void **);  \
		REAL(fn_t, name, CUDART);                                                        \
		dim3 zero = { 0, 0, 0 };                                                         \
		struct call c;                                                                   \
		cudaError_t ret;                                                                 \
                                                                                                 \
		call_begin(&c);                                                                  \
		ret = fn ? fn(cfg, func, args) : cudaErrorUnknown;                               \
		return runtime_launch(func, cfg ? cfg->gridDim : zero, cfg ? cfg->blockDim : zero, \
				      cfg ? cfg->dynamicSmemBytes : 0, cfg ? cfg->stream : NULL, \
				      CUPTI_ACTIVITY_LAUNCH_TYPE_REGULAR, cbid, ret, &c);        \
	}

RUNTIME_LAUNCH_EX(cudaLaunchKernelExC, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060)
RUNTIME_LAUNCH_EX(cudaLaunchKernelExC_ptsz,
		  CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060)

static uint8_t copy_kind(enum cudaMemcpyKind kind, uint8_t *src, uint8_t *dst)
{
	*src = *dst = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	switch (kind) {
	case cudaMemcpyHostToDevice:
		*src = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
		return CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	case cudaMemcpyDeviceToHost:
		*dst = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
		return CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
	case cudaMemcpyDeviceToDevice:
		return CUPTI_ACTIVITY_MEMCPY_KIND_DTOD;
	case cudaMemcpyHostToHost:
		*src = *dst = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
		return CUPTI_ACTIVITY_MEMCPY_KIND_HTOH;
	default:
		*src = *dst = CUPTI_ACTIVITY_MEMORY_KIND_UNKNOWN;
		return CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN;
	}
}

static cudaError_t memcpy_done(size_t count, enum cudaMemcpyKind kind, const void *stream,
			       uint32_t cbid, cudaError_t ret, struct call *c)
{
	CUpti_ActivityMemcpy6 m;

	if (!call_end(c, CUPTI_ACTIVITY_KIND_RUNTIME, cbid, ret) ||
	    !sim_kind_on(CUPTI_ACTIVITY_KIND_MEMCPY))
		return ret;
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.copyKind = copy_kind(kind, &m.srcKind, &m.dstKind);
	m.bytes = count;
	gpu_times(c, 0, &m.start, &m.end);
	m.deviceId = 0;
	m.contextId = 1;
	m.streamId = sim_stream_id(stream);
	m.correlationId = c->correlation;
	m.runtimeCorrelationId = c->correlation;
	m.copyCount = 1;
	sim_emit(&m, sizeof(m), true);
	return ret;
}

#define MEMCPY_ASYNC(name, cbid)                                                                 \
	SIM_EXPORT cudaError_t name(void *dst, const void *src, size_t count,                    \
				    enum cudaMemcpyKind kind, cudaStream_t stream)               \
	{                                                                                        \
		typedef cudaError_t (*fn_t)(void *, const void *, size_t, enum cudaMemcpyKind,   \
					    cudaStream_t);                                       \
		REAL(fn_t, name, CUDART);                                                        \
		struct call c;                                                                   \
		cudaError_t ret;                                                                 \
                                                                                                 \
		call_begin(&c);                                                                  \
		ret = fn ? fn(dst, src, count, kind, stream) : cudaErrorUnknown;                 \
		return memcpy_done(count, kind, stream, cbid, ret, &c);                          \
	}

MEMCPY_ASYNC(cudaMemcpyAsync, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020)
MEMCPY_ASYNC(cudaMemcpyAsync_ptsz, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_ptsz_v7000)

static cudaError_t memset_done(int value, size_t count, const void *stream, uint32_t cbid,
			       cudaError_t ret, struct call *c)
{
	CUpti_ActivityMemset4 m;

	if (!call_end(c, CUPTI_ACTIVITY_KIND_RUNTIME, cbid, ret) ||
	    !sim_kind_on(CUPTI_ACTIVITY_KIND_MEMSET))
		return ret;
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	m.value = (uint32_t)value;
	m.bytes = count;
	gpu_times(c, 0, &m.start, &m.end);
	m.deviceId = 0;
	m.contextId = 1;
	m.streamId = sim_stream_id(stream);
	m.correlationId = c->correlation;
	m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	sim_emit(&m, sizeof(m), true);
	return ret;
}

#define MEMSET_ASYNC(name, cbid)                                                                 \
	SIM_EXPORT cudaError_t name(void *dst, int value, size_t count, cudaStream_t stream)     \
	{                                                                                        \
		typedef cudaError_t (*fn_t)(void *, int, size_t, cudaStream_t);                  \
		REAL(fn_t, name, CUDART);                                                        \
		struct call c;                                                                   \
		cudaError_t ret;                                                                 \
                                                                                                 \
		call_begin(&c);                                                                  \
		ret = fn ? fn(dst, value, count, stream) : cudaErrorUnknown;                     \
		return memset_done(value, count, stream, cbid, ret, &c);                         \
	}

MEMSET_ASYNC(cudaMemsetAsync, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020)
MEMSET_ASYNC(cudaMemsetAsync_ptsz, CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_ptsz_v7000)

/* Graph nodes are kernels with made-up names, one correlation id for all. */
static const char *const graph_node_names[8] = {
	"sim_graph_node_0", "sim_graph_node_1", "sim_graph_node_2", "sim_graph_node_3",
	"sim_graph_node_4", "sim_graph_node_5", "sim_graph_node_6", "sim_graph_node_7",
};

static void graph_records(const struct call *c, const void *exec, const void *stream)
{
	uint32_t graph_id = (uint32_t)(uintptr_t)exec ? (uint32_t)(uintptr_t)exec : 1;
	struct kernel_launch k = {
		.grid = { 1, 1, 1 },
		.block = { 128, 1, 1 },
		.stream = stream,
	};
	unsigned int i;

	for (i = 0; i < sim_cfg.graph_nodes; i++) {
		k.name = graph_node_names[i];
		kernel_record(c, &k, i, graph_id, ((uint64_t)graph_id << 8) | (i + 1));
	}
}

#define GRAPH_LAUNCH(name, exec_t, stream_t, ret_t, lib, domain, cbid, fail)                    \
	SIM_EXPORT ret_t name(exec_t exec, stream_t stream)                                      \
	{                                                                                        \
		typedef ret_t (*fn_t)(exec_t, stream_t);                                         \
		REAL(fn_t, name, lib);                                                           \
		struct call c;                                                                   \
		ret_t ret;                                                                       \
                                                                                                 \
		call_begin(&c);                                                                  \
		ret = fn ? fn(exec, stream) : fail;                                              \
		if (call_end(&c, domain, cbid, ret))                                             \
			graph_records(&c, exec, stream);                                         \
		return ret;                                                                      \
	}

GRAPH_LAUNCH(cudaGraphLaunch, cudaGraphExec_t, cudaStream_t, cudaError_t, CUDART,
	     CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
	     cudaErrorUnknown)
GRAPH_LAUNCH(cudaGraphLaunch_ptsz, cudaGraphExec_t, cudaStream_t, cudaError_t, CUDART,
	     CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000,
	     cudaErrorUnknown)
GRAPH_LAUNCH(cuGraphLaunch, CUgraphExec, CUstream, CUresult, CUDADRV, CUPTI_ACTIVITY_KIND_DRIVER,
	     CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, CUDA_ERROR_NOT_FOUND)
GRAPH_LAUNCH(cuGraphLaunch_ptsz, CUgraphExec, CUstream, CUresult, CUDADRV,
	     CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
	     CUDA_ERROR_NOT_FOUND)

/* A CUfunction names no code the simulator can look up: a stable made-up name. */
static const char *cufunction_name(const void *f)
{
	char buf[64];

	snprintf(buf, sizeof(buf), "sim_cufunction_%#lx", (unsigned long)(uintptr_t)f);
	return sim_intern_name(buf);
}

static void driver_kernel(struct call *c, CUresult ret, uint32_t cbid, const void *f,
			  const struct kernel_launch *k)
{
	struct kernel_launch named = *k;

	if (!call_end(c, CUPTI_ACTIVITY_KIND_DRIVER, cbid, ret))
		return;
	named.name = cufunction_name(f);
	kernel_record(c, &named, 0, 0, 0);
}

#define DRIVER_LAUNCH(name, cbid)                                                                \
	SIM_EXPORT CUresult name(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, \
				 unsigned int bx, unsigned int by, unsigned int bz,              \
				 unsigned int shmem, CUstream stream, void **params,             \
				 void **extra)                                                   \
	{                                                                                        \
		typedef CUresult (*fn_t)(CUfunction, unsigned int, unsigned int, unsigned int,   \
					 unsigned int, unsigned int, unsigned int, unsigned int, \
					 CUstream, void **, void **);                            \
		REAL(fn_t, name, CUDADRV);                                                       \
		struct kernel_launch k = { .grid = { gx, gy, gz }, .block = { bx, by, bz },      \
					   .shmem = shmem, .stream = stream };                   \
		struct call c;                                                                   \
		CUresult ret;                                                                    \
                                                                                                 \
		call_begin(&c);                                                                  \
		ret = fn ? fn(f, gx, gy, gz, bx, by, bz, shmem, stream, params, extra)           \
			 : CUDA_ERROR_NOT_FOUND;                                                 \
		driver_kernel(&c, ret, cbid, f, &k);                                             \
		return ret;                                                                      \
	}

DRIVER_LAUNCH(cuLaunchKernel, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel)
DRIVER_LAUNCH(cuLaunchKernel_ptsz, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz)

#define DRIVER_LAUNCH_EX(name, cbid)                                                             \
	SIM_EXPORT CUresult name(const CUlaunchConfig *cfg, CUfunction f, void **params,         \
				 void **extra)                                                   \
	{                                                                                        \
		typedef CUresult (*fn_t)(const CUlaunchConfig *, CUfunction, void **, void **);  \
		REAL(fn_t, name, CUDADRV);                                                       \
		struct kernel_launch k = { 0 };                                                  \
		struct call c;                                                                   \
		CUresult ret;                                                                    \
                                                                                                 \
		if (cfg) {                                                                       \
			k = (struct kernel_launch){                                              \
				.grid = { cfg->gridDimX, cfg->gridDimY, cfg->gridDimZ },         \
				.block = { cfg->blockDimX, cfg->blockDimY, cfg->blockDimZ },     \
				.shmem = cfg->sharedMemBytes,                                    \
				.stream = cfg->hStream,                                          \
			};                                                                       \
		}                                                                                \
		call_begin(&c);                                                                  \
		ret = fn ? fn(cfg, f, params, extra) : CUDA_ERROR_NOT_FOUND;                     \
		driver_kernel(&c, ret, cbid, f, &k);                                             \
		return ret;                                                                      \
	}

DRIVER_LAUNCH_EX(cuLaunchKernelEx, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx)
DRIVER_LAUNCH_EX(cuLaunchKernelEx_ptsz, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz)
