// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The HTTP server's accept thread (http_int.h): it admits each connection to
 * libmicrohttpd within the limits (connections at once, per client address),
 * answers 503 itself past them and keeps that connection open a moment so
 * that the client reads it, and closes connections at their deadlines.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "daemon/http_int.h"
#include "util/parse.h"

/* ---- the accept thread: limits, deadlines, 503s ---- */

/* Keeps fd open a while (reading what comes) so that the client reads the 503. */
static void linger_add(struct http *h, int fd, uint64_t now)
{
	struct lingering *l = &h->lingers[0];

	for (int i = 0; i < HTTP_LINGERS; i++) {
		if (h->lingers[i].fd < 0) {
			l = &h->lingers[i];
			break;
		}
		if (h->lingers[i].until < l->until)
			l = &h->lingers[i];
	}
	if (l->fd >= 0)
		close(l->fd);
	l->fd = fd;
	l->until = now + HTTP_LINGER_MS * MS;
}

/* Answers 503 on a connection we do not take, and closes it once the client read it. */
static void turn_away(struct http *h, int fd, const char *why, uint64_t now)
{
	char msg[512];
	int n;

	atomic_fetch_add(&h->refused, 1);
	if (h->tls) {
		/* A TLS client cannot read a plain answer: the connection closes unread. */
		close(fd);
		return;
	}
	n = snprintf(msg, sizeof(msg), "HTTP/1.1 503 Service Unavailable\r\n"
		     "Content-Type: %s\r\nContent-Length: %zu\r\nRetry-After: 1\r\n"
		     "Connection: close\r\n\r\n%s", TEXT, strlen(why), why);
	if (send(fd, msg, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		close(fd);
		return;
	}
	shutdown(fd, SHUT_WR);
	linger_add(h, fd, now);
}

/*
 * How long s has been in its state at now. The daemon's thread stamps a slot
 * it answers (http__answer) after this thread read the clock: such a slot is
 * 0 old, not 584 years (the unsigned difference), which shut an answer as
 * it went out.
 */
static uint64_t slot_age(const struct slot *s, uint64_t now)
{
	return now > s->since ? now - s->since : 0;
}

static void shut(struct slot *s)
{
	shutdown(s->fd, SHUT_RDWR);
	s->shut = true;
}

/* The live connection (of host a, or any) that has waited longest for its request. */
static struct slot *oldest_waiting(struct http *h, const struct sockaddr_storage *a)
{
	struct slot *best = NULL;

	for (int i = 0; i < HTTP_SLOTS; i++) {
		struct slot *s = &h->slots[i];

		if (s->state != SLOT_WAITING || s->shut || (a && !same_host(&s->addr, a)))
			continue;
		if (!best || s->since < best->since)
			best = s;
	}
	return best;
}

/*
 * Room for a connection from a: a free slot, and both limits kept, if need be
 * by closing the connection that has waited longest (HTTP_EVICT_MS at least).
 * NULL and why (the 503's body) when there is none. Under h->mu.
 */
static struct slot *room(struct http *h, const struct sockaddr_storage *a, uint64_t now,
			 const char **why)
{
	struct slot *free_slot = NULL, *victim = NULL;
	int live = 0, mine = 0;

	for (int i = 0; i < HTTP_SLOTS; i++) {
		struct slot *s = &h->slots[i];

		if (s->state == SLOT_FREE) {
			free_slot = free_slot ? free_slot : s;
			continue;
		}
		if (s->shut)
			continue;
		live++;
		mine += same_host(&s->addr, a);
	}
	if (mine >= HTTP_MAX_PER_ADDR) {
		victim = oldest_waiting(h, a);
		*why = "cuprobe daemon: too many connections from your address: try again\n";
	} else if (live >= HTTP_MAX_CONNS) {
		victim = oldest_waiting(h, NULL);
		*why = "cuprobe daemon: too many connections: try again\n";
	} else if (free_slot) {
		return free_slot;
	} else {
		*why = "cuprobe daemon: too many connections closing: try again\n";
		return NULL;
	}
	if (!victim || slot_age(victim, now) < HTTP_EVICT_MS * MS)
		return NULL;
	shut(victim);
	return free_slot;
}

/* Takes one connection: to libmicrohttpd, or turned away with 503. */
static void take(struct http *h, int fd, const struct sockaddr_storage *a, socklen_t alen)
{
	uint64_t now = now_ns();
	const char *why = "cuprobe daemon: too many connections closing: try again\n";
	struct slot *s;

	pthread_mutex_lock(&h->mu);
	s = room(h, a, now, &why);
	if (s) {
		*s = (struct slot){ .state = SLOT_ADDING, .fd = fd, .addr = *a, .since = now };
	}
	pthread_mutex_unlock(&h->mu);
	if (!s) {
		turn_away(h, fd, why, now);
		return;
	}
	if (MHD_add_connection(h->mhd, fd, (const struct sockaddr *)a, alen) != MHD_YES) {
		/* libmicrohttpd closed fd; notified() may have freed the slot already. */
		pthread_mutex_lock(&h->mu);
		if (s->state == SLOT_ADDING && s->fd == fd)
			s->state = SLOT_FREE;
		pthread_mutex_unlock(&h->mu);
	}
}

/* 0, or -errno of a failed accept other than "none left" (EMFILE: out of fds). */
static int accept_all(struct http *h)
{
	for (int i = 0; i < 2 * HTTP_MAX_CONNS; i++) {
		struct sockaddr_storage a = {};
		socklen_t alen = sizeof(a);
		int fd = accept4(h->lfd, (struct sockaddr *)&a, &alen, SOCK_CLOEXEC);

		if (fd < 0)
			return errno == EAGAIN || errno == EINTR || errno == ECONNABORTED ? 0 : -errno;
		take(h, fd, &a, alen);
	}
	return 0;
}

/*
 * Closes connections past their deadline: the request's (from the accept) or
 * the answer's (from when it was ready). A request the daemon holds has none.
 */
static void sweep(struct http *h, uint64_t now)
{
	pthread_mutex_lock(&h->mu);
	for (int i = 0; i < HTTP_SLOTS; i++) {
		struct slot *s = &h->slots[i];
		uint64_t age = slot_age(s, now);

		if (s->state == SLOT_ADDING && age > 2 * HTTP_REQUEST_S * 1000 * MS)
			s->state = SLOT_FREE; /* libmicrohttpd refused it, and closed it */
		else if (!s->shut && ((s->state == SLOT_WAITING && age >= HTTP_REQUEST_S * 1000 * MS) ||
				      (s->state == SLOT_SENDING && age >= HTTP_SEND_S * 1000 * MS)))
			shut(s);
	}
	pthread_mutex_unlock(&h->mu);
}

/* The 503s' connections: drained of what the client sends, closed at EOF or in time. */
static void linger_serve(struct http *h, const struct pollfd *pfd, uint64_t now)
{
	char buf[1024];

	for (int i = 0; i < HTTP_LINGERS; i++) {
		struct lingering *l = &h->lingers[i];

		if (l->fd < 0)
			continue;
		ssize_t n = pfd[i].revents ? recv(l->fd, buf, sizeof(buf), MSG_DONTWAIT) : 1;

		if (!n || (n < 0 && errno != EAGAIN) || now >= l->until) {
			close(l->fd);
			l->fd = -1;
		}
	}
}

void *http_acceptor(void *arg)
{
	struct http *h = arg;
	struct pollfd pfd[2 + HTTP_LINGERS];
	uint64_t paused = 0;

	for (;;) {
		pfd[0] = (struct pollfd){ .fd = h->wake, .events = POLLIN };
		/* After a failed accept (out of fds), the backlog waits a sweep's time. */
		pfd[1] = (struct pollfd){ .fd = now_ns() < paused ? -1 : h->lfd, .events = POLLIN };
		for (int i = 0; i < HTTP_LINGERS; i++)
			pfd[2 + i] = (struct pollfd){ .fd = h->lingers[i].fd, .events = POLLIN };
		if (poll(pfd, 2 + HTTP_LINGERS, 100) < 0 && errno != EINTR)
			break;
		if (pfd[0].revents)
			break;
		if (pfd[1].revents && accept_all(h))
			paused = now_ns() + 100 * MS;
		linger_serve(h, pfd + 2, now_ns());
		sweep(h, now_ns());
	}
	return NULL;
}

/* The listening socket is ours, so that a port in use is said plainly. */
int http_listen_on(const char *addr, char *err, size_t len)
{
	struct addr_port ap;
	char why[256];
	int fd, one = 1, rc;

	if (parse_addr_port(addr, &ap, why, sizeof(why))) {
		snprintf(err, len, "--listen: '%s' is %s", addr, why);
		return -EINVAL;
	}
	fd = socket(ap.sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, (struct sockaddr *)&ap.sa, ap.salen) || listen(fd, 128)) {
		rc = -errno;
		snprintf(err, len, "cannot listen on %s: %s%s", addr, strerror(-rc),
			 rc == -EADDRINUSE ? " (another program has the port: stop it, or give "
					     "another with --listen ADDR:PORT)" : "");
		if (fd >= 0)
			close(fd);
		return rc;
	}
	return fd;
}
