/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Wrong passwords per client address (IP, any port), with a growing delay:
 * an address's first AUTH_DELAY_FREE wrong passwords cost nothing (typos, a
 * test of a wrong one), the next keep its next check off for 1, 2, 4 ... s,
 * AUTH_DELAY_MAX_S at most; failures are forgotten AUTH_DELAY_FORGET_S after
 * the last. One check of an address runs
 * at a time. The table holds AUTH_DELAY_ADDRS addresses, the least recently
 * seen making room for a new one, so that many addresses cannot grow it.
 * libmicrohttpd's thread owns it (auth.c); time is given, CLOCK_MONOTONIC ns.
 */
#ifndef DAEMON_AUTH_DELAY_H
#define DAEMON_AUTH_DELAY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#define AUTH_DELAY_ADDRS 256
#define AUTH_DELAY_FREE 3
#define AUTH_DELAY_MAX_S 60
#define AUTH_DELAY_FORGET_S 600

struct auth_delay;

/* NULL and errno on failure. */
struct auth_delay *auth_delay__new(void);
void auth_delay__free(struct auth_delay *d);
/* Seconds (rounded up) before addr's next password check may run; 0: now. */
unsigned int auth_delay__left_s(struct auth_delay *d, const struct sockaddr *addr, uint64_t now);
/* A check of addr's begins: 0, or -EBUSY while another of addr's runs. */
int auth_delay__start(struct auth_delay *d, const struct sockaddr *addr, uint64_t now);
/* It ended: a wrong password (!ok) counts and delays addr's next check. */
void auth_delay__end(struct auth_delay *d, const struct sockaddr *addr, bool ok, uint64_t now);
/* It never ran (the checker was busy or stopping): nothing counts. */
void auth_delay__cancel(struct auth_delay *d, const struct sockaddr *addr);

#endif /* DAEMON_AUTH_DELAY_H */
