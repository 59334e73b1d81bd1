/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef CMD_DAEMON_CMD_H
#define CMD_DAEMON_CMD_H

/* cuprobe daemon: weak, so that a build without libmicrohttpd (STATIC=1) links and says so. */
int daemon_main(int argc, char **argv) __attribute__((weak));
/* cuprobe capture --daemon ADDR --pid PID --steps N: a client of the daemon's /capture. */
int capture_main(int argc, char **argv);

#endif /* CMD_DAEMON_CMD_H */
