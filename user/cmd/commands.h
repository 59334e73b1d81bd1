/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The entry of each cuprobe command, one file each in user/cmd/; main.c's
 * commands[] table names them. Each runs on the process's main thread, is
 * called once with argv[0] the command's name, and returns the process's
 * exit status: 0 on success (and after --help), 2 on a usage error, 1 on
 * any other failure; record gives a command it ran's own status.
 */
#ifndef CMD_COMMANDS_H
#define CMD_COMMANDS_H

/* `cuprobe record`: profiles a command or running processes (cmd/record.c). */
int record_main(int argc, char **argv);
/* `cuprobe report`: summarises traces (cmd/report.c); 1 when a trace cannot be read. */
int report_main(int argc, char **argv);
/* `cuprobe compare`: the modes against each other in one run (cmd/compare.c). */
int compare_main(int argc, char **argv);
/*
 * `cuprobe daemon` (cmd/daemon.c): weak, because the static build (STATIC=1)
 * leaves the daemon out (libmicrohttpd does not link statically); there it
 * is NULL, and main.c says so.
 */
int daemon_main(int argc, char **argv) __attribute__((weak));
/* `cuprobe capture`: a client of a running daemon's /capture (cmd/capture.c). */
int capture_main(int argc, char **argv);

#endif /* CMD_COMMANDS_H */
