// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <arpa/inet.h>
#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include "http.h"

struct http {
	struct MHD_Daemon *mhd;
	int lfd;
	int efd;			/* readable while the queue holds requests */
	pthread_mutex_t mu;		/* the queue and closing, nothing else */
	struct dreq *head, *tail;
	bool closing;
	atomic_ulong refused;
};

/* Connections at once; each waits for the daemon's answer in its own thread. */
#define HTTP_MAX_CONNS 32
#define HTTP_TIMEOUT_S 30

static const char TEXT[] = "text/plain; charset=utf-8";
static const char PROM[] = "text/plain; version=0.0.4; charset=utf-8";
static int marker;

void http__answer(struct dreq *r, unsigned int status, const char *ctype, char *body, size_t len)
{
	pthread_mutex_lock(&r->mu);
	r->status = status;
	r->ctype = ctype ? ctype : (status == 200 && r->kind == DREQ_METRICS ? PROM : TEXT);
	r->body = body;
	r->len = len;
	r->answered = true;
	pthread_cond_signal(&r->cv);
	pthread_mutex_unlock(&r->mu);
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

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int status, const char *ctype,
			     char *body, size_t len)
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
	ret = MHD_queue_response(c, status, resp);
	MHD_destroy_response(resp);
	return ret;
}

static enum MHD_Result refuse(struct http *h, struct MHD_Connection *c, unsigned int status,
			      const char *fmt, ...)
{
	char *body = NULL;
	va_list ap;
	int n;

	atomic_fetch_add(&h->refused, 1);
	va_start(ap, fmt);
	n = vasprintf(&body, fmt, ap);
	va_end(ap);
	return reply(c, status, TEXT, n < 0 ? NULL : body, n < 0 ? 0 : (size_t)n);
}

/* Queues r for the daemon and waits for its answer; false when the server is closing. */
static bool ask(struct http *h, struct dreq *r)
{
	uint64_t one = 1;
	bool ok;

	pthread_mutex_lock(&h->mu);
	ok = !h->closing;
	if (ok) {
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
	if (!ok)
		return false;
	pthread_mutex_lock(&r->mu);
	while (!r->answered)
		pthread_cond_wait(&r->cv, &r->mu);
	pthread_mutex_unlock(&r->mu);
	return true;
}

static enum MHD_Result serve(struct http *h, struct MHD_Connection *c, struct dreq *r)
{
	bool asked;

	pthread_mutex_init(&r->mu, NULL);
	pthread_cond_init(&r->cv, NULL);
	asked = ask(h, r);
	pthread_cond_destroy(&r->cv);
	pthread_mutex_destroy(&r->mu);
	if (!asked)
		return refuse(h, c, 503, "cuprobe daemon: shutting down\n");
	if (r->status >= 400)
		atomic_fetch_add(&h->refused, 1);
	return reply(c, r->status, r->ctype, r->body, r->len);
}

/* pid, steps and mode of /capture, checked here so that the daemon gets sane numbers. */
static enum MHD_Result capture(struct http *h, struct MHD_Connection *c, struct dreq *r)
{
	const char *pid = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "pid");
	const char *steps = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "steps");
	const char *mode = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "mode");
	char *end;
	long v;

	if (!pid || !steps)
		return refuse(h, c, 400, "capture: give pid and steps: POST /capture?pid=PID&steps=N"
			      "[&mode=bpf|cupti]\n");
	errno = 0;
	v = strtol(pid, &end, 10);
	if (errno || end == pid || *end || v <= 0 || v > INT32_MAX)
		return refuse(h, c, 400, "capture: pid '%s' is not a process id\n", pid);
	r->pid = (pid_t)v;
	v = strtol(steps, &end, 10);
	if (errno || end == steps || *end || v < 1 || v > 10000)
		return refuse(h, c, 400, "capture: steps '%s' is not a number from 1 to 10000\n",
			      steps);
	r->steps = (uint32_t)v;
	if (mode && strcmp(mode, "bpf") && strcmp(mode, "cupti"))
		return refuse(h, c, 400, "capture: mode '%s' is not bpf or cupti\n", mode);
	snprintf(r->mode, sizeof(r->mode), "%s", mode ? mode : "");
	r->kind = DREQ_CAPTURE;
	return serve(h, c, r);
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *c, const char *url,
			      const char *method, const char *version, const char *upload,
			      size_t *upload_size, void **con_cls)
{
	struct http *h = cls;
	struct dreq r = {};

	(void)version;
	(void)upload;
	/* The first call only sees the headers; a body, if any, is read and ignored. */
	if (!*con_cls) {
		*con_cls = &marker;
		return MHD_YES;
	}
	if (*upload_size) {
		*upload_size = 0;
		return MHD_YES;
	}
	if (!strcmp(url, "/metrics")) {
		if (strcmp(method, "GET") && strcmp(method, "HEAD"))
			return refuse(h, c, 405, "/metrics: use GET\n");
		r.kind = DREQ_METRICS;
		return serve(h, c, &r);
	}
	if (!strcmp(url, "/capture")) {
		if (strcmp(method, "POST"))
			return refuse(h, c, 405, "/capture: use POST /capture?pid=PID&steps=N\n");
		return capture(h, c, &r);
	}
	if (!strcmp(url, "/") || !strcmp(url, "/healthz"))
		return reply(c, 200, TEXT, strdup("cuprobe daemon: GET /metrics, POST "
						  "/capture?pid=PID&steps=N[&mode=bpf|cupti]\n"),
			     strlen("cuprobe daemon: GET /metrics, POST "
				    "/capture?pid=PID&steps=N[&mode=bpf|cupti]\n"));
	return refuse(h, c, 404, "%s: not found (GET /metrics, POST /capture)\n", url);
}

/* The listening socket is ours, so that a port in use is said plainly. */
static int listen_on(const char *addr, char *err, size_t len)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV };
	char host[128];
	const char *colon = strrchr(addr, ':');
	struct addrinfo *ai;
	int fd, one = 1, rc;

	snprintf(host, sizeof(host), "%.*s", (int)(colon - addr), addr);
	/* [::1]:9464 */
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = '\0';
	}
	rc = getaddrinfo(host, colon + 1, &hints, &ai);
	if (rc) {
		snprintf(err, len, "--listen %s: '%s' is not a numeric address (%s)", addr, host,
			 gai_strerror(rc));
		return -EINVAL;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (fd < 0 || bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 64)) {
		rc = -errno;
		snprintf(err, len, "cannot listen on %s: %s%s", addr, strerror(-rc),
			 rc == -EADDRINUSE ? " (another program has the port: stop it, or give "
					     "another with --listen ADDR:PORT)" : "");
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return rc;
	}
	freeaddrinfo(ai);
	return fd;
}

struct http *http__start(const char *addr, char *err, size_t len)
{
	struct http *h = calloc(1, sizeof(*h));
	int rc;

	if (!h)
		return NULL;
	pthread_mutex_init(&h->mu, NULL);
	h->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	h->lfd = listen_on(addr, err, len);
	if (h->efd < 0 || h->lfd < 0) {
		rc = h->lfd < 0 ? h->lfd : -errno;
		goto fail;
	}
	h->mhd = MHD_start_daemon(MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD,
				  0, NULL, NULL, handle, h, MHD_OPTION_LISTEN_SOCKET, h->lfd,
				  MHD_OPTION_CONNECTION_LIMIT, (unsigned int)HTTP_MAX_CONNS,
				  MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)HTTP_TIMEOUT_S,
				  MHD_OPTION_END);
	if (!h->mhd) {
		rc = -EIO;
		snprintf(err, len, "cannot start the HTTP server on %s (libmicrohttpd)", addr);
		goto fail;
	}
	return h;
fail:
	if (h->lfd >= 0)
		close(h->lfd);
	if (h->efd >= 0)
		close(h->efd);
	free(h);
	errno = -rc;
	return NULL;
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

void http__stop(struct http *h)
{
	struct dreq *r;

	if (!h)
		return;
	pthread_mutex_lock(&h->mu);
	h->closing = true;
	pthread_mutex_unlock(&h->mu);
	while ((r = http__next(h)))
		http__answer_text(r, 503, "cuprobe daemon: shutting down\n");
	/* MHD closes the listening socket it was given. */
	MHD_stop_daemon(h->mhd);
	close(h->efd);
	pthread_mutex_destroy(&h->mu);
	free(h);
}
