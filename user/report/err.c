// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cuprobe report's messages, for the command (cmd/report.c) and the readers alike. */
#include <stdarg.h>
#include <stdio.h>
#include "report/err.h"

void report_err(const char *fmt, ...)
{
	va_list ap;

	fputs("cuprobe report: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
