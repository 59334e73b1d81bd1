/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* `cuprobe report`: launch counts summarised over Kineto trace files. */
#ifndef REPORT_REPORT_H
#define REPORT_REPORT_H

/*
 * Runs `cuprobe report`; argv[0] is "report". Returns the process exit code:
 * 0 on success, 1 when a trace cannot be read or the report not written,
 * 2 on a usage error.
 */
int report_main(int argc, char **argv);

#endif /* REPORT_REPORT_H */
