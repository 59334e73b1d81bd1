// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include <string.h>
#include "cmd/compare_cmd.h"
#include "cmd/daemon_cmd.h"
#include "cmd/record.h"
#include "report/report.h"

/* The static build has no daemon (daemon_main is weak): said, not crashed. */
static int daemon_cmd(int argc, char **argv)
{
	if (!daemon_main) {
		fprintf(stderr, "cuprobe daemon: this cuprobe was built without the daemon "
			"(the static build: libmicrohttpd cannot be linked statically here); "
			"use the dynamic build (make) or the packaged binary\n");
		return 1;
	}
	return daemon_main(argc, argv);
}

/* Every command, once: dispatch, --help and the unknown-command message read it. */
static const struct command {
	const char *name;
	int (*main)(int argc, char **argv);
	const char *help;
} commands[] = {
	{ "record", record_main, "profile CUDA launches of a command or running processes" },
	{ "report", report_main, "summarise traces written by record" },
	{ "compare", compare_main,
	  "the low-overhead view against full CUPTI timings, with what each costs" },
	{ "daemon", daemon_cmd, "sample every CUDA process on the host, serve Prometheus metrics" },
	{ "capture", capture_main, "ask a running daemon for the next steps of a process" },
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	fputs("usage: cuprobe <command> [OPTIONS]\n\n", f);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %-8s %s\n", commands[i].name, commands[i].help);
	fputs("\ncuprobe <command> --help shows a command's options.\n", f);
}

/* "record, report, compare, daemon or capture" */
static void command_list(FILE *f)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(f, "%s%s", i == 0 ? "" : i + 1 == NCOMMANDS ? " or " : ", ",
			commands[i].name);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "cuprobe: unknown command '%s': use ", argv[1]);
	command_list(stderr);
	fputs(" (cuprobe --help)\n", stderr);
	return 2;
}
