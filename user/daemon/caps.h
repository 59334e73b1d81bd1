/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
#ifndef CUPROBE_DAEMON_CAPS_H
#define CUPROBE_DAEMON_CAPS_H

#include <stddef.h>
#include <stdint.h>

/*
 * The capabilities the daemon needs, as a container grants them instead of
 * privileged (deploy/daemonset.yaml): CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN)
 * to load and attach its programs, CAP_SYS_PTRACE to read other processes'
 * memory and their files under /proc/PID/root. CAP_CHECKPOINT_RESTORE (or
 * CAP_SYS_ADMIN) and CAP_DAC_READ_SEARCH (or CAP_DAC_OVERRIDE) let it open a
 * target's mapped files through /proc/PID/map_files (files deleted since they
 * were mapped, non-root targets); without them it goes on by their names.
 */

/* Bit n of eff is capability n (CapEff). 0 when the needed ones are there; else
 * -EPERM and, in buf, the missing ones and why ("CAP_SYS_PTRACE (...)"). */
int daemon_caps__missing(uint64_t eff, char *buf, size_t len);
/* What the optional ones would add, missing from eff, in buf ("" when none). */
void daemon_caps__degraded(uint64_t eff, char *buf, size_t len);
/* This process's effective set (capget); 0, or -errno. */
int daemon_caps__effective(uint64_t *eff);

#endif
