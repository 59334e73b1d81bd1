// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "cuda/launch_api.h"

/* cbids from CUDA 13.0's cupti_runtime_cbid.h and cupti_driver_cbid.h. */
const struct launch_api launch_apis[API__COUNT] = {
	[API_cudaLaunchKernel] = { "cudaLaunchKernel", 211 },
	[API_cudaLaunchKernel_ptsz] = { "cudaLaunchKernel_ptsz", 214 },
	[API_cudaLaunchKernelExC] = { "cudaLaunchKernelExC", 430 },
	[API_cudaLaunchKernelExC_ptsz] = { "cudaLaunchKernelExC_ptsz", 431 },
	[API_cudaLaunchCooperativeKernel] = { "cudaLaunchCooperativeKernel", 269 },
	[API_cudaLaunchCooperativeKernel_ptsz] = { "cudaLaunchCooperativeKernel_ptsz", 270 },
	[API_cudaGraphLaunch] = { "cudaGraphLaunch", 311 },
	[API_cudaGraphLaunch_ptsz] = { "cudaGraphLaunch_ptsz", 312 },
	[API_cudaMemcpyAsync] = { "cudaMemcpyAsync", 41 },
	[API_cudaMemcpyAsync_ptsz] = { "cudaMemcpyAsync_ptsz", 225 },
	[API_cudaMemsetAsync] = { "cudaMemsetAsync", 51 },
	[API_cudaMemsetAsync_ptsz] = { "cudaMemsetAsync_ptsz", 235 },
	[API_cuLaunchKernel] = { "cuLaunchKernel", 307 },
	[API_cuLaunchKernel_ptsz] = { "cuLaunchKernel_ptsz", 442 },
	[API_cuLaunchKernelEx] = { "cuLaunchKernelEx", 652 },
	[API_cuLaunchKernelEx_ptsz] = { "cuLaunchKernelEx_ptsz", 653 },
	[API_cuGraphLaunch] = { "cuGraphLaunch", 514 },
	[API_cuGraphLaunch_ptsz] = { "cuGraphLaunch_ptsz", 515 },
};

enum launch_what launch_api_what(unsigned int api)
{
	switch (api) {
	case API_cudaGraphLaunch:
	case API_cudaGraphLaunch_ptsz:
	case API_cuGraphLaunch:
	case API_cuGraphLaunch_ptsz:
		return LAUNCH_GRAPH;
	case API_cudaMemcpyAsync:
	case API_cudaMemcpyAsync_ptsz:
		return LAUNCH_MEMCPY;
	case API_cudaMemsetAsync:
	case API_cudaMemsetAsync_ptsz:
		return LAUNCH_MEMSET;
	default:
		return LAUNCH_KERNEL;
	}
}

const char *launch_memcpy_kind(unsigned int kind)
{
	/* enum cudaMemcpyKind, driver_types.h */
	static const char *const names[] = { "HtoH", "HtoD", "DtoH", "DtoD", "Default" };

	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "Unknown";
}

void launch_api_names(const char *names[API__COUNT])
{
	for (int i = 0; i < API__COUNT; i++)
		names[i] = launch_apis[i].name;
}
