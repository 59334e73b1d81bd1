/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The step probe (bpf/step.bpf.c) and the loader: a step boundary with the
 * process's counters, and --step torch's record_function ranges and the
 * range-name prefixes that end a step.
 */
#ifndef CUPROBE_STEP_H
#define CUPROBE_STEP_H

#include "records.h"

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

_Static_assert(sizeof(struct step_event) == 64, "step_event layout");

#endif /* CUPROBE_STEP_H */
