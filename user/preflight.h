/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Checks made before anything is attached; each failure says what to do. */
#ifndef PREFLIGHT_H
#define PREFLIGHT_H

/* root, or CAP_BPF and CAP_PERFMON. 0 or -EPERM (message printed). */
int preflight_privileges(void);
/* Kernel BTF at /sys/kernel/btf/vmlinux. 0 or -ENOENT (message printed). */
int preflight_btf(void);
/*
 * Makes OUT (and its parents), checks that it can be written, and returns in
 * *run_base the first free run_<k> index: earlier runs are never touched.
 */
int preflight_output(const char *out, long *run_base);

#endif /* PREFLIGHT_H */
