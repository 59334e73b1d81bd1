// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What a loader attaches to the agent's USDT probes, for the agent tests:
 * cuprobe:records copies each chunk into the ring buffer as an
 * agent_chunk_event (include/agent.h); cuprobe:enable only needs a program
 * attached, since attaching raises the probe's semaphore, the agent's switch.
 * The loader's own program on records does the same copy.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>
#include "agent.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} chunks SEC(".maps");

/* The event is too big for the BPF stack: it is built here. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct agent_chunk_event);
} scratch SEC(".maps");

__u64 chunk_hits;   /* records() hits */
__u64 chunk_drops;  /* chunks the ring buffer had no room for */
__u64 chunk_bad;    /* chunks with a length out of bounds, or unreadable */
__u64 enable_hits;  /* enable() hits: a window opened or closed */

SEC("usdt")
int BPF_USDT(on_records, __u64 ptr, __u64 len)
{
	struct agent_chunk_event *e;
	__u32 zero = 0;
	__u64 id;

	__sync_fetch_and_add(&chunk_hits, 1);
	e = bpf_map_lookup_elem(&scratch, &zero);
	if (!e)
		return 0;
	if (len == 0 || len > CUPROBE_AGENT_CHUNK) {
		__sync_fetch_and_add(&chunk_bad, 1);
		return 0;
	}
	if (bpf_probe_read_user(e->data, len, (const void *)ptr)) {
		__sync_fetch_and_add(&chunk_bad, 1);
		return 0;
	}
	id = bpf_get_current_pid_tgid();
	e->type = AGENT_CHUNK_EVENT;
	e->tgid = id >> 32;
	e->tid = (__u32)id;
	e->len = len;
	e->ts_ns = bpf_ktime_get_ns();
	if (bpf_ringbuf_output(&chunks, e, offsetof(struct agent_chunk_event, data) + len, 0))
		__sync_fetch_and_add(&chunk_drops, 1);
	return 0;
}

SEC("usdt")
int BPF_USDT(on_enable, __u64 on, __u64 window)
{
	__sync_fetch_and_add(&enable_hits, 1);
	return 0;
}
