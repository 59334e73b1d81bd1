// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/util/parse.c, the one grammar of each kind of value
 * (sizes, counts, numbers, durations, booleans, ADDR:PORT), and for
 * user/util/opt.c, the option tables that getopt, --help and the daemon's
 * config file read. Every rejection also checks that the output was left
 * alone.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <net/if.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "daemon/dconf.h"
#include "util/opt.h"
#include "util/parse.h"

#define NEAR(a, b) assert_true(fabs((a) - (b)) < 1e-12)

static void test_size_forms(void **state)
{
	static const struct {
		const char *s;
		uint64_t v;
	} ok[] = {
		{ "0", 0 }, { "4096", 4096 }, { "3000", 3000 }, { "8K", 8192 }, { "64K", 64 << 10 },
		{ "64KB", 64 << 10 }, { "64KiB", 64 << 10 }, { "64kib", 64 << 10 }, { "64kb", 64 << 10 },
		{ "16M", 16 << 20 }, { "16MB", 16 << 20 }, { "16m", 16 << 20 }, { "1G", 1ull << 30 },
		{ "3g", 3ull << 30 }, { "4T", 4ull << 40 }, { "2P", 2ull << 50 }, { "15E", 15ull << 60 },
		{ "1.5M", 3ull << 19 }, { "0.5K", 512 }, { "512B", 512 }, { "1.0", 1 },
		{ "18446744073709551615", UINT64_MAX },
	};
	uint64_t v;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		v = 77;
		if (parse_size(ok[i].s, &v))
			fail_msg("parse_size(\"%s\") refused", ok[i].s);
		if (v != ok[i].v)
			fail_msg("parse_size(\"%s\") = %llu, not %llu", ok[i].s, (unsigned long long)v,
				 (unsigned long long)ok[i].v);
	}
}

static void test_size_refused(void **state)
{
	static const char *const junk[] = { "", "M", "K4", "-1", "-4K", "+4K", " 4K", "4K ", "4 K",
					    "x", "1e3", "0x10", "4iB", "4KBB", "4KiBs", "4X",
					    "1.", ".5K", "1.5", "0.3K", "1.2.3" };
	static const char *const big[] = { "18446744073709551616", "99999999999999999999",
					   "17592186044432M", "17179869184G", "16E" };
	uint64_t v = 77;

	(void)state;
	for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++)
		if (parse_size(junk[i], &v) != -EINVAL)
			fail_msg("parse_size(\"%s\") is not -EINVAL", junk[i]);
	/* 2^44 + 16 mebibytes is 2^64 + 16 MiB: it must not wrap around to 16M. */
	for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++)
		if (parse_size(big[i], &v) != -ERANGE)
			fail_msg("parse_size(\"%s\") is not -ERANGE", big[i]);
	assert_int_equal(v, 77); /* left alone */
}

static void test_count(void **state)
{
	static const char *const junk[] = { "", "00", "07", "+1", "-1", " 1", "1 ", "1.0", "1e3",
					    "0x1", "1,2", "one" };
	uint64_t v = 77;

	(void)state;
	assert_int_equal(parse_count("0", 0, 10, &v), 0);
	assert_int_equal(v, 0);
	assert_int_equal(parse_count("10", 0, 10, &v), 0);
	assert_int_equal(v, 10);
	assert_int_equal(parse_count("18446744073709551615", 0, UINT64_MAX, &v), 0);
	assert_int_equal(v, UINT64_MAX);
	v = 77;
	for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++)
		if (parse_count(junk[i], 0, 100, &v) != -EINVAL)
			fail_msg("parse_count(\"%s\") is not -EINVAL", junk[i]);
	assert_int_equal(parse_count("11", 0, 10, &v), -ERANGE);
	assert_int_equal(parse_count("0", 1, 10, &v), -ERANGE);
	assert_int_equal(parse_count("18446744073709551616", 0, UINT64_MAX, &v), -ERANGE);
	assert_int_equal(v, 77);
}

static void test_number(void **state)
{
	static const char *const junk[] = { "", ".", "-", "e3", "1e", "1e+", "0x10", "inf", "nan",
					    "-inf", " 1", "1 ", "1,5", "1..2", "--1", "+1", "1f" };
	double d = 77;

	(void)state;
	assert_int_equal(parse_number("0.25", 0, 1, &d), 0);
	NEAR(d, 0.25);
	assert_int_equal(parse_number(".5", 0, 1, &d), 0);
	NEAR(d, 0.5);
	assert_int_equal(parse_number("5.", 0, 10, &d), 0);
	NEAR(d, 5);
	assert_int_equal(parse_number("2.5E-3", 0, 1, &d), 0);
	NEAR(d, 0.0025);
	assert_int_equal(parse_number("-2", -5, 5, &d), 0);
	NEAR(d, -2);
	d = 77;
	for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++)
		if (parse_number(junk[i], -1e300, 1e300, &d) != -EINVAL)
			fail_msg("parse_number(\"%s\") is not -EINVAL", junk[i]);
	assert_int_equal(parse_number("1.5", 0, 1, &d), -ERANGE);
	assert_int_equal(parse_number("-0.001", 0, 1, &d), -ERANGE);
	assert_int_equal(parse_number("1e999", 0, 1e308, &d), -ERANGE);
	assert_true(d == 77);
}

static void test_duration(void **state)
{
	static const char *const junk[] = { "", "-1", "s", "ms", "10x", "10 s", "10S", "10MS", "1h",
					    "10sec", "10mss", "1e", "nan", "inf" };
	double s = 77;

	(void)state;
	assert_int_equal(parse_duration("30", PARSE_SECONDS, 0, 1e6, &s), 0);
	NEAR(s, 30);
	assert_int_equal(parse_duration("30s", PARSE_SECONDS, 0, 1e6, &s), 0);
	NEAR(s, 30);
	assert_int_equal(parse_duration("0.5m", PARSE_SECONDS, 0, 1e6, &s), 0);
	NEAR(s, 30);
	assert_int_equal(parse_duration("250ms", PARSE_SECONDS, 0, 1e6, &s), 0);
	NEAR(s, 0.25);
	/* Without a unit, the option's: --slice counts milliseconds. */
	assert_int_equal(parse_duration("100", PARSE_MILLISECONDS, 0, 1e6, &s), 0);
	NEAR(s, 0.1);
	assert_int_equal(parse_duration("1.5s", PARSE_MILLISECONDS, 0, 1e6, &s), 0);
	NEAR(s, 1.5);
	assert_int_equal(parse_duration("2m", PARSE_MILLISECONDS, 0, 1e6, &s), 0);
	NEAR(s, 120);
	s = 77;
	for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++)
		if (parse_duration(junk[i], PARSE_SECONDS, 0, 1e6, &s) != -EINVAL)
			fail_msg("parse_duration(\"%s\") is not -EINVAL", junk[i]);
	assert_int_equal(parse_duration("0", PARSE_SECONDS, 1e-9, 10, &s), -ERANGE);
	assert_int_equal(parse_duration("11", PARSE_SECONDS, 0, 10, &s), -ERANGE);
	assert_int_equal(parse_duration("1m", PARSE_SECONDS, 0, 59, &s), -ERANGE);
	assert_true(s == 77);
}

static void test_bool(void **state)
{
	static const char *const yes[] = { "true", "yes", "on", "1", "True", "YES", "On" };
	static const char *const no[] = { "false", "no", "off", "0", "FALSE", "No", "oFF" };
	static const char *const junk[] = { "", "maybe", "2", "t", "y", "truee", " true" };
	bool b;

	(void)state;
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		b = false;
		assert_int_equal(parse_bool(yes[i], &b), 0);
		assert_true(b);
		assert_int_equal(parse_bool(no[i], &b), 0);
		assert_false(b);
	}
	for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++) {
		b = true;
		if (parse_bool(junk[i], &b) != -EINVAL)
			fail_msg("parse_bool(\"%s\") is not -EINVAL", junk[i]);
		assert_true(b);
	}
}

static void test_addr_port_forms(void **state)
{
	struct addr_port ap;
	struct sockaddr_in *in = (struct sockaddr_in *)&ap.sa;
	struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ap.sa;
	char why[256];

	(void)state;
	assert_int_equal(parse_addr_port("127.0.0.1:9464", &ap, why, sizeof(why)), 0);
	assert_string_equal(ap.host, "127.0.0.1");
	assert_int_equal(ap.port, 9464);
	assert_int_equal(in->sin_family, AF_INET);
	assert_int_equal(ntohs(in->sin_port), 9464);
	assert_int_equal(ntohl(in->sin_addr.s_addr), 0x7f000001);
	assert_int_equal(ap.salen, sizeof(*in));

	assert_int_equal(parse_addr_port("localhost:80", &ap, why, sizeof(why)), 0);
	assert_string_equal(ap.host, "127.0.0.1");
	assert_int_equal(ntohl(in->sin_addr.s_addr), 0x7f000001);

	assert_int_equal(parse_addr_port("[::1]:9464", &ap, why, sizeof(why)), 0);
	assert_string_equal(ap.host, "::1");
	assert_int_equal(in6->sin6_family, AF_INET6);
	assert_int_equal(ntohs(in6->sin6_port), 9464);
	assert_true(IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr));
	assert_int_equal(ap.salen, sizeof(*in6));

	/* Bare IPv6: the last ':' ends the address. */
	assert_int_equal(parse_addr_port("::1:65535", &ap, why, sizeof(why)), 0);
	assert_string_equal(ap.host, "::1");
	assert_int_equal(ap.port, 65535);

	assert_int_equal(parse_addr_port("[fe80::1%1]:1", &ap, why, sizeof(why)), 0);
	assert_string_equal(ap.host, "fe80::1");
	assert_int_equal(in6->sin6_scope_id, 1);
	assert_int_equal(parse_addr_port("[fe80::1%lo]:1", &ap, why, sizeof(why)), 0);
	assert_int_equal(in6->sin6_scope_id, if_nametoindex("lo"));
}

static void test_addr_port_refused(void **state)
{
	static const char *const shape[] = { "", "9464", ":9464", "1.2.3.4:", "1.2.3.4:0",
					     "1.2.3.4:65536", "1.2.3.4:09", "1.2.3.4:80x",
					     "1.2.3.4: 80", "[::1:80", "[1.2.3.4]", "[]:80" };
	static const char *const host[] = { "nowhere:80", "example.com:443", "1.2.3:80",
					    "[fe80::1%nosuchif0]:80", "256.0.0.1:1" };
	struct addr_port ap = { .port = 77 };
	char why[256];

	(void)state;
	for (size_t i = 0; i < sizeof(shape) / sizeof(shape[0]); i++) {
		if (parse_addr_port(shape[i], &ap, why, sizeof(why)) != -EINVAL)
			fail_msg("parse_addr_port(\"%s\") is not -EINVAL", shape[i]);
		assert_int_equal(strncmp(why, "not ADDR:PORT (e.g. 127.0.0.1:9464", 34), 0);
	}
	for (size_t i = 0; i < sizeof(host) / sizeof(host[0]); i++) {
		if (parse_addr_port(host[i], &ap, why, sizeof(why)) != -EINVAL)
			fail_msg("parse_addr_port(\"%s\") is not -EINVAL", host[i]);
		if (!strstr(why, "not ADDR:PORT: '") || !strstr(why, "is not a numeric address"))
			fail_msg("parse_addr_port(\"%s\"): %s", host[i], why);
	}
	assert_int_equal(ap.port, 77);
}

/* ---- the option tables ---- */

struct flags {
	int a, b;
	const char *c;
};

static int set_a(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	(void)name, (void)arg, (void)err, (void)len;
	((struct flags *)obj)->a++;
	return 0;
}

static int set_b(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	uint64_t v;

	if (parse_count(arg, 1, 9, &v)) {
		snprintf(err, len, "%s: not a count from 1 to 9", name);
		return -EINVAL;
	}
	((struct flags *)obj)->b = (int)v;
	return 0;
}

static int set_c(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	(void)name, (void)err, (void)len;
	((struct flags *)obj)->c = arg;
	return 0;
}

static const struct opt first[] = {
	{ "alpha", 'a', NULL, set_a, "count a" },
	{ "beta", 0, "N", set_b, "the beta count,\nfrom 1 to 9" },
};
static const struct opt second[] = {
	{ "a-much-longer-option-name", 'c', "VALUE", set_c, "goes below" },
};
static const struct opt_table first_table = OPT_TABLE(first);
static const struct opt_table second_table = OPT_TABLE(second);

static void no_usage(FILE *f)
{
	fputs("USAGE\n", f);
}

/* Runs opt__parse over argv (NULL-terminated) with stderr and stdout in out. */
static int run_opt(const struct opt_group *g, size_t ng, char **argv, char *out, size_t len,
		   int *operand)
{
	const struct opt_cmd cmd = { .name = "t", .groups = g, .ngroups = ng, .usage = no_usage,
				     .stop_at_operand = true };
	FILE *cap = tmpfile();
	int argc = 0, saved[2], rc;
	size_t n;

	while (argv[argc])
		argc++;
	fflush(stdout);
	fflush(stderr);
	saved[0] = dup(1);
	saved[1] = dup(2);
	dup2(fileno(cap), 1);
	dup2(fileno(cap), 2);
	rc = opt__parse(&cmd, argc, argv, operand);
	fflush(stdout);
	fflush(stderr);
	dup2(saved[0], 1);
	dup2(saved[1], 2);
	close(saved[0]);
	close(saved[1]);
	rewind(cap);
	n = fread(out, 1, len - 1, cap);
	out[n] = '\0';
	fclose(cap);
	return rc;
}

static void test_opt_parse(void **state)
{
	struct flags f = {}, g = {};
	const struct opt_group groups[] = { { &first_table, &f }, { &second_table, &g } };
	char *argv[] = { "t", "-aa", "--beta=3", "--alpha", "-c", "x", "cmd", "-a", NULL };
	char *bad[] = { "t", "--beta", "0", NULL };
	char *missing[] = { "t", "--alpha", "--beta", NULL };
	char *help[] = { "t", "-a", "--help", "-a", NULL };
	char out[1024];
	int op;

	(void)state;
	assert_int_equal(run_opt(groups, 2, argv, out, sizeof(out), &op), 0);
	assert_int_equal(f.a, 3);
	assert_int_equal(f.b, 3);
	assert_null(f.c);
	assert_string_equal(g.c, "x");
	assert_int_equal(op, 6); /* the operand, and what follows it, are left */
	assert_string_equal(out, "");

	assert_int_equal(run_opt(groups, 2, bad, out, sizeof(out), &op), -EINVAL);
	assert_string_equal(out, "cuprobe t: --beta: not a count from 1 to 9 (see cuprobe t --help)\n");
	assert_int_equal(run_opt(groups, 2, missing, out, sizeof(out), &op), -EINVAL);
	assert_string_equal(out, "cuprobe t: missing value for --beta (see cuprobe t --help)\n");

	memset(&f, 0, sizeof(f));
	assert_int_equal(run_opt(groups, 2, help, out, sizeof(out), &op), 1);
	assert_string_equal(out, "USAGE\n");
	assert_int_equal(f.a, 1); /* help stops the parse where it stands */
}

/* A group without an object takes its options and applies nothing (the daemon's first pass). */
static void test_opt_group_without_object(void **state)
{
	struct flags f = {};
	const struct opt_group groups[] = { { &first_table, NULL }, { &second_table, &f } };
	char *argv[] = { "t", "--beta", "0", "-c", "y", NULL };
	char out[256];
	int op;

	(void)state;
	assert_int_equal(run_opt(groups, 2, argv, out, sizeof(out), &op), 0);
	assert_string_equal(f.c, "y");
	assert_int_equal(op, 5);
}

/* A name or a code twice is refused before anything is parsed. */
static void test_opt_twice_refused(void **state)
{
	struct flags f = {};
	const struct opt_group groups[] = { { &first_table, &f }, { &first_table, &f } };
	char *argv[] = { "t", "-a", NULL };
	char out[256];
	int op;

	(void)state;
	assert_int_equal(run_opt(groups, 2, argv, out, sizeof(out), &op), -EINVAL);
	assert_non_null(strstr(out, "--alpha is in the option tables twice"));
	assert_int_equal(f.a, 0);
}

static void test_opt_help(void **state)
{
	const struct opt_group groups[] = { { &first_table, NULL }, { &second_table, NULL } };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	(void)state;
	opt__help(f, groups, 2);
	fclose(f);
	assert_string_equal(buf,
			    "  -a, --alpha             count a\n"
			    "      --beta N            the beta count,\n"
			    "                          from 1 to 9\n"
			    "  -c, --a-much-longer-option-name VALUE\n"
			    "                          goes below\n"
			    "  -h, --help              this text\n");
	free(buf);
	assert_ptr_equal(opt__find(&first_table, "beta"), &first[1]);
	assert_null(opt__find(&first_table, "gamma"));
}

/* The daemon's config keys are its table's names: each one is a setting. */
static void test_dconf_keys_are_the_table(void **state)
{
	struct dconf c;
	char err[512];

	(void)state;
	dconf__defaults(&c);
	for (size_t i = 0; i < dconf_opts.n; i++) {
		static const char *const bad[] = { "", "/x:y" };
		const char *name = dconf_opts.opts[i].name;
		bool named = false;

		/* Each refuses one of these with a message that names it, never "unknown setting". */
		for (size_t j = 0; j < sizeof(bad) / sizeof(bad[0]); j++)
			if (dconf__set(&c, name, bad[j], err, sizeof(err)) == -EINVAL)
				named |= !strncmp(err, name, strlen(name)) &&
					 !strstr(err, "unknown setting");
		if (!named)
			fail_msg("%s: %s", name, err);
	}
	/* The one grammar in the config file too: 16MB, 2m, 250ms, localhost. */
	assert_int_equal(dconf__set(&c, "retention", "16MB", err, sizeof(err)), 0);
	assert_int_equal(c.retention, 16 << 20);
	assert_int_equal(dconf__set(&c, "window-max-bytes", "64KiB", err, sizeof(err)), 0);
	assert_int_equal(c.window_max_bytes, 64 << 10);
	assert_int_equal(dconf__set(&c, "interval", "2m", err, sizeof(err)), 0);
	NEAR(c.interval, 120);
	assert_int_equal(dconf__set(&c, "slice", "250ms", err, sizeof(err)), 0);
	NEAR(c.slice, 0.25);
	assert_int_equal(dconf__set(&c, "listen", "localhost:9464", err, sizeof(err)), 0);
	assert_int_equal(dconf__set(&c, "listen", "nowhere:9464", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "listen: 'nowhere:9464' is not ADDR:PORT"));
	assert_int_equal(dconf__set(&c, "window-steps", "2.5", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "window-steps: '2.5' is not a whole number from 1 to 10000"));
	assert_int_equal(dconf__set(&c, "cupti", "On", err, sizeof(err)), 0);
	assert_true(c.cupti);
	dconf__free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_size_forms),
		cmocka_unit_test(test_size_refused),
		cmocka_unit_test(test_count),
		cmocka_unit_test(test_number),
		cmocka_unit_test(test_duration),
		cmocka_unit_test(test_bool),
		cmocka_unit_test(test_addr_port_forms),
		cmocka_unit_test(test_addr_port_refused),
		cmocka_unit_test(test_opt_parse),
		cmocka_unit_test(test_opt_group_without_object),
		cmocka_unit_test(test_opt_twice_refused),
		cmocka_unit_test(test_opt_help),
		cmocka_unit_test(test_dconf_keys_are_the_table),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
