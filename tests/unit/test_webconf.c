// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The daemon's --web-config parser (the exporter toolkit's YAML, through
 * libyaml): every key it takes, relative files, and each refusal naming the
 * file, the line, the key and the fix; which listen addresses a web-config
 * may serve. The certificates are made here with GnuTLS, the library that
 * will serve them.
 */
#include <errno.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include "daemon/dconf.h"
#include "daemon/webconf.h"
#include "util/parse.h"

#define HASH "$2b$05$FvB0Y6yNlCdJQdq1Qb9lPu4w2m5xN9b3Xa8kz0gqQkJm6yq1r0M2e"

static char dir[] = "/tmp/cuprobe-webconf.XXXXXX";

static void put(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* A self-signed certificate and its key, in PEM, as name.crt and name.key. */
static void make_cert(const char *name)
{
	gnutls_x509_privkey_t key;
	gnutls_x509_crt_t crt;
	char path[256], buf[8192];
	size_t n;
	FILE *f;

	assert_int_equal(gnutls_x509_privkey_init(&key), 0);
	assert_int_equal(gnutls_x509_privkey_generate(key, GNUTLS_PK_ECDSA,
						      GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1),
						      0), 0);
	assert_int_equal(gnutls_x509_crt_init(&crt), 0);
	gnutls_x509_crt_set_version(crt, 3);
	gnutls_x509_crt_set_serial(crt, "\x01", 1);
	gnutls_x509_crt_set_activation_time(crt, time(NULL) - 60);
	gnutls_x509_crt_set_expiration_time(crt, time(NULL) + 3600);
	gnutls_x509_crt_set_dn_by_oid(crt, GNUTLS_OID_X520_COMMON_NAME, 0, name, strlen(name));
	gnutls_x509_crt_set_key(crt, key);
	assert_int_equal(gnutls_x509_crt_sign2(crt, crt, key, GNUTLS_DIG_SHA256, 0), 0);
	n = sizeof(buf);
	assert_int_equal(gnutls_x509_crt_export(crt, GNUTLS_X509_FMT_PEM, buf, &n), 0);
	snprintf(path, sizeof(path), "%s/%s.crt", dir, name);
	f = fopen(path, "w");
	fwrite(buf, 1, n, f);
	fclose(f);
	n = sizeof(buf);
	assert_int_equal(gnutls_x509_privkey_export(key, GNUTLS_X509_FMT_PEM, buf, &n), 0);
	snprintf(path, sizeof(path), "%s/%s.key", dir, name);
	f = fopen(path, "w");
	fwrite(buf, 1, n, f);
	fclose(f);
	/* A key readable by others is refused, as ssh refuses one. */
	assert_int_equal(chmod(path, 0600), 0);
	gnutls_x509_crt_deinit(crt);
	gnutls_x509_privkey_deinit(key);
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	make_cert("server");
	make_cert("other");
	make_cert("ca");
	return 0;
}

static int teardown(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

/* Loads text as web.yml: its return, err filled. */
static int load(const char *text, struct webconf *w, char *err, size_t len)
{
	char path[256];

	put("web.yml", text);
	snprintf(path, sizeof(path), "%s/web.yml", dir);
	err[0] = '\0';
	return webconf__load(w, path, err, len);
}

/* text is refused, the message holding each of the NULL-ended strings. */
static void refused(const char *text, ...)
{
	struct webconf w;
	char err[1024];
	const char *want;
	va_list ap;

	/* -EINVAL, or the errno of a file that cannot be used (-ENOENT, -EPERM). */
	assert_true(load(text, &w, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "/web.yml"));
	va_start(ap, text);
	while ((want = va_arg(ap, const char *))) {
		if (!strstr(err, want))
			fail_msg("'%s' not in: %s", want, err);
	}
	va_end(ap);
}

static void test_empty_is_plain_http(void **state)
{
	struct webconf w;
	char err[512];

	(void)state;
	assert_int_equal(load("", &w, err, sizeof(err)), 0);
	assert_false(w.tls);
	assert_int_equal(w.nusers, 0);
	assert_false(webconf__authenticates(&w));
	assert_true(webconf__is_open(&w, "/healthz"));
	assert_false(webconf__is_open(&w, "/metrics"));
	webconf__free(&w);
}

static void test_full(void **state)
{
	struct webconf w;
	char err[512], want[300];

	(void)state;
	assert_int_equal(load("# the exporter toolkit's format\n"
			      "tls_server_config:\n"
			      "  cert_file: server.crt\n"
			      "  key_file: server.key\n"
			      "  client_auth_type: RequireAndVerifyClientCert\n"
			      "  client_ca_file: ca.crt\n"
			      "  min_version: TLS13\n"
			      "basic_auth_users:\n"
			      "  alice: '" HASH "'\n"
			      "  bob: " HASH "\n"
			      "cuprobe:\n"
			      "  open_paths: [ /metrics, /healthz, /metrics ]\n", &w, err, sizeof(err)),
			 0);
	assert_true(w.tls);
	snprintf(want, sizeof(want), "%s/server.crt", dir);
	assert_string_equal(w.cert_file, want);
	assert_int_equal(w.client_auth, CLIENT_AUTH_REQUIRE);
	assert_int_equal(w.min_version, 13);
	assert_int_equal(w.nusers, 2);
	assert_string_equal(w.users[1].name, "bob");
	assert_string_equal(w.users[1].hash, HASH);
	assert_int_equal(w.nopen, 2);
	assert_true(webconf__is_open(&w, "/metrics"));
	assert_false(webconf__is_open(&w, "/capture"));
	assert_non_null(strstr(w.cert_pem, "BEGIN CERTIFICATE"));
	assert_non_null(strstr(w.ca_pem, "BEGIN CERTIFICATE"));
	assert_true(webconf__authenticates(&w));
	webconf__free(&w);
	/* open_paths: [] closes even /healthz. */
	assert_int_equal(load("cuprobe: { open_paths: [] }\n", &w, err, sizeof(err)), 0);
	assert_false(webconf__is_open(&w, "/healthz"));
	webconf__free(&w);
}

static void test_unknown_keys(void **state)
{
	(void)state;
	refused("basic_auth_users: {}\ntls_config:\n  cert_file: x\n", "/web.yml:2:",
		"unknown key 'tls_config'", "fix its spelling", "tls_server_config", NULL);
	refused("tls_server_config:\n  cert_file: server.crt\n  key_fil: server.key\n",
		"/web.yml:3:", "tls_server_config: unknown key 'key_fil'", "key_file", NULL);
	refused("tls_server_config:\n  cipher_suites: [ TLS_AES_128_GCM_SHA256 ]\n",
		"/web.yml:2:", "'cipher_suites'", "does not implement: remove it", NULL);
	refused("http_server_config: { http2: false }\n", "does not implement", NULL);
	refused("cuprobe:\n  open_path: [ /metrics ]\n", "/web.yml:2:", "'open_path'",
		"open_paths", NULL);
	refused("basic_auth_users: {}\nbasic_auth_users: {}\n", "/web.yml:2:", "given twice",
		NULL);
	refused("tls_server_config: [ a ]\n", "give a mapping", NULL);
}

static void test_bad_values(void **state)
{
	(void)state;
	refused("basic_auth_users:\n  alice: secret\n", "/web.yml:2:", "user 'alice'",
		"bcrypt hash", "mkpasswd -m bcrypt", NULL);
	refused("basic_auth_users:\n  alice: '$1$abc$0123456789012345678901'\n", "bcrypt", NULL);
	refused("basic_auth_users:\n  alice: '" HASH "'\n  alice: '" HASH "'\n", "twice", NULL);
	refused("cuprobe:\n  open_paths: [ /metrics, /capture ]\n", "/web.yml:2:",
		"'/capture' cannot be open", "always needs an authenticated client", NULL);
	refused("cuprobe:\n  open_paths: /metrics\n", "give a list", NULL);
	refused("tls_server_config:\n  client_auth_type: RequireAnyClientCert\n",
		"authenticate nobody", "RequireAndVerifyClientCert", NULL);
	refused("tls_server_config:\n  client_auth_type: Always\n", "'Always' is not", NULL);
	refused("tls_server_config:\n  min_version: TLS10\n", "TLS12 or TLS13", NULL);
	refused("tls_server_config:\n  cert_file: server.crt\n", "both cert_file and key_file",
		NULL);
	refused("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
		"  client_auth_type: RequireAndVerifyClientCert\n", "give client_ca_file", NULL);
	refused("tls_server_config:\n  cert_file: nothere.crt\n  key_file: server.key\n",
		"cert_file: cannot use", "nothere.crt", "No such file", NULL);
	/* A certificate with another's key: said at load, not when a client connects. */
	refused("tls_server_config:\n  cert_file: server.crt\n  key_file: other.key\n",
		"server.crt", "other.key", NULL);
	refused("tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n"
		"  client_auth_type: VerifyClientCertIfGiven\n  client_ca_file: web.yml\n",
		"client_ca_file", NULL);
	refused("tls_server_config:\n  cert_file: [server.crt\n", "not YAML", NULL);
}

static void test_listen(void **state)
{
	struct webconf w;
	struct dconf c;
	char err[1024];

	(void)state;
	assert_int_equal(webconf__check_listen(NULL, "127.0.0.1:9464", true, err, sizeof(err)), 0);
	assert_int_equal(webconf__check_listen(NULL, "0.0.0.0:9464", false, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "--web-config"));
	assert_int_equal(load("tls_server_config:\n  cert_file: server.crt\n"
			      "  key_file: server.key\n", &w, err, sizeof(err)), 0);
	assert_int_equal(webconf__check_listen(&w, "[::]:9464", false, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "authenticates nobody"));
	assert_non_null(strstr(err, "TLS alone"));
	webconf__free(&w);
	assert_int_equal(load("basic_auth_users:\n  alice: '" HASH "'\n", &w, err, sizeof(err)), 0);
	assert_int_equal(webconf__check_listen(&w, "10.1.2.3:9464", false, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "in clear"));
	assert_int_equal(webconf__check_listen(&w, "127.0.0.1:9464", true, err, sizeof(err)), 0);
	webconf__free(&w);

	/* The daemon's settings refuse a non-loopback listen without a web-config. */
	dconf__defaults(&c);
	assert_int_equal(dconf__check(&c, err, sizeof(err)), 0);
	assert_int_equal(dconf__set(&c, "listen", "0.0.0.0:9464", err, sizeof(err)), 0);
	assert_int_equal(dconf__check(&c, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--web-config"));
	assert_int_equal(dconf__set(&c, "web-config", "/etc/cuprobe/web.yml", err, sizeof(err)), 0);
	assert_int_equal(dconf__check(&c, err, sizeof(err)), 0);
	assert_int_equal(dconf__set(&c, "max-captures", "0", err, sizeof(err)), -EINVAL);
	assert_int_equal(c.max_captures, 4);
	dconf__free(&c);
}

static void test_loopback(void **state)
{
	static const struct { const char *addr; bool loop; } cases[] = {
		{ "127.0.0.1:1", true }, { "127.0.0.2:1", true }, { "localhost:1", true },
		{ "[::1]:1", true }, { "[::ffff:127.0.0.1]:1", true }, { "0.0.0.0:1", false },
		{ "[::]:1", false }, { "10.0.0.1:1", false }, { "[::ffff:10.0.0.1]:1", false },
		{ "128.0.0.1:1", false },
	};
	struct addr_port ap;
	char why[256];

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		assert_int_equal(parse_addr_port(cases[i].addr, &ap, why, sizeof(why)), 0);
		if (addr_is_loopback(&ap) != cases[i].loop)
			fail_msg("%s: loopback is not %d", cases[i].addr, cases[i].loop);
	}
}

/* Files another user could have chosen or read are refused, with the fix. */
static void test_untrusted_files(void **state)
{
	const char *tls = "tls_server_config: { cert_file: server.crt, key_file: server.key }\n";
	struct webconf w;
	char err[1024], path[256];

	(void)state;
	snprintf(path, sizeof(path), "%s/server.key", dir);
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(load(tls, &w, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "key_file: cannot use "));
	assert_non_null(strstr(err, "other users may read it (mode 0644)"));
	assert_non_null(strstr(err, "chmod 600"));
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(load(tls, &w, err, sizeof(err)), 0);
	webconf__free(&w);
	/* The certificate is public, but no one else may write it. */
	snprintf(path, sizeof(path), "%s/server.crt", dir);
	assert_int_equal(chmod(path, 0666), 0);
	assert_int_equal(load(tls, &w, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "cert_file: cannot use "));
	assert_non_null(strstr(err, "chmod go-w"));
	assert_int_equal(chmod(path, 0644), 0);
	/* The web-config itself: others may not write it, and a FIFO never blocks. */
	snprintf(path, sizeof(path), "%s/web.yml", dir);
	put("web.yml", tls);
	assert_int_equal(chmod(path, 0646), 0);
	assert_int_equal(webconf__load(&w, path, err, sizeof(err)), -EPERM);
	assert_non_null(strstr(err, "cannot use the web-config "));
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkfifo(path, 0600), 0);
	alarm(5);
	assert_int_equal(webconf__load(&w, path, err, sizeof(err)), -EINVAL);
	alarm(0);
	assert_non_null(strstr(err, "it is a FIFO: give a regular file"));
	assert_int_equal(unlink(path), 0);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Size, depth and values are bounded before libyaml builds a document, and refused fast. */
static void test_bounds(void **state)
{
	size_t deep = 200000, big = (1 << 20) + 1;
	char *text = malloc(2 * deep + 16), err[1024];
	struct webconf w;
	double t0 = now();

	(void)state;
	assert_non_null(text);
	memset(text, '[', deep);
	memset(text + deep, ']', deep);
	strcpy(text + 2 * deep, "\n");
	refused(text, "web.yml:1: nested more than 16 deep", NULL);
	assert_true(now() - t0 < 2);
	free(text);
	text = malloc(big + 1);
	assert_non_null(text);
	memset(text, '#', big);
	text[big] = '\0';
	assert_int_equal(load(text, &w, err, sizeof(err)), -EFBIG);
	assert_non_null(strstr(err, "over 1 MiB"));
	free(text);
	/* Many users, under 1 MiB: refused by their count of values, before any is kept. */
	text = malloc(700 * 100 + 32);
	assert_non_null(text);
	strcpy(text, "basic_auth_users:\n");
	for (int i = 0; i < 700; i++)
		sprintf(text + strlen(text), "  u%d: '%s'\n", i, HASH);
	refused(text, "more than 1024 values", NULL);
	free(text);
	assert_true(now() - t0 < 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_empty_is_plain_http),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_unknown_keys),
		cmocka_unit_test(test_bad_values),
		cmocka_unit_test(test_listen),
		cmocka_unit_test(test_loopback),
		cmocka_unit_test(test_untrusted_files),
		cmocka_unit_test(test_bounds),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
