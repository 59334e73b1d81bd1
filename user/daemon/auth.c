// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <crypt.h>
#include <errno.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "daemon/auth.h"
#include "daemon/webconf.h"

/* Passwords found right, remembered by their SHA-256 with the user's name. */
#define AUTH_CACHE 16
#define AUTH_DIGEST 32

struct auth {
	const struct webconf *w;
	struct MHD_OptionItem opts[6];
	unsigned char cache[AUTH_CACHE][AUTH_DIGEST];
	size_t ncache, next;
};

/* Versions GnuTLS offers: TLS 1.2 and 1.3, or 1.3 alone (the exporter toolkit's names). */
static const char *priorities(unsigned int min_version)
{
	return min_version >= 13 ? "NORMAL:-VERS-ALL:+VERS-TLS1.3" :
	       "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2";
}

struct auth *auth__new(const struct webconf *w)
{
	struct auth *a = calloc(1, sizeof(*a));
	size_t n = 0;

	if (!a)
		return NULL;
	a->w = w;
	if (w->tls) {
		a->opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_CERT, 0, w->cert_pem };
		a->opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_KEY, 0, w->key_pem };
		a->opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_PRIORITIES, 0,
							(void *)priorities(w->min_version) };
		/* A trust list makes libmicrohttpd ask for a certificate; it is checked here. */
		if (w->client_auth != CLIENT_AUTH_NONE)
			a->opts[n++] = (struct MHD_OptionItem){ MHD_OPTION_HTTPS_MEM_TRUST, 0,
								w->ca_pem };
	}
	a->opts[n] = (struct MHD_OptionItem){ MHD_OPTION_END, 0, NULL };
	return a;
}

void auth__free(struct auth *a)
{
	if (a)
		explicit_bzero(a->cache, sizeof(a->cache));
	free(a);
}

unsigned int auth__mhd_flags(const struct auth *a)
{
	return a->w->tls ? MHD_USE_TLS : 0;
}

const struct MHD_OptionItem *auth__mhd_options(const struct auth *a)
{
	return a->opts;
}

/* Equal, in a time that depends on n only. */
static bool same(const void *x, const void *y, size_t n)
{
	const volatile unsigned char *a = x, *b = y;
	unsigned char d = 0;

	for (size_t i = 0; i < n; i++)
		d |= a[i] ^ b[i];
	return !d;
}

enum cert_state { CERT_NONE, CERT_OK, CERT_BAD };

/* The client's certificate: none given, verified against client_ca_file, or not. */
static enum cert_state client_cert(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_GNUTLS_SESSION);
	unsigned int n = 0, status = 0;
	gnutls_session_t s;

	if (!ci || !ci->tls_session)
		return CERT_NONE;
	s = ci->tls_session;
	if (!gnutls_certificate_get_peers(s, &n) || !n)
		return CERT_NONE;
	if (gnutls_certificate_verify_peers2(s, &status) < 0 || status)
		return CERT_BAD;
	return CERT_OK;
}

static void digest(const char *user, const char *pass, unsigned char out[AUTH_DIGEST])
{
	size_t lu = strlen(user), lp = strlen(pass);
	char *buf = malloc(lu + lp + 2);

	memset(out, 0, AUTH_DIGEST);
	if (!buf)
		return;
	memcpy(buf, user, lu + 1);
	memcpy(buf + lu + 1, pass, lp + 1);
	gnutls_hash_fast(GNUTLS_DIG_SHA256, buf, lu + lp + 1, out);
	explicit_bzero(buf, lu + lp + 2);
	free(buf);
}

static bool cached(struct auth *a, const unsigned char d[AUTH_DIGEST])
{
	bool hit = false;

	for (size_t i = 0; i < a->ncache; i++)
		hit |= same(a->cache[i], d, AUTH_DIGEST);
	return hit;
}

/*
 * The password against the user's bcrypt hash. An unknown user costs a
 * bcrypt too (against another user's hash, and fails), so that the time
 * does not say which users exist.
 */
static bool password_ok(struct auth *a, const char *user, const char *pass)
{
	const struct webconf *w = a->w;
	const struct web_user *u = NULL;
	struct crypt_data *cd;
	unsigned char d[AUTH_DIGEST];
	bool ok = false;
	const char *out;

	for (size_t i = 0; i < w->nusers; i++)
		if (!strcmp(w->users[i].name, user))
			u = &w->users[i];
	digest(user, pass, d);
	if (u && cached(a, d))
		return true;
	cd = calloc(1, sizeof(*cd));
	if (!cd)
		return false;
	out = crypt_rn(pass, (u ? u : &w->users[0])->hash, cd, sizeof(*cd));
	ok = u && out && strlen(out) == WEB_HASH_LEN && same(out, u->hash, WEB_HASH_LEN);
	explicit_bzero(cd, sizeof(*cd));
	free(cd);
	if (ok) {
		memcpy(a->cache[a->next], d, AUTH_DIGEST);
		a->next = (a->next + 1) % AUTH_CACHE;
		a->ncache += a->ncache < AUTH_CACHE;
	}
	return ok;
}

static unsigned int basic(struct auth *a, struct MHD_Connection *c, char *why, size_t len)
{
	char *pass = NULL, *user = MHD_basic_auth_get_username_password(c, &pass);
	bool ok = user && pass && password_ok(a, user, pass);

	if (!user)
		snprintf(why, len, "cuprobe daemon: give a user and password (basic auth: curl "
			 "--user, cuprobe capture --user with --password-file)\n");
	else if (!ok)
		snprintf(why, len, "cuprobe daemon: wrong user or password\n");
	if (pass) {
		explicit_bzero(pass, strlen(pass));
		MHD_free(pass);
	}
	if (user)
		MHD_free(user);
	return ok ? 0 : 401;
}

unsigned int auth__check(struct auth *a, struct MHD_Connection *c, const char *url, char *why,
			 size_t len)
{
	const struct webconf *w = a->w;
	enum cert_state cert = w->client_auth != CLIENT_AUTH_NONE ? client_cert(c) : CERT_NONE;

	if (webconf__is_open(w, url))
		return 0;
	if (cert == CERT_BAD) {
		snprintf(why, len, "cuprobe daemon: your client certificate does not verify against "
			 "the daemon's client_ca_file (another CA, expired, or not yet valid)\n");
		return 403;
	}
	if (!webconf__authenticates(w)) {
		snprintf(why, len, "cuprobe daemon: %s: the web-config authenticates nobody, so only "
			 "its open_paths are served (give it basic_auth_users or client "
			 "certificates)\n", url);
		return 403;
	}
	if (cert != CERT_OK && (w->client_auth == CLIENT_AUTH_REQUIRE || !w->nusers)) {
		snprintf(why, len, "cuprobe daemon: give a client certificate signed by the daemon's "
			 "client_ca_file (curl --cert --key, cuprobe capture --cert --key)\n");
		return 403;
	}
	return w->nusers ? basic(a, c, why, len) : 0;
}
