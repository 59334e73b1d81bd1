/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the stand-in runtime (fakecudart.c) calls in the stand-in driver
 * (fakecuda.c) beyond cuda.h: stream capture. In CUDA the runtime's
 * cudaLaunchKernel into a capturing stream calls cuLaunchKernel, and the
 * driver adds the node inside, with no public call. Here the runtime keeps
 * the capture, so the driver offers these instead. Their names start with
 * no "cu", so no profiler's probe on a CUDA entry point ever sees them.
 * They return CUDA_SUCCESS, or CUDA_ERROR_INVALID_VALUE for a graph handle
 * that is not a live graph, or CUDA_ERROR_OUT_OF_MEMORY.
 *
 * And the one driver export both use that cuda.h leaves undeclared here.
 */
#ifndef FAKECUDA_H
#define FAKECUDA_H

#include <stddef.h>

#include <cuda.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A fresh, empty graph handle for a capture to fill, as cuStreamBeginCapture makes. */
CUresult fakecuda_graph_new(CUgraph *graph);

/* A captured launch, copy (kind: cudaMemcpyKind's number) or set, appended to graph. */
CUresult fakecuda_capture_kernel(CUgraph graph, const CUDA_KERNEL_NODE_PARAMS *params);
CUresult fakecuda_capture_copy(CUgraph graph, size_t bytes, int kind);
CUresult fakecuda_capture_set(CUgraph graph, size_t bytes, unsigned int value);

/* An export of the driver that cuda.h declares only for per-thread default streams. */
CUresult CUDAAPI cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream);

#ifdef __cplusplus
}
#endif

#endif /* FAKECUDA_H */
