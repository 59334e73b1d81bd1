// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Three threads touch a connection: the accept thread (admits it, or answers
 * 503 itself; closes it at its deadline), libmicrohttpd's polling thread
 * (reads the request, queues the answer) and the daemon's (answers). Their
 * shared state, the slots and the queue, is behind h->mu, which is never held
 * while calling into libmicrohttpd.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include "daemon/auth.h"
#include "daemon/http.h"
#include "daemon/webconf.h"
#include "util/parse.h"

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

static const char TEXT[] = "text/plain; charset=utf-8";
static const char PROM[] = "text/plain; version=0.0.4; charset=utf-8";
static const char USAGE[] = "cuprobe daemon: GET /metrics, GET /targets[?job=JOB], POST "
			    "/capture?pid=PID&steps=N[&mode=bpf|cupti], POST "
			    "/capture?job=JOB&steps=N[&start_step=S][&timeout=SEC], GET "
			    "/trace?path=PATH\n";

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 * MS + (uint64_t)ts.tv_nsec;
}

/* The client's IP, port aside. */
static bool same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
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

/* ---- the daemon's side: the queue and the answers ---- */

void http__answer(struct dreq *r, unsigned int status, const char *ctype, char *body, size_t len)
{
	struct http *h = r->h;
	struct slot *s = r->slot;

	pthread_mutex_lock(&h->mu);
	r->status = status;
	r->ctype = ctype ? ctype : (status == 200 && r->kind == DREQ_METRICS ? PROM : TEXT);
	r->body = body;
	r->len = len;
	r->answered = true;
	if (s) {
		s->state = SLOT_SENDING;
		s->since = now_ns();
	}
	pthread_mutex_unlock(&h->mu);
	MHD_resume_connection(r->conn);
}

void http__answer_file(struct dreq *r, const char *ctype, int fd, uint64_t size)
{
	r->file = fd + 1;
	http__answer(r, 200, ctype, NULL, (size_t)size);
}

void http__answer_text(struct dreq *r, unsigned int status, const char *fmt, ...)
{
	char *body = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&body, fmt, ap);
	va_end(ap);
	if (n < 0)
		body = NULL, n = 0;
	http__answer(r, status, TEXT, body, (size_t)n);
}

int http__fd(const struct http *h)
{
	return h->efd;
}

struct dreq *http__next(struct http *h)
{
	struct dreq *r;
	uint64_t v;

	pthread_mutex_lock(&h->mu);
	r = h->head;
	if (r) {
		h->head = r->next;
		if (!h->head)
			h->tail = NULL;
	} else if (read(h->efd, &v, sizeof(v)) < 0) {
		/* Drained: nothing to do. */
	}
	pthread_mutex_unlock(&h->mu);
	return r;
}

uint64_t http__refused(const struct http *h)
{
	return atomic_load(&((struct http *)h)->refused);
}

/* ---- libmicrohttpd's thread: requests ---- */

/* The answer, with one more header (hname: hval) when hname is not NULL. */
static enum MHD_Result reply(struct MHD_Connection *c, unsigned int status, const char *ctype,
			     char *body, size_t len, const char *hname, const char *hval)
{
	struct MHD_Response *resp;
	enum MHD_Result ret;

	resp = MHD_create_response_from_buffer(len, body ? body : (void *)"", body ?
					       MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	if (!resp) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", ctype);
	/* One request a connection: its deadline counts from the accept. */
	MHD_add_response_header(resp, "Connection", "close");
	if (hname)
		MHD_add_response_header(resp, hname, hval);
	/* 401 says how to authenticate: WWW-Authenticate: Basic realm="cuprobe". */
	ret = status == 401 ? MHD_queue_basic_auth_fail_response(c, "cuprobe", resp) :
	      MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

/* A trace, streamed from its file (GET /trace): libmicrohttpd reads it, and closes fd. */
static enum MHD_Result reply_file(struct MHD_Connection *c, const char *ctype, int fd,
				  uint64_t size)
{
	struct MHD_Response *resp = MHD_create_response_from_fd64(size, fd);
	enum MHD_Result ret;

	if (!resp) {
		close(fd);
		return MHD_NO;
	}
	MHD_add_response_header(resp, "Content-Type", ctype);
	MHD_add_response_header(resp, "Connection", "close");
	ret = MHD_queue_response(c, 200, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result refuse_hdr(struct http *h, struct MHD_Connection *c, unsigned int status,
				  const char *hname, const char *hval, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* A refusal, counted, with one more header when hname is not NULL. */
static enum MHD_Result refuse_hdr(struct http *h, struct MHD_Connection *c, unsigned int status,
				  const char *hname, const char *hval, const char *fmt, ...)
{
	char *body = NULL;
	va_list ap;
	int n;

	atomic_fetch_add(&h->refused, 1);
	va_start(ap, fmt);
	n = vasprintf(&body, fmt, ap);
	va_end(ap);
	return reply(c, status, TEXT, n < 0 ? NULL : body, n < 0 ? 0 : (size_t)n, hname, hval);
}

#define refuse(h, c, status, ...) refuse_hdr(h, c, status, NULL, NULL, __VA_ARGS__)
#define refuse_allow(h, c, status, allow, ...) \
	refuse_hdr(h, c, status, MHD_HTTP_HEADER_ALLOW, allow, __VA_ARGS__)

/*
 * Queues r for the daemon, its connection suspended until http__answer
 * resumes it; when the server is closing, r answers itself (503).
 */
static enum MHD_Result ask(struct http *h, struct MHD_Connection *c, struct dreq *r)
{
	struct slot *s = r->slot;
	uint64_t one = 1;
	bool closing;

	r->h = h;
	r->conn = c;
	MHD_suspend_connection(c);
	pthread_mutex_lock(&h->mu);
	closing = h->closing;
	r->queued = true;
	if (!closing) {
		if (s)
			s->state = SLOT_BUSY;
		r->next = NULL;
		if (h->tail)
			h->tail->next = r;
		else
			h->head = r;
		h->tail = r;
		if (write(h->efd, &one, sizeof(one)) != sizeof(one))
			abort();
	}
	pthread_mutex_unlock(&h->mu);
	if (closing)
		http__answer_text(r, 503, "cuprobe daemon: shutting down\n");
	return MHD_YES;
}

/* The daemon's answer, once it resumed the connection. */
static enum MHD_Result answered(struct http *h, struct MHD_Connection *c, struct dreq *r)
{
	char *body;
	bool ready;

	int fd;

	pthread_mutex_lock(&h->mu);
	ready = r->answered;
	body = r->body;
	r->body = NULL;
	fd = ready ? r->file - 1 : -1;
	if (ready)
		r->file = 0;
	pthread_mutex_unlock(&h->mu);
	if (!ready)
		return MHD_YES;
	if (fd >= 0)
		return reply_file(c, r->ctype, fd, r->len);
	char ra[16];

	if (r->status >= 400)
		atomic_fetch_add(&h->refused, 1);
	snprintf(ra, sizeof(ra), "%u", r->retry_after);
	return reply(c, r->status, r->ctype, body, r->len,
		     r->retry_after ? MHD_HTTP_HEADER_RETRY_AFTER : NULL, ra);
}

/*
 * A query argument that is a count (util/parse.h): plain decimal digits, no
 * sign, space, NUL or leading zero, at most max. -ENOENT when absent, -EINVAL
 * otherwise.
 */
static int arg_uint(struct MHD_Connection *c, const char *key, long max, long *v)
{
	const char *s = NULL;
	size_t n = 0;
	uint64_t x;

	if (MHD_lookup_connection_value_n(c, MHD_GET_ARGUMENT_KIND, key, strlen(key), &s, &n) !=
	    MHD_YES || !s)
		return -ENOENT;
	if (strlen(s) != n || parse_count(s, 0, (uint64_t)max, &x))
		return -EINVAL;
	*v = (long)x;
	return 0;
}

/* Counts a capture in, if there is room for one more (it is counted out in completed()). */
static bool capture_room(struct http *h)
{
	bool room;

	pthread_mutex_lock(&h->mu);
	room = h->captures < h->max_captures;
	h->captures += room;
	pthread_mutex_unlock(&h->mu);
	return room;
}

/* A job's name: any bytes but NUL (the JSON writer and the label escaping take them), bounded. */
static int arg_job(struct MHD_Connection *c, struct dreq *r)
{
	const char *s = NULL;
	size_t n = 0;

	if (MHD_lookup_connection_value_n(c, MHD_GET_ARGUMENT_KIND, "job", 3, &s, &n) != MHD_YES ||
	    !s)
		return -ENOENT;
	if (!n || strlen(s) != n || n >= sizeof(r->job))
		return -EINVAL;
	memcpy(r->job, s, n + 1);
	return 0;
}

/* start_step and timeout of a job's capture (docs/daemon.md, "Jobs"): NULL, or what is wrong. */
static const char *job_args(struct MHD_Connection *c, struct dreq *r)
{
	long v;
	int err;

	r->start_step = -1;
	err = arg_uint(c, "start_step", INT32_MAX, &v);
	if (err == -EINVAL)
		return "start_step is not a step number (plain decimal digits)";
	if (!err)
		r->start_step = v;
	err = arg_uint(c, "timeout", 86400, &v);
	if (err == -EINVAL || (!err && v < 1))
		return "timeout is not a number of seconds from 1 to 86400";
	r->timeout_s = err ? 0 : (uint32_t)v;
	return NULL;
}

/* pid or job, steps and mode of /capture, checked here so that the daemon gets sane numbers. */
static enum MHD_Result capture(struct http *h, struct MHD_Connection *c, struct dreq *r)
{
	const char *pid = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "pid");
	const char *steps = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "steps");
	const char *mode = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "mode");
	int job = arg_job(c, r);
	const char *bad = NULL;
	long v;

	if (job == -EINVAL)
		return refuse(h, c, 400, "capture: job is empty or longer than %zu bytes\n",
			      sizeof(r->job) - 1);
	if (!job && pid)
		return refuse(h, c, 400, "capture: give pid or job, not both\n");
	if ((!pid && job) || !steps)
		return refuse(h, c, 400, "capture: give pid and steps: POST /capture?pid=PID&steps=N"
			      "[&mode=bpf|cupti], or job=JOB&steps=N[&start_step=S][&timeout=SEC]\n");
	if (!job && (bad = job_args(c, r)))
		return refuse(h, c, 400, "capture: %s\n", bad);
	if (!job)
		r->pid = 0;
	else if (arg_uint(c, "pid", INT32_MAX, &v) || v < 1)
		return refuse(h, c, 400, "capture: pid '%s' is not a process id (plain decimal "
			      "digits)\n", pid);
	else
		r->pid = (pid_t)v;
	if (arg_uint(c, "steps", 10000, &v) || v < 1)
		return refuse(h, c, 400, "capture: steps '%s' is not a number from 1 to 10000 "
			      "(plain decimal digits)\n", steps);
	r->steps = (uint32_t)v;
	if (mode && strcmp(mode, "bpf") && strcmp(mode, "cupti"))
		return refuse(h, c, 400, "capture: mode '%s' is not bpf or cupti\n", mode);
	snprintf(r->mode, sizeof(r->mode), "%s", mode ? mode : "");
	if (!capture_room(h))
		return refuse_hdr(h, c, 429, MHD_HTTP_HEADER_RETRY_AFTER, HTTP_CAPTURE_RETRY_S,
				  "capture: %u captures are in progress, the most this daemon "
				  "takes at once (--max-captures): try again later\n",
				  h->max_captures);
	r->kind = DREQ_CAPTURE;
	return ask(h, c, r);
}

/* GET /trace?path=P: the daemon opens P (trace_get.h) and streams it. */
static enum MHD_Result trace(struct http *h, struct MHD_Connection *c, const char *method,
			     struct dreq *r)
{
	const char *s = NULL;
	size_t n = 0;

	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return refuse_allow(h, c, 405, "GET, HEAD", "/trace: use GET /trace?path=PATH\n");
	if (MHD_lookup_connection_value_n(c, MHD_GET_ARGUMENT_KIND, "path", 4, &s, &n) != MHD_YES ||
	    !s || !n || strlen(s) != n || n >= sizeof(r->path))
		return refuse(h, c, 400, "trace: give path=PATH, a capture's \"trace\" (at most "
			      "%zu bytes, no NUL)\n", sizeof(r->path) - 1);
	memcpy(r->path, s, n + 1);
	r->kind = DREQ_TRACE;
	return ask(h, c, r);
}

/* The whole request is in: to the daemon, or refused. */
static enum MHD_Result route(struct http *h, struct MHD_Connection *c, const char *url,
			     const char *method, struct dreq *r)
{
	if (!strcmp(url, "/metrics")) {
		if (strcmp(method, "GET") && strcmp(method, "HEAD"))
			return refuse_allow(h, c, 405, "GET, HEAD", "/metrics: use GET\n");
		r->kind = DREQ_METRICS;
		return ask(h, c, r);
	}
	if (!strcmp(url, "/capture")) {
		if (strcmp(method, "POST"))
			return refuse_allow(h, c, 405, "POST", "/capture: use POST "
					    "/capture?pid=PID&steps=N\n");
		return capture(h, c, r);
	}
	if (!strcmp(url, "/targets")) {
		if (strcmp(method, "GET") && strcmp(method, "HEAD"))
			return refuse_allow(h, c, 405, "GET, HEAD", "/targets: use GET\n");
		if (arg_job(c, r) == -EINVAL)
			return refuse(h, c, 400, "targets: job is empty or too long\n");
		r->kind = DREQ_TARGETS;
		return ask(h, c, r);
	}
	if (!strcmp(url, "/trace"))
		return trace(h, c, method, r);
	return refuse(h, c, 404, "%s: not found (GET /metrics, GET /targets, GET /trace, POST "
		      "/capture)\n", url);
}

static struct slot *slot_of(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);

	return ci ? ci->socket_context : NULL;
}

/*
 * The headers are in. /healthz is answered at once, by this thread alone (a
 * readiness probe that the daemon's thread cannot delay); a body announced
 * too large is refused before it is read.
 */
static enum MHD_Result headers(struct http *h, struct MHD_Connection *c, const char *url,
			       const char *method, void **con_cls)
{
	const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
	unsigned int status;
	struct dreq *r;
	char why[512];
	int n;

	/* Before anything else: a refused client starts nothing and learns nothing. */
	if (h->auth && (status = auth__check(h->auth, c, url, why, sizeof(why))))
		return refuse(h, c, status, "%s", why);
	n = MHD_get_connection_values(c, MHD_HEADER_KIND, NULL, NULL);
	if (n > HTTP_MAX_HEADERS)
		return refuse(h, c, 431, "%s: %d headers are more than %d\n", url, n,
			      HTTP_MAX_HEADERS);
	if (!strcmp(url, "/") || !strcmp(url, "/healthz")) {
		if (strcmp(method, "GET") && strcmp(method, "HEAD"))
			return refuse_allow(h, c, 405, "GET, HEAD", "%s: use GET\n", url);
		return reply(c, 200, TEXT, strdup(USAGE), strlen(USAGE), NULL, NULL);
	}
	if (cl && strtoull(cl, NULL, 10) > HTTP_MAX_BODY)
		return refuse(h, c, 413, "%s: a body of %s bytes is more than %d: this API takes "
			      "its arguments in the URL\n", url, cl, HTTP_MAX_BODY);
	r = calloc(1, sizeof(*r));
	if (!r)
		return MHD_NO;
	r->slot = slot_of(c);
	*con_cls = r;
	return MHD_YES;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	struct http *h = cls;
	struct dreq *r = *con_cls;

	(void)version;
	(void)upload;
	if (!r)
		return headers(h, c, url, method, con_cls);
	if (*upload_size) {
		/* A body sent without its length (chunked) and too long: the connection goes. */
		r->body_in += *upload_size;
		*upload_size = 0;
		return r->body_in > HTTP_MAX_BODY ? MHD_NO : MHD_YES;
	}
	if (r->queued)
		return answered(h, c, r);
	return route(h, c, url, method, r);
}

/* The request is over (answered, or its connection gone): its dreq goes. */
static void completed(void *cls, struct MHD_Connection *c, void **con_cls,
		      enum MHD_RequestTerminationCode toe)
{
	struct dreq *r = *con_cls;
	struct http *h = cls;

	(void)c;
	(void)toe;
	if (r && r->kind == DREQ_CAPTURE) {
		pthread_mutex_lock(&h->mu);
		h->captures--;
		pthread_mutex_unlock(&h->mu);
	}
	if (r) {
		if (r->file)
			close(r->file - 1);
		free(r->body);
		free(r);
	}
	*con_cls = NULL;
}

/* A connection becomes libmicrohttpd's (its slot waits for a request), or is gone. */
static void notified(void *cls, struct MHD_Connection *c, void **socket_context,
		     enum MHD_ConnectionNotificationCode code)
{
	const union MHD_ConnectionInfo *ci;
	struct http *h = cls;
	struct slot *s = *socket_context;

	pthread_mutex_lock(&h->mu);
	if (code == MHD_CONNECTION_NOTIFY_CLOSED && s) {
		s->state = SLOT_FREE;
		*socket_context = NULL;
	} else if (code == MHD_CONNECTION_NOTIFY_STARTED &&
		   (ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD))) {
		for (int i = 0; i < HTTP_SLOTS; i++) {
			s = &h->slots[i];
			if (s->state == SLOT_ADDING && s->fd == ci->connect_fd) {
				s->state = SLOT_WAITING;
				*socket_context = s;
				break;
			}
		}
	}
	pthread_mutex_unlock(&h->mu);
}

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

static void *acceptor(void *arg)
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
static int listen_on(const char *addr, char *err, size_t len)
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

static struct MHD_Daemon *mhd_start(struct http *h)
{
	static const struct MHD_OptionItem none[] = { { MHD_OPTION_END, 0, NULL } };

	/* One polling thread (epoll where there is one); connections are ours to add. */
	return MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME |
				MHD_USE_NO_LISTEN_SOCKET | (h->auth ? auth__mhd_flags(h->auth) : 0),
				0, NULL, NULL, handle, h,
				MHD_OPTION_ARRAY, h->auth ? auth__mhd_options(h->auth) : none,
				MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_MEMORY,
				MHD_OPTION_CONNECTION_LIMIT, (unsigned int)HTTP_SLOTS,
				MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)HTTP_SEND_S,
				MHD_OPTION_NOTIFY_COMPLETED, completed, h,
				MHD_OPTION_NOTIFY_CONNECTION, notified, h, MHD_OPTION_END);
}

static void http_free(struct http *h)
{
	for (int i = 0; i < HTTP_LINGERS; i++)
		if (h->lingers[i].fd >= 0)
			close(h->lingers[i].fd);
	if (h->lfd >= 0)
		close(h->lfd);
	if (h->efd >= 0)
		close(h->efd);
	if (h->wake >= 0)
		close(h->wake);
	auth__free(h->auth);
	pthread_mutex_destroy(&h->mu);
	free(h);
}

struct http *http__start(const struct http_opts *o, char *err, size_t len)
{
	struct http *h = calloc(1, sizeof(*h));
	const char *addr = o->listen;
	int rc;

	if (!h)
		return NULL;
	pthread_mutex_init(&h->mu, NULL);
	h->max_captures = o->max_captures;
	h->tls = o->web && o->web->tls;
	if (o->web && !(h->auth = auth__new(o->web))) {
		free(h);
		return NULL;
	}
	for (int i = 0; i < HTTP_LINGERS; i++)
		h->lingers[i].fd = -1;
	h->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	h->wake = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	h->lfd = listen_on(addr, err, len);
	if (h->efd < 0 || h->wake < 0 || h->lfd < 0) {
		rc = h->lfd < 0 ? h->lfd : -errno;
		goto fail;
	}
	h->mhd = mhd_start(h);
	if (!h->mhd) {
		rc = -EIO;
		snprintf(err, len, "cannot start the HTTP server on %s (libmicrohttpd%s)", addr,
			 h->tls ? "'s TLS: check the web-config's certificate and key" : "");
		goto fail;
	}
	rc = -pthread_create(&h->acceptor, NULL, acceptor, h);
	if (rc) {
		snprintf(err, len, "cannot start the HTTP server's thread: %s", strerror(-rc));
		MHD_stop_daemon(h->mhd);
		goto fail;
	}
	return h;
fail:
	http_free(h);
	errno = -rc;
	return NULL;
}

void http__stop(struct http *h)
{
	uint64_t one = 1;
	struct dreq *r;

	if (!h)
		return;
	pthread_mutex_lock(&h->mu);
	h->closing = true;
	pthread_mutex_unlock(&h->mu);
	while ((r = http__next(h)))
		http__answer_text(r, 503, "cuprobe daemon: shutting down\n");
	if (write(h->wake, &one, sizeof(one)) != sizeof(one))
		abort();
	pthread_join(h->acceptor, NULL);
	/* Suspended connections were all answered (resumed): libmicrohttpd requires it. */
	MHD_stop_daemon(h->mhd);
	http_free(h);
}
