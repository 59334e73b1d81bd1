/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef RECORD_H
#define RECORD_H

#include <stddef.h>

/* `cuprobe record`; argv[0] is "record". Returns the exit status. */
int record_main(int argc, char **argv);

struct step_spec;
/* Shared with compare: the agent library a command loads (0 or -ENOENT), */
int find_agent(char *buf, size_t len);
/* and a step probe in a named file, checked before anything starts (0 or -errno, printed). */
int preflight_step_spec(const struct step_spec *st);

#endif /* RECORD_H */
