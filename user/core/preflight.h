/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Checks made before anything is attached; each failure says what to do. */
#ifndef PREFLIGHT_H
#define PREFLIGHT_H

/* root, or CAP_BPF and CAP_PERFMON. 0 or -EPERM (message printed). */
int preflight_privileges(void);
/* Kernel BTF at /sys/kernel/btf/vmlinux. 0 or -ENOENT (message printed). */
int preflight_btf(void);
/* The output folder, and how many of its folders this run made. */
struct out_dir {
	const char *path;
	long run_base;		/* the first free run_<k>: earlier runs are never touched */
	unsigned int made;	/* of path's last components (safe_file__make_dirs) */
};

/*
 * Makes OUT (and its parents), checks that it can be written, and finds the
 * first free run_<k> index. 0 or -errno (message printed).
 */
int preflight_output(const char *out, struct out_dir *d);
/* Removes the folders preflight_output made, if they are still empty. */
void out_dir__undo(struct out_dir *d);

#endif /* PREFLIGHT_H */
