/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef CMD_COMPARE_CMD_H
#define CMD_COMPARE_CMD_H

/* `cuprobe compare`; argv[0] is "compare". Returns the exit status. */
int compare_main(int argc, char **argv);

#endif /* CMD_COMPARE_CMD_H */
