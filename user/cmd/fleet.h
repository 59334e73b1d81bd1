/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cuprobe capture --job's insides (fleet.c, fleet_http.c): the daemons it
 * found, and HTTP/1.1 to one of them bounded by a deadline. A fleet_daemon is
 * written by the one worker thread given it, read by the main thread once
 * that worker is joined.
 */
#ifndef CMD_FLEET_H
#define CMD_FLEET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "cmd/capture.h"
#include "util/parse.h"

struct fleet_daemon {
	char addr[320];		/* HOST:PORT, numeric: the Host header and messages */
	char name[256];		/* the DNS name it was found by ("" numeric): TLS checks it */
	struct addr_port ap;
	bool tls;
	bool creds;		/* the Authorization header may go (capture__scheme() says) */
};

/* An HTTP answer: status, and the body unless it went to a file. */
struct fleet_answer {
	int status;		/* 0: none came (err says why) */
	char *body;		/* malloc'ed, NUL-terminated; NULL when streamed to a file */
	size_t len;
	char location[256];	/* a redirect's Location: "" none */
	char err[640];
};

/*
 * The daemons named by --daemon (each ADDR resolved: every address is a
 * daemon) or reported by --prometheus's server for o->job, deduplicated.
 * 0 with *v (malloc'ed) and *n, or -errno with err said.
 */
int fleet__find(const struct capture_opts *o, uint64_t deadline_ns, struct fleet_daemon **v,
		size_t *n, char *err, size_t len);

/*
 * METHOD TARGET to d, auth ("Authorization: ...\r\n" or "") when d->creds,
 * giving up at deadline_ns. A 200's body goes to sink when sink >= 0 (checked
 * against its Content-Length, at most 1 GiB), else into a->body (at most 64 MiB).
 * 0, or -errno with a->err said ("cannot reach the daemon at ADDR: ..." when
 * -EHOSTUNREACH, else "METHOD PATH: ...": the caller names the daemon) and
 * a->status 0: the one HTTP reader of
 * cuprobe capture, --pid's and --job's.
 */
int fleet__http(const struct capture_opts *o, const struct fleet_daemon *d, const char *auth,
		const char *method, const char *target, uint64_t deadline_ns, int sink,
		struct fleet_answer *a);

/* What a's daemon said when it was not a 200 (status, redirect, first line), or why none came. */
void fleet__said(const struct fleet_answer *a, char *out, size_t len);

/* s percent-encoded for a query's value (everything but unreserved bytes). */
void fleet__urlenc(const char *s, char *out, size_t len);

#endif /* CMD_FLEET_H */
