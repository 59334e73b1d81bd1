/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The ABI shared by the BPF programs, the loader and the agent. Fixed-width
 * fields only, no kernel or libc headers: every record starts with a __u32
 * type from enum cuprobe_rec, and sizes are pinned below so that a change on
 * one side cannot silently disagree with the other.
 */
#ifndef CUPROBE_H
#define CUPROBE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

enum cuprobe_rec {
	REC_LAUNCH = 1,	 /* an entry of a launch API (struct launch_event) */
	REC_LIBMAP = 2,	 /* the dynamic linker changed the map (struct libmap_event) */
	REC_STEP = 3,	 /* a hit of the step probe (struct step_event) */
	REC_THREAD = 4,	 /* first launch of a thread, with its name (struct thread_event) */
	REC_AGENT = 5,	 /* a chunk of the agent's records (struct agent_chunk_event, agent.h) */
	REC_FORK = 6,	 /* a target or its descendant forked a process (struct fork_event) */
	REC_EXEC = 7,	 /* a followed process ran a new program (struct libmap_event, held) */
	REC_NAME = 8,	 /* a call made a kernel handle or module (struct name_event, names.h) */
	REC_LAUNCH_BATCH = 9, /* launch_events staged on one CPU (struct launch_batch) */
	REC_EXEC_SEEN = 10, /* with watch_exec: any other process ran a new program (struct
			    * fork_event, parent 0); not held */
	REC_GRAPH = 11,	 /* events ring: a graph call returned: made, changed or ended (struct graph_event) */
	REC_CAPTURE = 12, /* a capture began where no launch probe is in (struct libmap_event,
			   * held) */
	REC_RANGE = 13,	 /* --step torch: a record_function range began or ended in a
			  * recorded step (struct range_event) */
};

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

/* Phases of the schedule, torch.profiler's ProfilerAction plus "off". */
enum cuprobe_phase {
	PHASE_NONE = 0,
	PHASE_WARMUP = 1,
	PHASE_RECORD = 2,
	PHASE_RECORD_AND_SAVE = 3,
};

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
	__u32 phase;	 /* enum cuprobe_phase of that step */
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

/*
 * The dynamic linker changed the map of tgid. With held set, the process was
 * stopped (SIGSTOP) before this event went out, and the loader must continue
 * it; either way it answers seq in proc_conf.holds_answered.
 */
struct libmap_event {
	__u32 type;	 /* REC_LIBMAP */
	__u32 tgid;
	__u64 ts_ns;
	__u64 seq;	 /* proc_state.stops after this event */
	__u32 held;	 /* the process was stopped */
	__u32 pad;
};

/* A step boundary: the totals of the process's counters at that moment. */
struct step_event {
	__u32 type;	 /* REC_STEP */
	__u32 tgid;
	__u32 tid;
	__u32 step;	 /* the step that begins at ts_ns */
	__u64 ts_ns;
	__u32 phase;	 /* phase of the step that begins */
	__u32 pad;
	__u64 launch_hits; /* launch probe hits in this process so far */
	__u64 drops;	 /* launches lost so far */
	__u64 nested;	 /* nested entries skipped so far */
	__u64 stale;	 /* hits of an older window's links so far */
};

/* How much of a record_function range's name a range_event carries. */
#define RANGE_NAME_LEN 64
/* Open record_function ranges a thread's depth bits follow: deeper ones are counted (torch_too_deep), not seen. */
#define TORCH_DEPTH_MAX 64

/* --step torch: the range name prefix that ends a process's step (torch_prefixes). */
struct torch_prefix {
	char s[RANGE_NAME_LEN];	/* compared up to len bytes (< RANGE_NAME_LEN) */
	__u32 len;
	__u32 string_abi;	/* TORCH_STRING_*: how the process's torch holds a range's name */
};

/*
 * The std::string record_function_enter_new takes the name in. Both keep the
 * data pointer at +0. C++11's keeps the length at +8; the copy-on-write one
 * of the old ABI (_GLIBCXX_USE_CXX11_ABI=0) keeps it before the characters.
 */
enum torch_string_abi {
	TORCH_STRING_CXX11 = 0,
	TORCH_STRING_COW = 1,
};
#define TORCH_COW_LEN_AT 24	/* bytes before the data: _Rep's length, capacity, refcount */

/*
 * --step torch: a record_function range a thread entered while its process's
 * step recorded (end 0, with its name), and later its end (end 1, no name),
 * matched by tid and depth.
 */
struct range_event {
	__u32 type;	 /* REC_RANGE */
	__u32 tgid;
	__u32 tid;
	__u32 depth;	 /* ranges the thread was in, outside this one */
	__u64 ts_ns;
	__u32 step;	 /* the step it began in */
	__u32 end;	 /* 0: it begins, 1: it ends */
	char name[RANGE_NAME_LEN]; /* begin: the name, cut to RANGE_NAME_LEN - 1 bytes */
};

/* The child shares its parent's memory until it runs a program (vfork, posix_spawn). */
#define FORK_F_SHARED_MM 1

struct fork_event {
	__u32 type;	 /* REC_FORK */
	__u32 tgid;	 /* the new process */
	__u32 parent;	 /* the process that forked it */
	__u32 flags;	 /* FORK_F_*; 0 for REC_EXEC_SEEN */
	__u64 ts_ns;
};

struct thread_event {
	__u32 type;	 /* REC_THREAD */
	__u32 tgid;
	__u32 tid;
	__u32 pad;
	char comm[16];	 /* TASK_COMM_LEN */
};

/* Counters of processes with no state of their own (calibration), and session-wide ones. */
struct cuprobe_counters {
	__u64 hits;	   /* launch probe hits in processes without state (calibration) */
	__u64 nested;	   /* the same for nested entries */
	__u64 drops;	   /* the same for lost launches */
	__u64 lat_misses;  /* returns with no matching entry (calls begun before attach) */
	__u64 agent_bad;   /* agent chunks with a bad length or unreadable */
	__u64 agent_drops; /* agent chunks lost: the ring buffer was full */
};

/* torch.profiler.schedule's parameters (schedule.h evaluates them). */
struct schedule {
	__u32 skip_first;
	__u32 skip_first_wait;	/* 1: skip only the first wait phase */
	__u32 wait;
	__u32 warmup;
	__u32 active;		/* > 0 */
	__u32 repeat;		/* 0: forever */
};

/*
 * A process's entry in the BPF map proc_conf: written by the loader only.
 * The schedule counts steps from the first step hit after gen last changed
 * (from attach, for gen 0): a new schedule, such as a window opened on
 * demand, starts at the process's next step whatever step it is at.
 */
struct proc_conf {
	struct schedule sched;
	__u32 step_every;	/* one step per this many hits of the step probe */
	__u32 gen;		/* raised with each new schedule */
	__u64 holds_answered;	/* the last libmap_event.seq the loader answered */
	__u32 flags;		/* CONF_* */
	__u32 link_gen;		/* the launch links that may record: COOKIE_GEN of theirs */
};

/*
 * Follow the process's children: BPF gives each new process the parent's
 * entries at fork (a copy of this conf, then the loader's), and holds it at
 * exec until its new program is probed.
 */
#define CONF_FOLLOW (1u << 0)
/*
 * No launch probe of the process is in: a capture that begins holds it
 * (REC_CAPTURE) until they are, so that no node of the graph is missed.
 */
#define CONF_CAPTURE_HOLD (1u << 1)
/*
 * The schedule counts from the process's first step (step 0), not from the
 * step where BPF first sees it: a window placed at given step numbers
 * (session__window_at) lands there whatever the loader's lag.
 */
#define CONF_ABS_STEPS (1u << 2)

/*
 * A process's entry in the BPF map proc_state: the loader creates it, then
 * only BPF writes it (counters with atomics, state in one store).
 */
struct proc_state {
	__u64 step_hits;   /* hits of the step probe */
	__u64 state;	   /* step << 8 | phase, written in one store */
	__u64 launch_hits; /* hits of the launch probes, whatever the phase */
	__u64 drops;	   /* launches lost: the events ring was full */
	__u64 nested;	   /* driver entries skipped inside a runtime call */
	__u64 stops;	   /* holds (SIGSTOP) by the library-map probe */
	__u64 lost_ctrl;   /* step, library-map or thread events lost: ctrl ring full */
	__u64 last_stop_ns; /* CLOCK_MONOTONIC of the latest hold */
	__u64 holds_skipped; /* holds not made: the previous one went unanswered too long */
	__u64 base;	   /* the step the schedule counts from */
	__u32 gen;	   /* proc_conf.gen that base belongs to */
	__u32 slot;	   /* its launch_slots index + 1, set by the loader; 0: none */
	__u64 stale;	   /* hits of launch links of an older window, not yet closed */
	__u64 learned;	   /* CUfunctions whose host stub a runtime launch showed (one trap) */
	__u64 nested_at_learned; /* nested when the latest of them was learned */
	/* Stream capture (bpf/capture.bpf.c, capture.h): */
	__u32 captures_open;	 /* begun and not yet ended: launches look their stream up */
	__u32 captures_begun;	 /* since the loader created the entry */
	__u32 capture_joins;	 /* streams joined to a capture by waiting on its event */
	__u32 capture_mode_calls; /* cudaThreadExchangeStreamCaptureMode calls (counted only) */
	/* One trap per graph replay (session_one_trap): */
	__u64 graph_nested;	 /* runtime graph replays that entered a probed cuGraphLaunch */
	__u64 graph_unnested;	 /* runtime graph replays that did not (refused before it) */
};

/*
 * What the launch probe reads and counts on every hit, for a process the
 * loader gave a slot: the index comes in the attach cookie (COOKIE_SLOT), so
 * no map lookup is made per hit. state mirrors proc_state.state (the step
 * probe writes both); launch_hits adds to proc_state.launch_hits (the
 * process's hits are their sum). Rare counts (drops, nested, stale) still go
 * to proc_state. One cache line each. BPF global launch_slots[], in .bss.
 */
struct launch_slot {
	__u32 tgid;	   /* the process the slot is for; another's hits use proc_state */
	__u32 captures_open; /* as proc_state.captures_open (capture probes write both) */
	__u64 state;	   /* as proc_state.state */
	__u64 launch_hits; /* hits counted here, not in proc_state */
	__u64 pad2[5];
};

/*
 * A hold still unanswered after this long means the loader is not running:
 * BPF holds the process no more until the loader catches up, and the
 * guardian continues it (GUARD_STALE_NS).
 */
#define HOLD_STALE_NS (4000 * 1000000ull)

/* Sizes of the maps both sides agree on. */
#define CUPROBE_MAX_PROCS 4096
#define CUPROBE_CTRL_RING (256 * 1024)

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

_Static_assert(sizeof(struct launch_event) == 128, "launch_event layout");
_Static_assert(sizeof(struct libmap_event) == 32, "libmap_event layout");
_Static_assert(sizeof(struct step_event) == 64, "step_event layout");
_Static_assert(sizeof(struct schedule) == 24, "schedule layout");
_Static_assert(sizeof(struct proc_conf) == 48, "proc_conf layout");
_Static_assert(sizeof(struct proc_state) == 144, "proc_state layout");
_Static_assert(sizeof(struct thread_event) == 32, "thread_event layout");
_Static_assert(sizeof(struct launch_slot) == 64, "launch_slot layout");
_Static_assert((CUPROBE_MAX_PROCS & (CUPROBE_MAX_PROCS - 1)) == 0, "slots are masked");
_Static_assert(sizeof(struct fork_event) == 24, "fork_event layout");

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

/*
 * Stacks (--stack). The user stack is walked by frame pointers into the
 * ustacks map, and a thread that runs CPython has its Python frames walked
 * from its thread state into py_stacks: one entry per unique stack in each,
 * keyed by a hash of its frames, so that the loader may delete an entry
 * once it has named it.
 */
#define STACK_MAX_DEPTH 127	/* PERF_MAX_STACK_DEPTH: a stack this deep may be cut */
#define STACK_MAP_ENTRIES 16384
#define PY_MAX_FRAMES 64
#define PY_MAX_THREADS 64	/* thread states looked at to find a thread's */
#define PY_STACK_ENTRIES 4096
#define PY_NONE 0xffffu	/* an offset a version does not have */

/* A user stack: return addresses, the probed function's entry first. */
struct ustack {
	__u32 n;
	__u32 truncated;	/* deeper than STACK_MAX_DEPTH */
	__u64 ip[STACK_MAX_DEPTH];
};

/* One Python frame as BPF saw it: its code object and where it was. */
struct py_frame {
	__u64 code;	/* PyCodeObject * */
	__u64 instr;	/* the instruction pointer (3.11+), or f_lasti (3.10) */
};

struct py_stack {
	__u32 n;	/* frames, leaf first */
	__u32 truncated; /* more frames than PY_MAX_FRAMES */
	__u64 entry;	/* bit i: frame i is the first of its C evaluation call */
	struct py_frame f[PY_MAX_FRAMES];
	__u32 id[PY_MAX_FRAMES]; /* frame i's code: py_code_id, its key in py_codes with f[i].code */
};

/*
 * A code object as BPF read it when a new stack first showed it (py_codes):
 * what names its frames after the process is gone. Keyed by the code's
 * address, the process and an id of what the code holds (py_code_id), so
 * that a code object freed and another made at its address get two keys.
 */
#define PY_CODE_ENTRIES 4096
#define PY_NAME_BYTES 128	/* of the name (co_qualname, else co_name), in its own kind */
#define PY_FILE_BYTES 256	/* of the file name: its end when longer */
#define PY_LINES_BYTES 1024	/* of the line table: its start when longer */

struct py_code_key {
	__u64 code;
	__u32 tgid;
	__u32 id;
};

struct py_code_info {
	__s32 firstlineno;
	__u32 lines_len;	/* bytes of the line table held */
	__u32 lines_full;	/* the table's length */
	__u16 name_len, file_len; /* bytes held */
	__u32 file_full;	/* the file name's length in bytes */
	__u8 name_kind, file_kind; /* bytes a character: 1, 2 or 4 (PEP 393) */
	__u8 pad[2];
	__u8 name[PY_NAME_BYTES];
	__u8 file[PY_FILE_BYTES];
	__u8 lines[PY_LINES_BYTES];
};

/*
 * What tells one code object at an address from another made there later:
 * its name's, file name's and line table's addresses, its first line, and
 * its name's length and string hash (the name's content, which differs
 * even where the allocator gave the new name the old one's address).
 * BPF computes it for each frame, the loader again when it reads a code
 * object late. Interned names have their hash; -1 when not computed.
 */
static inline __u32 py_code_id(__u64 name, __u64 file, __u64 table, __u32 first, __u64 name_len,
			       __u64 name_hash)
{
	__u64 h = 14695981039346656037ull;

	h = (h ^ name) * 1099511628211ull;
	h = (h ^ file) * 1099511628211ull;
	h = (h ^ table) * 1099511628211ull;
	h = (h ^ first) * 1099511628211ull;
	h = (h ^ name_len) * 1099511628211ull;
	h = (h ^ name_hash) * 1099511628211ull;
	return (__u32)(h ^ h >> 32);
}

/*
 * Where a process's interpreter keeps what BPF walks (per CPython version),
 * in the BPF map py_procs. Offsets are bytes; PY_NONE: the version has none.
 */
struct py_offsets {
	__u64 runtime;		/* address of _PyRuntime in the process */
	__u32 version;		/* 0x030b for 3.11 */
	__u16 runtime_interp_head;
	__u16 interp_threads_head;
	__u16 tstate_next;
	__u16 tstate_native_tid; /* PY_NONE (3.10): match thread_id with the thread's TLS base */
	__u16 tstate_thread_id;
	__u16 tstate_frame;	/* the frame, or the _PyCFrame that holds it */
	__u16 cframe_frame;	/* PY_NONE: tstate_frame points at the frame itself */
	__u16 frame_code;
	__u16 frame_back;
	__u16 frame_instr;
	__u16 frame_instr_size;	/* 4: an int (3.10's f_lasti); 8: a pointer */
	__u16 frame_owner;	/* PY_NONE: no owner; FRAME_OWNED_BY_CSTACK (3) frames are shims */
	__u16 frame_is_entry;	/* PY_NONE but in 3.11 */
	/* Naming a code object: its fields, read as one window from code_head on. */
	__u16 code_head;
	__u16 code_filename;
	__u16 code_name;	/* co_qualname where the version has it, else co_name */
	__u16 code_firstlineno;
	__u16 code_linetable;
	__u16 str_ascii_size;	/* sizeof(PyASCIIObject): compact ASCII data follows */
	__u16 str_compact_size;	/* sizeof(PyCompactUnicodeObject): other compact data follows */
	__u16 pad[2];
};

_Static_assert(sizeof(struct py_offsets) == 56, "py_offsets layout");
_Static_assert(sizeof(struct ustack) == 8 + 8 * STACK_MAX_DEPTH, "ustack layout");
_Static_assert(sizeof(struct py_stack) == 16 + 20 * PY_MAX_FRAMES, "py_stack layout");
_Static_assert(sizeof(struct py_code_key) == 16, "py_code_key layout");
_Static_assert(sizeof(struct py_code_info) ==
		       24 + PY_NAME_BYTES + PY_FILE_BYTES + PY_LINES_BYTES, "py_code_info layout");

#endif /* CUPROBE_H */
