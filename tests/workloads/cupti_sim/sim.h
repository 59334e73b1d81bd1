/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Internals shared by the CUPTI simulator's files: cupti_sim.c (the CUPTI
 * activity API and its buffers), sim_launch.c (the CUDA launch functions it
 * interposes) and sim_names.c (kernel names from ELF symbol tables).
 */
#ifndef CUPTI_SIM_H
#define CUPTI_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cupti.h>

#define SIM_EXPORT __attribute__((visibility("default")))

/* Fault injection and timing, read from CUPTI_SIM_* at load (README.md). */
struct sim_config {
	uint64_t gpu_delay_ns; /* GPU start after the API call's end */
	uint64_t gpu_dur_ns;
	uint64_t skew_ns;      /* > 0: GPU start this long before the API start */
	bool late;	       /* GPU records only at a forced flush */
	bool reorder;	       /* each buffer's records in reverse order */
	bool hold;	       /* full buffers only at a forced flush */
	size_t buffer_bytes;   /* > 0: use at most this much of each buffer */
	uint64_t drop;	       /* drop this many GPU records, then none */
	unsigned int graph_nodes;
	uint32_t version;      /* what cuptiGetVersion says */
};

extern struct sim_config sim_cfg;

/* Timestamps from the client's timestamp callback, else CLOCK_REALTIME as CUPTI. */
uint64_t sim_now(void);
/* The thread id CUPTI would put in an API record (system or POSIX kind). */
uint32_t sim_thread_id(void);
bool sim_kind_on(CUpti_ActivityKind kind);
/* True when any kind that the launch functions feed is on. */
bool sim_tracing(void);
uint32_t sim_next_correlation(void);
/* Puts a record into the activity buffers; gpu marks GPU-side records. */
void sim_emit(const void *rec, size_t size, bool gpu);

/* The mangled symbol of a kernel's host stub, or a made-up stable name. */
const char *sim_kernel_name(const void *func);
/* A copy of s that lives as long as the process, one per distinct string:
 * CUPTI's names are shared by every record of the same kernel. */
const char *sim_intern_name(const char *s);

#endif /* CUPTI_SIM_H */
