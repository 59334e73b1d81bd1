/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The trace files that the PATHs given to cuprobe report name. */
#ifndef REPORT_WALK_H
#define REPORT_WALK_H

#include "util/vec.h"

/*
 * Appends path to paths (a vec of char *, owned), or the *.pt.trace.json
 * files under it, at any depth and sorted, when it is a folder. What is
 * neither a folder nor a regular file (a FIFO, a device) is refused, never
 * opened. 0, or -errno once reported.
 */
int walk__expand(const char *path, struct vec *paths);
/* Frees the paths and the vector's storage. */
void walk__free(struct vec *paths);

#endif /* REPORT_WALK_H */
