/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cuprobe capture's connection to a daemon: a plain socket, or TLS through
 * OpenSSL (which links statically, so the static build has it too), the
 * daemon's certificate verified against --cacert (or the system's CAs) and
 * its address, a client certificate sent when given. One thread.
 */
#ifndef CMD_CAPTURE_CONN_H
#define CMD_CAPTURE_CONN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "util/parse.h"

struct capture_conn_opts {
	const struct addr_port *ap;
	const char *addr;		/* as given, for messages */
	bool tls;
	const char *cacert;		/* PEM CAs the daemon's certificate must chain to; NULL: the system's */
	const char *cert, *key;		/* a client certificate and its key (PEM); NULL: none */
	/*
	 * The name the certificate must carry: a DNS name that resolved to ap
	 * (a headless service's); NULL or numeric: ap's address.
	 */
	const char *name;
	/* CLOCK_MONOTONIC ns past which connecting, reading and writing fail; 0: none. */
	uint64_t deadline_ns;
};

struct capture_conn;

/* Connected (and the TLS handshake done), or NULL with err saying what failed and the fix. */
struct capture_conn *capture_conn__open(const struct capture_conn_opts *o, char *err, size_t len);
/* 0, or -EIO. */
int capture_conn__write(struct capture_conn *c, const char *buf, size_t n);
/* Bytes read, 0 at the end, -EIO on an error, -ETIMEDOUT past the deadline. */
ssize_t capture_conn__read(struct capture_conn *c, char *buf, size_t n);
void capture_conn__close(struct capture_conn *c);
/* base64 of "user:password" for an Authorization header, malloc'ed; NULL: out of memory. */
char *capture_conn__basic(const char *user, const char *password);

#endif /* CMD_CAPTURE_CONN_H */
