/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The events ring's growth (session_ring.c). Session's thread; the ring putter
 * for the slot's update.
 */
#ifndef CORE_SESSION_SESSION_RING_H
#define CORE_SESSION_SESSION_RING_H


struct session;

struct session_ring;

/* The ring's growth state, s->ring (none yet: zero). 0 or -ENOMEM. */
int session_ring_new(struct session *s);
void session_ring_free(struct session *s);

/* The events ring grows with the rate, looked at every turn. */
void session_ring_turn(struct session *s);
/* What came so far (the calibration's own hits) is no rate: measured from now. */
void session_ring_start(struct session *s);
/* A growth under way waited for (before the BPF object goes). */
void session_ring_stop(struct session *s);
/* Its final size, said at the end when it grew, a growth under way waited for first. */
void session_ring_report(struct session *s);

#endif /* CORE_SESSION_SESSION_RING_H */
