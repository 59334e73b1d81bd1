// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/cmd/record_opts.c and compare_opts.c: `cuprobe record`
 * and `cuprobe compare` options (the grammars themselves: test_parse.c).
 * Each test parses a command line as main would pass it (argv[0] is "record"
 * or "compare"), with stdout and stderr caught so that the messages can be
 * checked too.
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
#include "cmd/compare_opts.h"
#include "cmd/record_opts.h"

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
	struct compare_opts c;	/* argv[0] "compare" */
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
	if (!strcmp(p->argv[0], "compare"))
		p->rc = compare_opts__parse(&p->c, p->argc, p->argv);
	else
		p->rc = record_opts__parse(&p->o, p->argc, p->argv);
	capture_end(cap, saved, p->out, sizeof(p->out));
	fclose(cap);
	return p->rc;
}

/* A new parse of cmd ("record" or "compare") and the arguments given, up to a NULL. */
static struct parsed *parse_argv(const char *cmd, const char *first, ...)
{
	struct parsed *p = keep(calloc(1, sizeof(*p)));
	const char *a;
	va_list ap;

	p->argv[p->argc++] = keep(strdup(cmd));
	va_start(ap, first);
	for (a = first; a; a = va_arg(ap, const char *)) {
		assert_true(p->argc < MAX_ARGS);
		p->argv[p->argc++] = keep(strdup(a));
	}
	va_end(ap);
	run_parse(p);
	return p;
}

#define PARSE(...) parse_argv("record", __VA_ARGS__, NULL)
#define PARSE_COMPARE(...) parse_argv("compare", __VA_ARGS__, NULL)

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

	/* The one duration grammar: a unit after the number wins. */
	p = PARSE("--duration", "10s", "-p", "1");
	assert_int_equal(p->rc, 0);
	assert_true(p->o.duration == 10.0);
	p = PARSE("--duration", "2m", "-p", "1");
	assert_int_equal(p->rc, 0);
	assert_true(p->o.duration == 120.0);
	p = PARSE("--duration", "250ms", "-p", "1");
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
	static const char *const bad[] = { "0", "-1", "abc", "10x", "10 s", "", "nan", "inf",
					   "1e30", "31700000", "0ms", "527041m" };

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
		{ "8192", 8192 }, { "8K", 8192 }, { "64M", 64ull << 20 },
		{ "1G", 1ull << 30 }, { "256k", 256ull << 10 }, { "2m", 2ull << 20 },
		{ "16MB", 16ull << 20 }, { "64KiB", 64ull << 10 }, { "0.5M", 512ull << 10 },
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

static void test_ringbuf_size_below_8k_rejected(void **state)
{
	(void)state;
	assert_rejected(PARSE("--ringbuf-size", "2048", "-p", "1"), "from 8K to 1G");
	/* A batch of launches (over 4 KiB) would never fit a 4K ring. */
	assert_rejected(PARSE("--ringbuf-size", "4K", "-p", "1"), "from 8K to 1G");
	assert_rejected(PARSE("--ringbuf-size", "1K", "-p", "1"), "from 8K to 1G");
	/* The map size is 32-bit: 4G would wrap to 0. */
	assert_rejected(PARSE("--ringbuf-size", "2G", "-p", "1"), "from 8K to 1G");
	assert_rejected(PARSE("--ringbuf-size", "4G", "-p", "1"), "from 8K to 1G");
}

static void test_ringbuf_size_not_a_size_rejected(void **state)
{
	(void)state;
	assert_rejected(PARSE("--ringbuf-size", "16X", "-p", "1"), "not a size");
	assert_rejected(PARSE("--ringbuf-size", "lots", "-p", "1"), "not a size");
	assert_rejected(PARSE("--ringbuf-size", "-4K", "-p", "1"), "not a size");
	/* Past 64 bits is still a size, and too big. */
	assert_rejected(PARSE("--ringbuf-size", "17179869184G", "-p", "1"), "from 8K to 1G");
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

/* "Was it given" is the setter's flag: the default's own value, given, counts. */
static void test_given_options_are_flags_not_defaults(void **state)
{
	struct parsed *p;

	(void)state;
	assert_rejected(PARSE("--cupti-wait", "5", "-p", "1"), "--cupti-wait needs --cupti");
	assert_rejected(PARSE("--cupti-wait", "5s", "-p", "1"), "--cupti-wait needs --cupti");
	assert_rejected(PARSE("--step-every", "1", "-p", "1"), "--step-every needs --step");
	p = PARSE("--cupti", "--cupti-wait", "5", "-p", "1");
	assert_int_equal(p->rc, 0);
	assert_true(p->o.has_cupti_wait);
	assert_true(p->o.cupti_wait == 5.0);
	p = PARSE("-p", "1");
	assert_int_equal(p->rc, 0);
	assert_false(p->o.has_cupti_wait);
	assert_false(p->o.has_output);
	assert_false(p->o.has_step_every);
}

static void test_flag_given_a_value_rejected(void **state)
{
	(void)state;
	assert_rejected(PARSE("--cupti=1", "-p", "1"), "--cupti takes no value");
	assert_rejected(PARSE("--quiet=yes", "-p", "1"), "--quiet takes no value");
}

static void test_every_message_names_the_command_and_help(void **state)
{
	struct parsed *p = PARSE("--step-every", "0", "-p", "1");

	(void)state;
	assert_rejected(p, "cuprobe record: --step-every: not a positive count");
	assert_non_null(strstr(p->out, "(see cuprobe record --help)\n"));
	/* One line. */
	assert_int_equal(strchr(p->out, '\n') + 1 - p->out, (long)strlen(p->out));
}

/* compare = record's shared options, parsed and checked by record's code, and its own. */
static void test_compare_takes_the_shared_options(void **state)
{
	struct parsed *p = PARSE_COMPARE("--stack", "-o", "out", "--step", "f", "--step-every", "2",
					 "--duration", "1m", "--ringbuf-size", "64KiB", "-q",
					 "--children", "-p", "3,4");

	(void)state;
	assert_int_equal(p->rc, 0);
	assert_true(p->c.r.stack);
	assert_true(p->c.r.has_output);
	assert_string_equal(p->c.r.output, "out");
	assert_true(p->c.r.has_step);
	assert_int_equal(p->c.r.step_every, 2);
	assert_true(p->c.r.duration == 60.0);
	assert_int_equal(p->c.r.ringbuf_bytes, 64 << 10);
	assert_true(p->c.r.quiet);
	assert_true(p->c.r.children);
	assert_int_equal(p->c.r.npids, 2);
	assert_int_equal(p->c.r.pids[1], 4);
	record_opts__free(&p->c.r);
}

static void test_compare_own_options(void **state)
{
	static const char *const want[] = { "ls", "-l", NULL };
	struct parsed *p = PARSE_COMPARE("--modes", "bpf,off", "--steps-per-mode", "7", "--rounds",
					 "3", "--skip-first", "0", "--slice", "250ms", "ls", "-l");

	(void)state;
	assert_int_equal(p->rc, 0);
	assert_int_equal(p->c.nmodes, 2);
	assert_int_equal(p->c.modes[0], MODE_BPF);
	assert_int_equal(p->c.modes[1], MODE_OFF);
	assert_int_equal(p->c.steps_per_mode, 7);
	assert_int_equal(p->c.rounds, 3);
	assert_int_equal(p->c.skip_first, 0);
	assert_true(p->c.has_slice);
	assert_int_equal(p->c.slice_ns, 250000000ull);
	assert_false(p->c.r.has_output);
	for (size_t i = 0; want[i]; i++)
		assert_string_equal(p->c.r.cmd[i], want[i]);

	/* A bare --slice counts milliseconds, as it always did. */
	p = PARSE_COMPARE("--slice", "100", "--", "true");
	assert_int_equal(p->rc, 0);
	assert_int_equal(p->c.slice_ns, 100000000ull);
	p = PARSE_COMPARE("-p", "1");
	assert_int_equal(p->rc, 0);
	assert_int_equal(p->c.nmodes, 3);
	assert_int_equal(p->c.steps_per_mode, 5);
	assert_int_equal(p->c.rounds, 2);
	assert_int_equal(p->c.slice_ns, 100000000ull);
}

static void test_compare_checks(void **state)
{
	struct parsed *p;

	(void)state;
	assert_rejected(PARSE_COMPARE("--modes", "off,bpf", "--cupti-wait", "5", "--", "true"),
			"--cupti-wait without the cupti mode");
	assert_int_equal(PARSE_COMPARE("--cupti-wait", "5", "--", "true")->rc, 0);
	assert_rejected(PARSE_COMPARE("--children", "--", "true"), "--children goes with -p");
	assert_rejected(PARSE_COMPARE("--step-every", "2", "--", "true"), "--step-every needs --step");
	assert_rejected(PARSE_COMPARE("--ringbuf-size", "3000", "--", "true"), "power of two");
	assert_rejected(PARSE_COMPARE("--rounds", "1001", "--", "true"), "--rounds: not a count");
	assert_rejected(PARSE_COMPARE("--rounds", "02", "--", "true"), "--rounds: not a count");
	assert_rejected(PARSE_COMPARE("--slice", "0", "--", "true"), "--slice: not a duration");
	p = PARSE_COMPARE("--slice", "50", "--step", "f", "--", "true");
	assert_rejected(p, "--slice with --step");
	record_opts__free(&p->c.r);
	assert_rejected(PARSE_COMPARE("--modes", "off,bpf"), "nothing to compare");
	/* record's own options are not compare's. */
	assert_rejected(PARSE_COMPARE("--latency", "--", "true"), "unknown option --latency");
	assert_rejected(PARSE_COMPARE("--schedule", "wait=1,warmup=1,active=1", "--", "true"),
			"unknown option --schedule");
	p = PARSE_COMPARE("-p", "abc");
	assert_rejected(p, "cuprobe compare: -p: not a process id");
	assert_non_null(strstr(p->out, "(see cuprobe compare --help)"));
}

static void test_compare_help(void **state)
{
	struct parsed *p = PARSE_COMPARE("--help");

	(void)state;
	assert_int_equal(p->rc, 1);
	assert_non_null(strstr(p->out, "usage: cuprobe compare"));
	assert_non_null(strstr(p->out, "--ringbuf-size SIZE"));
	assert_non_null(strstr(p->out, "--modes LIST"));
	assert_null(strstr(p->out, "--schedule"));
	assert_null(strstr(p->out, "--latency "));
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
		cmocka_unit_test(test_ringbuf_size_below_8k_rejected),
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
		cmocka_unit_test(test_given_options_are_flags_not_defaults),
		cmocka_unit_test(test_flag_given_a_value_rejected),
		cmocka_unit_test(test_every_message_names_the_command_and_help),
		cmocka_unit_test(test_compare_takes_the_shared_options),
		cmocka_unit_test(test_compare_own_options),
		cmocka_unit_test(test_compare_checks),
		cmocka_unit_test(test_compare_help),
	};

	return cmocka_run_group_tests(tests, NULL, free_kept);
}
