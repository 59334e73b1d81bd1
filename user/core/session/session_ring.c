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
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <bpf/libbpf.h>
#include "core/probes/bpfobj.h"
#include "core/session/session_int.h"
#include "core/session/session_records.h"
#include "core/session/session_ring.h"
#include "launch.h"
#include "records.h"
#include "util/clock.h"
#include "util/log.h"

_Static_assert(sizeof(struct launch_batch) + 8 <= SESSION_RINGBUF_MIN,
	       "a batch of launches fits the smallest events ring");

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

/* Launches and bytes that came (read, or lost for want of room) over ns. */
struct ring_span {
	double launches, bytes;
	uint64_t ns;		/* 0: no span long enough to measure */
};

/* The events ring's growth: s->ring, this file's alone. */
struct session_ring {
	uint64_t cap;		/* the largest it may grow to; 0 until the first turn */
	bool stuck;		/* a bigger ring was refused: said once, not tried again */
	unsigned int grows;
	uint64_t rate_ts;	/* the rate's window began, rate_n launches and rate_b bytes in */
	unsigned long rate_n;
	double rate_b;
	struct ring_span window;	/* what came in the latest whole window */
	uint64_t turn_ts;	/* the last turn, turn_n launches and turn_b bytes in then */
	unsigned long turn_n;
	double turn_b;
	uint64_t lost_said;	/* launches lost for want of room, as the last growth said */
	uint64_t lost_grown;	/* launches lost for want of room when the last growth began */
	unsigned long last_n;	/* what had come by the last turn */
	uint64_t quiet_ts;	/* the last turn to which nothing came, quiet_n launches, */
	unsigned long quiet_n;	/* quiet_b bytes and quiet_lost lost in then: the start */
	double quiet_b;		/* of a burst, which a growth's rate is measured over */
	uint64_t quiet_lost;
	bool putting;		/* putter is putting a new ring in BPF's slot */
	bool put_done;		/* it has, with put_err */
	int put_err;
	uint64_t grow_at, put_at;	/* when the growth began, and the update came back */
	pthread_t putter;
	char said[256];		/* what the growth under way says once it is done */
};

int session_ring_new(struct session *s)
{
	s->ring = calloc(1, sizeof(*s->ring));
	return s->ring ? 0 : -ENOMEM;
}

void session_ring_free(struct session *s)
{
	free(s->ring);
	s->ring = NULL;
}

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

	*launches = s->launches_read + lost;
	*bytes = (double)s->bytes_read + (double)lost * LAUNCH_RING_BYTES;
}

static double span_bytes_per_s(const struct ring_span *sp)
{
	return sp->ns ? sp->bytes * 1e9 / (double)sp->ns : 0;
}

static struct ring_span span_since(unsigned long n, double b, unsigned long n0, double b0,
				   uint64_t ns)
{
	return (struct ring_span){ .launches = n - n0, .bytes = b - b0, .ns = ns };
}

/*
 * What came (read, or lost: the rate made, not only what the loader kept up
 * with) over the latest whole window, or over the window so far when it
 * says more. ns is 0 when no span long enough to say anything has passed.
 */
static struct ring_span read_rate(struct session *s, uint64_t now)
{
	struct session_ring *r = s->ring;
	struct ring_span sp;
	unsigned long n;
	double b;

	came(s, &n, &b);
	if (!r->rate_ts || now <= r->rate_ts) {
		if (!r->rate_ts) {
			r->rate_ts = now;
			r->rate_n = n;
			r->rate_b = b;
		}
		return r->window;
	}
	if (now - r->rate_ts >= RATE_NS) {
		r->window = span_since(n, b, r->rate_n, r->rate_b, now - r->rate_ts);
		r->rate_ts = now;
		r->rate_n = n;
		r->rate_b = b;
	}
	/* The window so far, when it says more (the rate rose, or no window ended yet). */
	sp = span_since(n, b, r->rate_n, r->rate_b, now - r->rate_ts);
	if (sp.ns >= RATE_MIN_NS && span_bytes_per_s(&sp) > span_bytes_per_s(&r->window))
		return sp;
	return r->window;
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
	if (clock_mono_ns() - s->ring->put_at < RETIRE_NS)
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

	while ((double)to < want && to < s->ring->cap)
		to <<= 1;
	return to > s->ring->cap ? s->ring->cap : to;
}

/* The slot's update, off the loader's thread: it waits out a grace period; the loader reads on. */
static void *put_ring(void *arg)
{
	struct session *s = arg;

	__atomic_store_n(&s->ring->put_err, bpfobj__events_put(s->bpf), __ATOMIC_RELAXED);
	__atomic_store_n(&s->ring->put_done, true, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * What the growth says once it is done: the rate over the burst, from the
 * last turn to which nothing came (launches may have come faster within
 * it: the rate is their average over it), and how many of them were lost
 * for want of room. The rate windows that size the ring say less: a burst
 * shorter than a turn falls into one window, and the window measured after
 * it, while the slot's update waits, says 0. No rate is made up where none
 * can be measured (nothing came since that turn).
 */
static void say_growth(struct session *s, const char *from_s, const char *to_s, double full,
		       uint64_t now)
{
	struct session_ring *r = s->ring;
	uint64_t lost = bpfobj__events_lost(s->bpf) - r->quiet_lost;
	char lost_s[64] = "";
	struct ring_span sp;
	unsigned long n;
	double b;
	int len;

	if (lost)
		snprintf(lost_s, sizeof(lost_s), ", %llu of them lost for want of room",
			 (unsigned long long)lost);
	came(s, &n, &b);
	sp = span_since(n, b, r->quiet_n, r->quiet_b, now - r->quiet_ts);
	len = snprintf(r->said, sizeof(r->said), "the events ring grew from %s to %s: it was %.0f%% "
		       "full", from_s, to_s, full);
	if (len < 0 || (size_t)len >= sizeof(r->said))
		return;
	if (sp.ns && sp.launches > 0)
		snprintf(r->said + len, sizeof(r->said) - (size_t)len, ", with launches coming at "
			 "%.2f M/s (%.0f MB/s): %.0f came within %.1f ms%s",
			 sp.launches * 1e3 / (double)sp.ns, span_bytes_per_s(&sp) / 1e6, sp.launches,
			 (double)sp.ns / 1e6, lost_s);
	else if ((lost = bpfobj__events_lost(s->bpf) - r->lost_said))
		snprintf(r->said + len, sizeof(r->said) - (size_t)len, "; %llu launches were lost "
			 "for want of room (no rate measured: none came since the last turn)",
			 (unsigned long long)lost);
	else
		snprintf(r->said + len, sizeof(r->said) - (size_t)len, " (no rate measured: no "
			 "launch came since the last turn)");
	r->lost_said = bpfobj__events_lost(s->bpf);
}

static void grow(struct session *s, uint64_t high, uint64_t now, const struct ring_span *turn)
{
	struct session_ring *r = s->ring;
	uint64_t size = bpfobj__events_bytes(s->bpf), to;
	struct ring_span sp = read_rate(s, now);
	char from_s[24], to_s[24];
	int fd, err;

	/* Under a flood that began within the window, the last turns' rate says more. */
	if (span_bytes_per_s(turn) > span_bytes_per_s(&sp))
		sp = *turn;
	to = grow_to(s, size, high, span_bytes_per_s(&sp));
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
	say_growth(s, from_s, to_s, 100.0 * high / size, now);
}

/* The slot's update came back: the new ring is BPF's, or (refused) let go. */
static void put_back(struct session *s)
{
	struct session_ring *r = s->ring;
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
	/*
	 * The rate that sized it, not the rate now: a burst is over by the time
	 * the slot's update comes back (tens to hundreds of ms), and a window
	 * measured after it says 0.
	 */
	p_info("%s", r->said);
}

void session_ring_start(struct session *s)
{
	struct session_ring *r = s->ring;
	uint64_t now = clock_mono_ns();
	unsigned long n;
	double b;

	came(s, &n, &b);
	r->rate_ts = r->turn_ts = r->quiet_ts = now;
	r->rate_n = r->turn_n = r->quiet_n = r->last_n = n;
	r->rate_b = r->turn_b = r->quiet_b = b;
	r->lost_said = r->quiet_lost = bpfobj__events_lost(s->bpf);
}

void session_ring_turn(struct session *s)
{
	struct session_ring *r = s->ring;
	uint64_t now = clock_mono_ns(), high, size;
	struct ring_span turn = { 0 };
	unsigned long n;
	double b;

	if (!r->cap)
		r->cap = ring_cap();
	read_rate(s, now);
	/*
	 * What came since the last turns (at least TURN_MIN_NS): under a flood
	 * that began within the window, the window's rate says too little.
	 */
	came(s, &n, &b);
	if (r->turn_ts && now - r->turn_ts >= TURN_MIN_NS)
		turn = span_since(n, b, r->turn_n, r->turn_b, now - r->turn_ts);
	if (!r->turn_ts || now - r->turn_ts >= TURN_MIN_NS) {
		r->turn_ts = now;
		r->turn_n = n;
		r->turn_b = b;
	}
	/* Nothing came since the last turn: a burst after this one is measured from here. */
	if (n == r->last_n) {
		r->quiet_ts = now;
		r->quiet_n = n;
		r->quiet_b = b;
		r->quiet_lost = bpfobj__events_lost(s->bpf);
	}
	r->last_n = n;
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
	/*
	 * Launches lost for want of room since the last growth: the ring was full
	 * though no batch written says so (in a ring smaller than a batch, none
	 * is ever written, and the fill stays 0).
	 */
	if (bpfobj__events_lost(s->bpf) > r->lost_grown)
		high = size;
	if (high > size / 2 && size < r->cap && !r->stuck) {
		r->lost_grown = bpfobj__events_lost(s->bpf);
		grow(s, high, now, &turn);
	}
}

void session_ring_stop(struct session *s)
{
	if (s->ring && s->ring->putting)
		put_back(s);
}

void session_ring_report(struct session *s)
{
	char buf[24];

	/* A growth whose slot update is still in flight is said, and counted, before the total. */
	session_ring_stop(s);
	if (!s->ring->grows)
		return;
	size_str(bpfobj__events_bytes(s->bpf), buf, sizeof(buf));
	p_info("the events ring ended at %s, grown %u time%s", buf, s->ring->grows,
	       s->ring->grows == 1 ? "" : "s");
}
