// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "core/cycles/proc_cycles.h"
#include "core/proc/procmaps.h"
#include "core/session/target.h"

/* include/linux/sched.h: the task is a kernel thread. */
#define PF_KTHREAD 0x00200000u

static void read_identity_env(struct target *t)
{
	char path[64], buf[1 << 16];
	ssize_t n;
	int fd;

	t->rank = t->world_size = -1;
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)t->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	/* torchrun's names first; Open MPI's, PMI's and Slurm's where it left none. */
	for (char *p = buf; p < buf + n; p += strlen(p) + 1) {
		if (!strncmp(p, "RANK=", 5))
			t->rank = atoi(p + 5);
		else if (!strncmp(p, "WORLD_SIZE=", 11))
			t->world_size = atoi(p + 11);
	}
	for (char *p = buf; p < buf + n; p += strlen(p) + 1) {
		static const char *const ranks[] = { "OMPI_COMM_WORLD_RANK=", "PMI_RANK=",
						      "SLURM_PROCID=" };
		static const char *const sizes[] = { "OMPI_COMM_WORLD_SIZE=", "PMI_SIZE=",
						      "SLURM_NTASKS=" };

		for (size_t i = 0; i < 3; i++) {
			if (t->rank < 0 && !strncmp(p, ranks[i], strlen(ranks[i])))
				t->rank = atoi(p + strlen(ranks[i]));
			if (t->world_size < 0 && !strncmp(p, sizes[i], strlen(sizes[i])))
				t->world_size = atoi(p + strlen(sizes[i]));
		}
	}
}

void target__refresh_identity(struct target *t)
{
	proc_comm(t->pid, t->comm, sizeof(t->comm));
	read_identity_env(t);
	if (t->plan.identity) {
		t->rank = t->plan.rank;
		t->world_size = t->plan.world_size;
	}
}

/* The thread group and kernel flags of a task, from /proc/PID/status and stat. */
static int task_facts(pid_t pid, pid_t *tgid, unsigned long *flags)
{
	char path[64], line[256], stat[1024], *p;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	*tgid = 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", tgid) == 1)
			break;
	fclose(f);
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fgets(stat, sizeof(stat), f) ? 1 : 0;
	fclose(f);
	/* After the command's name in parentheses: state, ppid, pgrp, session, tty, tpgid, flags. */
	p = n ? strrchr(stat, ')') : NULL;
	if (!p || sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %lu", flags) != 1)
		return -EIO;
	return 0;
}

int target_check_pid(pid_t pid, char *msg, size_t len)
{
	char comm[64] = "?";
	unsigned long flags = 0;
	pid_t tgid = 0;
	int err;

	if (pid == getpid()) {
		snprintf(msg, len, "process %d is cuprobe itself: give the PID of a CUDA process", pid);
		return -EINVAL;
	}
	err = task_facts(pid, &tgid, &flags);
	if (err == -ENOENT || err == -ESRCH) {
		snprintf(msg, len, "no process with PID %d: check the PID (ps -p %d)", pid, pid);
		return -ESRCH;
	}
	if (err) {
		snprintf(msg, len, "cannot read /proc/%d: %s", pid, strerror(-err));
		return err;
	}
	proc_comm(pid, comm, sizeof(comm));
	if (flags & PF_KTHREAD) {
		snprintf(msg, len, "PID %d (%s) is a kernel thread: it runs no user code to probe; "
			 "give the PID of a CUDA process", pid, comm);
		return -EINVAL;
	}
	if (tgid && tgid != pid) {
		snprintf(msg, len, "PID %d (%s) is a thread of process %d: give -p %d", pid, comm,
			 tgid, tgid);
		return -EINVAL;
	}
	return 0;
}

void target__view(const struct target *t, struct session_target *v)
{
	*v = (struct session_target){
		.pid = t->pid, .rank = t->rank, .agent = t->facts.agent_found,
	};
}

int target__init(struct target *t, pid_t pid, bool child)
{
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->child = child;
	t->pidfd = syscall(SYS_pidfd_open, pid, 0);
	if (t->pidfd < 0)
		return -errno;
	target__refresh_identity(t);
	return 0;
}

void target__release(struct target *t)
{
	if (t->pidfd >= 0)
		close(t->pidfd);
	t->pidfd = -1;
}

void target__cycle_proc(void *ctx, const struct target *t, struct cycle_proc *p)
{
	(void)ctx;
	*p = (struct cycle_proc){
		.pid = t->pid, .comm = t->comm, .rank = t->rank, .world_size = t->world_size,
		.agent_found = t->facts.agent_found,
		.no_driver = t->facts.has_launch_apis && !t->facts.has_driver,
		.attaching = t->attaching, .warm_step = t->warm_step, .warm_ts = t->warm_ts,
	};
}
