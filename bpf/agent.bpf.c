// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The agent's USDT probes (include/agent.h). cuprobe:records hands out a
 * chunk of agent records: it is copied whole into the events ring; the
 * loader checks every length in it. cuprobe:enable is the agent's switch:
 * attaching raises its semaphore, and its program has nothing to do. It is a
 * plain uprobe (uprobe_multi where the kernel has it), so that the switch
 * turns off in tens of ms, not the ~100 ms of a perf-event link.
 */
#include "maps.bpf.h"
#include <bpf/bpf_tracing.h>
#include <bpf/usdt.bpf.h>
#include "agent.h"

_Static_assert(AGENT_CHUNK_EVENT == REC_AGENT, "agent.h and records.h name one record type");

SEC("usdt")
int BPF_USDT(agent_records, void *ptr, long len)
{
	struct agent_chunk_event *e;
	void *rb;
	__u64 id = bpf_get_current_pid_tgid();
	__u32 n;

	if (len <= 0 || len > CUPROBE_AGENT_CHUNK) {
		__sync_fetch_and_add(&counters.agent_bad, 1);
		return 0;
	}
	rb = events_ring();
	e = rb ? bpf_ringbuf_reserve(rb, sizeof(*e), 0) : NULL;
	if (!e) {
		__sync_fetch_and_add(&counters.agent_drops, 1);
		return 0;
	}
	n = len;
	/* Tell the verifier what the test above proved: 1 <= n <= CHUNK. */
	n &= 2 * CUPROBE_AGENT_CHUNK - 1;
	e->type = REC_AGENT;
	e->tgid = id >> 32;
	e->tid = (__u32)id;
	e->len = n;
	e->ts_ns = bpf_ktime_get_ns();
	if (n > CUPROBE_AGENT_CHUNK || bpf_probe_read_user(e->data, n, ptr)) {
		__sync_fetch_and_add(&counters.agent_bad, 1);
		bpf_ringbuf_discard(e, 0);
		return 0;
	}
	bpf_ringbuf_submit(e, BPF_RB_FORCE_WAKEUP);
	return 0;
}

/* Attached with the semaphore's ref_ctr offset: attaching is the switch, the hit is nothing. */
SEC("uprobe")
int agent_enable(struct pt_regs *ctx)
{
	(void)ctx;
	return 0;
}
