// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include "daemon/auth.h"
#include "daemon/auth_delay.h"
#include "daemon/pwcheck.h"
#include "daemon/webconf.h"
#include "util/clock.h"

/* Passwords found right, remembered by an HMAC of user, hash and password. */
#define AUTH_CACHE 16
#define AUTH_DIGEST 32

struct auth {
	const struct webconf *w;
	struct MHD_OptionItem opts[6];
	unsigned char key[AUTH_DIGEST];	/* the HMAC's, random, this process's own */
	unsigned char cache[AUTH_CACHE][AUTH_DIGEST];
	size_t ncache, next;
	struct auth_delay *delay;
	struct pwcheck *checks;
};

/* A password check under way: the job is the checker's until done. */
struct auth_wait {
	struct pwcheck_job job;
	struct sockaddr_storage addr;
	bool known;			/* the user is one of the web-config's */
	bool keyed;			/* digest is the cache's key for it */
	int err;			/* pwcheck__submit's: not 0, it never ran */
	unsigned char digest[AUTH_DIGEST];
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
	if (gnutls_rnd(GNUTLS_RND_KEY, a->key, sizeof(a->key))) {
		free(a);
		errno = EIO;
		return NULL;
	}
	/* The checker's thread, where there are passwords to check. */
	a->delay = auth_delay__new();
	a->checks = a->delay && w->nusers ? pwcheck__new() : NULL;
	if (!a->delay || (w->nusers && !a->checks)) {
		auth__free(a);
		return NULL;
	}
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
	int err = errno;

	if (a) {
		pwcheck__free(a->checks);
		auth_delay__free(a->delay);
		explicit_bzero(a, sizeof(*a));
	}
	free(a);
	errno = err;
}

void auth__stop(struct auth *a)
{
	if (a->checks)
		pwcheck__stop(a->checks);
}

unsigned int auth__mhd_flags(const struct auth *a)
{
	return a->w->tls ? MHD_USE_TLS : 0;
}

const struct MHD_OptionItem *auth__mhd_options(const struct auth *a)
{
	return a->opts;
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

static void say(struct auth_answer *ans, unsigned int status, unsigned int retry_s,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* A refusal: its status, when to come back (0: no Retry-After) and why. */
static void say(struct auth_answer *ans, unsigned int status, unsigned int retry_s,
		const char *fmt, ...)
{
	va_list ap;

	ans->status = status;
	ans->retry_s = retry_s;
	va_start(ap, fmt);
	vsnprintf(ans->why, sizeof(ans->why), fmt, ap);
	va_end(ap);
}

/*
 * The cache's key: an HMAC (SHA-256, this process's random key) of user,
 * hash and password, as the exporter toolkit keys its cache by all three.
 */
static int digest(const struct auth *a, const char *user, const char *hash, const char *pass,
		  unsigned char out[AUTH_DIGEST])
{
	size_t lu = strlen(user) + 1, lh = strlen(hash) + 1, lp = strlen(pass), n = lu + lh + lp;
	char *buf = malloc(n);
	int err;

	if (!buf)
		return -ENOMEM;
	memcpy(buf, user, lu);
	memcpy(buf + lu, hash, lh);
	memcpy(buf + lu + lh, pass, lp);
	err = gnutls_hmac_fast(GNUTLS_MAC_SHA256, a->key, sizeof(a->key), buf, n, out) ? -EIO : 0;
	explicit_bzero(buf, n);
	free(buf);
	return err;
}

/* Whether d is in the cache, every entry compared in constant time. */
static bool cached(const struct auth *a, const unsigned char d[AUTH_DIGEST])
{
	bool hit = false;

	for (size_t i = 0; i < a->ncache; i++)
		hit |= !gnutls_memcmp(a->cache[i], d, AUTH_DIGEST);
	return hit;
}

static void cache_add(struct auth *a, const unsigned char d[AUTH_DIGEST])
{
	if (cached(a, d))
		return;
	memcpy(a->cache[a->next], d, AUTH_DIGEST);
	a->next = (a->next + 1) % AUTH_CACHE;
	a->ncache += a->ncache < AUTH_CACHE;
}

static const struct web_user *find_user(const struct webconf *w, const char *name)
{
	const struct web_user *u = NULL;

	for (size_t i = 0; i < w->nusers; i++)
		if (!strcmp(w->users[i].name, name))
			u = &w->users[i];
	return u;
}

static const struct sockaddr *client_addr(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);

	return ci ? ci->client_addr : NULL;
}

/* The checker's call, on its thread, once a check is done. */
static void resume(void *conn)
{
	MHD_resume_connection(conn);
}

static void copy_addr(struct sockaddr_storage *to, const struct sockaddr *from)
{
	size_t n = !from ? 0 : from->sa_family == AF_INET ? sizeof(struct sockaddr_in) :
		   from->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : 0;

	memset(to, 0, sizeof(*to));
	if (n)
		memcpy(to, from, n);
}

/*
 * Suspends c and hands its password to the checker. When the checker takes
 * no more, c is resumed at once and auth__resumed refuses it (503). An
 * unknown user is checked against another user's hash, and fails, so that
 * the time does not say which users exist.
 */
static void wait_check(struct auth *a, struct MHD_Connection *c, const struct web_user *u,
		       const char *pass, const unsigned char *d, struct auth_answer *ans)
{
	struct auth_wait *w = calloc(1, sizeof(*w));
	char *copy = strdup(pass);

	if (!w || !copy) {
		free(w);
		free(copy);
		auth_delay__cancel(a->delay, client_addr(c));
		say(ans, 503, 1, "cuprobe daemon: out of memory: try again\n");
		return;
	}
	w->job = (struct pwcheck_job){ .hash = (u ? u : &a->w->users[0])->hash, .pass = copy,
				       .resume = resume, .arg = c };
	copy_addr(&w->addr, client_addr(c));
	w->known = u;
	w->keyed = d;
	if (d)
		memcpy(w->digest, d, AUTH_DIGEST);
	MHD_suspend_connection(c);
	w->err = pwcheck__submit(a->checks, &w->job);
	if (w->err) {
		explicit_bzero(w->job.pass, strlen(w->job.pass));
		free(w->job.pass);
		auth_delay__cancel(a->delay, (struct sockaddr *)&w->addr);
		MHD_resume_connection(c);
	}
	ans->status = AUTH_WAIT;
	ans->wait = w;
}

/* A user and password: right ones in the cache go on; others wait for a check, unless delayed. */
static void password(struct auth *a, struct MHD_Connection *c, const char *user, const char *pass,
		     struct auth_answer *ans)
{
	const struct sockaddr *addr = client_addr(c);
	const struct web_user *u = find_user(a->w, user);
	uint64_t now = clock_mono_ns();
	unsigned int left = auth_delay__left_s(a->delay, addr, now);
	unsigned char d[AUTH_DIGEST];
	bool keyed;

	/* Before the cache: a delayed address must not learn from it at hash speed. */
	if (left) {
		say(ans, 429, left, "cuprobe daemon: too many wrong passwords from your address: "
		    "try again in %u s, with the right one\n", left);
		return;
	}
	keyed = u && !digest(a, user, u->hash, pass, d);
	if (keyed && cached(a, d))
		return;
	if (auth_delay__start(a->delay, addr, now))
		say(ans, 429, 1, "cuprobe daemon: a password check from your address is under way: "
		    "try again in 1 s\n");
	else
		wait_check(a, c, u, pass, keyed ? d : NULL, ans);
	explicit_bzero(d, sizeof(d));
}

static void basic(struct auth *a, struct MHD_Connection *c, struct auth_answer *ans)
{
	char *pass = NULL, *user = MHD_basic_auth_get_username_password(c, &pass);

	if (!user)
		say(ans, 401, 0, "cuprobe daemon: give a user and password (basic auth: curl "
		    "--user, cuprobe capture --user with --password-file)\n");
	else if (!pass)
		say(ans, 401, 0, "cuprobe daemon: wrong user or password\n");
	else
		password(a, c, user, pass, ans);
	if (pass) {
		explicit_bzero(pass, strlen(pass));
		MHD_free(pass);
	}
	if (user)
		MHD_free(user);
}

void auth__check(struct auth *a, struct MHD_Connection *c, const char *url,
		 struct auth_answer *ans)
{
	const struct webconf *w = a->w;
	enum cert_state cert = w->client_auth != CLIENT_AUTH_NONE ? client_cert(c) : CERT_NONE;

	*ans = (struct auth_answer){ .status = 0 };
	if (webconf__is_open(w, url))
		return;
	if (cert == CERT_BAD)
		say(ans, 403, 0, "cuprobe daemon: your client certificate does not verify against "
		    "the daemon's client_ca_file (another CA, expired, or not yet valid)\n");
	else if (!webconf__authenticates(w))
		say(ans, 403, 0, "cuprobe daemon: %s: the web-config authenticates nobody, so only "
		    "its open_paths are served (give it basic_auth_users or client "
		    "certificates)\n", url);
	else if (cert != CERT_OK && (w->client_auth == CLIENT_AUTH_REQUIRE || !w->nusers))
		say(ans, 403, 0, "cuprobe daemon: give a client certificate signed by the daemon's "
		    "client_ca_file (curl --cert --key, cuprobe capture --cert --key)\n");
	else if (w->nusers)
		basic(a, c, ans);
}

/* Why a check never ran: the checker was full, stopping, or out of memory. */
static void not_run(struct auth_answer *ans, int err)
{
	if (err == -EAGAIN)
		say(ans, 503, 1, "cuprobe daemon: %d password checks are waiting, the most it "
		    "takes at once: try again in 1 s\n", PWCHECK_MAX);
	else
		say(ans, 503, 0, "cuprobe daemon: shutting down\n");
}

void auth__resumed(struct auth *a, struct auth_wait *w, struct auth_answer *ans)
{
	const struct sockaddr *addr = (const struct sockaddr *)&w->addr;
	bool ok = false, stopped = false;

	*ans = (struct auth_answer){ .status = 0 };
	if (!w->err && !pwcheck__take(a->checks, &w->job, &ok, &stopped)) {
		/* Still the checker's (libmicrohttpd closed it suspended): left to it. */
		not_run(ans, -ESHUTDOWN);
		return;
	}
	if (w->err || stopped) {
		if (stopped)
			auth_delay__cancel(a->delay, addr);
		not_run(ans, w->err ? w->err : -ESHUTDOWN);
	} else {
		ok = ok && w->known;
		auth_delay__end(a->delay, addr, ok, clock_mono_ns());
		if (ok && w->keyed)
			cache_add(a, w->digest);
		if (!ok)
			say(ans, 401, 0, "cuprobe daemon: wrong user or password\n");
	}
	explicit_bzero(w->digest, sizeof(w->digest));
	free(w);
}
