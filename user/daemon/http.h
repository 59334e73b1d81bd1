/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The daemon's HTTP server (libmicrohttpd's one polling thread, and an accept
 * thread of ours that enforces the limits below). It holds no daemon state:
 * each request becomes a message on a queue that the daemon's thread takes
 * (http__next, when http__fd is readable) and answers (http__answer), now or
 * later (a capture is answered when its window is written). The connection
 * is suspended meanwhile: it costs no thread and no deadline runs on it.
 *
 * Limits (docs/daemon.md): HTTP_MAX_CONNS connections, HTTP_MAX_PER_ADDR from
 * one address; a request's headers and body within HTTP_REQUEST_S of the
 * accept; a body of at most HTTP_MAX_BODY bytes (else 413), HTTP_MAX_HEADERS
 * headers (else 431), the request in HTTP_MEMORY bytes; http_opts.max_captures
 * captures at once (else 429). Who may ask is auth.h's. Past a limit the
 * connection that has waited longest for its request (at least
 * HTTP_EVICT_MS) is closed to make room, else the newcomer is answered 503.
 */
#ifndef DAEMON_HTTP_H
#define DAEMON_HTTP_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct auth_wait;

enum dreq_kind { DREQ_METRICS, DREQ_CAPTURE, DREQ_TARGETS, DREQ_TRACE };

struct dreq {
	enum dreq_kind kind;
	/* DREQ_CAPTURE */
	pid_t pid;
	uint32_t steps;
	char mode[16];		/* "" (the daemon's choice), "bpf" or "cupti" */
	/* DREQ_CAPTURE of a job (pid 0) and DREQ_TARGETS: the job, "" (targets: all). */
	char job[128];
	int64_t start_step;	/* the first active step, -1: the next steps */
	uint32_t timeout_s;	/* 0: the daemon's capture-timeout */
	/* DREQ_TRACE: the trace asked for, as given (trace_get.h). */
	char path[1024];
	struct dreq *next;	/* the queue's */
	unsigned int retry_after;	/* seconds, for a Retry-After header; 0: none */
	/* The answer (http__answer), read by the server's thread once resumed. */
	unsigned int status;
	char *body;
	size_t len;
	const char *ctype;
	int file;		/* answered with a file (http__answer_file): its fd + 1; 0: none */
	/* http.c's: the connection, its slot, the body's bytes, where it stands. */
	struct http *h;
	void *conn;
	void *slot;
	struct auth_wait *auth;	/* its password check, while it runs (auth.h) */
	size_t body_in;
	bool queued, answered;
};

struct http;
struct webconf;

struct http_opts {
	const char *listen;		/* ADDR:PORT */
	const struct webconf *web;	/* TLS and authentication; NULL: none (loopback) */
	uint32_t max_captures;		/* captures at once; more are 429 */
};

/*
 * Listens on o->listen. NULL and errno on failure, with err saying what
 * failed and what to do (e.g. the port is in use). o->web must outlive it.
 */
struct http *http__start(const struct http_opts *o, char *err, size_t len);
/* Stops taking requests, answers what is queued with 503, and ends the server. */
void http__stop(struct http *h);
/* Readable (an eventfd) while requests wait. */
int http__fd(const struct http *h);
/* The next request, or NULL. */
struct dreq *http__next(struct http *h);
/*
 * Answers r with body (malloc'ed, taken over), from any thread, once. r is the
 * connection's again after this: the caller must not touch it.
 */
void http__answer(struct dreq *r, unsigned int status, const char *ctype, char *body, size_t len);
/*
 * Answers r 200 with the file fd (size bytes), streamed from it; fd is taken
 * over (closed once sent, or when the connection goes). Same rules as above.
 */
void http__answer_file(struct dreq *r, const char *ctype, int fd, uint64_t size);
/* Answers r with a one-line text message (and Retry-After when r->retry_after is set). */
void http__answer_text(struct dreq *r, unsigned int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Requests refused so far (bad requests, unknown paths, 503s past the limits), from the server's side. */
uint64_t http__refused(const struct http *h);

#endif /* DAEMON_HTTP_H */
