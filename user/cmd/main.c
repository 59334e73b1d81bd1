// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cuprobe's entry: one table of commands, as perf's commands[] and bpftool's
 * cmds[], from which the dispatch, the usage listing and the unknown-command
 * message are all made. A name must match whole: no prefixes.
 */
#include <stdio.h>
#include <string.h>
#include "cmd/commands.h"
#include "version.h"

static int help_main(int argc, char **argv);
static int version_main(int argc, char **argv);

/* A command: its entry, a one-line summary, and what the static build lacks for it. */
struct command {
	const char *name;
	int (*main)(int argc, char **argv);
	const char *summary;
	/* The library STATIC=1 cannot link for it, NULL when the static build has it. */
	const char *static_lacks;
};

/* Every command, once, in the order --help lists them. */
static const struct command commands[] = {
	{ .name = "record", .main = record_main,
	  .summary = "profile CUDA launches of a command or running processes" },
	{ .name = "report", .main = report_main, .summary = "summarise traces written by record" },
	{ .name = "compare", .main = compare_main,
	  .summary = "the low-overhead view against full CUPTI timings, with what each costs" },
	{ .name = "daemon", .main = daemon_main, .static_lacks = "libmicrohttpd",
	  .summary = "sample every CUDA process on the host, serve Prometheus metrics" },
	{ .name = "capture", .main = capture_main,
	  .summary = "ask a running daemon for the next steps of a process" },
	{ .name = "help", .main = help_main,
	  .summary = "this list, or a command's options (help COMMAND)" },
	{ .name = "version", .main = version_main,
	  .summary = "the version, and the git revision it was built from (--version)" },
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(name, commands[i].name))
			return &commands[i];
	return NULL;
}

/* What the static build lacks for a command it left out (its entry is NULL). */
static const char *lacks(const struct command *c)
{
	return c->static_lacks ? c->static_lacks : "a library it needs";
}

/* "cuprobe 0.1.0 (git 6bfe812a1b2c)", or "cuprobe 0.1.0" built outside a git checkout. */
static void print_version(FILE *f)
{
	fputs("cuprobe " CUPROBE_VERSION, f);
	if (CUPROBE_GIT_REV[0])
		fputs(" (git " CUPROBE_GIT_REV ")", f);
	fputc('\n', f);
}

static void usage(FILE *f)
{
	const struct command *c;

	fputs("usage: cuprobe <command> [OPTIONS]\n\n", f);
	for (c = commands; c < commands + NCOMMANDS; c++)
		if (c->main)
			fprintf(f, "  %-8s %s\n", c->name, c->summary);
		else
			fprintf(f, "  %-8s not in this build (the static build lacks %s)\n", c->name,
				lacks(c));
	fputs("\ncuprobe <command> --help shows a command's options.\n", f);
	print_version(f);
}

/* "cuprobe: unknown command 'X': use record, report, ... or help (cuprobe --help)" */
static int unknown_command(const char *name)
{
	fprintf(stderr, "cuprobe: unknown command '%s': use ", name);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(stderr, "%s%s", i == 0 ? "" : i + 1 == NCOMMANDS ? " or " : ", ",
			commands[i].name);
	fputs(" (cuprobe --help)\n", stderr);
	return 2;
}

/* A weak entry the static build left out: said, not crashed. */
static int not_built(const struct command *c)
{
	fprintf(stderr, "cuprobe %s: this cuprobe was built without the %s "
		"(the static build: %s cannot be linked statically here); "
		"use the dynamic build (make) or the packaged binary\n",
		c->name, c->name, lacks(c));
	return 1;
}

static int run_command(const struct command *c, int argc, char **argv)
{
	return c->main ? c->main(argc, argv) : not_built(c);
}

/* `cuprobe version` and `cuprobe --version`: on stdout, as perf and git print theirs. */
static int version_main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	print_version(stdout);
	return 0;
}

/* `cuprobe help [COMMAND]`: the list on stdout, or COMMAND --help. */
static int help_main(int argc, char **argv)
{
	const struct command *c;
	char opt[] = "--help";
	char *args[] = { argc < 2 ? NULL : argv[1], opt, NULL };

	if (argc < 2 || !strcmp(argv[1], "help") || !strcmp(argv[1], "-h") ||
	    !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	c = find_command(argv[1]);
	return c ? run_command(c, 2, args) : unknown_command(argv[1]);
}

int main(int argc, char **argv)
{
	const struct command *c;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))
		return help_main(1, argv);
	if (!strcmp(argv[1], "--version"))
		return version_main(1, argv);
	c = find_command(argv[1]);
	return c ? run_command(c, argc - 1, argv + 1) : unknown_command(argv[1]);
}
