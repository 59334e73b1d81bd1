// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>
#include "cmd/capture_conn.h"

struct capture_conn {
	int fd;
	uint64_t deadline_ns;	/* 0: none */
	SSL_CTX *ctx;		/* NULL: plain */
	SSL *ssl;
};

/* OpenSSL's first queued error, for a message. */
static const char *ssl_why(char *buf, size_t len)
{
	unsigned long e = ERR_get_error();

	if (!e)
		return "no more detail";
	ERR_error_string_n(e, buf, len);
	return buf;
}

/* The context: TLS 1.2 or later, the daemon verified, our certificate when given. */
static SSL_CTX *tls_ctx(const struct capture_conn_opts *o, char *err, size_t len)
{
	SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
	const char *key = o->key ? o->key : o->cert;
	char why[256];

	if (!ctx) {
		snprintf(err, len, "cannot set up TLS: %s", ssl_why(why, sizeof(why)));
		return NULL;
	}
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	/* The daemon closes each connection after its answer, with or without close_notify. */
	SSL_CTX_set_options(ctx, SSL_OP_IGNORE_UNEXPECTED_EOF);
	if (o->cacert ? SSL_CTX_load_verify_locations(ctx, o->cacert, NULL) != 1 :
	    SSL_CTX_set_default_verify_paths(ctx) != 1) {
		snprintf(err, len, "--cacert %s: %s (give the PEM CA that signed the daemon's "
			 "certificate)", o->cacert ? o->cacert : "(system)", ssl_why(why, sizeof(why)));
		goto fail;
	}
	if (o->cert && (SSL_CTX_use_certificate_chain_file(ctx, o->cert) != 1 ||
			SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1 ||
			SSL_CTX_check_private_key(ctx) != 1)) {
		snprintf(err, len, "--cert %s, --key %s: %s (give a PEM certificate and its PEM "
			 "key, unencrypted)", o->cert, key, ssl_why(why, sizeof(why)));
		goto fail;
	}
	return ctx;
fail:
	SSL_CTX_free(ctx);
	return NULL;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Milliseconds left before the deadline (-1: none; 0: past it). */
static int left_ms(uint64_t deadline_ns)
{
	uint64_t now = mono_ns();

	if (!deadline_ns)
		return -1;
	return now >= deadline_ns ? 0 : (int)((deadline_ns - now + 999999) / 1000000);
}

/* Waits until fd is ready for events, or the deadline: 0 or -ETIMEDOUT. */
static int wait_fd(int fd, short events, uint64_t deadline_ns)
{
	struct pollfd p = { .fd = fd, .events = events };
	int ms, n;

	do {
		ms = left_ms(deadline_ns);
		if (!ms)
			return -ETIMEDOUT;
		n = poll(&p, 1, ms);
	} while (n < 0 && errno == EINTR);
	return n > 0 ? 0 : -ETIMEDOUT;
}

/*
 * connect(2) that gives up at the deadline. With a deadline the socket stays
 * non-blocking: every read, write and TLS step waits in poll(2) for what is
 * left, so that a peer that drips a byte at a time cannot hold it past it.
 */
static int connect_by(int fd, const struct addr_port *ap, uint64_t deadline_ns)
{
	int soerr = 0;
	socklen_t sl = sizeof(soerr);

	if (!deadline_ns)
		return connect(fd, (const struct sockaddr *)&ap->sa, ap->salen) ? -errno : 0;
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	if (connect(fd, (const struct sockaddr *)&ap->sa, ap->salen) && errno != EINPROGRESS)
		return -errno;
	if (wait_fd(fd, POLLOUT, deadline_ns))
		return -ETIMEDOUT;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) || soerr)
		return -(soerr ? soerr : errno);
	return 0;
}

/* After a TLS call returned ret: 0 once the socket is ready to try it again, else -errno. */
static int ssl_wait(struct capture_conn *c, int ret)
{
	switch (SSL_get_error(c->ssl, ret)) {
	case SSL_ERROR_WANT_READ:
		return wait_fd(c->fd, POLLIN, c->deadline_ns);
	case SSL_ERROR_WANT_WRITE:
		return wait_fd(c->fd, POLLOUT, c->deadline_ns);
	case SSL_ERROR_ZERO_RETURN:
		return -ENODATA;
	default:
		return -EIO;
	}
}

/* Whether s is a numeric address (the certificate names it as an IP). */
static bool numeric(const char *s)
{
	struct in6_addr a;

	return inet_pton(AF_INET, s, &a) == 1 || inet_pton(AF_INET6, s, &a) == 1;
}

/* The handshake, the daemon's certificate checked against its address (--daemon's). */
static int tls_connect(struct capture_conn *c, const struct capture_conn_opts *o, char *err,
		       size_t len)
{
	const char *name = o->name && !numeric(o->name) ? o->name : NULL;
	char why[256];
	int named, k, rc = 0;
	long v;

	c->ssl = SSL_new(c->ctx);
	named = c->ssl && (name ? X509_VERIFY_PARAM_set1_host(SSL_get0_param(c->ssl), name, 0) == 1 &&
			   SSL_set_tlsext_host_name(c->ssl, name) == 1 :
			   X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(c->ssl), o->ap->host) == 1);
	if (!c->ssl || SSL_set_fd(c->ssl, c->fd) != 1 || !named) {
		snprintf(err, len, "cannot set up TLS to %s: %s", o->addr, ssl_why(why, sizeof(why)));
		return -EIO;
	}
	while ((k = SSL_connect(c->ssl)) != 1 && !(rc = ssl_wait(c, k)))
		;
	if (k == 1)
		return 0;
	v = SSL_get_verify_result(c->ssl);
	if (rc == -ETIMEDOUT) {
		snprintf(err, len, "the daemon at %s: no TLS handshake within --timeout (is it "
			 "serving https?)", o->addr);
		return -ETIMEDOUT;
	}
	if (v != X509_V_OK)
		snprintf(err, len, "the daemon at %s: its certificate does not verify: %s (give "
			 "the CA that signed it with --cacert, for the %s %s)", o->addr,
			 X509_verify_cert_error_string(v), name ? "name" : "address",
			 name ? name : o->ap->host);
	else
		snprintf(err, len, "the daemon at %s: the TLS handshake failed: %s (is it serving "
			 "https, with a web-config?)", o->addr, ssl_why(why, sizeof(why)));
	return -EIO;
}

struct capture_conn *capture_conn__open(const struct capture_conn_opts *o, char *err, size_t len)
{
	struct capture_conn *c = calloc(1, sizeof(*c));
	int rc;

	if (!c) {
		snprintf(err, len, "out of memory");
		return NULL;
	}
	c->deadline_ns = o->deadline_ns;
	c->fd = socket(o->ap->sa.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	rc = c->fd < 0 ? -errno : connect_by(c->fd, o->ap, o->deadline_ns);
	if (rc) {
		snprintf(err, len, "cannot reach the daemon at %s: %s (is cuprobe daemon running, "
			 "with this --listen?)", o->addr, strerror(-rc));
		goto fail;
	}
	if (!o->tls)
		return c;
	c->ctx = tls_ctx(o, err, len);
	if (c->ctx && !tls_connect(c, o, err, len))
		return c;
fail:
	capture_conn__close(c);
	return NULL;
}

int capture_conn__write(struct capture_conn *c, const char *buf, size_t n)
{
	ssize_t k;
	int rc = 0;

	while (n && !rc) {
		if (c->ssl) {
			k = SSL_write(c->ssl, buf, (int)n);
			rc = k > 0 ? 0 : ssl_wait(c, (int)k);
		} else {
			k = write(c->fd, buf, n);
			rc = k >= 0 ? 0 : errno == EAGAIN || errno == EINTR ?
			     wait_fd(c->fd, POLLOUT, c->deadline_ns) : -EIO;
		}
		if (k > 0) {
			buf += k;
			n -= (size_t)k;
		}
	}
	return rc == -ETIMEDOUT ? rc : rc ? -EIO : 0;
}

ssize_t capture_conn__read(struct capture_conn *c, char *buf, size_t n)
{
	ssize_t k;
	int rc;

	for (;;) {
		if (c->ssl) {
			k = SSL_read(c->ssl, buf, (int)n);
			if (k > 0)
				return k;
			rc = ssl_wait(c, (int)k);
		} else {
			k = read(c->fd, buf, n);
			if (k >= 0)
				return k;
			rc = errno == EAGAIN || errno == EINTR ?
			     wait_fd(c->fd, POLLIN, c->deadline_ns) : -EIO;
		}
		if (rc)
			return rc == -ENODATA ? 0 : rc == -ETIMEDOUT ? rc : -EIO;
	}
}

void capture_conn__close(struct capture_conn *c)
{
	if (!c)
		return;
	if (c->ssl) {
		SSL_shutdown(c->ssl);
		SSL_free(c->ssl);
	}
	SSL_CTX_free(c->ctx);
	if (c->fd >= 0)
		close(c->fd);
	free(c);
}

char *capture_conn__basic(const char *user, const char *password)
{
	size_t n = strlen(user) + 1 + strlen(password);
	char *plain = malloc(n + 1), *out = malloc(4 * ((n + 2) / 3) + 1);

	if (plain && out) {
		snprintf(plain, n + 1, "%s:%s", user, password);
		EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)plain, (int)n);
		OPENSSL_cleanse(plain, n);
	} else {
		free(out);
		out = NULL;
	}
	free(plain);
	return out;
}
