/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * GET /trace's file (docs/daemon.md, "Job captures from the client"): a trace
 * the daemon wrote under its output folder, opened for reading without ever
 * following a link. The name is relative to the output folder (run_17/F) or
 * absolute under it (OUT/run_17/F); each component is opened from the
 * folder's descriptor with O_NOFOLLOW, so that a link planted anywhere on the
 * way, a "..", a FIFO, a device or a file another user owns is refused. Pure:
 * no state of its own, called on the daemon's thread.
 */
#ifndef DAEMON_TRACE_GET_H
#define DAEMON_TRACE_GET_H

#include <stddef.h>
#include <stdint.h>

/*
 * Opens name under dirfd (the folder out, as the user named it). The
 * descriptor (read-only, close-on-exec) with *size its length, or -errno
 * with why saying what is refused: -EINVAL a name that is not a plain
 * relative path under out (400), -ENOENT nothing there (404), -EACCES a
 * link, a folder, a FIFO or anything not a regular file of ours (403).
 */
int trace_get__open(int dirfd, const char *out, const char *name, uint64_t *size, char *why,
		    size_t len);

#endif /* DAEMON_TRACE_GET_H */
