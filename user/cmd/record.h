/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef CMD_RECORD_H
#define CMD_RECORD_H

/* `cuprobe record`; argv[0] is "record". Returns the exit status. */
int record_main(int argc, char **argv);

#endif /* CMD_RECORD_H */
