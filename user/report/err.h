/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef REPORT_ERR_H
#define REPORT_ERR_H

/*
 * Every message of cuprobe report reads "cuprobe report: <problem>: <what to
 * do>" on stderr, warnings "cuprobe report: warning: ..." (report/err.c).
 */
void report_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * What to do when a trace or its folder may not be read (EACCES): traces are
 * private to whoever recorded them (0600 in 0700 run folders).
 */
#define REPORT_PRIVATE_FIX                                                                      \
	"traces are private to the user who recorded them (0600 in 0700 folders): run "         \
	"cuprobe report as that user (sudo cuprobe report ...), or chown the folder"

#endif /* REPORT_ERR_H */
