/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The ABI between the in-process agent (libcuprobe-agent.so), the BPF program
 * that copies its output into the ring buffer, and the loader that decodes it.
 * Fixed-width fields only and no kernel or libc headers, like the other ABI
 * headers of include/ (records.h).
 *
 * USDT probes of the agent (provider "cuprobe", both with semaphores):
 *
 *   cuprobe:enable(on, window)   the on/off switch. The probe's semaphore is
 *                                the switch: attaching any uprobe with the
 *                                semaphore's ref_ctr_offset to this site
 *                                raises it; the loader then wakes the
 *                                agent (struct agent_wake below), which reads
 *                                it every CUPROBE_AGENT_POLL_MS while a window
 *                                is open. The site runs only when
 *                                a window opens (on = 1) or closes (on = 0).
 *   cuprobe:records(ptr, len)    data out: ptr (u64) is the address of a chunk
 *                                of len (u64, 1..CUPROBE_AGENT_CHUNK) bytes of
 *                                concatenated agent records in the target's
 *                                memory. Fired only while its own semaphore is
 *                                non-zero, i.e. while a loader listens. The
 *                                memory is valid only during the probe hit.
 *
 * A chunk holds whole records, never a part of one. Every record starts with
 * struct agent_rec_hdr; size counts the header, is a multiple of 8 and is at
 * least 8. A reader skips types it does not know by their size.
 *
 * Sequence of one window (one attach of cuprobe:enable):
 *
 *   AGENT_REC_STARTED(window) | AGENT_REC_ERROR(window)   at the 0 -> 1 edge
 *   ... API, KERNEL, MEMCPY, MEMSET, OVERHEAD, STRING, DROPPED records, as
 *       CUPTI completes them (the agent asks every CUPROBE_AGENT_FLUSH_MS) ...
 *   AGENT_REC_FLUSHED(window)   at the 1 -> 0 edge (or at exit), after every
 *                               record of the window was handed out
 *
 * A FLUSHED record follows every window, including one that failed to start
 * (ERROR instead of STARTED, and no records in between). Its `records` says
 * how many records (markers left out) the agent handed out since the previous
 * FLUSHED, so a reader that counts the same way can tell whether the ring
 * buffer lost some; `no_listener` counts those made while records() had no
 * listener (they are also reported by AGENT_DROP_NO_LISTENER once one
 * listens). Rarely, a record of the window comes just before its STARTED (a
 * CUPTI buffer completed while the kinds were being turned on).
 *
 * What a loader does: attach a program to cuprobe:records for the whole
 * session (it copies ptr[0..len) into the ring buffer as an
 * agent_chunk_event below); attach any program to cuprobe:enable, with the
 * semaphore's ref_ctr_offset, when a window should begin (warmup), wake the
 * agent (struct agent_wake), and wait for STARTED or ERROR; detach it when the window should end and wait,
 * bounded, for FLUSHED. The FLUSHED of a disable comes within
 * CUPROBE_AGENT_POLL_MS plus CUPTI's flush time.
 *
 * Kernel names are interned: AGENT_REC_STRING(id) comes before the first
 * record of the window that uses the id, and ids are stable for the life of
 * the process. Times are CLOCK_MONOTONIC ns (the agent registers that clock
 * with CUPTI), the clock of bpf_ktime_get_ns(). A start and end of 0 mean
 * CUPTI could not time the activity.
 */
#ifndef CUPROBE_AGENT_H
#define CUPROBE_AGENT_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define CUPROBE_AGENT_ABI 1	      /* in AGENT_REC_STARTED; raised on any change */
#define CUPROBE_AGENT_CHUNK 4096      /* most bytes one records() hit hands out */
#define CUPROBE_AGENT_POLL_MS 2	      /* how often an active agent reads the enable semaphore */
#define CUPROBE_AGENT_FLUSH_MS 100    /* how often an active agent asks CUPTI for records */
#define CUPROBE_AGENT_STRING_MAX 65536 /* longer names are cut to this length */
#define CUPROBE_AGENT_ERROR_MAX 256   /* longest error message */

/*
 * Record types. They start above 0xff so that they can never be taken for a
 * ring-buffer record type of enum cuprobe_rec.
 */
enum agent_rec_type {
	AGENT_REC_API = 0x101,	    /* struct agent_api */
	AGENT_REC_KERNEL = 0x102,   /* struct agent_kernel */
	AGENT_REC_MEMCPY = 0x103,   /* struct agent_memcpy */
	AGENT_REC_MEMSET = 0x104,   /* struct agent_memset */
	AGENT_REC_OVERHEAD = 0x105, /* struct agent_overhead */
	AGENT_REC_DROPPED = 0x106,  /* struct agent_dropped */
	AGENT_REC_STRING = 0x107,   /* struct agent_string + bytes */
	AGENT_REC_ERROR = 0x108,    /* struct agent_error + message */
	AGENT_REC_STARTED = 0x109,  /* struct agent_started */
	AGENT_REC_FLUSHED = 0x10a,  /* struct agent_flushed */
};

struct agent_rec_hdr {
	__u32 type; /* enum agent_rec_type */
	__u32 size; /* bytes of the whole record, header and padding included */
};

/* Which API family an agent_api record belongs to. */
enum agent_api_domain {
	AGENT_API_DRIVER = 1,  /* CUPTI_ACTIVITY_KIND_DRIVER; cbid from cupti_driver_cbid.h */
	AGENT_API_RUNTIME = 2, /* CUPTI_ACTIVITY_KIND_RUNTIME; cbid from cupti_runtime_cbid.h */
};

/* A runtime or driver API call (CUpti_ActivityAPI). */
struct agent_api {
	__u32 type; /* AGENT_REC_API */
	__u32 size;
	__u64 start_ns;
	__u64 end_ns;
	__u32 domain; /* enum agent_api_domain */
	__u32 cbid;
	__u32 pid;
	__u32 tid; /* system thread id (gettid) */
	__u32 correlation;
	__u32 ret; /* cudaError_t or CUresult the call returned */
};

/* A kernel (CUpti_ActivityKernel10). */
struct agent_kernel {
	__u32 type; /* AGENT_REC_KERNEL */
	__u32 size;
	__u64 start_ns;
	__u64 end_ns;
	__u32 device;
	__u32 context;
	__u32 stream; /* CUPTI's stream id, not the handle */
	__u32 correlation;
	__u32 grid[3];
	__u32 block[3];
	__u32 dyn_shmem;
	__u32 static_shmem;
	__u32 registers; /* per thread */
	__u32 name_id;	 /* AGENT_REC_STRING id; 0 when CUPTI gave no name */
	__u64 graph_node_id;
	__u32 graph_id; /* 0 unless launched by a graph */
	__u32 launch_type; /* CUpti_ActivityLaunchType */
};

/* A memory copy (CUpti_ActivityMemcpy6). */
struct agent_memcpy {
	__u32 type; /* AGENT_REC_MEMCPY */
	__u32 size;
	__u64 start_ns;
	__u64 end_ns;
	__u64 bytes;
	__u32 copy_kind; /* CUpti_ActivityMemcpyKind */
	__u32 src_kind;	 /* CUpti_ActivityMemoryKind */
	__u32 dst_kind;	 /* CUpti_ActivityMemoryKind */
	__u32 flags;	 /* CUpti_ActivityFlag */
	__u32 device;
	__u32 context;
	__u32 stream;
	__u32 correlation;
	__u64 graph_node_id;
	__u32 graph_id;
	__u32 runtime_correlation;
};

/* A memory set (CUpti_ActivityMemset4). */
struct agent_memset {
	__u32 type; /* AGENT_REC_MEMSET */
	__u32 size;
	__u64 start_ns;
	__u64 end_ns;
	__u64 bytes;
	__u32 value;
	__u32 memory_kind; /* CUpti_ActivityMemoryKind */
	__u32 device;
	__u32 context;
	__u32 stream;
	__u32 correlation;
	__u64 graph_node_id;
	__u32 graph_id;
	__u32 flags;
};

/* Time CUPTI or the driver spent on itself (CUpti_ActivityOverhead3). */
struct agent_overhead {
	__u32 type; /* AGENT_REC_OVERHEAD */
	__u32 size;
	__u64 start_ns;
	__u64 end_ns;
	__u32 overhead_kind; /* CUpti_ActivityOverheadKind */
	__u32 object_kind;   /* CUpti_ActivityObjectKind */
	/* process, thread, 0 for a process or thread object; else device, context, stream */
	__u32 object_id[3];
	__u32 correlation;
};

/* Why records were lost before they reached the reader. */
enum agent_drop_reason {
	AGENT_DROP_CUPTI = 1,	    /* cuptiActivityGetNumDroppedRecords: records CUPTI lost */
	AGENT_DROP_NO_BUFFER = 2,   /* buffer requests refused: the agent's pool was spent */
	AGENT_DROP_NO_LISTENER = 3, /* records made while nothing listened on records() */
	AGENT_DROP_BAD_RECORD = 4,  /* a buffer's walk ended at an unreadable record */
};

struct agent_dropped {
	__u32 type; /* AGENT_REC_DROPPED */
	__u32 size;
	__u64 count; /* since the previous agent_dropped of this reason */
	__u32 reason; /* enum agent_drop_reason */
	__u32 pad;
};

/*
 * One piece of an interned string (a kernel name as CUPTI gives it, mangled).
 * A string longer than one chunk comes in pieces of the same id, in order;
 * the string is whole once offset + len == total_len. No NUL is included;
 * the bytes follow the struct and are padded with zeros to a multiple of 8.
 */
struct agent_string {
	__u32 type; /* AGENT_REC_STRING */
	__u32 size; /* sizeof(struct agent_string) + len rounded up to 8 */
	__u32 id;   /* never 0 */
	__u32 total_len; /* at most CUPROBE_AGENT_STRING_MAX */
	__u32 offset;
	__u32 len;
	/* char bytes[len]; */
};

/* Where the agent was when CUPTI refused. */
enum agent_stage {
	AGENT_STAGE_VERSION = 1,  /* cuptiGetVersion, or a CUPTI of another major version */
	AGENT_STAGE_CALLBACKS = 2, /* cuptiActivityRegisterCallbacks */
	AGENT_STAGE_CLOCK = 3,	  /* cuptiActivityRegisterTimestampCallback */
	AGENT_STAGE_THREAD_ID = 4, /* cuptiSetThreadIdType */
	AGENT_STAGE_ENABLE = 5,	  /* cuptiActivityEnable of a required kind */
	AGENT_STAGE_ENABLE_OPTIONAL = 6, /* cuptiActivityEnable(OVERHEAD): window still runs */
	AGENT_STAGE_FLUSH = 7,	  /* cuptiActivityFlushAll */
	AGENT_STAGE_RECORD = 8,	  /* cuptiActivityGetNextRecord */
};

/*
 * CUPTI refused something. Unless the stage is ENABLE_OPTIONAL or one of the
 * last two, the window did not start: CUPTI stays off in that window and the
 * loader should warn and carry on with launches alone. The message (no NUL)
 * follows the struct, padded with zeros to a multiple of 8.
 */
struct agent_error {
	__u32 type; /* AGENT_REC_ERROR */
	__u32 size; /* sizeof(struct agent_error) + len rounded up to 8 */
	__u32 code;  /* CUptiResult; 39 (MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED): another profiler */
	__u32 stage; /* enum agent_stage */
	__u32 window;
	__u32 len; /* at most CUPROBE_AGENT_ERROR_MAX */
	/* char message[len]; */
};

/* CUPTI is on: the window's records follow. */
struct agent_started {
	__u32 type; /* AGENT_REC_STARTED */
	__u32 size;
	__u64 ts_ns;
	__u32 window; /* counts from 1 in each process */
	__u32 cupti_version; /* cuptiGetVersion */
	__u32 pid;
	__u32 abi; /* CUPROBE_AGENT_ABI */
};

enum agent_flush_reason {
	AGENT_FLUSH_DISABLE = 1, /* the enable semaphore dropped to 0 */
	AGENT_FLUSH_EXIT = 2,	 /* the process is exiting */
};

/* Every record of the window has been handed out; CUPTI is off again. */
struct agent_flushed {
	__u32 type; /* AGENT_REC_FLUSHED */
	__u32 size;
	__u64 ts_ns;
	__u32 window;
	__u32 reason;  /* enum agent_flush_reason */
	__u64 records; /* records handed out since the previous FLUSHED, markers left out */
	__u64 no_listener; /* records made in the window while nothing listened */
};

/*
 * Any one record: the agent builds its records in one, the decoder hands
 * them out in one (an anonymous union of the same members, in C11).
 */
#define AGENT_ANY_MEMBERS                                                                          \
	struct agent_rec_hdr hdr;                                                                  \
	struct agent_api api;                                                                      \
	struct agent_kernel kernel;                                                                \
	struct agent_memcpy memcpy;                                                                \
	struct agent_memset memset;                                                                \
	struct agent_overhead overhead;                                                            \
	struct agent_dropped dropped;                                                              \
	struct agent_string string;                                                                \
	struct agent_error error;                                                                  \
	struct agent_started started;                                                              \
	struct agent_flushed flushed

union agent_any {
	AGENT_ANY_MEMBERS;
};

_Static_assert(sizeof(struct agent_rec_hdr) == 8, "agent_rec_hdr layout");
_Static_assert(sizeof(struct agent_api) == 48, "agent_api layout");
_Static_assert(sizeof(struct agent_kernel) == 96, "agent_kernel layout");
_Static_assert(sizeof(struct agent_memcpy) == 80, "agent_memcpy layout");
_Static_assert(sizeof(struct agent_memset) == 72, "agent_memset layout");
_Static_assert(sizeof(struct agent_overhead) == 48, "agent_overhead layout");
_Static_assert(sizeof(struct agent_dropped) == 24, "agent_dropped layout");
_Static_assert(sizeof(struct agent_string) == 24, "agent_string layout");
_Static_assert(sizeof(struct agent_error) == 24, "agent_error layout");
_Static_assert(sizeof(struct agent_started) == 32, "agent_started layout");
_Static_assert(sizeof(struct agent_flushed) == 40, "agent_flushed layout");

/*
 * What the BPF program on cuprobe:records puts in the ring buffer: a header
 * and the chunk's len bytes. The type is REC_AGENT of enum cuprobe_rec
 * (records.h); the BPF side asserts that the two agree.
 */
#define AGENT_CHUNK_EVENT 5

struct agent_chunk_event {
	__u32 type; /* AGENT_CHUNK_EVENT */
	__u32 tgid;
	__u32 tid;
	__u32 len; /* bytes of data, 1..CUPROBE_AGENT_CHUNK */
	__u64 ts_ns;
	__u8 data[CUPROBE_AGENT_CHUNK];
};

_Static_assert(sizeof(struct agent_chunk_event) == 24 + CUPROBE_AGENT_CHUNK,
	       "agent_chunk_event layout");

/*
 * How a loader wakes the agent (the dormant agent sleeps without a timeout).
 * The agent exports one struct agent_wake named CUPROBE_AGENT_WAKE_SYMBOL
 * (.data, default visibility): once magic is CUPROBE_AGENT_WAKE_MAGIC, fd is
 * an eventfd of the process whose getpid() is pid. After raising or dropping
 * a semaphore a loader reads the struct (process_vm_readv at the symbol's
 * address), takes the fd (pidfd_getfd) and writes 1 to it: the agent then
 * reads the semaphores at once. Without a wake, a dormant agent never looks;
 * an agent with CUPTI set up and no window looks every
 * CUPROBE_AGENT_IDLE_CHECK_MS (to tear CUPTI down once no loader listens);
 * an active one every CUPROBE_AGENT_POLL_MS.
 */
#define CUPROBE_AGENT_WAKE_SYMBOL "cuprobe_agent_wake"
#define CUPROBE_AGENT_WAKE_MAGIC 0x6b617775u /* "uwak" */
#define CUPROBE_AGENT_IDLE_CHECK_MS 1000

struct agent_wake {
	__u32 magic;
	__s32 fd;
	__s32 pid;	/* the agent's getpid(), in its own pid namespace */
	__u32 abi;	/* CUPROBE_AGENT_ABI */
};

#endif /* CUPROBE_AGENT_H */
