/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The report's output formats, one file each. A writer reads the finished
 * report and its sorted sections; it returns 0 or -errno (a write that
 * failed, or no memory).
 */
#ifndef REPORT_OUTPUT_H
#define REPORT_OUTPUT_H

#include <stdio.h>
#include "report/model.h"

int report_text__write(FILE *f, const struct report *r, const struct section_rows *secs);
int report_json__write(FILE *f, const struct report *r, const struct section_rows *secs);
int report_csv__write(FILE *f, const struct report *r, const struct section_rows *secs);

#endif /* REPORT_OUTPUT_H */
