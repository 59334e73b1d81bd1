/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The launch probes (bpf/launch.bpf.c) and the loader: the probed launch
 * APIs and their attach cookies, the launch record and the per-CPU stages
 * that batch it, a thread's first launch, and the code ranges of CUDA
 * runtimes that tell a nested driver call.
 */
#ifndef CUPROBE_LAUNCH_H
#define CUPROBE_LAUNCH_H

#include "records.h"

/*
 * Every probed entry point. The attach cookie carries the value, so one BPF
 * program serves all of them. Runtime APIs come first, then driver APIs.
 */
enum cuprobe_api {
	API_cudaLaunchKernel,
	API_cudaLaunchKernel_ptsz,
	API_cudaLaunchKernelExC,
	API_cudaLaunchKernelExC_ptsz,
	API_cudaLaunchCooperativeKernel,
	API_cudaLaunchCooperativeKernel_ptsz,
	API_cudaGraphLaunch,
	API_cudaGraphLaunch_ptsz,
	API_cudaMemcpyAsync,
	API_cudaMemcpyAsync_ptsz,
	API_cudaMemsetAsync,
	API_cudaMemsetAsync_ptsz,
	API_cuLaunchKernel,
	API_cuLaunchKernel_ptsz,
	API_cuLaunchKernelEx,
	API_cuLaunchKernelEx_ptsz,
	API_cuGraphLaunch,
	API_cuGraphLaunch_ptsz,
	API__COUNT,
};

#define API_FIRST_DRIVER API_cuLaunchKernel

/* Each launch API's _ptsz form follows it: its stream 0 is the thread's default stream. */
static inline int launch_api_ptsz(unsigned int api)
{
	return api & 1;
}

_Static_assert(API_cudaMemsetAsync_ptsz == 11 && API_cuGraphLaunch_ptsz == 17 &&
		       API__COUNT == 18, "launch APIs come in pairs, the _ptsz form second");

/* Launch flags. */
#define LAUNCH_F_HAS_DUR (1u << 0) /* dur_ns is an API duration (--latency) */
#define LAUNCH_F_USTACK	 (1u << 1) /* --stack: ustack is the key of the user stack in ustacks */
#define LAUNCH_F_PYSTACK (1u << 2) /* the thread runs Python: pystack names its frames */
#define LAUNCH_F_PYLOST	 (1u << 3) /* it runs Python, but its frames were lost (map full) */
#define LAUNCH_F_ULOST	 (1u << 4) /* --stack: the user stack was lost (map full) */
/* A runtime launch seen only at the driver's probe, whose host stub was not learned:
 * func is the CUfunction the runtime passed, named as a driver launch's. */
#define LAUNCH_F_HANDLE	 (1u << 5)
/*
 * Made into a stream while it was captured (capture.h): a node added to the
 * graph of capture `capture`, not work run. Not a launch in any count.
 */
#define LAUNCH_F_CAPTURED (1u << 6)

struct launch_event {
	__u32 type;	 /* REC_LAUNCH */
	__u32 api;	 /* enum cuprobe_api */
	__u32 tgid;
	__u32 tid;
	__u64 ts_ns;	 /* CLOCK_MONOTONIC at entry */
	__u64 dur_ns;	 /* with LAUNCH_F_HAS_DUR */
	__u64 func;	 /* host-stub address, CUfunction, or graph exec handle */
	__u64 stream;
	__u64 shmem;	 /* dynamic shared memory bytes */
	__u64 bytes;	 /* memcpy / memset size */
	__u32 grid[3];
	__u32 block[3];
	__u32 kind;	 /* cudaMemcpyKind, or memset value */
	__u32 step;	 /* step of the process when the call began */
	__u32 phase;	 /* enum cuprobe_phase of that step (schedule.h) */
	__u32 flags;	 /* LAUNCH_F_* */
	/* --stack (appended): where the launch's stacks are, with LAUNCH_F_USTACK / _PYSTACK. */
	__u64 ustack;	 /* key in the ustacks map (LAUNCH_F_USTACK) */
	__u64 pystack;	 /* key in the py_stacks map (LAUNCH_F_PYSTACK) */
	__u32 capture;	 /* with LAUNCH_F_CAPTURED: the capture's id (capture.h), from 1 */
	__u32 pad;
};

/*
 * Launches staged per CPU (bpf/launch.bpf.c): a full stage goes to the
 * events ring as one record of LAUNCH_BATCH_N launches; the loader reads
 * what a stage holds short of that from the stages map (mmap'ed) on every
 * turn. Records in a batch keep the order of their hits on that CPU.
 */
#define LAUNCH_BATCH_N 32

struct launch_batch {
	__u32 type;	 /* REC_LAUNCH_BATCH */
	__u32 n;	 /* launches in ev[] */
	struct launch_event ev[LAUNCH_BATCH_N];
};

/*
 * One CPU's stage, an element of the BPF map `stages` (one per possible
 * CPU). busy is taken with an atomic exchange by the launch probe (1) or by
 * the loader while it empties the stage (2); a writer that finds it taken (a
 * probe preempted on this CPU, or the loader) sends its launch to the ring
 * alone, so nothing is written twice or torn.
 */
#define STAGE_FREE 0
#define STAGE_PROBE 1
#define STAGE_LOADER 2

struct launch_stage {
	__u32 busy;	 /* STAGE_* */
	__u32 last_tid;	 /* the thread of this CPU's latest launch: named already */
	struct launch_batch b;
};

struct thread_event {
	__u32 type;	 /* REC_THREAD */
	__u32 tgid;
	__u32 tid;
	__u32 pad;
	char comm[16];	 /* TASK_COMM_LEN */
};

/*
 * Attach cookies of launch probes: the API, whether a return probe completes
 * the call, and the generation of the window's links. Links of a window that
 * ended close on another thread, possibly after the next window's links are
 * in: only the generation the step's state names records, so a launch is
 * never counted twice.
 */
#define COOKIE_API_MASK 0xffu
#define COOKIE_LATENCY (1u << 8)
#define COOKIE_GEN_SHIFT 16
/* Bits 32-47: the process's launch_slots index + 1 (0: none, proc_state is looked up). */
#define COOKIE_SLOT_SHIFT 32
#define COOKIE_SLOT_MASK 0xffffull

/* Ranges of code that belong to a CUDA runtime, for the nested-call check. */
#define MAX_RUNTIME_RANGES 64

struct code_range {
	__u64 lo;
	__u64 hi;
};

/*
 * One trap per launch: the runtime's kernel launch probes are left out (the
 * loader sets this before it detaches them), and a driver entry called from a
 * runtime whose probe did not fire is that runtime's launch.
 */
#define RR_ONE_TRAP (1u << 0)
/* The same for graph replays: cudaGraphLaunch(_ptsz)'s probes left out, cuGraphLaunch's record. */
#define RR_ONE_TRAP_GRAPHS (1u << 1)

/* A process's entry in the BPF map runtime_ranges. */
struct runtime_ranges {
	__u32 n;
	__u32 flags;	/* RR_* */
	struct code_range r[MAX_RUNTIME_RANGES];
};

_Static_assert(sizeof(struct launch_event) == 128, "launch_event layout");
_Static_assert(sizeof(struct thread_event) == 32, "thread_event layout");

#endif /* CUPROBE_LAUNCH_H */
