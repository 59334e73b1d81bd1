/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Checks made before anything is attached; each failure says what to do.
 * Public, beside session.h: the front-ends call them before session__new,
 * on their one thread.
 */
#ifndef CORE_SESSION_PREFLIGHT_H
#define CORE_SESSION_PREFLIGHT_H

#include <stddef.h>
#include <sys/types.h>

struct schedule;
struct step_spec;

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
void preflight__undo_output(struct out_dir *d);

/*
 * The agent library for --cupti: CUPROBE_AGENT, or libcuprobe-agent.so
 * beside the cuprobe binary (or in .output/ or ../lib/cuprobe/ from it),
 * into buf. 0, or -errno when none can be read (nothing printed: whether
 * that is an error is the caller's to say).
 */
int preflight_agent(char *buf, size_t len);

/* What a recording command checks before its session starts (preflight__run). */
struct preflight_req {
	const pid_t *pids;		/* -p: each must name a process cuprobe may record */
	size_t npids;
	const struct step_spec *step;	/* --step (checked now when it names a file); NULL: none */
	const struct schedule *sched;	/* --schedule as given, NULL when not: warmup=0 warns */
	const char *out;		/* the output folder, made and checked last */
	/*
	 * NULL, or called once the other checks passed, before the folder is
	 * made: it may choose *out (compare's default folder) or refuse it.
	 * 0 or -errno, its message printed.
	 */
	int (*choose_out)(void *ctx, const char **out);
	void *ctx;
};

/*
 * The checks, in order, each failure said with what to do: privileges,
 * kernel BTF, the PIDs (before anything is made on disk), the step probe,
 * then the output folder (preflight_output into d). 0 or -errno.
 */
int preflight__run(const struct preflight_req *r, struct out_dir *d);

#endif /* CORE_SESSION_PREFLIGHT_H */
