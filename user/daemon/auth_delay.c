// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include "daemon/auth_delay.h"

#define NS 1000000000ull

struct addr_key {
	sa_family_t family;
	unsigned char ip[16];
};

struct addr_entry {
	bool used, running;
	struct addr_key key;
	uint32_t fails;
	uint64_t seen;		/* the last check's start: the least recent makes room */
	uint64_t failed;	/* the last wrong password */
	uint64_t until;		/* no check before */
};

struct auth_delay {
	struct addr_entry e[AUTH_DELAY_ADDRS];
};

struct auth_delay *auth_delay__new(void)
{
	return calloc(1, sizeof(struct auth_delay));
}

void auth_delay__free(struct auth_delay *d)
{
	free(d);
}

/* The address, port aside; another family is one key of its own. */
static struct addr_key key_of(const struct sockaddr *a)
{
	struct addr_key k = { .family = a ? a->sa_family : AF_UNSPEC };

	if (k.family == AF_INET)
		memcpy(k.ip, &((const struct sockaddr_in *)a)->sin_addr, 4);
	else if (k.family == AF_INET6)
		memcpy(k.ip, &((const struct sockaddr_in6 *)a)->sin6_addr, 16);
	return k;
}

static struct addr_entry *find(struct auth_delay *d, const struct sockaddr *a)
{
	struct addr_key k = key_of(a);

	for (int i = 0; i < AUTH_DELAY_ADDRS; i++) {
		struct addr_entry *e = &d->e[i];

		if (!e->used || e->key.family != k.family || memcmp(e->key.ip, k.ip, sizeof(k.ip)))
			continue;
		return e;
	}
	return NULL;
}

/* addr's entry, its failures forgotten when the last is old enough. */
static struct addr_entry *find_now(struct auth_delay *d, const struct sockaddr *a, uint64_t now)
{
	struct addr_entry *e = find(d, a);

	if (e && e->fails && now - e->failed >= AUTH_DELAY_FORGET_S * NS)
		e->fails = 0, e->until = 0;
	return e;
}

/* A free entry, else the least recently seen one not running a check; NULL: none. */
static struct addr_entry *make_room(struct auth_delay *d)
{
	struct addr_entry *best = NULL;

	for (int i = 0; i < AUTH_DELAY_ADDRS; i++) {
		struct addr_entry *e = &d->e[i];

		if (!e->used)
			return e;
		if (!e->running && (!best || e->seen < best->seen))
			best = e;
	}
	return best;
}

unsigned int auth_delay__left_s(struct auth_delay *d, const struct sockaddr *addr, uint64_t now)
{
	struct addr_entry *e = find_now(d, addr, now);

	if (!e || e->until <= now)
		return 0;
	return (unsigned int)((e->until - now + NS - 1) / NS);
}

int auth_delay__start(struct auth_delay *d, const struct sockaddr *addr, uint64_t now)
{
	struct addr_entry *e = find_now(d, addr, now);

	if (e && e->running)
		return -EBUSY;
	if (!e) {
		e = make_room(d);
		if (!e)
			return -EBUSY;
		*e = (struct addr_entry){ .used = true, .key = key_of(addr) };
	}
	e->running = true;
	e->seen = now;
	return 0;
}

/* The delay after an address's n-th wrong password, in seconds. */
static uint64_t delay_s(uint32_t n)
{
	uint32_t k = n - AUTH_DELAY_FREE - 1;

	if (n <= AUTH_DELAY_FREE)
		return 0;
	return k < 16 && (1ull << k) < AUTH_DELAY_MAX_S ? 1ull << k : AUTH_DELAY_MAX_S;
}

void auth_delay__end(struct auth_delay *d, const struct sockaddr *addr, bool ok, uint64_t now)
{
	struct addr_entry *e = find_now(d, addr, now);

	if (!e)
		return;
	e->running = false;
	if (ok)
		return;
	e->fails += e->fails < UINT32_MAX;
	e->failed = now;
	e->until = now + delay_s(e->fails) * NS;
}

void auth_delay__cancel(struct auth_delay *d, const struct sockaddr *addr)
{
	struct addr_entry *e = find(d, addr);

	if (e)
		e->running = false;
}
