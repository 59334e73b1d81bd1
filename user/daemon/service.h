/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cuprobe daemon: finds every CUDA process on the host (a /proc scan at
 * start, then the exec events of a host-wide BPF watch), samples short
 * windows of each within a CPU budget, keeps their traces, and serves
 * Prometheus metrics and on-demand captures over HTTP. All of its state is
 * owned by the thread that runs service__run; the HTTP server's threads send
 * it messages (http.h).
 */
#ifndef DAEMON_SERVICE_H
#define DAEMON_SERVICE_H

struct dconf;
struct webconf;

/*
 * Runs until SIGTERM or SIGINT. conf_path (may be NULL) is read again on
 * SIGHUP, then argv (the command line's settings, which win) applied over
 * it by reparse. web (NULL: none) is the HTTP server's TLS and
 * authentication, read at start only. Returns the exit code.
 */
int service__run(const struct dconf *conf, const struct webconf *web, const char *conf_path,
		 int (*reparse)(struct dconf *c, void *arg), void *arg);

#endif /* DAEMON_SERVICE_H */
