/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The HTTP server's insides, for http.c (libmicrohttpd's side and the
 * daemon's) and http_accept.c (the accept thread): limits, the slots and
 * struct http. Their shared state is behind h->mu (http.c's header comment).
 */
#ifndef DAEMON_HTTP_INT_H
#define DAEMON_HTTP_INT_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "daemon/http.h"

struct auth;

/* Connections at once, and from one client address (IP, any port). */
#define HTTP_MAX_CONNS 64
#define HTTP_MAX_PER_ADDR 16
/* A request's headers and body must be in this long after the accept. */
#define HTTP_REQUEST_S 5
/* An answer must be sent this long after it is ready. */
#define HTTP_SEND_S 10
/* Past a limit, a connection waiting this long for its request makes room. */
#define HTTP_EVICT_MS 1000
/* No endpoint takes a body: a few bytes of form at most. */
#define HTTP_MAX_BODY 4096
/* A request's headers, and what libmicrohttpd may hold of one connection (its request line too). */
#define HTTP_MAX_HEADERS 32
#define HTTP_MEMORY (16 << 10)
/* Past the captures' limit: when to try again, in seconds (Retry-After's text). */
#define HTTP_CAPTURE_RETRY_S "5"
/* Slots: closed connections stay in theirs until libmicrohttpd reaps them. */
#define HTTP_SLOTS (2 * HTTP_MAX_CONNS)
/* 503s sent, kept open (reading and dropping) so that the client reads them. */
#define HTTP_LINGERS 32
#define HTTP_LINGER_MS 1000
#define MS 1000000ull

enum slot_state {
	SLOT_FREE,
	SLOT_ADDING,		/* accepted, not yet libmicrohttpd's */
	SLOT_WAITING,		/* for its request: the deadline runs */
	SLOT_BUSY,		/* its request is the daemon's: no deadline */
	SLOT_SENDING,		/* its answer goes out: the send deadline runs */
};

struct slot {
	enum slot_state state;
	bool shut;		/* closed by us, libmicrohttpd has yet to see it */
	int fd;
	struct sockaddr_storage addr;
	uint64_t since;		/* accept, or answer (CLOCK_MONOTONIC ns) */
};

struct lingering {
	int fd;			/* -1: none */
	uint64_t until;
};

struct http {
	struct MHD_Daemon *mhd;
	int lfd;
	int efd;			/* readable while the queue holds requests */
	int wake;			/* the accept thread stops when readable */
	pthread_t acceptor;
	bool acceptor_on;
	pthread_mutex_t mu;		/* the queue, closing and slots */
	struct dreq *head, *tail;
	bool closing;
	struct slot slots[HTTP_SLOTS];
	struct lingering lingers[HTTP_LINGERS];	/* the accept thread's own */
	atomic_ulong refused;
	struct auth *auth;		/* libmicrohttpd's thread's; NULL: no web-config */
	bool tls;
	uint32_t captures, max_captures;	/* captures asked and not yet over; under mu */
};

/* The content type of every plain-text answer, the accept thread's 503s too. */
#define TEXT "text/plain; charset=utf-8"

static inline uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 * MS + (uint64_t)ts.tv_nsec;
}

/* The client's IP, port aside. */
static inline bool same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	const struct sockaddr_in *a4 = (const void *)a, *b4 = (const void *)b;
	const struct sockaddr_in6 *a6 = (const void *)a, *b6 = (const void *)b;

	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET)
		return a4->sin_addr.s_addr == b4->sin_addr.s_addr;
	if (a->ss_family == AF_INET6)
		return !memcmp(&a6->sin6_addr, &b6->sin6_addr, sizeof(a6->sin6_addr));
	return true;
}

/* The accept thread (http_accept.c): admits connections to libmicrohttpd, or answers 503. */
void *http_acceptor(void *arg);
/* The listening socket is ours, so that a port in use is said plainly: its fd or -errno. */
int http_listen_on(const char *addr, char *err, size_t len);

#endif /* DAEMON_HTTP_INT_H */
