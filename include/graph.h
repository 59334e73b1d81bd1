/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Graph calls as the capture probes (bpf/capture.bpf.c) tell the loader of
 * them: one record per call that returned success, on the events ring (in order
 * with the handle names its kernels need, and with the replays). The
 * loader keeps, per process, what each graph holds and which content each
 * executable graph runs (user/core/graphs/graph_store.c), so that a replay
 * is expanded into its kernels without CUPTI.
 */
#ifndef CUPROBE_GRAPH_H
#define CUPROBE_GRAPH_H

#include "capture.h"
#include "records.h"

/* What a graph call does. */
enum graph_op {
	GOP_NONE,
	GOP_CAPTURED,	/* a capture ended: out is its graph, capture its id */
	GOP_CREATE,	/* out: a new, empty graph */
	GOP_CLONE,	/* out: a copy of graph a */
	GOP_ADD_KERNEL,	/* out: a kernel node of graph a (func, grid, block, shmem) */
	GOP_ADD_COPY,	/* out: a copy node of graph a (bytes, kind) */
	GOP_ADD_SET,	/* out: a set node of graph a (bytes) */
	GOP_ADD_CHILD,	/* out: a node of graph a holding a copy of graph b */
	GOP_ADD_OTHER,	/* out: a node of graph a that runs no kernel, copy or set */
	GOP_NODE_PARAMS,	/* node b of its graph now launches func, grid, ... */
	GOP_EXEC_PARAMS,	/* node b, as executable graph a runs it, now launches func, ... */
	GOP_INSTANTIATE,	/* out: an executable graph of graph a as it is now */
	GOP_UPDATE,	/* executable graph a now runs graph b as it is now */
	GOP_DESTROY,	/* graph a is gone: its handle may come back for another */
	GOP_EXEC_DESTROY,	/* executable graph a is gone */
};

/* Memory a copy node copies, in the layout its API reads. */
enum graph_copy_args {
	GCOPY_NONE,
	GCOPY_3D_RT,	/* cudaMemcpy3DParms: extent at 128, kind at 152 */
	GCOPY_3D_DRV,	/* CUDA_MEMCPY3D: WidthInBytes, Height, Depth at 176 */
	GCOPY_1D,	/* count the 7th argument, kind the 9th (symbol) or 8th */
};

static inline enum graph_op capture_graph_op(unsigned int api)
{
	switch (api) {
	case CAP_cudaStreamEndCapture:
	case CAP_cudaStreamEndCapture_ptsz:
	case CAP_cuStreamEndCapture:
	case CAP_cuStreamEndCapture_ptsz:
		return GOP_CAPTURED;
	case CAP_cudaGraphCreate:
	case CAP_cuGraphCreate:
		return GOP_CREATE;
	case CAP_cudaGraphClone:
	case CAP_cuGraphClone:
		return GOP_CLONE;
	case CAP_cudaGraphAddKernelNode:
	case CAP_cuGraphAddKernelNode:
	case CAP_cuGraphAddKernelNode_v2:
		return GOP_ADD_KERNEL;
	case CAP_cudaGraphAddMemcpyNode:
	case CAP_cuGraphAddMemcpyNode:
	case CAP_cudaGraphAddMemcpyNode1D:
	case CAP_cudaGraphAddMemcpyNodeToSymbol:
	case CAP_cudaGraphAddMemcpyNodeFromSymbol:
		return GOP_ADD_COPY;
	case CAP_cudaGraphAddMemsetNode:
	case CAP_cuGraphAddMemsetNode:
		return GOP_ADD_SET;
	case CAP_cudaGraphAddChildGraphNode:
	case CAP_cuGraphAddChildGraphNode:
		return GOP_ADD_CHILD;
	case CAP_cudaGraphAddEmptyNode:
	case CAP_cuGraphAddEmptyNode:
	case CAP_cudaGraphAddHostNode:
	case CAP_cuGraphAddHostNode:
	case CAP_cudaGraphAddEventRecordNode:
	case CAP_cuGraphAddEventRecordNode:
	case CAP_cudaGraphAddEventWaitNode:
	case CAP_cuGraphAddEventWaitNode:
		return GOP_ADD_OTHER;
	case CAP_cudaGraphKernelNodeSetParams:
	case CAP_cuGraphKernelNodeSetParams:
	case CAP_cuGraphKernelNodeSetParams_v2:
		return GOP_NODE_PARAMS;
	case CAP_cudaGraphExecKernelNodeSetParams:
	case CAP_cuGraphExecKernelNodeSetParams:
	case CAP_cuGraphExecKernelNodeSetParams_v2:
		return GOP_EXEC_PARAMS;
	case CAP_cudaGraphInstantiate:
	case CAP_cudaGraphInstantiateWithFlags:
	case CAP_cudaGraphInstantiateWithParams:
	case CAP_cudaGraphInstantiateWithParams_ptsz:
	case CAP_cuGraphInstantiate:
	case CAP_cuGraphInstantiate_v2:
	case CAP_cuGraphInstantiateWithFlags:
	case CAP_cuGraphInstantiateWithParams:
	case CAP_cuGraphInstantiateWithParams_ptsz:
		return GOP_INSTANTIATE;
	case CAP_cudaGraphExecUpdate:
	case CAP_cuGraphExecUpdate:
	case CAP_cuGraphExecUpdate_v2:
		return GOP_UPDATE;
	case CAP_cudaGraphDestroy:
	case CAP_cuGraphDestroy:
		return GOP_DESTROY;
	case CAP_cudaGraphExecDestroy:
	case CAP_cuGraphExecDestroy:
		return GOP_EXEC_DESTROY;
	}
	return GOP_NONE;
}

static inline enum graph_copy_args capture_graph_copy(unsigned int api)
{
	switch (api) {
	case CAP_cudaGraphAddMemcpyNode:
		return GCOPY_3D_RT;
	case CAP_cuGraphAddMemcpyNode:
		return GCOPY_3D_DRV;
	case CAP_cudaGraphAddMemcpyNode1D:
	case CAP_cudaGraphAddMemcpyNodeToSymbol:
	case CAP_cudaGraphAddMemcpyNodeFromSymbol:
		return GCOPY_1D;
	}
	return GCOPY_NONE;
}

/*
 * Kernel node params: cudaKernelNodeParams and CUDA_KERNEL_NODE_PARAMS(_v2)
 * begin alike (func, grid, block, shared memory); the driver's v2 has the
 * CUkernel at 56, given in place of func by a runtime that has one.
 */
struct graph_kernel_params {
	__u64 func;
	__u32 grid[3];
	__u32 block[3];
	__u32 shmem;
	__u32 pad;
	__u64 kernel_params;
	__u64 extra;
	__u64 kern;	/* _v2 only: a v1 struct ends before it */
};

struct graph_event {
	__u32 type;	/* REC_GRAPH */
	__u32 api;	/* enum capture_api */
	__u32 tgid;
	__u32 tid;
	__u64 ts_ns;	/* at return */
	__u64 out;	/* what the call made: a graph, node or executable graph */
	__u64 a, b;	/* its handles: see enum graph_op */
	__u64 func;	/* kernel nodes: host stub (cuda…), CUfunction or CUkernel (cu…) */
	__u64 bytes;	/* copies and sets */
	__u64 out_ptr;	/* where out is written: read at return */
	__u32 grid[3];
	__u32 block[3];
	__u32 shmem;
	__u32 kind;	/* copies: cudaMemcpyKind; 0 when not known */
	__u32 capture;	/* GOP_CAPTURED: the capture's id (capture.h) */
	__u32 flags;	/* GRAPH_F_* */
};

#define GRAPH_F_KERNEL_HANDLE (1u << 0) /* func is a CUkernel (cuGraph…_v2's kern) */

_Static_assert(sizeof(struct graph_event) == 112, "graph_event layout");
_Static_assert(sizeof(struct graph_kernel_params) == 64, "kernel node params layout");

#endif /* CUPROBE_GRAPH_H */
