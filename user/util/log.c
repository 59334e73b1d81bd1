// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <time.h>
#include <bpf/libbpf.h>
#include "util/log.h"

int log_level = LOG_INFO;
static bool log_status_line;
/* Any thread may log: one message at a time, and the status line is shared state. */
static pthread_mutex_t log_mu = PTHREAD_MUTEX_INITIALIZER;

/*
 * Every write to stderr holds log_mu, with SIGPIPE blocked on the writing
 * thread. A stderr whose reader is gone (`cuprobe record -v ... 2>&1 | head`)
 * then makes a message fail instead of raising SIGPIPE, whose default action
 * would end the recording and lose it; the SIGPIPE a write raised is taken
 * back before the mask is restored. Per thread and per message, so that no
 * disposition or mask is left for a command cuprobe starts to inherit.
 */
static void log_lock(sigset_t *old)
{
	sigset_t pipe;

	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	pthread_mutex_lock(&log_mu);
	pthread_sigmask(SIG_BLOCK, &pipe, old);
}

static void log_unlock(const sigset_t *old)
{
	static const struct timespec now = { 0, 0 };
	sigset_t pipe, pending;

	sigemptyset(&pipe);
	sigaddset(&pipe, SIGPIPE);
	if (!sigismember(old, SIGPIPE) && !sigpending(&pending) && sigismember(&pending, SIGPIPE))
		sigtimedwait(&pipe, NULL, &now);
	pthread_sigmask(SIG_SETMASK, old, NULL);
	pthread_mutex_unlock(&log_mu);
}

void log_msg(enum log_level lvl, const char *fmt, ...)
{
	static const char *const prefix[] = {
		[LOG_ERROR] = "cuprobe: error: ",
		[LOG_WARN] = "cuprobe: warning: ",
		[LOG_INFO] = "cuprobe: ",
		[LOG_DEBUG] = "cuprobe: debug: ",
	};
	sigset_t old;
	va_list ap;

	if (lvl > log_level && lvl != LOG_ERROR)
		return;
	log_lock(&old);
	if (log_status_line) {
		fputs("\r\033[K", stderr);
		log_status_line = false;
	}
	fputs(prefix[lvl], stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	log_unlock(&old);
}

void log_status(const char *fmt, ...)
{
	sigset_t old;
	va_list ap;

	if (log_level < LOG_INFO)
		return;
	log_lock(&old);
	fputs("\r\033[K", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	log_status_line = true;
	log_unlock(&old);
}

void log_status_end(void)
{
	sigset_t old;

	log_lock(&old);
	if (log_status_line)
		fputc('\n', stderr);
	log_status_line = false;
	log_unlock(&old);
}

static int libbpf_print(enum libbpf_print_level lvl, const char *fmt, va_list ap)
{
	sigset_t old;
	int n;

	/* cuprobe says itself what failed and what to do; -v adds libbpf's view. */
	if (log_level < LOG_DEBUG || lvl == LIBBPF_DEBUG)
		return 0;
	log_lock(&old);
	n = vfprintf(stderr, fmt, ap);
	log_unlock(&old);
	return n;
}

void log_setup_libbpf(void)
{
	libbpf_set_print(libbpf_print);
}
