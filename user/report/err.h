/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef REPORT_ERR_H
#define REPORT_ERR_H

/*
 * Every message of cuprobe report reads "cuprobe report: <problem>: <what to
 * do>" on stderr, warnings "cuprobe report: warning: ..." (report/cmd.c).
 */
void report_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* REPORT_ERR_H */
