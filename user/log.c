// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdio.h>
#include <bpf/libbpf.h>
#include "log.h"

int log_level = LOG_INFO;
bool log_status_line;

void log_msg(enum log_level lvl, const char *fmt, ...)
{
	static const char *const prefix[] = {
		[LOG_ERROR] = "cuprobe: error: ",
		[LOG_WARN] = "cuprobe: warning: ",
		[LOG_INFO] = "cuprobe: ",
		[LOG_DEBUG] = "cuprobe: debug: ",
	};
	va_list ap;

	if (lvl > log_level && lvl != LOG_ERROR)
		return;
	if (log_status_line) {
		fputs("\r\033[K", stderr);
		log_status_line = false;
	}
	fputs(prefix[lvl], stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static int libbpf_print(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	/* cuprobe says itself what failed and what to do; -v adds libbpf's view. */
	if (log_level < LOG_DEBUG || lvl == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

void log_setup_libbpf(void)
{
	libbpf_set_print(libbpf_print);
}
