/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The launch APIs cuprobe probes, as the loader sees them. */
#ifndef CUDA_LAUNCH_API_H
#define CUDA_LAUNCH_API_H

#include <stdbool.h>
#include <stddef.h>
#include "launch.h"

struct launch_api {
	const char *name;  /* exported symbol, also the trace event's name */
	int cbid;	   /* CUPTI callback id (runtime or driver domain) */
};

extern const struct launch_api launch_apis[API__COUNT];

static inline bool launch_api_is_driver(unsigned int api)
{
	return api >= API_FIRST_DRIVER;
}

/*
 * The runtime APIs whose probes one trap per launch leaves out: each of
 * their launches enters a driver kernel launch entry, whose probe records it
 * (bpf/launch.bpf.c, rt_nested).
 */
static inline bool launch_api_one_trap(unsigned int api)
{
	return api <= API_cudaLaunchKernelExC_ptsz;
}

/* The runtime's graph replays, whose probes one trap per replay leaves out. */
static inline bool launch_api_graph_trap(unsigned int api)
{
	return api == API_cudaGraphLaunch || api == API_cudaGraphLaunch_ptsz;
}

/*
 * A runtime object's launch probes are three links, so that one trap can take
 * the first two out each alone: the kernel launches (launch_api_one_trap),
 * the graph replays (launch_api_graph_trap), and the rest.
 */
enum launch_group { LG_KERNEL, LG_GRAPH, LG_REST, LG__COUNT };

/* What the call launches: a kernel, a graph, a copy or a set. */
enum launch_what { LAUNCH_KERNEL, LAUNCH_GRAPH, LAUNCH_MEMCPY, LAUNCH_MEMSET };
enum launch_what launch_api_what(unsigned int api);

/* cudaMemcpyKind as Kineto names it: "HtoD", "DtoH", ... */
const char *launch_memcpy_kind(unsigned int kind);

/* The API names, for symbol lookups: names[i] is launch_apis[i].name. */
void launch_api_names(const char *names[API__COUNT]);

#endif /* CUDA_LAUNCH_API_H */
