/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The daemon's HTTP server (libmicrohttpd, a thread per connection). It
 * holds no daemon state: each request becomes a message on a queue that the
 * daemon's thread takes (http__next, when http__fd is readable) and answers
 * (http__answer), now or later (a capture is answered when its window is
 * written). The connection's thread waits for the answer.
 */
#ifndef DAEMON_HTTP_H
#define DAEMON_HTTP_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum dreq_kind { DREQ_METRICS, DREQ_CAPTURE };

struct dreq {
	enum dreq_kind kind;
	/* DREQ_CAPTURE */
	pid_t pid;
	uint32_t steps;
	char mode[16];		/* "" (the daemon's choice), "bpf" or "cupti" */
	struct dreq *next;	/* the queue's */
	/* The answer, and its post (http.c). */
	unsigned int status;
	char *body;
	size_t len;
	const char *ctype;
	/* The connection's thread waits on cv until answered; mu guards the answer. */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool answered;
};

struct http;

/*
 * Listens on addr ("ADDR:PORT"). NULL and errno on failure, with err saying
 * what failed and what to do (e.g. the port is in use).
 */
struct http *http__start(const char *addr, char *err, size_t len);
/* Stops taking requests, answers what is queued with 503, and ends the server. */
void http__stop(struct http *h);
/* Readable (an eventfd) while requests wait. */
int http__fd(const struct http *h);
/* The next request, or NULL. */
struct dreq *http__next(struct http *h);
/* Answers r with body (malloc'ed, taken over). r is the connection's again after this. */
void http__answer(struct dreq *r, unsigned int status, const char *ctype, char *body, size_t len);
/* Answers r with a one-line text message. */
void http__answer_text(struct dreq *r, unsigned int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* Requests refused so far (bad requests, unknown paths), from the server's side. */
uint64_t http__refused(const struct http *h);

#endif /* DAEMON_HTTP_H */
