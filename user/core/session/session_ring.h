/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The events ring's growth (session_ring.c). Session's thread; the ring putter
 * for the slot's update.
 */
#ifndef CORE_SESSION_SESSION_RING_H
#define CORE_SESSION_SESSION_RING_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct session;

/* Launches and bytes that came (read, or lost for want of room) over ns. */
struct ring_span {
	double launches, bytes;
	uint64_t ns;		/* 0: no span long enough to measure */
};

/* The events ring's growth (session_ring.c). */
struct session_ring {
	uint64_t cap;		/* the largest it may grow to; 0 until the first turn */
	bool stuck;		/* a bigger ring was refused: said once, not tried again */
	unsigned int grows;
	unsigned long launches_read;	/* from the events ring */
	uint64_t bytes_read;		/* of records, with their headers */
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

/* The events ring grows with the rate, looked at every turn. */
void session_ring_turn(struct session *s);
/* What came so far (the calibration's own hits) is no rate: measured from now. */
void session_ring_start(struct session *s);
/* A growth under way waited for (before the BPF object goes). */
void session_ring_stop(struct session *s);
/* Its final size, said at the end when it grew, a growth under way waited for first. */
void session_ring_report(struct session *s);

#endif /* CORE_SESSION_SESSION_RING_H */
