/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * `cuprobe report`'s entry, report_main, is declared with every command's in
 * cmd/commands.h. This header only includes it, for the unit tests that still
 * include it by this name (tests/unit/test_report.c, test_report_stream.c).
 */
#ifndef REPORT_REPORT_H
#define REPORT_REPORT_H

#include "cmd/commands.h"

#endif /* REPORT_REPORT_H */
