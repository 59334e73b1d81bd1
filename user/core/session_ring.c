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
 * When it grows: the highest fill BPF saw when it wrote a batch passed half
 * the ring. To what: a ring that holds 100 ms of the rate launches came at
 * (read by the loader, or lost for want of room, which BPF counts),
 * at least twice the ring; when it was three quarters full or more (the
 * producers outran the loader, and may have lost launches, counted as
 * drops: the rate read is then less than the rate made), at least sixteen
 * times the ring and at least 16 MiB.
 * At most RING_CAP and a sixteenth of the machine's memory. A ring the kernel
 * refuses (memory, or the cgroup's limit) is said once, and the ring there
 * is kept. The ring never shrinks.
 */
#include <errno.h>
#include <pthread.h>
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
/* A window shorter than this says nothing of the rate. */
#define RATE_MIN_NS (10 * 1000 * 1000ull)
/* Nor is a span of turns shorter than this: its rate is noise. */
#define TURN_MIN_NS (1000 * 1000ull)
/* A ring grown holds this long of the rate read: the loader may be off the CPU that long. */
#define RING_HOLD_NS (100 * 1000 * 1000ull)
/* A ring the producers outran grows to this at least: the default, which held every flood measured. */
#define RING_FLOOD (16ull << 20)
/* The old ring is let go no sooner than this after the update came back (and once read out). */
#define RETIRE_NS (20 * 1000 * 1000ull)

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

/* What a launch takes in the ring, in a full batch with its header. */
#define LAUNCH_RING_BYTES ((double)(sizeof(struct launch_batch) + 8) / LAUNCH_BATCH_N)

/* Launches and bytes that came: read, or lost for want of room (BPF counts them). */
static void came(struct session *s, unsigned long *launches, double *bytes)
{
	uint64_t lost = bpfobj__events_lost(s->bpf);

	*launches = s->ring.launches_read + lost;
	*bytes = (double)s->ring.bytes_read + (double)lost * LAUNCH_RING_BYTES;
}

/*
 * Launches and bytes that came per second (read, or lost: the rate made,
 * not only what the loader kept up with): the latest window's, or the
 * window so far when it says more.
 */
static void read_rate(struct session *s, uint64_t now, double *launches, double *bytes)
{
	struct session_ring *r = &s->ring;
	unsigned long n;
	double b, dt;

	came(s, &n, &b);
	if (!r->rate_ts || now <= r->rate_ts) {
		if (!r->rate_ts) {
			r->rate_ts = now;
			r->rate_n = n;
			r->rate_b = b;
		}
		*launches = r->rate;
		*bytes = r->byte_rate;
		return;
	}
	dt = (double)(now - r->rate_ts) / 1e9;
	if (now - r->rate_ts >= RATE_NS) {
		r->rate = (double)(n - r->rate_n) / dt;
		r->byte_rate = (b - r->rate_b) / dt;
		r->rate_ts = now;
		r->rate_n = n;
		r->rate_b = b;
	}
	*launches = r->rate;
	*bytes = r->byte_rate;
	/*
	 * The window so far, when it says more (the rate rose, or no window
	 * ended yet), once it is long enough to say anything.
	 */
	dt = (double)(now - r->rate_ts) / 1e9;
	if (now - r->rate_ts >= RATE_MIN_NS && (b - r->rate_b) / dt > *bytes) {
		*launches = (double)(n - r->rate_n) / dt;
		*bytes = (b - r->rate_b) / dt;
	}
}

/* The old ring read to its end: the reader keeps only the new one. */
static void retire(struct session *s)
{
	struct ring_buffer *fresh;
	uint64_t unread = 0;
	int err;

	/*
	 * The kernel's wait in the update is what makes the old ring's end
	 * final; a while more costs nothing and guards a kernel that would not.
	 */
	if (clock_mono_ns() - s->ring.put_at < RETIRE_NS)
		return;
	err = bpfobj__ring_unread(bpfobj__events_retiring_fd(s->bpf), &unread);
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

/*
 * The size to grow to: what RING_HOLD_NS of the rate fills, at least
 * twice the ring. Near full, the loader fell behind and what it read says
 * little of what came: at least sixteen times, and at least RING_FLOOD.
 */
static uint64_t grow_to(struct session *s, uint64_t size, uint64_t high, double bytes_per_s)
{
	double want = bytes_per_s * (double)RING_HOLD_NS / 1e9;
	uint64_t to = size * 2;

	if (high >= size / 4 * 3) {
		to = size * 16;
		if (to < RING_FLOOD)
			to = RING_FLOOD;
	}

	while ((double)to < want && to < s->ring.cap)
		to <<= 1;
	return to > s->ring.cap ? s->ring.cap : to;
}

/* The slot's update, off the loader's thread: it waits out a grace period; the loader reads on. */
static void *put_ring(void *arg)
{
	struct session *s = arg;

	__atomic_store_n(&s->ring.put_err, bpfobj__events_put(s->bpf), __ATOMIC_RELAXED);
	__atomic_store_n(&s->ring.put_done, true, __ATOMIC_RELEASE);
	return NULL;
}

static void grow(struct session *s, uint64_t high, uint64_t now, double turn_bytes)
{
	struct session_ring *r = &s->ring;
	uint64_t size = bpfobj__events_bytes(s->bpf), to;
	double launches, bytes;
	char from_s[24], to_s[24];
	int fd, err;

	read_rate(s, now, &launches, &bytes);
	if (turn_bytes > bytes)
		bytes = turn_bytes;
	to = grow_to(s, size, high, bytes);
	size_str(size, from_s, sizeof(from_s));
	size_str(to, to_s, sizeof(to_s));
	fd = bpfobj__events_new(s->bpf, to);
	if (fd < 0) {
		p_warn("the events ring (%s) was %.0f%% full, but a ring of %s cannot be made (%s): "
		       "it stays at %s; a larger --ringbuf-size from the start may help",
		       from_s, 100.0 * high / size, to_s, strerror(-fd), from_s);
		r->stuck = true;
		return;
	}
	/* Read before written: the reader takes the new ring beside the old, which it reads first. */
	err = ring_buffer__add(s->events, fd, session_data_event, s);
	r->put_done = false;
	if (!err)
		err = -pthread_create(&r->putter, NULL, put_ring, s);
	if (err) {
		bpfobj__events_commit(s->bpf, err);
		p_warn("the events ring (%s) cannot grow (%s): it stays at %s", from_s,
		       strerror(-err), from_s);
		r->stuck = true;
		return;
	}
	r->putting = true;
	r->grow_at = now;
	snprintf(r->said, sizeof(r->said), "the events ring grew from %s to %s: it was %.0f%% full",
		 from_s, to_s, 100.0 * high / size);
}

/* The slot's update came back: the new ring is BPF's, or (refused) let go. */
static void put_back(struct session *s)
{
	struct session_ring *r = &s->ring;
	double launches, bytes;
	int err;

	pthread_join(r->putter, NULL);
	r->putting = false;
	err = __atomic_load_n(&r->put_err, __ATOMIC_RELAXED);
	bpfobj__events_commit(s->bpf, err);
	r->put_at = clock_mono_ns();
	p_dbg("the events ring's slot took %.1f ms to update", (r->put_at - r->grow_at) / 1e6);
	if (err) {
		p_warn("the events ring cannot grow: BPF's slot refused the new ring (%s)",
		       strerror(-err));
		r->stuck = true;
		return;
	}
	r->grows++;
	s->ring_events = (long)((bpfobj__events_bytes(s->bpf) + CUPROBE_CTRL_RING) / 16);
	/* The rate now: the loader read on while the slot's update waited. */
	read_rate(s, clock_mono_ns(), &launches, &bytes);
	p_info("%s, with launches coming at %.2f M/s (%.0f MB/s)", r->said, launches / 1e6,
	       bytes / 1e6);
}

void session_ring_turn(struct session *s)
{
	struct session_ring *r = &s->ring;
	uint64_t now = clock_mono_ns(), high, size;
	double launches, bytes, turn_bytes = 0, b;
	unsigned long n;

	if (!r->cap)
		r->cap = ring_cap();
	read_rate(s, now, &launches, &bytes);
	/*
	 * The rate since the last turns (at least TURN_MIN_NS): under a flood
	 * that began within the window, the window's rate says too little.
	 */
	came(s, &n, &b);
	if (r->turn_ts && now - r->turn_ts >= TURN_MIN_NS)
		turn_bytes = (b - r->turn_b) / ((double)(now - r->turn_ts) / 1e9);
	if (!r->turn_ts || now - r->turn_ts >= TURN_MIN_NS) {
		r->turn_ts = now;
		r->turn_b = b;
	}
	if (r->putting) {
		if (!__atomic_load_n(&r->put_done, __ATOMIC_ACQUIRE))
			return;
		put_back(s);
	}
	if (bpfobj__events_retiring_fd(s->bpf) >= 0) {
		retire(s);
		return;
	}
	high = bpfobj__events_high(s->bpf);
	size = bpfobj__events_bytes(s->bpf);
	if (high > size / 2 && size < r->cap && !r->stuck)
		grow(s, high, now, turn_bytes);
}

void session_ring_stop(struct session *s)
{
	if (s->ring.putting)
		put_back(s);
}

void session_ring_report(struct session *s)
{
	char buf[24];

	if (!s->ring.grows)
		return;
	size_str(bpfobj__events_bytes(s->bpf), buf, sizeof(buf));
	p_info("the events ring ended at %s, grown %u time%s", buf, s->ring.grows,
	       s->ring.grows == 1 ? "" : "s");
}
