/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Wakes the agent in a target after its semaphores changed (include/agent.h,
 * struct agent_wake): reads the agent's exported struct, takes its eventfd
 * with pidfd_getfd and writes 1. The dormant agent sleeps until then.
 */
#ifndef CORE_GPU_AGENT_WAKE_H
#define CORE_GPU_AGENT_WAKE_H

#include <sys/types.h>

/*
 * Wakes the agent that pid maps from the file at agent_path (as this
 * process opens it). *fd caches the eventfd taken from the target: -1 at
 * first, closed by the caller. 0, or -errno: -EAGAIN when the agent has not
 * published its eventfd yet (it reads the semaphores when it starts),
 * -ENOENT when it is not mapped, -EPERM where the kernel refuses pidfd_getfd.
 */
int agent_wake(pid_t pid, const char *agent_path, int *fd);
/* Takes the eventfd into *fd (when -1) without writing: 0 or -errno as agent_wake. */
int agent_wake_prepare(pid_t pid, const char *agent_path, int *fd);

#endif /* CORE_GPU_AGENT_WAKE_H */
