/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* One logging module: leveled messages on stderr, libbpf's output behind -v. */
#ifndef UTIL_LOG_H
#define UTIL_LOG_H

#include <stdarg.h>
#include <stdbool.h>

enum log_level { LOG_QUIET = -1, LOG_ERROR, LOG_WARN, LOG_INFO, LOG_DEBUG };

extern int log_level;

/* Safe from any thread. */
void log_msg(enum log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A status line drawn in place on stderr (a terminal): the next message starts a fresh line. */
void log_status(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Ends a status line, if one is drawn. */
void log_status_end(void);
/* Routes libbpf's messages through log_msg; warnings only with -v. */
void log_setup_libbpf(void);

#define p_err(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define p_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define p_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define p_dbg(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif /* UTIL_LOG_H */
