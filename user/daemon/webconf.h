/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The daemon's --web-config: the Prometheus exporter toolkit's web
 * configuration file (YAML: tls_server_config, basic_auth_users), and one key
 * of cuprobe's own (cuprobe: open_paths), read once at start with libyaml.
 * Unknown keys are refused, as the toolkit refuses them. The certificate,
 * key and CA files are read into memory at load, before anything serves, so
 * that a bad one is said at start with its file's name. Written by the
 * loading thread only; read-only after webconf__load.
 */
#ifndef DAEMON_WEBCONF_H
#define DAEMON_WEBCONF_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

/* tls_server_config.client_auth_type, the ones that can authenticate or say so. */
enum client_auth {
	CLIENT_AUTH_NONE,		/* NoClientCert (the default) */
	CLIENT_AUTH_VERIFY_IF_GIVEN,	/* VerifyClientCertIfGiven */
	CLIENT_AUTH_REQUIRE,		/* RequireAndVerifyClientCert */
};

/* A bcrypt hash is 60 characters: $2b$NN$ and 53 of salt and digest. */
#define WEB_HASH_LEN 60
#define WEB_MAX_USERS 64
#define WEB_MAX_OPEN 8

struct web_user {
	char name[64];
	char hash[WEB_HASH_LEN + 1];
};

struct webconf {
	char path[PATH_MAX];
	bool tls;			/* cert_file and key_file given */
	char cert_file[PATH_MAX], key_file[PATH_MAX], client_ca_file[PATH_MAX];
	enum client_auth client_auth;
	unsigned int min_version;	/* 12 or 13: TLS 1.2 (the default) or 1.3 */
	struct web_user users[WEB_MAX_USERS];
	size_t nusers;
	/* Paths served without authentication: "/healthz" unless cuprobe.open_paths says. */
	char open_paths[WEB_MAX_OPEN][16];
	size_t nopen;
	/* The files' contents (PEM), NUL-terminated; NULL when not given. */
	char *cert_pem, *key_pem, *ca_pem;
};

/*
 * Reads the web-config at path into w (w is set up here). 0, or -errno with
 * err naming the file, the line and the key, and the fix.
 */
int webconf__load(struct webconf *w, const char *path, char *err, size_t len);
void webconf__free(struct webconf *w);
/* Whether some client can authenticate: basic_auth_users, or verified client certificates. */
bool webconf__authenticates(const struct webconf *w);
/* Whether url is served without authentication. */
bool webconf__is_open(const struct webconf *w, const char *url);
/*
 * Whether the daemon may listen on a non-loopback address with w (NULL: no
 * web-config). 0, or -EINVAL with err saying why not and what to do.
 */
int webconf__check_listen(const struct webconf *w, const char *listen, bool loopback, char *err,
			  size_t len);

#endif /* DAEMON_WEBCONF_H */
