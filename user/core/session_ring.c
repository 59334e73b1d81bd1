// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The events ring grows with the rate. Its size is fixed when a BPF ring is
 * made, so a bigger one is made and swapped in: BPF looks the ring up in a
 * one-slot array of maps (maps.bpf.h) for every record it writes (once per
 * 32 launches on the common path), and the loader puts a new ring in the
 * slot. The kernel waits, in that update, for every BPF program that might
 * still hold the old ring to finish (an RCU grace period, as for any
 * map-in-map update), so once the update returns nothing more is written
 * to the old ring: the loader reads it to its end, then lets it go.
 *
 * What it grows by: the highest fill BPF saw when it wrote a batch. Past
 * half of the ring, the ring doubles; near full (the producers outran the
 * loader, and may have lost launches, counted as drops) it grows eightfold.
 * At most RING_CAP and a sixteenth of the machine's memory. A ring the kernel
 * refuses (memory, or the cgroup's limit) is said once, and the ring there
 * is kept. The ring never shrinks.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <bpf/libbpf.h>
#include "bpfobj.h"
#include "clock.h"
#include "log.h"
#include "session_int.h"

#define RING_CAP (1ull << 30)
/* The read rate is measured over windows of this length. */
#define RATE_NS (100 * 1000 * 1000ull)

static uint64_t ring_cap(void)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	uint64_t share = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page / 16 : RING_CAP;
	uint64_t cap = RING_CAP;

	while (cap > share && cap > 4096)
		cap >>= 1;
	return cap;
}

static void size_str(uint64_t bytes, char *buf, size_t len)
{
	if (bytes >= 1ull << 30 && !(bytes & ((1ull << 30) - 1)))
		snprintf(buf, len, "%lluG", (unsigned long long)(bytes >> 30));
	else if (bytes >= 1ull << 20 && !(bytes & ((1ull << 20) - 1)))
		snprintf(buf, len, "%lluM", (unsigned long long)(bytes >> 20));
	else
		snprintf(buf, len, "%lluK", (unsigned long long)(bytes >> 10));
}

/* Launches read per second: the latest window's, or since the window began. */
static double read_rate(struct session *s, uint64_t now)
{
	struct session_ring *r = &s->ring;

	if (!r->rate_ts) {
		r->rate_ts = now;
		r->rate_n = r->launches_read;
		return 0;
	}
	if (now - r->rate_ts >= RATE_NS) {
		r->rate = (double)(r->launches_read - r->rate_n) * 1e9 / (double)(now - r->rate_ts);
		r->rate_ts = now;
		r->rate_n = r->launches_read;
	}
	if (r->rate > 0)
		return r->rate;
	return now > r->rate_ts ? (double)(r->launches_read - r->rate_n) * 1e9 /
					  (double)(now - r->rate_ts)
				: 0;
}

/* The old ring read to its end: the reader keeps only the new one. */
static void retire(struct session *s)
{
	struct ring_buffer *fresh;
	uint64_t unread = 0;
	int err = bpfobj__ring_unread(bpfobj__events_retiring_fd(s->bpf), &unread);

	if (err || unread)
		return;
	fresh = ring_buffer__new(bpfobj__events_fd(s->bpf), session_data_event, s, NULL);
	if (!fresh)
		return; /* the reader with both rings goes on; tried again next turn */
	if (s->epfd >= 0 &&
	    session_epoll_add(s->epfd, ring_buffer__epoll_fd(fresh), TAG(TAG_RING, 1))) {
		ring_buffer__free(fresh);
		return;
	}
	if (s->epfd >= 0)
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, ring_buffer__epoll_fd(s->events), NULL);
	ring_buffer__free(s->events);
	s->events = fresh;
	bpfobj__events_retire(s->bpf);
}

/* The reader takes the new ring beside the old, which it reads first. */
static int add_ring(void *ctx, int fd)
{
	struct session *s = ctx;

	return ring_buffer__add(s->events, fd, session_data_event, s);
}

static void grow(struct session *s, uint64_t high, uint64_t now)
{
	struct session_ring *r = &s->ring;
	uint64_t size = bpfobj__events_bytes(s->bpf), to = size * (high >= size / 4 * 3 ? 8 : 2);
	char from_s[24], to_s[24];
	int fd;

	if (to > r->cap)
		to = r->cap;
	size_str(size, from_s, sizeof(from_s));
	size_str(to, to_s, sizeof(to_s));
	fd = bpfobj__events_swap(s->bpf, to, add_ring, s);
	if (fd < 0) {
		p_warn("the events ring (%s) was %.0f%% full, but a ring of %s cannot be made (%s): "
		       "it stays at %s; a larger --ringbuf-size from the start may help",
		       from_s, 100.0 * high / size, to_s, strerror(-fd), from_s);
		r->stuck = true;
		return;
	}
	r->grows++;
	s->ring_events = (long)((to + CUPROBE_CTRL_RING) / 16);
	p_info("the events ring grew from %s to %s: it was %.0f%% full, with launches read at "
	       "%.2f M/s", from_s, to_s, 100.0 * high / size, read_rate(s, now) / 1e6);
}

void session_ring_turn(struct session *s)
{
	struct session_ring *r = &s->ring;
	uint64_t now = clock_mono_ns(), high, size;

	if (!r->cap)
		r->cap = ring_cap();
	read_rate(s, now);
	if (bpfobj__events_retiring_fd(s->bpf) >= 0) {
		retire(s);
		return;
	}
	high = bpfobj__events_high(s->bpf);
	size = bpfobj__events_bytes(s->bpf);
	if (high > size / 2 && size < r->cap && !r->stuck)
		grow(s, high, now);
}

void session_ring_report(struct session *s)
{
	char buf[24];

	if (!s->ring.grows)
		return;
	size_str(bpfobj__events_bytes(s->bpf), buf, sizeof(buf));
	p_info("the events ring ended at %s (grew %u times)", buf, s->ring.grows);
}
