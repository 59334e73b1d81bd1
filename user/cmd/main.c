// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include <string.h>
#include "compare_cmd.h"
#include "record.h"
#include "report.h"

static void usage(FILE *f)
{
	fputs("usage: cuprobe <command> [OPTIONS]\n"
	      "\n"
	      "  record   profile CUDA launches of a command or running processes\n"
	      "  report   summarise traces written by record\n"
	      "  compare  the low-overhead view against full CUPTI timings, with what each costs\n"
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
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	fprintf(stderr, "cuprobe: unknown command '%s': use record, report or compare "
		"(cuprobe --help)\n", argv[1]);
	return 2;
}
