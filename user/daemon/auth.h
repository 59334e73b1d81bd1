/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Who a request to the daemon's HTTP server is from, by its web-config
 * (webconf.h): a client certificate verified against client_ca_file (GnuTLS,
 * through libmicrohttpd's TLS) and basic auth against bcrypt hashes
 * (libcrypt). The rule is the exporter toolkit's: with
 * RequireAndVerifyClientCert a verified certificate is needed, with
 * basic_auth_users a right password is needed, both when both are set; and
 * cuprobe's own: a path not in open_paths needs one of them at least, and a
 * certificate that is given must verify.
 *
 * Checked from libmicrohttpd's one polling thread, which alone owns a struct
 * auth: its cache of passwords that were right (keyed by an HMAC of user,
 * hash and password, so that a scrape every 15 s does not pay bcrypt each
 * time) and its table of wrong passwords per address (auth_delay.h). A
 * password not in the cache is checked off that thread (pwcheck.h), its
 * connection suspended meanwhile, so that /healthz and a cached scrape are
 * answered while others guess.
 */
#ifndef DAEMON_AUTH_H
#define DAEMON_AUTH_H

#include <microhttpd.h>
#include <stddef.h>

struct webconf;
struct auth;

/* NULL and errno on failure (it starts the checker's thread). w must outlive it. */
struct auth *auth__new(const struct webconf *w);
void auth__free(struct auth *a);
/* MHD_USE_TLS when the web-config has TLS, else 0. */
unsigned int auth__mhd_flags(const struct auth *a);
/* libmicrohttpd's TLS options (certificate, key, client CA, versions), for MHD_OPTION_ARRAY. */
const struct MHD_OptionItem *auth__mhd_options(const struct auth *a);
/* auth__check's status while the connection waits for its password check. */
#define AUTH_WAIT 1

struct auth_wait;

/* What auth__check or auth__resumed says of a request. */
struct auth_answer {
	/*
	 * 0: the request may go on. AUTH_WAIT: its connection is suspended for
	 * a password check, resumed once it is done: then call auth__resumed
	 * with wait. Else the status to refuse it with: 401 (no or a wrong user
	 * and password: answer with WWW-Authenticate), 403 (no or a bad client
	 * certificate), 429 (this address guessed wrong: retry_s says when to
	 * come back) or 503 (too many checks waiting, or shutting down).
	 */
	unsigned int status;
	unsigned int retry_s;		/* for Retry-After; 0: none */
	struct auth_wait *wait;
	char why[512];			/* the refusal's text: what is wrong, what to do */
};

/* Whether the request for url on c may go on (ans says). */
void auth__check(struct auth *a, struct MHD_Connection *c, const char *url,
		 struct auth_answer *ans);
/*
 * The outcome of w's check, once its connection was resumed (or closed): the
 * wrong password counted, the right one cached. Frees w; ans says as above.
 */
void auth__resumed(struct auth *a, struct auth_wait *w, struct auth_answer *ans);
/*
 * Ends the checks (from the thread that stops the server, before
 * libmicrohttpd stops): waiting connections are resumed, and refused 503.
 */
void auth__stop(struct auth *a);

#endif /* DAEMON_AUTH_H */
