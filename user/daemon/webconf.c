// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The web-config's keys are the exporter toolkit's (its docs/web-configuration.md);
 * the ones it has that cuprobe does not implement are refused by name, so that
 * a file written for another exporter never seems to do what it does not.
 */
#include <errno.h>
#include <gnutls/gnutls.h>
#include <unistd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>
#include "daemon/webconf.h"
#include "util/safe_file.h"

/* A PEM file bigger than this is not a certificate chain or a key. */
#define WEB_MAX_PEM (1 << 20)
/*
 * A web-config is a few KB (64 users are 8 KB), three levels deep, a few
 * hundred values: these bounds, checked before libyaml builds a document
 * (whose memory grows with the file and whose scanner slows with depth),
 * leave room for comments and keep a hostile file cheap to refuse.
 */
#define WEB_MAX_YAML (1 << 20)
#define WEB_MAX_DEPTH 16
#define WEB_MAX_NODES 1024

struct wctx {
	struct webconf *w;
	yaml_document_t *doc;
	char *err;
	size_t len;
};

static int werr(struct wctx *x, const yaml_node_t *n, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Says "FILE:LINE: what": the line of node n (0: the file). -EINVAL. */
static int werr(struct wctx *x, const yaml_node_t *n, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n)
		snprintf(x->err, x->len, "%s:%zu: %s", x->w->path, n->start_mark.line + 1, msg);
	else
		snprintf(x->err, x->len, "%s: %s", x->w->path, msg);
	return -EINVAL;
}

static yaml_node_t *node(struct wctx *x, int i)
{
	return yaml_document_get_node(x->doc, i);
}

/* A scalar's text, or NULL (said) when n is a mapping or a list. */
static const char *scalar(struct wctx *x, const yaml_node_t *n, const char *key)
{
	if (n->type == YAML_SCALAR_NODE)
		return (const char *)n->data.scalar.value;
	werr(x, n, "%s: give a single value, not a %s", key,
	     n->type == YAML_MAPPING_NODE ? "mapping" : "list");
	return NULL;
}

static int copy(struct wctx *x, const yaml_node_t *n, const char *key, char *dst, size_t size)
{
	const char *v = scalar(x, n, key);

	if (!v)
		return -EINVAL;
	if (strlen(v) >= size)
		return werr(x, n, "%s: '%.40s...' is too long", key, v);
	snprintf(dst, size, "%s", v);
	return 0;
}

/* A file named in the config: relative to the config's folder, as the toolkit has it. */
static int file_key(struct wctx *x, const yaml_node_t *n, const char *key, char *dst, size_t size)
{
	const char *v = scalar(x, n, key), *slash = strrchr(x->w->path, '/');
	int k;

	if (!v)
		return -EINVAL;
	if (!*v)
		return werr(x, n, "%s: give a file", key);
	if (*v == '/' || !slash)
		k = snprintf(dst, size, "%s", v);
	else
		k = snprintf(dst, size, "%.*s/%s", (int)(slash - x->w->path), x->w->path, v);
	return k < 0 || (size_t)k >= size ? werr(x, n, "%s: the path is too long", key) : 0;
}

static int set_client_auth(struct wctx *x, const yaml_node_t *n, const char *key)
{
	const char *v = scalar(x, n, key);

	if (!v)
		return -EINVAL;
	if (!strcmp(v, "NoClientCert"))
		x->w->client_auth = CLIENT_AUTH_NONE;
	else if (!strcmp(v, "VerifyClientCertIfGiven"))
		x->w->client_auth = CLIENT_AUTH_VERIFY_IF_GIVEN;
	else if (!strcmp(v, "RequireAndVerifyClientCert"))
		x->w->client_auth = CLIENT_AUTH_REQUIRE;
	else if (!strcmp(v, "RequestClientCert") || !strcmp(v, "RequireAnyClientCert"))
		return werr(x, n, "%s: %s takes certificates it does not verify, which "
			    "authenticate nobody: use RequireAndVerifyClientCert (or "
			    "VerifyClientCertIfGiven) with client_ca_file", key, v);
	else
		return werr(x, n, "%s: '%s' is not NoClientCert, VerifyClientCertIfGiven or "
			    "RequireAndVerifyClientCert", key, v);
	return 0;
}

static int set_min_version(struct wctx *x, const yaml_node_t *n, const char *key)
{
	const char *v = scalar(x, n, key);

	if (!v)
		return -EINVAL;
	if (!strcmp(v, "TLS12") || !strcmp(v, "TLS13")) {
		x->w->min_version = v[4] == '2' ? 12 : 13;
		return 0;
	}
	return werr(x, n, "%s: '%s' is not TLS12 or TLS13 (TLS 1.0 and 1.1 are not offered)",
		    key, v);
}

/* The keys of a mapping, each a name and what to do with its value. */
struct wkey {
	const char *name;
	int (*set)(struct wctx *x, const yaml_node_t *v, const char *key);
};

static int set_cert_file(struct wctx *x, const yaml_node_t *n, const char *key)
{
	return file_key(x, n, key, x->w->cert_file, sizeof(x->w->cert_file));
}

static int set_key_file(struct wctx *x, const yaml_node_t *n, const char *key)
{
	return file_key(x, n, key, x->w->key_file, sizeof(x->w->key_file));
}

static int set_client_ca_file(struct wctx *x, const yaml_node_t *n, const char *key)
{
	return file_key(x, n, key, x->w->client_ca_file, sizeof(x->w->client_ca_file));
}

/* Keys the exporter toolkit has and cuprobe does not: refused by name, with the fix. */
static const char *const not_taken[] = {
	"cipher_suites", "curve_preferences", "max_version", "prefer_server_cipher_suites",
	"client_allowed_sans", "http_server_config", "cert", "key", "client_ca",
};

/* Calls each key's setter; unknown and duplicate keys are refused with the known ones. */
static int mapping(struct wctx *x, const yaml_node_t *n, const char *where,
		   const struct wkey *keys, size_t nkeys)
{
	char known[256] = "";
	unsigned int seen = 0;

	if (n->type != YAML_MAPPING_NODE)
		return werr(x, n, "%s: give a mapping of keys", where);
	for (size_t i = 0; i < nkeys; i++)
		snprintf(known + strlen(known), sizeof(known) - strlen(known), "%s%s",
			 i ? ", " : "", keys[i].name);
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		const yaml_node_t *k = node(x, p->key);
		const char *name = scalar(x, k, where);
		size_t i;
		int rc;

		if (!name)
			return -EINVAL;
		for (i = 0; i < nkeys && strcmp(keys[i].name, name); i++)
			;
		if (i == nkeys) {
			for (size_t j = 0; j < sizeof(not_taken) / sizeof(not_taken[0]); j++)
				if (!strcmp(not_taken[j], name))
					return werr(x, k, "%s: '%s' is an exporter toolkit key that "
						    "cuprobe does not implement: remove it (cuprobe "
						    "takes %s)", where, name, known);
			return werr(x, k, "%s: unknown key '%s': fix its spelling or remove it (the "
				    "keys here are %s)", where, name, known);
		}
		if (seen & 1u << i)
			return werr(x, k, "%s: '%s' is given twice: keep one", where, name);
		seen |= 1u << i;
		rc = keys[i].set(x, node(x, p->value), name);
		if (rc)
			return rc;
	}
	return 0;
}

static int tls_server_config(struct wctx *x, const yaml_node_t *n, const char *key)
{
	static const struct wkey keys[] = {
		{ "cert_file", set_cert_file }, { "key_file", set_key_file },
		{ "client_auth_type", set_client_auth }, { "client_ca_file", set_client_ca_file },
		{ "min_version", set_min_version },
	};

	return mapping(x, n, key, keys, sizeof(keys) / sizeof(keys[0]));
}

/* $2a$, $2b$ or $2y$, a two-digit cost, then 53 characters of bcrypt's base64. */
static bool bcrypt_hash(const char *h)
{
	static const char b64[] = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

	if (strlen(h) != WEB_HASH_LEN || h[0] != '$' || h[1] != '2' || !strchr("aby", h[2]) ||
	    !h[2] || h[3] != '$' || h[4] < '0' || h[4] > '3' || h[5] < '0' || h[5] > '9' ||
	    h[6] != '$')
		return false;
	return strspn(h + 7, b64) == WEB_HASH_LEN - 7;
}

static int basic_auth_users(struct wctx *x, const yaml_node_t *n, const char *key)
{
	struct webconf *w = x->w;

	if (n->type != YAML_MAPPING_NODE)
		return werr(x, n, "%s: give a mapping of user: bcrypt hash", key);
	for (yaml_node_pair_t *p = n->data.mapping.pairs.start; p < n->data.mapping.pairs.top; p++) {
		const yaml_node_t *k = node(x, p->key), *v = node(x, p->value);
		struct web_user *u = &w->users[w->nusers];

		if (w->nusers >= WEB_MAX_USERS)
			return werr(x, k, "%s: more than %d users", key, WEB_MAX_USERS);
		if (copy(x, k, key, u->name, sizeof(u->name)) ||
		    copy(x, v, u->name, u->hash, sizeof(u->hash)))
			return -EINVAL;
		if (!u->name[0] || strchr(u->name, ':'))
			return werr(x, k, "%s: '%s' is not a user name (not empty, no ':')", key,
				    u->name);
		for (size_t i = 0; i < w->nusers; i++)
			if (!strcmp(w->users[i].name, u->name))
				return werr(x, k, "%s: user '%s' is given twice: keep one", key,
					    u->name);
		if (!bcrypt_hash(u->hash))
			return werr(x, v, "%s: user '%s': the password must be a bcrypt hash "
				    "($2a$, $2b$ or $2y$, 60 characters), not the password: make one "
				    "with mkpasswd -m bcrypt or htpasswd -nBC 10 \"\" | tr -d ':\\n'",
				    key, u->name);
		w->nusers++;
	}
	return 0;
}

/* Only what reads and starts nothing may be open: a capture always needs a client. */
static int open_paths(struct wctx *x, const yaml_node_t *n, const char *key)
{
	static const char *const readonly[] = { "/", "/healthz", "/metrics" };
	struct webconf *w = x->w;

	if (n->type != YAML_SEQUENCE_NODE)
		return werr(x, n, "%s: give a list of paths, e.g. [\"/metrics\", \"/healthz\"]", key);
	w->nopen = 0;
	for (yaml_node_item_t *i = n->data.sequence.items.start; i < n->data.sequence.items.top; i++) {
		const yaml_node_t *v = node(x, *i);
		const char *path = scalar(x, v, key);
		size_t j;

		if (!path)
			return -EINVAL;
		for (j = 0; j < 3 && strcmp(readonly[j], path); j++)
			;
		if (j == 3)
			return werr(x, v, "%s: '%s' cannot be open: only /, /healthz and /metrics "
				    "(read-only) can; /capture always needs an authenticated client",
				    key, path);
		if (w->nopen < WEB_MAX_OPEN && !webconf__is_open(w, path))
			snprintf(w->open_paths[w->nopen++], sizeof(w->open_paths[0]), "%s", path);
	}
	return 0;
}

static int cuprobe_section(struct wctx *x, const yaml_node_t *n, const char *key)
{
	static const struct wkey keys[] = { { "open_paths", open_paths } };

	return mapping(x, n, key, keys, 1);
}

static int top(struct wctx *x, const yaml_node_t *n)
{
	static const struct wkey keys[] = {
		{ "tls_server_config", tls_server_config }, { "basic_auth_users", basic_auth_users },
		{ "cuprobe", cuprobe_section },
	};

	return mapping(x, n, "web-config", keys, sizeof(keys) / sizeof(keys[0]));
}

/*
 * At most max bytes of fd, NUL-terminated, in *out (*n of them): 0, -EFBIG
 * past max, or -errno. What is read is wiped on failure (it may be a key).
 */
static int read_bounded(int fd, size_t max, char **out, size_t *n)
{
	char *buf = malloc(max + 1);
	ssize_t k = 0;
	int err;

	if (!buf)
		return -ENOMEM;
	for (*n = 0; *n <= max; *n += (size_t)k) {
		k = read(fd, buf + *n, max + 1 - *n);
		if (k <= 0)
			break;
	}
	if (k >= 0 && *n <= max) {
		buf[*n] = '\0';
		*out = buf;
		return 0;
	}
	err = k < 0 ? -errno : -EFBIG;
	explicit_bzero(buf, max + 1);
	free(buf);
	return err;
}

/*
 * A PEM file, whole and not empty, from a file only root or the daemon's
 * user controls (a secret, the key, not readable by others either).
 */
static int read_pem(struct wctx *x, const char *key, const char *path, bool secret, char **out)
{
	char why[512];
	int fd = safe_file__open_trusted(path, secret, why, sizeof(why)), rc;
	size_t n;

	if (fd < 0) {
		werr(x, NULL, "%s: cannot use %s: %s", key, path, why);
		return fd;
	}
	rc = read_bounded(fd, WEB_MAX_PEM, out, &n);
	close(fd);
	if (rc == -ENOMEM)
		return rc;
	if (!rc && !n)
		free(*out);
	if (rc || !n)
		return werr(x, NULL, "%s: %s %s", key, path, rc == -EFBIG ? "is over 1 MiB: give "
			    "the PEM file" : rc ? strerror(-rc) : "is empty");
	return 0;
}

/* The certificate with its key, and the CA, as GnuTLS (libmicrohttpd's TLS) will take them. */
static int check_pems(struct wctx *x)
{
	struct webconf *w = x->w;
	gnutls_certificate_credentials_t cred;
	gnutls_datum_t c = { (unsigned char *)w->cert_pem, (unsigned int)strlen(w->cert_pem) };
	gnutls_datum_t k = { (unsigned char *)w->key_pem, (unsigned int)strlen(w->key_pem) };
	int rc;

	if (gnutls_certificate_allocate_credentials(&cred))
		return -ENOMEM;
	rc = gnutls_certificate_set_x509_key_mem(cred, &c, &k, GNUTLS_X509_FMT_PEM);
	if (rc < 0)
		werr(x, NULL, "cert_file %s and key_file %s: %s (give a PEM certificate and its "
		     "PEM key, unencrypted)", w->cert_file, w->key_file, gnutls_strerror(rc));
	if (rc >= 0 && w->ca_pem) {
		gnutls_datum_t ca = { (unsigned char *)w->ca_pem, (unsigned int)strlen(w->ca_pem) };

		rc = gnutls_certificate_set_x509_trust_mem(cred, &ca, GNUTLS_X509_FMT_PEM);
		if (rc <= 0)
			werr(x, NULL, "client_ca_file %s: %s (give PEM CA certificates)",
			     w->client_ca_file, rc ? gnutls_strerror(rc) : "no certificate in it");
		rc = rc <= 0 ? -1 : 0;
	}
	gnutls_certificate_free_credentials(cred);
	return rc < 0 ? -EINVAL : 0;
}

/* What holds across keys, then the files. */
static int finish(struct wctx *x)
{
	struct webconf *w = x->w;
	int rc;

	if (!w->cert_file[0] != !w->key_file[0])
		return werr(x, NULL, "tls_server_config: give both cert_file and key_file, or "
			    "neither (plain HTTP)");
	w->tls = w->cert_file[0];
	if (w->client_auth != CLIENT_AUTH_NONE && (!w->tls || !w->client_ca_file[0]))
		return werr(x, NULL, "tls_server_config: client_auth_type verifies client "
			    "certificates against client_ca_file: give client_ca_file, cert_file "
			    "and key_file");
	if (!w->tls)
		return 0;
	rc = read_pem(x, "cert_file", w->cert_file, false, &w->cert_pem);
	if (!rc)
		rc = read_pem(x, "key_file", w->key_file, true, &w->key_pem);
	if (!rc && w->client_ca_file[0])
		rc = read_pem(x, "client_ca_file", w->client_ca_file, false, &w->ca_pem);
	return rc ? rc : check_pems(x);
}

static int not_yaml(struct wctx *x, const yaml_parser_t *p)
{
	snprintf(x->err, x->len, "%s:%zu: not YAML: %s", x->w->path, p->problem_mark.line + 1,
		 p->problem ? p->problem : "a parse error");
	return -EINVAL;
}

/* Counts one value at depth, and says when either is past its bound. */
static int shape_event(struct wctx *x, const yaml_event_t *e, unsigned int *depth,
		       unsigned int *nodes)
{
	size_t line = e->start_mark.line + 1;

	switch (e->type) {
	case YAML_SEQUENCE_END_EVENT:
	case YAML_MAPPING_END_EVENT:
		(*depth)--;
		return 0;
	case YAML_SEQUENCE_START_EVENT:
	case YAML_MAPPING_START_EVENT:
		if (++*depth > WEB_MAX_DEPTH) {
			snprintf(x->err, x->len, "%s:%zu: nested more than %d deep: a web-config is "
				 "three levels deep (docs/daemon.md)", x->w->path, line,
				 WEB_MAX_DEPTH);
			return -EINVAL;
		}
		/* fallthrough */
	case YAML_SCALAR_EVENT:
	case YAML_ALIAS_EVENT:
		if (++*nodes > WEB_MAX_NODES) {
			snprintf(x->err, x->len, "%s:%zu: more than %d values: a web-config has at "
				 "most %d users and a few keys", x->w->path, line, WEB_MAX_NODES,
				 WEB_MAX_USERS);
			return -EINVAL;
		}
		return 0;
	default:
		return 0;
	}
}

/* The text's depth and size in values, from libyaml's events, before any document is built. */
static int check_shape(struct wctx *x, const char *text, size_t n)
{
	unsigned int depth = 0, nodes = 0;
	yaml_parser_t p;
	yaml_event_t e;
	bool end = false;
	int rc = 0;

	if (!yaml_parser_initialize(&p))
		return -ENOMEM;
	yaml_parser_set_input_string(&p, (const unsigned char *)text, n);
	while (!rc && !end) {
		if (!yaml_parser_parse(&p, &e)) {
			rc = not_yaml(x, &p);
			break;
		}
		end = e.type == YAML_STREAM_END_EVENT || e.type == YAML_DOCUMENT_END_EVENT;
		rc = shape_event(x, &e, &depth, &nodes);
		yaml_event_delete(&e);
	}
	yaml_parser_delete(&p);
	return rc;
}

static int parse(struct wctx *x, const char *text, size_t n)
{
	yaml_parser_t p;
	yaml_node_t *root;
	int rc = check_shape(x, text, n);

	if (rc)
		return rc;
	if (!yaml_parser_initialize(&p))
		return -ENOMEM;
	yaml_parser_set_input_string(&p, (const unsigned char *)text, n);
	if (!yaml_parser_load(&p, x->doc)) {
		rc = not_yaml(x, &p);
		yaml_parser_delete(&p);
		return rc;
	}
	yaml_parser_delete(&p);
	root = yaml_document_get_root_node(x->doc);
	/* An empty file is the toolkit's plain HTTP with no authentication. */
	rc = root && !(root->type == YAML_SCALAR_NODE && !root->data.scalar.length) ?
	     top(x, root) : 0;
	yaml_document_delete(x->doc);
	return rc;
}

/* The web-config's text, from a file only root (or the daemon's user) controls. */
static int read_config(struct wctx *x, char **text, size_t *n)
{
	char why[512];
	int fd = safe_file__open_trusted(x->w->path, false, why, sizeof(why)), rc;

	if (fd < 0) {
		snprintf(x->err, x->len, "cannot use the web-config %s: %s", x->w->path, why);
		return fd;
	}
	rc = read_bounded(fd, WEB_MAX_YAML, text, n);
	close(fd);
	if (rc && rc != -ENOMEM)
		snprintf(x->err, x->len, "cannot use the web-config %s: %s", x->w->path,
			 rc == -EFBIG ? "it is over 1 MiB, where a web-config is a few KB" :
			 strerror(-rc));
	return rc;
}

int webconf__load(struct webconf *w, const char *path, char *err, size_t len)
{
	yaml_document_t doc;
	struct wctx x = { .w = w, .doc = &doc, .err = err, .len = len };
	char *text;
	size_t n;
	int rc;

	*w = (struct webconf){ .min_version = 12, .nopen = 1, .open_paths = { "/healthz" } };
	if (strlen(path) >= sizeof(w->path)) {
		snprintf(err, len, "web-config: the path is too long");
		return -EINVAL;
	}
	snprintf(w->path, sizeof(w->path), "%s", path);
	rc = read_config(&x, &text, &n);
	if (rc)
		return rc;
	rc = parse(&x, text, n);
	free(text);
	if (!rc)
		rc = finish(&x);
	if (rc)
		webconf__free(w);
	return rc;
}

void webconf__free(struct webconf *w)
{
	free(w->cert_pem);
	if (w->key_pem)
		explicit_bzero(w->key_pem, strlen(w->key_pem));
	free(w->key_pem);
	free(w->ca_pem);
	w->cert_pem = w->key_pem = w->ca_pem = NULL;
}

bool webconf__authenticates(const struct webconf *w)
{
	return w->nusers || w->client_auth != CLIENT_AUTH_NONE;
}

bool webconf__is_open(const struct webconf *w, const char *url)
{
	for (size_t i = 0; i < w->nopen; i++)
		if (!strcmp(w->open_paths[i], url))
			return true;
	return false;
}

int webconf__check_listen(const struct webconf *w, const char *listen, bool loopback, char *err,
			  size_t len)
{
	if (loopback)
		return 0;
	if (!w) {
		snprintf(err, len, "listen %s is not a loopback address and there is no --web-config: "
			 "the daemon would take captures from anyone who can reach it; give "
			 "--web-config FILE with basic_auth_users or client certificates "
			 "(docs/daemon.md, \"Authentication and TLS\"), or listen on 127.0.0.1",
			 listen);
		return -EINVAL;
	}
	if (!webconf__authenticates(w)) {
		snprintf(err, len, "listen %s is not a loopback address and the web-config %s "
			 "authenticates nobody (TLS alone does not say who a client is): give it "
			 "basic_auth_users, or client_auth_type RequireAndVerifyClientCert with "
			 "client_ca_file", listen, w->path);
		return -EINVAL;
	}
	if (!w->tls) {
		snprintf(err, len, "listen %s is not a loopback address and the web-config %s has no "
			 "tls_server_config: passwords would cross the network in clear; give "
			 "cert_file and key_file", listen, w->path);
		return -EINVAL;
	}
	return 0;
}
