/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cuprobe capture's options, shared by its two forms: one process through
 * one daemon (capture.c), and every rank of a job through every daemon that
 * samples one (fleet.c). Main thread; fleet.c's worker threads read them.
 */
#ifndef CMD_CAPTURE_H
#define CMD_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "util/parse.h"

struct capture_opts {
	const char *daemons;	/* --daemon as given: one ADDR, or (--job) a comma list */
	const char *addr;	/* --pid's --daemon without its scheme (the request's Host) */
	struct addr_port ap;
	bool tls, creds;	/* --pid's daemon: capture__scheme()'s word */
	const char *cacert, *cert, *key, *user, *password_file;
	uint64_t pid, steps;	/* 0: not given */
	const char *mode;	/* NULL: the daemon's choice */
	const char *job;	/* --job: NULL for a --pid capture */
	const char *output;	/* -o: the job's folder goes under it */
	const char *prometheus;	/* --prometheus URL: where the daemons are found */
	double timeout_s, margin_s;
};

/* Where an address came from: the one rule below weighs them apart. */
enum capture_from {
	CAPTURE_FROM_USER,		/* --daemon, as the user wrote it */
	CAPTURE_FROM_LABEL,		/* a Prometheus series' instance label */
	CAPTURE_FROM_PROMETHEUS,	/* the --prometheus server itself */
};

struct capture_scheme {
	bool tls;	/* https, the certificate verified (capture_conn.h) */
	bool creds;	/* the Authorization header may go there */
};

/*
 * The one rule for every address cuprobe capture meets (--daemon of --pid and
 * --job, each Prometheus instance): with --cacert, --cert or --user an address
 * without a scheme is https, and an instance label's http:// never lowers it;
 * an http:// the user wrote is plain, and takes the password to a loopback
 * address only (ap: where arg resolved). The Prometheus server is plain and
 * gets no credentials. 0 with *s, or -EINVAL with err saying the fix.
 */
int capture__scheme(const struct capture_opts *o, const char *arg, enum capture_from from,
		    const struct addr_port *ap, struct capture_scheme *s, char *err, size_t len);

/* arg past its http:// or https://. */
const char *capture__no_scheme(const char *arg);

/*
 * "Authorization: Basic ...\r\n" from --user and --password-file's first
 * line into out, or "" without --user. 0, or -EINVAL (said on stderr).
 */
int capture__auth_header(const struct capture_opts *o, char *out, size_t len);

/* cuprobe capture --job: the exit status (0 every rank's trace written, 1 not). */
int fleet__run(const struct capture_opts *o);

#endif /* CMD_CAPTURE_H */
