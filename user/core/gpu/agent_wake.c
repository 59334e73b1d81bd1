// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include "agent.h"
#include "core/gpu/agent_wake.h"
#include "core/proc/remote.h"

#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

/* The agent's pid as it sees it: the last NSpid of /proc/PID/status (pid namespaces). */
static pid_t ns_pid(pid_t pid)
{
	char path[64], line[256];
	pid_t last = pid;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return pid;
	while (fgets(line, sizeof(line), f)) {
		char *p, *end;

		if (strncmp(line, "NSpid:", 6))
			continue;
		for (p = line + 6;; p = end) {
			long v = strtol(p, &end, 10);

			if (end == p)
				break;
			last = (pid_t)v;
		}
		break;
	}
	fclose(f);
	return last;
}

static bool is_eventfd(int fd)
{
	char path[64], target[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = 0;
	return !strcmp(target, "anon_inode:[eventfd]");
}

static int take_fd(pid_t pid, const char *agent_path)
{
	struct agent_wake w;
	uint64_t value, addr;
	int type, pidfd, fd, err;

	err = remote_elf_symbol(agent_path, CUPROBE_AGENT_WAKE_SYMBOL, &value, &type);
	if (!err)
		err = remote_symbol_addr(pid, agent_path, value, &addr);
	if (!err)
		err = remote_read(pid, addr, &w, sizeof(w));
	if (err)
		return err;
	if (w.magic != CUPROBE_AGENT_WAKE_MAGIC || w.fd < 0)
		return -EAGAIN;
	if (w.pid != ns_pid(pid))
		return -ESRCH; /* a forked child's copy: its agent has no thread */
	pidfd = syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0)
		return -errno;
	fd = syscall(SYS_pidfd_getfd, pidfd, w.fd, 0);
	err = fd < 0 ? -errno : 0;
	close(pidfd);
	if (err)
		return err;
	if (!is_eventfd(fd)) {
		close(fd);
		return -EBADF; /* the number no longer names the agent's eventfd */
	}
	return fd;
}

int agent_wake_prepare(pid_t pid, const char *agent_path, int *fd)
{
	if (*fd < 0) {
		int got = take_fd(pid, agent_path);

		if (got < 0)
			return got;
		*fd = got;
	}
	return 0;
}

int agent_wake(pid_t pid, const char *agent_path, int *fd)
{
	uint64_t one = 1;
	int err = agent_wake_prepare(pid, agent_path, fd);

	if (err)
		return err;
	if (write(*fd, &one, sizeof(one)) == sizeof(one) || errno == EAGAIN)
		return 0;
	return -errno;
}
