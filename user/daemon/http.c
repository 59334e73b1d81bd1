// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Three threads touch a connection: the accept thread (admits it, or answers
 * 503 itself; closes it at its deadline), libmicrohttpd's polling thread
 * (reads the request, queues the answer) and the daemon's (answers). Their
 * shared state, the slots and the queue, is behind h->mu, which is never held
 * while calling into libmicrohttpd. A fourth, the password checker (auth.h),
 * only resumes a connection it checked: the outcome is auth.c's to read.
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

#include "daemon/http_int.h"

static const char PROM[] = "text/plain; version=0.0.4; charset=utf-8";
static const char USAGE[] = "cuprobe daemon: GET /metrics, GET /targets[?job=JOB], POST "
			    "/capture?pid=PID&steps=N[&mode=bpf|cupti], POST "
			    "/capture?job=JOB&steps=N[&start_step=S][&timeout=SEC], GET "
			    "/trace?path=PATH\n";

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
	/*
	 * Traces are root's 0600 files: without a web-config no one here is
	 * authenticated, and loopback alone would hand them to any local user.
	 */
	if (!h->auth)
		return refuse(h, c, 403, "trace: this daemon hands traces over only to an "
			      "authenticated client: give it a --web-config (TLS and users or client "
			      "certificates), or read the trace from its output folder as root\n");
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
 * Past authentication: /healthz is answered at once, by this thread alone (a
 * readiness probe that the daemon's thread cannot delay); a body announced
 * too large is refused before it is read.
 */
static enum MHD_Result admitted(struct http *h, struct MHD_Connection *c, const char *url,
				const char *method, void **con_cls)
{
	const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
	struct dreq *r = *con_cls;
	int n;

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
	if (!r && !(r = calloc(1, sizeof(*r))))
		return MHD_NO;
	r->slot = slot_of(c);
	*con_cls = r;
	return MHD_YES;
}

/* Refused by auth.h: its status and text, and Retry-After when it says when to come back. */
static enum MHD_Result refuse_auth(struct http *h, struct MHD_Connection *c,
				   const struct auth_answer *ans)
{
	char ra[16];

	snprintf(ra, sizeof(ra), "%u", ans->retry_s);
	return refuse_hdr(h, c, ans->status, ans->retry_s ? MHD_HTTP_HEADER_RETRY_AFTER : NULL,
			  ra, "%s", ans->why);
}

/*
 * The headers are in. Before anything else, authentication: a refused client
 * starts nothing and learns nothing. A password to check suspends the
 * connection until checked (auth.h), here in a dreq of its own.
 */
static enum MHD_Result headers(struct http *h, struct MHD_Connection *c, const char *url,
			       const char *method, void **con_cls)
{
	struct auth_answer ans;
	struct dreq *r;

	if (!h->auth)
		return admitted(h, c, url, method, con_cls);
	/* Before the check, which may suspend c: nothing can fail after that. */
	r = calloc(1, sizeof(*r));
	if (!r)
		return MHD_NO;
	auth__check(h->auth, c, url, &ans);
	if (ans.status == AUTH_WAIT) {
		r->auth = ans.wait;
		*con_cls = r;
		return MHD_YES;
	}
	free(r);
	if (ans.status)
		return refuse_auth(h, c, &ans);
	return admitted(h, c, url, method, con_cls);
}

/* Its password was checked and the connection resumed: refused, or on as any other. */
static enum MHD_Result checked(struct http *h, struct MHD_Connection *c, const char *url,
			       const char *method, void **con_cls)
{
	struct dreq *r = *con_cls;
	struct auth_answer ans;

	auth__resumed(h->auth, r->auth, &ans);
	r->auth = NULL;
	if (ans.status)
		return refuse_auth(h, c, &ans);
	return admitted(h, c, url, method, con_cls);
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
	if (r->auth)
		return checked(h, c, url, method, con_cls);
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
	/* Closed before its check was read: the check still counts. */
	if (r && r->auth) {
		struct auth_answer ans;

		auth__resumed(h->auth, r->auth, &ans);
		r->auth = NULL;
	}
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
	h->lfd = http_listen_on(addr, err, len);
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
	rc = -pthread_create(&h->acceptor, NULL, http_acceptor, h);
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
	/* Connections waiting for a password check are resumed (and refused 503). */
	if (h->auth)
		auth__stop(h->auth);
	/* Suspended connections were all answered (resumed): libmicrohttpd requires it. */
	MHD_stop_daemon(h->mhd);
	http_free(h);
}
