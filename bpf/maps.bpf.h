/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The maps and globals every BPF program of cuprobe shares. maps.bpf.c
 * defines them (it defines CUPROBE_DEFINE_MAPS first); every other .bpf.c
 * sees them as extern, and the build links the objects into one
 * (bpftool gen object), so there is one skeleton and one copy of each map.
 *
 * Who writes what: proc_conf and runtime_ranges are the loader's; BPF only
 * reads them. proc_state is created by the loader and then written only by
 * BPF; the loader and the guardian only read it.
 */
#ifndef MAPS_BPF_H
#define MAPS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "records.h"
#include "proc_state.h"
#include "schedule.h"
#include "launch.h"
#include "capture.h"

#ifdef CUPROBE_DEFINE_MAPS
#define SHARED
#define INIT(v) = v
#else
#define SHARED extern
#define INIT(v)
#endif

/* Launches and agent chunks: the flood. Its size is set by the loader. */
SHARED struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} events SEC(".maps");

/*
 * The events ring BPF writes to: slot 0 holds it. The loader puts events
 * there at load, and swaps in a bigger ring when the rate fills this one
 * (user/core/session/session_ring.c). Programs look the ring up once per record
 * (per 32 launches on the common path) and write to what they found.
 */
struct events_ring_def {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
};

SHARED struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct events_ring_def);
} events_rings SEC(".maps");

/* The highest fill (bytes) a flush saw in the events ring; the loader resets it. */
SHARED __u64 events_high INIT(0);
/* Launches the events ring had no room for, all processes: the loader's measure of the rate. */
SHARED __u64 events_lost INIT(0);

static __always_inline void *events_ring(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&events_rings, &zero);
}

/*
 * Step boundaries, library maps and thread names: rare, and never crowded out
 * by a flood of launches in the other ring.
 */
SHARED struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, CUPROBE_CTRL_RING);
} ctrl SEC(".maps");

SHARED struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CUPROBE_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct proc_state);
} proc_state SEC(".maps");

SHARED struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CUPROBE_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct proc_conf);
} proc_conf SEC(".maps");

/* Per process: code ranges of CUDA runtimes, so nested driver calls are skipped. */
SHARED struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CUPROBE_MAX_PROCS);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, struct runtime_ranges);
} runtime_ranges SEC(".maps");

/* Per process with a slot (COOKIE_SLOT): the launch probe's state and hit count. */
SHARED struct launch_slot launch_slots[CUPROBE_MAX_PROCS] INIT({});

static __always_inline struct launch_slot *slot_at(__u32 slot)
{
	return slot ? &launch_slots[(slot - 1) & (CUPROBE_MAX_PROCS - 1)] : (void *)0;
}

/*
 * Streams being captured, and events recorded into them (capture.h): kept by
 * the capture probes (capture.bpf.c), read by the launch probe only in a
 * process whose captures_open is not 0.
 */
SHARED struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CAPTURE_MAP_ENTRIES);
	__type(key, struct capture_key);
	__type(value, struct capture_stream);
} capture_streams SEC(".maps");

SHARED struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CAPTURE_MAP_ENTRIES);
	__type(key, struct capture_key);
	__type(value, struct capture_event_mark);
} capture_events SEC(".maps");

/* Counters of processes with no state of their own (calibration), read at exit. */
SHARED struct cuprobe_counters counters INIT({});

/* Wake the reader of events only once this much data waits (or the loader's timer). */
SHARED const volatile __u64 wakeup_bytes INIT(256 * 1024);
/* Stop the target at each _dl_debug_state until the loader continues it. */
SHARED const volatile bool hold_on_libmap INIT(true);

#endif /* MAPS_BPF_H */
