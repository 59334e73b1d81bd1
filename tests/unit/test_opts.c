// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/opts.c: `cuprobe record` options and parse_size. Each
 * test parses a command line as main would pass it (argv[0] is "record"),
 * with stdout and stderr caught so that the messages can be checked too.
 */
#include <errno.h>
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
#include "record_opts.h"

#define MAX_ARGS 80

/*
 * Every parse and argument string lives until the end of the run: getopt
 * keeps a pointer into the last argv it read, and freeing that argv would turn
 * one test's stale-state bug into use-after-free failures in unrelated later
 * tests. It also keeps a failed assertion from leaking.
 */
static void **kept;
static size_t nkept, capkept;

static void *keep(void *p)
{
	assert_non_null(p);
	if (nkept == capkept) {
		capkept = capkept ? capkept * 2 : 256;
		kept = realloc(kept, capkept * sizeof(*kept));
		assert_non_null(kept);
	}
	kept[nkept++] = p;
	return p;
}

static int free_kept(void **state)
{
	(void)state;
	for (size_t i = 0; i < nkept; i++)
		free(kept[i]);
	free(kept);
	return 0;
}

/* One parse: its own copy of argv (o.cmd points into it) and what it printed. */
struct parsed {
	struct record_opts o;
	int rc;
	int argc;
	char *argv[MAX_ARGS + 1];
	char out[8192];
};

static void capture_begin(FILE *cap, int saved[2])
{
	fflush(stdout);
	fflush(stderr);
	saved[0] = dup(STDOUT_FILENO);
	saved[1] = dup(STDERR_FILENO);
	assert_true(saved[0] >= 0 && saved[1] >= 0);
	assert_true(dup2(fileno(cap), STDOUT_FILENO) >= 0);
	assert_true(dup2(fileno(cap), STDERR_FILENO) >= 0);
}

static void capture_end(FILE *cap, int saved[2], char *buf, size_t len)
{
	size_t n;

	fflush(stdout);
	fflush(stderr);
	dup2(saved[0], STDOUT_FILENO);
	dup2(saved[1], STDERR_FILENO);
	close(saved[0]);
	close(saved[1]);
	rewind(cap);
	n = fread(buf, 1, len - 1, cap);
	buf[n] = '\0';
}

/* Parses the argv held in p, printing nothing to the test's own output. */
static int run_parse(struct parsed *p)
{
	FILE *cap = tmpfile();
	int saved[2];

	assert_non_null(cap);
	capture_begin(cap, saved);
	p->rc = record_opts__parse(&p->o, p->argc, p->argv);
	capture_end(cap, saved, p->out, sizeof(p->out));
	fclose(cap);
	return p->rc;
}

/* A new parse of "record" followed by the arguments given, up to a NULL. */
static struct parsed *parse_argv(const char *first, ...)
{
	struct parsed *p = keep(calloc(1, sizeof(*p)));
	const char *a;
	va_list ap;

	p->argv[p->argc++] = keep(strdup("record"));
	va_start(ap, first);
	for (a = first; a; a = va_arg(ap, const char *)) {
		assert_true(p->argc < MAX_ARGS);
		p->argv[p->argc++] = keep(strdup(a));
	}
	va_end(ap);
	run_parse(p);
	return p;
}

#define PARSE(...) parse_argv(__VA_ARGS__, NULL)

static void assert_cmd(const struct parsed *p, const char *const *want)
{
	size_t i;

	assert_non_null(p->o.cmd);
	for (i = 0; want[i]; i++) {
		assert_non_null(p->o.cmd[i]);
		assert_string_equal(p->o.cmd[i], want[i]);
	}
	assert_null(p->o.cmd[i]);
}

static void assert_rejected(const struct parsed *p, const char *message)
{
	assert_int_equal(p->rc, -EINVAL);
	if (!strstr(p->out, message))
		fail_msg("expected \"%s\" in the message, got: %s", message, p->out);
}

static void test_defaults_with_a_pid(void **state)
{
	struct parsed *p = PARSE("-p", "42");

	(void)state;
	assert_int_equal(p->rc, 0);
	assert_string_equal(p->o.output, "cuprobe-runs");
	assert_int_equal(p->o.ringbuf_bytes, 16ull << 20);
	assert_int_equal(p->o.npids, 1);
	assert_int_equal(p->o.pids[0], 42);
	assert_null(p->o.cmd);
	assert_true(p->o.duration == 0);
	assert_false(p->o.latency);
	assert_false(p->o.cupti);
	assert_false(p->o.quiet);
	assert_int_equal(p->o.verbose, 0);
	assert_string_equal(p->out, "");
}

static void test_output_short_and_long(void **state)
{
	struct parsed *p = PARSE("-o", "/tmp/traces", "-p", "1");

	(void)state;
	assert_int_equal(p->rc, 0);
	assert_string_equal(p->o.output, "/tmp/traces");

	p = PARSE("--output=rel/dir", "-p", "1");
	assert_int_equal(p->rc, 0);
	assert_string_equal(p->o.output, "rel/dir");
}

static void test_flags_latency_quiet_verbose(void **state)
{
	struct parsed *p = PARSE("--latency", "-q", "-v", "--verbose", "-vp", "7");

	(void)state;
	assert_int_equal(p->rc, 0);
	assert_true(p->o.latency);
	assert_true(p->o.quiet);
	assert_int_equal(p->o.verbose, 3);
	assert_int_equal(p->o.npids, 1);
	assert_int_equal(p->o.pids[0], 7);
}

static void test_pid_list_in_order(void **state)
{
	struct parsed *p = PARSE("-p", "12,34");

	(void)state;
	assert_int_equal(p->rc, 0);
	assert_int_equal(p->o.npids, 2);
	assert_int_equal(p->o.pids[0], 12);
	assert_int_equal(p->o.pids[1], 34);
}

static void test_pid_options_add_up(void **state)
{
	struct parsed *p = PARSE("-p", "5", "--pid", "6,7", "--pid=8");

	(void)state;
	assert_int_equal(p->rc, 0);
	assert_int_equal(p->o.npids, 4);
	for (int i = 0; i < 4; i++)
		assert_int_equal(p->o.pids[i], 5 + i);
}

static void test_pid_zero_rejected(void **state)
{
	(void)state;
	assert_rejected(PARSE("-p", "0"), "not a process id");
}

static void test_pid_negative_rejected(void **state)
{
	(void)state;
	/* -p takes the next word as its value, even one that starts with '-'. */
	assert_rejected(PARSE("-p", "-3"), "not a process id");
}

static void test_pid_not_a_number_rejected(void **state)
{
	(void)state;
	assert_rejected(PARSE("-p", "abc"), "not a process id");
	assert_rejected(PARSE("-p", "12,abc"), "not a process id");
	assert_rejected(PARSE("-p", "12x"), "not a process id");
}

static void test_pid_above_int_max_rejected(void **state)
{
	(void)state;
	assert_rejected(PARSE("-p", "2147483648"), "not a process id");
	assert_rejected(PARSE("-p", "99999999999999999999"), "not a process id");
}

/*
 * strtok_r skips empty fields, so "1,,2" is read as "1,2", and an empty or
 * all-comma list gives no PID at all, which "nothing to record" then catches.
 */
static void test_pid_empty_fields_are_skipped(void **state)
{
	struct parsed *p = PARSE("-p", "1,,2");

	(void)state;
	assert_int_equal(p->rc, 0);
	assert_int_equal(p->o.npids, 2);
	assert_int_equal(p->o.pids[0], 1);
	assert_int_equal(p->o.pids[1], 2);

	assert_rejected(PARSE("-p", ","), "nothing to record");
}

static char *pid_list(int n)
{
	char *s = calloc(n, 8);

	assert_non_null(s);
	for (int i = 1; i <= n; i++)
		sprintf(s + strlen(s), i == 1 ? "%d" : ",%d", 1000 + i);
	return s;
}

static void test_pid_sixty_four_accepted(void **state)
{
	char *list = pid_list(MAX_PIDS);
	struct parsed *p = PARSE("-p", list);

	(void)state;
	assert_int_equal(MAX_PIDS, 64);
	assert_int_equal(p->rc, 0);
	assert_int_equal(p->o.npids, 64);
	assert_int_equal(p->o.pids[63], 1064);
	free(list);
}

static void test_pid_sixty_five_rejected(void **state)
{
	char *list = pid_list(MAX_PIDS + 1);

	(void)state;
	assert_rejected(PARSE("-p", list), "too many processes");
	/* The limit holds across several -p options too. */
	assert_rejected(PARSE("-p", "1,2", "-p", list + strlen("1001,")), "too many processes");
	free(list);
}

static void test_duration_valid(void **state)
{
	struct parsed *p = PARSE("--duration", "30", "-p", "1");

	(void)state;
	assert_int_equal(p->rc, 0);
	assert_true(p->o.duration == 30.0);

	p = PARSE("--duration=0.25", "-p", "1");
	assert_int_equal(p->rc, 0);
	assert_true(p->o.duration == 0.25);
}

static void test_pid_given_twice_rejected(void **state)
{
	(void)state;
	assert_rejected(PARSE("-p", "5,6,5"), "given twice");
}

static void test_duration_invalid_rejected(void **state)
{
	static const char *const bad[] = { "0", "-1", "abc", "10s", "", "nan", "inf", "1e30",
					   "31700000" };

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_rejected(PARSE("--duration", bad[i], "-p", "1"),
				"between 0 and a year");
}

static void test_ringbuf_size_power_of_two_accepted(void **state)
{
	static const struct {
		const char *arg;
		uint64_t bytes;
	} ok[] = {
		{ "4096", 4096 }, { "4K", 4096 }, { "64M", 64ull << 20 },
		{ "1G", 1ull << 30 }, { "256k", 256ull << 10 }, { "2m", 2ull << 20 },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		struct parsed *p = PARSE("--ringbuf-size", ok[i].arg, "-p", "1");

		assert_int_equal(p->rc, 0);
		assert_int_equal(p->o.ringbuf_bytes, ok[i].bytes);
	}
}

static void test_ringbuf_size_not_power_of_two_rejected(void **state)
{
	(void)state;
	assert_rejected(PARSE("--ringbuf-size", "3000", "-p", "1"), "power of two");
	assert_rejected(PARSE("--ringbuf-size", "3M", "-p", "1"), "power of two");
	assert_rejected(PARSE("--ringbuf-size", "0", "-p", "1"), "power of two");
}

static void test_ringbuf_size_below_4k_rejected(void **state)
{
	(void)state;
	assert_rejected(PARSE("--ringbuf-size", "2048", "-p", "1"), "from 4K to 1G");
	assert_rejected(PARSE("--ringbuf-size", "1K", "-p", "1"), "from 4K to 1G");
	/* The map size is 32-bit: 4G would wrap to 0. */
	assert_rejected(PARSE("--ringbuf-size", "2G", "-p", "1"), "from 4K to 1G");
	assert_rejected(PARSE("--ringbuf-size", "4G", "-p", "1"), "from 4K to 1G");
}

static void test_ringbuf_size_not_a_size_rejected(void **state)
{
	(void)state;
	assert_rejected(PARSE("--ringbuf-size", "16X", "-p", "1"), "not a size");
	assert_rejected(PARSE("--ringbuf-size", "lots", "-p", "1"), "not a size");
}

static void test_command_after_double_dash(void **state)
{
	static const char *const want[] = { "ls", "-l", NULL };
	struct parsed *p = PARSE("-o", "x", "--", "ls", "-l");

	(void)state;
	assert_int_equal(p->rc, 0);
	assert_string_equal(p->o.output, "x");
	assert_cmd(p, want);
	assert_int_equal(p->o.npids, 0);
}

/* "+" in the optstring: parsing stops at the command's name. */
static void test_command_without_double_dash_keeps_its_options(void **state)
{
	static const char *const want[] = { "python", "-q", "train.py", "-p", "3", "--", "x", NULL };
	struct parsed *p = PARSE("-v", "python", "-q", "train.py", "-p", "3", "--", "x");

	(void)state;
	assert_int_equal(p->rc, 0);
	assert_cmd(p, want);
	assert_false(p->o.quiet);
	assert_int_equal(p->o.verbose, 1);
	assert_int_equal(p->o.npids, 0);
}

static void test_command_that_looks_like_an_option(void **state)
{
	static const char *const want[] = { "-p", "5", NULL };
	struct parsed *p = PARSE("--", "-p", "5");

	(void)state;
	assert_int_equal(p->rc, 0);
	assert_cmd(p, want);
	assert_int_equal(p->o.npids, 0);
}

static void test_pid_and_command_rejected(void **state)
{
	(void)state;
	assert_rejected(PARSE("-p", "1", "--", "true"), "both -p and a command");
	assert_rejected(PARSE("-p", "1", "true"), "both -p and a command");
}

static void test_nothing_given_rejected(void **state)
{
	(void)state;
	assert_rejected(PARSE("-o", "x"), "nothing to record");
	assert_rejected(PARSE("--"), "nothing to record");
}

static void test_unknown_option_rejected(void **state)
{
	(void)state;
	assert_rejected(PARSE("-x", "-p", "1"), "unknown option");
	assert_rejected(PARSE("--bogus", "-p", "1"), "unknown option --bogus");
}

static void test_missing_value_rejected(void **state)
{
	(void)state;
	assert_rejected(PARSE("-p"), "missing value for -p");
	assert_rejected(PARSE("-p", "1", "-o"), "missing value for -o");
	assert_rejected(PARSE("-p", "1", "--duration"), "missing value for --duration");
	assert_rejected(PARSE("-p", "1", "--ringbuf-size"), "missing value for --ringbuf-size");
}

static void test_help_returns_one_with_usage(void **state)
{
	struct parsed *p = PARSE("--help");

	(void)state;
	assert_int_equal(p->rc, 1);
	assert_non_null(strstr(p->out, "usage: cuprobe record"));
	assert_non_null(strstr(p->out, "examples:"));

	/* Help wins over everything else, checks included. */
	p = PARSE("-p", "1", "-h", "--", "ls");
	assert_int_equal(p->rc, 1);
}

/* getopt keeps state between calls: the parser must start afresh every time. */
static void test_repeated_parses_in_one_process(void **state)
{
	static const char *const want[] = { "ls", "-l", NULL };

	(void)state;
	for (int i = 0; i < 50; i++) {
		struct parsed *p = PARSE("-q", "-o", "d", "--", "ls", "-l");

		assert_int_equal(p->rc, 0);
		assert_true(p->o.quiet);
		assert_string_equal(p->o.output, "d");
		assert_cmd(p, want);

		assert_rejected(PARSE("--bogus"), "unknown option");
		assert_rejected(PARSE("-p"), "missing value");

		p = PARSE("-p", "9");
		assert_int_equal(p->rc, 0);
		assert_false(p->o.quiet);
		assert_int_equal(p->o.npids, 1);
		assert_null(p->o.cmd);
	}
}

/*
 * A parse that returned in the middle of "-hq" leaves getopt pointing at the
 * 'q' of an argv that is gone; the next parse must not carry on from there.
 */
static void test_parse_after_help_inside_option_cluster(void **state)
{
	static const char *const want[] = { "ls", NULL };
	struct parsed *p = PARSE("-hq");

	(void)state;
	assert_int_equal(p->rc, 1);

	p = PARSE("-o", "x", "--", "ls");
	assert_int_equal(p->rc, 0);
	assert_false(p->o.quiet);
	assert_string_equal(p->o.output, "x");
	assert_cmd(p, want);
}

static void test_parse_after_unknown_option_inside_option_cluster(void **state)
{
	struct parsed *p = PARSE("-zv", "-p", "1");

	(void)state;
	assert_int_equal(p->rc, -EINVAL);

	p = PARSE("-p", "2");
	assert_int_equal(p->rc, 0);
	assert_int_equal(p->o.verbose, 0);
	assert_int_equal(p->o.npids, 1);
	assert_int_equal(p->o.pids[0], 2);
}

static void test_parse_size_plain_and_suffixes(void **state)
{
	uint64_t v = 0;

	(void)state;
	assert_int_equal(parse_size("4096", &v), 0);
	assert_int_equal(v, 4096);
	assert_int_equal(parse_size("3000", &v), 0);
	assert_int_equal(v, 3000);
	assert_int_equal(parse_size("8K", &v), 0);
	assert_int_equal(v, 8192);
	assert_int_equal(parse_size("64M", &v), 0);
	assert_int_equal(v, 64ull << 20);
	assert_int_equal(parse_size("1G", &v), 0);
	assert_int_equal(v, 1ull << 30);
	assert_int_equal(parse_size("3g", &v), 0);
	assert_int_equal(v, 3ull << 30);
	assert_int_equal(parse_size("0", &v), 0);
	assert_int_equal(v, 0);
}

static void test_parse_size_rejects_garbage(void **state)
{
	static const char *const bad[] = { "", "M", "-1", "-4K", "12KB", "1.5M",
					   "4T", "x", "99999999999999999999" };
	uint64_t v = 77;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (parse_size(bad[i], &v) != -EINVAL)
			fail_msg("parse_size(\"%s\") accepted", bad[i]);
		assert_int_equal(v, 77); /* left alone on failure */
	}
}

/* 2^44 + 16 mebibytes is 2^64 + 16 MiB: it must not wrap around to 16M. */
static void test_parse_size_rejects_overflow(void **state)
{
	uint64_t v = 77;

	(void)state;
	assert_int_equal(parse_size("17592186044432M", &v), -EINVAL);
	assert_int_equal(parse_size("17179869184G", &v), -EINVAL);
	assert_int_equal(v, 77);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_defaults_with_a_pid),
		cmocka_unit_test(test_output_short_and_long),
		cmocka_unit_test(test_flags_latency_quiet_verbose),
		cmocka_unit_test(test_pid_list_in_order),
		cmocka_unit_test(test_pid_options_add_up),
		cmocka_unit_test(test_pid_zero_rejected),
		cmocka_unit_test(test_pid_negative_rejected),
		cmocka_unit_test(test_pid_not_a_number_rejected),
		cmocka_unit_test(test_pid_above_int_max_rejected),
		cmocka_unit_test(test_pid_empty_fields_are_skipped),
		cmocka_unit_test(test_pid_sixty_four_accepted),
		cmocka_unit_test(test_pid_sixty_five_rejected),
		cmocka_unit_test(test_duration_valid),
		cmocka_unit_test(test_duration_invalid_rejected),
		cmocka_unit_test(test_pid_given_twice_rejected),
		cmocka_unit_test(test_ringbuf_size_power_of_two_accepted),
		cmocka_unit_test(test_ringbuf_size_not_power_of_two_rejected),
		cmocka_unit_test(test_ringbuf_size_below_4k_rejected),
		cmocka_unit_test(test_ringbuf_size_not_a_size_rejected),
		cmocka_unit_test(test_command_after_double_dash),
		cmocka_unit_test(test_command_without_double_dash_keeps_its_options),
		cmocka_unit_test(test_command_that_looks_like_an_option),
		cmocka_unit_test(test_pid_and_command_rejected),
		cmocka_unit_test(test_nothing_given_rejected),
		cmocka_unit_test(test_unknown_option_rejected),
		cmocka_unit_test(test_missing_value_rejected),
		cmocka_unit_test(test_help_returns_one_with_usage),
		cmocka_unit_test(test_repeated_parses_in_one_process),
		cmocka_unit_test(test_parse_after_help_inside_option_cluster),
		cmocka_unit_test(test_parse_after_unknown_option_inside_option_cluster),
		cmocka_unit_test(test_parse_size_plain_and_suffixes),
		cmocka_unit_test(test_parse_size_rejects_garbage),
		cmocka_unit_test(test_parse_size_rejects_overflow),
	};

	return cmocka_run_group_tests(tests, NULL, free_kept);
}
