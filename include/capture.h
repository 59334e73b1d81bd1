/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Stream capture: the calls that begin and end it, and the event calls that
 * join another stream to it, as bpf/capture.bpf.c probes them and as the
 * loader attaches them (user/core/probes/probeset.c). A launch, copy or set
 * made into a stream while it is captured adds a node to a graph and runs
 * nothing: the launch probe marks it LAUNCH_F_CAPTURED (launch.h), with the
 * capture's id, from the capture_streams map these probes keep.
 */
#ifndef CUPROBE_CAPTURE_H
#define CUPROBE_CAPTURE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/*
 * Every probed capture entry point; the attach cookie carries the value.
 * Up to the mode calls, each one's _ptsz form follows it (a _ptsz call's
 * stream 0 is the calling thread's default stream).
 */
enum capture_api {
	/* (stream, ...): begins a capture of stream; checked at return */
	CAP_cudaStreamBeginCapture,
	CAP_cudaStreamBeginCapture_ptsz,
	CAP_cudaStreamBeginCaptureToGraph,
	CAP_cudaStreamBeginCaptureToGraph_ptsz,
	CAP_cuStreamBeginCapture,
	CAP_cuStreamBeginCapture_ptsz,
	CAP_cuStreamBeginCapture_v2,
	CAP_cuStreamBeginCapture_v2_ptsz,
	CAP_cuStreamBeginCaptureToGraph,
	CAP_cuStreamBeginCaptureToGraph_ptsz,
	/* (stream, graph *out): ends the capture stream began, and every stream joined to it */
	CAP_cudaStreamEndCapture,
	CAP_cudaStreamEndCapture_ptsz,
	CAP_cuStreamEndCapture,
	CAP_cuStreamEndCapture_ptsz,
	/* (event, stream, ...): an event recorded in a captured stream is a node of its capture */
	CAP_cudaEventRecord,
	CAP_cudaEventRecord_ptsz,
	CAP_cudaEventRecordWithFlags,
	CAP_cudaEventRecordWithFlags_ptsz,
	CAP_cuEventRecord,
	CAP_cuEventRecord_ptsz,
	CAP_cuEventRecordWithFlags,
	CAP_cuEventRecordWithFlags_ptsz,
	/* (stream, event, ...): a stream that waits on such an event joins the capture */
	CAP_cudaStreamWaitEvent,
	CAP_cudaStreamWaitEvent_ptsz,
	CAP_cuStreamWaitEvent,
	CAP_cuStreamWaitEvent_ptsz,
	/*
	 * (mode *): the thread's capture mode, counted; modes decide which other
	 * calls are unsafe during a capture, not which launches are captured.
	 * No _ptsz forms.
	 */
	CAP_cudaThreadExchangeStreamCaptureMode,
	CAP_cuThreadExchangeStreamCaptureMode,
	/*
	 * Graphs, made and changed (graph.h): each one's return tells the
	 * loader, which keeps what every graph and executable graph holds.
	 * Grouped by what they do (capture_graph_op); no _ptsz forms but two.
	 */
	CAP_cudaGraphCreate,		/* (graph *out, flags) */
	CAP_cuGraphCreate,
	CAP_cudaGraphClone,		/* (graph *out, graph) */
	CAP_cuGraphClone,
	CAP_cudaGraphAddKernelNode,	/* (node *out, graph, deps, n, params *) */
	CAP_cuGraphAddKernelNode,
	CAP_cuGraphAddKernelNode_v2,
	CAP_cudaGraphAddMemcpyNode,	/* (node *out, graph, deps, n, cudaMemcpy3DParms *) */
	CAP_cuGraphAddMemcpyNode,	/* (node *out, graph, deps, n, CUDA_MEMCPY3D *, ctx) */
	CAP_cudaGraphAddMemcpyNode1D,	/* (node *out, graph, deps, n, dst, src, count, kind) */
	CAP_cudaGraphAddMemcpyNodeToSymbol,	/* (..., symbol, src, count, offset, kind) */
	CAP_cudaGraphAddMemcpyNodeFromSymbol,	/* (..., dst, symbol, count, offset, kind) */
	CAP_cudaGraphAddMemsetNode,	/* (node *out, graph, deps, n, memset params *) */
	CAP_cuGraphAddMemsetNode,
	CAP_cudaGraphAddChildGraphNode,	/* (node *out, graph, deps, n, child graph) */
	CAP_cuGraphAddChildGraphNode,
	CAP_cudaGraphAddEmptyNode,	/* (node *out, graph, ...): nodes that run no GPU work */
	CAP_cuGraphAddEmptyNode,
	CAP_cudaGraphAddHostNode,
	CAP_cuGraphAddHostNode,
	CAP_cudaGraphAddEventRecordNode,
	CAP_cuGraphAddEventRecordNode,
	CAP_cudaGraphAddEventWaitNode,
	CAP_cuGraphAddEventWaitNode,
	CAP_cudaGraphKernelNodeSetParams,	/* (node, params *) */
	CAP_cuGraphKernelNodeSetParams,
	CAP_cuGraphKernelNodeSetParams_v2,
	CAP_cudaGraphExecKernelNodeSetParams,	/* (exec, node, params *) */
	CAP_cuGraphExecKernelNodeSetParams,
	CAP_cuGraphExecKernelNodeSetParams_v2,
	CAP_cudaGraphInstantiate,	/* (exec *out, graph, ...) */
	CAP_cudaGraphInstantiateWithFlags,
	CAP_cudaGraphInstantiateWithParams,
	CAP_cudaGraphInstantiateWithParams_ptsz,
	CAP_cuGraphInstantiate,
	CAP_cuGraphInstantiate_v2,
	CAP_cuGraphInstantiateWithFlags,
	CAP_cuGraphInstantiateWithParams,
	CAP_cuGraphInstantiateWithParams_ptsz,
	CAP_cudaGraphExecUpdate,	/* (exec, graph, ...) */
	CAP_cuGraphExecUpdate,
	CAP_cuGraphExecUpdate_v2,
	CAP_cudaGraphDestroy,		/* (graph) */
	CAP_cuGraphDestroy,
	CAP_cudaGraphExecDestroy,	/* (exec) */
	CAP_cuGraphExecDestroy,
	CAP__COUNT,
};

#define CAP_FIRST_END CAP_cudaStreamEndCapture
#define CAP_FIRST_RECORD CAP_cudaEventRecord
#define CAP_FIRST_WAIT CAP_cudaStreamWaitEvent
#define CAP_FIRST_MODE CAP_cudaThreadExchangeStreamCaptureMode
#define CAP_FIRST_GRAPH CAP_cudaGraphCreate

/* What a capture API does. */
enum capture_kind {
	CAPTURE_BEGIN,
	CAPTURE_END,
	CAPTURE_RECORD,
	CAPTURE_WAIT,
	CAPTURE_MODE,
	CAPTURE_GRAPH,	/* a graph call: graph.h */
};

static inline enum capture_kind capture_api_kind(unsigned int api)
{
	if (api < CAP_FIRST_END)
		return CAPTURE_BEGIN;
	if (api < CAP_FIRST_RECORD)
		return CAPTURE_END;
	if (api < CAP_FIRST_WAIT)
		return CAPTURE_RECORD;
	if (api < CAP_FIRST_MODE)
		return CAPTURE_WAIT;
	if (api < CAP_FIRST_GRAPH)
		return CAPTURE_MODE;
	return CAPTURE_GRAPH;
}

/* The _ptsz form: stream 0 is the calling thread's default stream. */
static inline int capture_api_ptsz(unsigned int api)
{
	return api < CAP_FIRST_MODE && (api & 1);
}

/*
 * The stream handles that are no stream of their own: cudaStreamLegacy
 * (CU_STREAM_LEGACY) and cudaStreamPerThread (CU_STREAM_PER_THREAD), in
 * driver_types.h and cuda.h. The legacy stream cannot be captured; the
 * per-thread default stream can, and is the calling thread's.
 */
#define CAPTURE_STREAM_LEGACY 0x1ull
#define CAPTURE_STREAM_PER_THREAD 0x2ull

/*
 * A stream, per process, in the BPF map capture_streams. tid is the thread
 * whose default stream it is (stream CAPTURE_STREAM_PER_THREAD), 0 for any
 * other stream, so that two threads' default streams are two keys.
 */
struct capture_key {
	__u32 tgid;
	__u32 tid;
	__u64 stream;
};

/*
 * The key of stream as a call of a _ptsz form or not sees it; 0 when it is
 * the legacy stream, which no capture can hold. Both sides use this rule.
 */
static inline int capture_key_of(struct capture_key *k, __u32 tgid, __u32 tid, __u64 stream,
				 int ptsz)
{
	if (stream == CAPTURE_STREAM_LEGACY || (!stream && !ptsz))
		return 0;
	k->tgid = tgid;
	k->tid = 0;
	k->stream = stream;
	if (!stream || stream == CAPTURE_STREAM_PER_THREAD) {
		k->tid = tid;
		k->stream = CAPTURE_STREAM_PER_THREAD;
	}
	return 1;
}

#define CAPTURE_F_ORIGIN (1u << 0) /* the stream the capture began on; else joined by an event */

/* A captured stream: capture_streams' value. Ids are the session's, from 1. */
struct capture_stream {
	__u32 id;
	__u32 flags;	/* CAPTURE_F_* */
};

/* An event recorded into a captured stream: capture_events' value, keyed like a stream. */
struct capture_event_mark {
	__u32 id;	/* the capture it belongs to */
	__u32 pad;
};

/* Entries of capture_streams and capture_events, all processes together. */
#define CAPTURE_MAP_ENTRIES 4096

_Static_assert(sizeof(struct capture_key) == 16, "capture_key layout");
_Static_assert(sizeof(struct capture_stream) == 8, "capture_stream layout");
_Static_assert(CAP_FIRST_MODE % 2 == 0, "capture APIs come in pairs up to the mode calls");

#endif /* CUPROBE_CAPTURE_H */
