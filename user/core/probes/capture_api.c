// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "core/probes/capture_api.h"

/*
 * The names as libcudart.so.13 and libcuda (535 and later) export them.
 * cuda.h maps cuStreamBeginCapture to cuStreamBeginCapture_v2; the old
 * entry is still exported, and probed too. cuStreamBeginCaptureToGraph is
 * CUDA 12.3's: an older driver lacks it, and it is not probed there.
 */
const char *const capture_apis[CAP__COUNT] = {
	[CAP_cudaStreamBeginCapture] = "cudaStreamBeginCapture",
	[CAP_cudaStreamBeginCapture_ptsz] = "cudaStreamBeginCapture_ptsz",
	[CAP_cudaStreamBeginCaptureToGraph] = "cudaStreamBeginCaptureToGraph",
	[CAP_cudaStreamBeginCaptureToGraph_ptsz] = "cudaStreamBeginCaptureToGraph_ptsz",
	[CAP_cuStreamBeginCapture] = "cuStreamBeginCapture",
	[CAP_cuStreamBeginCapture_ptsz] = "cuStreamBeginCapture_ptsz",
	[CAP_cuStreamBeginCapture_v2] = "cuStreamBeginCapture_v2",
	[CAP_cuStreamBeginCapture_v2_ptsz] = "cuStreamBeginCapture_v2_ptsz",
	[CAP_cuStreamBeginCaptureToGraph] = "cuStreamBeginCaptureToGraph",
	[CAP_cuStreamBeginCaptureToGraph_ptsz] = "cuStreamBeginCaptureToGraph_ptsz",
	[CAP_cudaStreamEndCapture] = "cudaStreamEndCapture",
	[CAP_cudaStreamEndCapture_ptsz] = "cudaStreamEndCapture_ptsz",
	[CAP_cuStreamEndCapture] = "cuStreamEndCapture",
	[CAP_cuStreamEndCapture_ptsz] = "cuStreamEndCapture_ptsz",
	[CAP_cudaEventRecord] = "cudaEventRecord",
	[CAP_cudaEventRecord_ptsz] = "cudaEventRecord_ptsz",
	[CAP_cudaEventRecordWithFlags] = "cudaEventRecordWithFlags",
	[CAP_cudaEventRecordWithFlags_ptsz] = "cudaEventRecordWithFlags_ptsz",
	[CAP_cuEventRecord] = "cuEventRecord",
	[CAP_cuEventRecord_ptsz] = "cuEventRecord_ptsz",
	[CAP_cuEventRecordWithFlags] = "cuEventRecordWithFlags",
	[CAP_cuEventRecordWithFlags_ptsz] = "cuEventRecordWithFlags_ptsz",
	[CAP_cudaStreamWaitEvent] = "cudaStreamWaitEvent",
	[CAP_cudaStreamWaitEvent_ptsz] = "cudaStreamWaitEvent_ptsz",
	[CAP_cuStreamWaitEvent] = "cuStreamWaitEvent",
	[CAP_cuStreamWaitEvent_ptsz] = "cuStreamWaitEvent_ptsz",
	[CAP_cudaThreadExchangeStreamCaptureMode] = "cudaThreadExchangeStreamCaptureMode",
	[CAP_cuThreadExchangeStreamCaptureMode] = "cuThreadExchangeStreamCaptureMode",
};
