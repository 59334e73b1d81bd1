/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What the daemon learns of a process from /proc: whether it maps a CUDA
 * runtime or driver (and cuprobe's agent), its names, its cgroup and the
 * container that cgroup names, and the CPU time it has used.
 */
#ifndef DAEMON_PROCINFO_H
#define DAEMON_PROCINFO_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct procinfo {
	char comm[64];
	char exe[PATH_MAX];	/* "" when unreadable */
	char cgroup[512];	/* the cgroup v2 path, "" when unknown */
	char container[80];	/* a container id found in the cgroup path, "" when none */
	bool cuda;		/* maps libcudart or libcuda */
	bool agent;		/* maps libcuprobe-agent.so */
	bool torch;		/* maps PyTorch's libtorch_cpu.so */
	bool torch_deps;	/* maps libtorch_global_deps.so, the first of `import torch` */
	uint64_t start_ticks;	/* /proc/PID/stat starttime: tells a reused pid */
};

/* 0, or -ESRCH when the process is gone (or a kernel thread). */
int procinfo__read(pid_t pid, struct procinfo *pi);
/*
 * Whether it is ready to sample: it maps CUDA, and is not in the middle of
 * `import torch`, which maps CUDA (through libtorch_global_deps.so) about
 * half a second before libtorch_cpu.so, its step's library.
 */
bool procinfo__ready(const struct procinfo *pi);
/*
 * The same from its maps alone: 1 (ready), 0 (no CUDA), PROCINFO_IMPORTING_TORCH
 * (CUDA, in the middle of `import torch`), or -ESRCH.
 */
int procinfo__cuda_ready(pid_t pid);
#define PROCINFO_IMPORTING_TORCH 2
/* The container id in a cgroup path (docker, containerd, cri-o, podman), or "". */
void procinfo__container(const char *cgroup, char *buf, size_t len);
/* The mount table procinfo__cgroup_path reads: the daemon's own. */
#define PROCINFO_MOUNTINFO "/proc/self/mountinfo"
/*
 * A --cgroup as /proc/PID/cgroup names it: arg is a cgroup's path (/x), or
 * its folder on a cgroup2 mount (/sys/fs/cgroup/x, /sys/fs/cgroup/unified/x
 * on a hybrid host), the mounts read from mountinfo (cgroup v1 ones where
 * there is no cgroup2). out gets /x, without a trailing '/'. 0, or -ENOENT
 * with err saying that there is no such cgroup and where they are; -ENODEV
 * where no cgroup file system is mounted (out is arg, unchecked; err says so).
 */
int procinfo__cgroup_path(const char *mountinfo, const char *arg, char *out, size_t len,
			  char *err, size_t elen);
/* Whether a process's cgroup path is the cgroup in, or under it. */
bool procinfo__in_cgroup(const char *cgroup, const char *in);
/* CPU time the process has used, in ns. 0 or -ESRCH. */
int procinfo__cpu_ns(pid_t pid, uint64_t *ns);

#endif /* DAEMON_PROCINFO_H */
