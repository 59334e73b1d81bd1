// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include <string.h>
#include "compare_cmd.h"
#include "daemon_cmd.h"
#include "record.h"
#include "report.h"

static void usage(FILE *f)
{
	fputs("usage: cuprobe <command> [OPTIONS]\n"
	      "\n"
	      "  record   profile CUDA launches of a command or running processes\n"
	      "  report   summarise traces written by record\n"
	      "  compare  the low-overhead view against full CUPTI timings, with what each costs\n"
	      "  daemon   sample every CUDA process on the host, serve Prometheus metrics\n"
	      "  capture  ask a running daemon for the next steps of a process\n"
	      "\n"
	      "cuprobe <command> --help shows a command's options.\n",
	      f);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "record"))
		return record_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "report"))
		return report_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "compare"))
		return compare_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "daemon")) {
		if (!daemon_main) {
			fprintf(stderr, "cuprobe daemon: this cuprobe was built without the daemon "
				"(the static build: libmicrohttpd cannot be linked statically here); "
				"use the dynamic build (make) or the packaged binary\n");
			return 1;
		}
		return daemon_main(argc - 1, argv + 1);
	}
	if (!strcmp(argv[1], "capture"))
		return capture_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "cuprobe: unknown command '%s': use record, report or compare "
		"(cuprobe --help)\n", argv[1]);
	return 2;
}
