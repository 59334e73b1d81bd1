/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Who a request to the daemon's HTTP server is from, by its web-config
 * (webconf.h): a client certificate verified against client_ca_file (GnuTLS,
 * through libmicrohttpd's TLS) and basic auth against bcrypt hashes
 * (libcrypt). The rule is the exporter toolkit's: with
 * RequireAndVerifyClientCert a verified certificate is needed, with
 * basic_auth_users a right password is needed, both when both are set; and
 * cuprobe's own: a path not in open_paths needs one of them at least, and a
 * certificate that is given must verify. Checked from libmicrohttpd's one
 * polling thread, which alone owns a struct auth (its cache of passwords
 * that were right, so that a scrape every 15 s does not pay bcrypt each time).
 */
#ifndef DAEMON_AUTH_H
#define DAEMON_AUTH_H

#include <microhttpd.h>
#include <stddef.h>

struct webconf;
struct auth;

/* NULL and errno on failure. w must outlive it. */
struct auth *auth__new(const struct webconf *w);
void auth__free(struct auth *a);
/* MHD_USE_TLS when the web-config has TLS, else 0. */
unsigned int auth__mhd_flags(const struct auth *a);
/* libmicrohttpd's TLS options (certificate, key, client CA, versions), for MHD_OPTION_ARRAY. */
const struct MHD_OptionItem *auth__mhd_options(const struct auth *a);
/*
 * 0 when the request for url may go on; else the status to refuse it with,
 * 401 (no or wrong user and password: answer with WWW-Authenticate) or 403
 * (no or a bad client certificate), why saying which and what to do.
 */
unsigned int auth__check(struct auth *a, struct MHD_Connection *c, const char *url, char *why,
			 size_t len);

#endif /* DAEMON_AUTH_H */
