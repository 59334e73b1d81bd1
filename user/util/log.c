// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <pthread.h>
#include <stdio.h>
#include <bpf/libbpf.h>
#include "util/log.h"

int log_level = LOG_INFO;
static bool log_status_line;
/* Any thread may log: one message at a time, and the status line is shared state. */
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;

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
	pthread_mutex_lock(&log_mu);
	if (log_status_line) {
		fputs("\r\033[K", stderr);
		log_status_line = false;
	}
	fputs(prefix[lvl], stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	pthread_mutex_unlock(&log_mu);
}

void log_status(const char *fmt, ...)
{
	va_list ap;

	if (log_level < LOG_INFO)
		return;
	pthread_mutex_lock(&log_mu);
	fputs("\r\033[K", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	log_status_line = true;
	pthread_mutex_unlock(&log_mu);
}

void log_status_end(void)
{
	pthread_mutex_lock(&log_mu);
	if (log_status_line)
		fputc('\n', stderr);
	log_status_line = false;
	pthread_mutex_unlock(&log_mu);
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
