/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Brings the agent into a running process (record --cupti -p on a process
 * started without it): one thread of the target that waits in a sleep, poll,
 * select or wait is stopped with ptrace (PTRACE_SEIZE + PTRACE_INTERRUPT),
 * made to map two pages (mmap, then mprotect of the first to r-x) through its
 * own syscall instruction, and sent into a small trampoline written there,
 * then detached at once. The trampoline saves every register and the whole
 * extended state (XSAVE), calls dlopen(agent, RTLD_NOW), restores all of it
 * and resumes the interrupted syscall as the kernel would have, on its own:
 * nothing of cuprobe needs to live for the target to come back. Once the
 * thread is back in its restarted syscall, it is stopped once more for one
 * munmap of the two pages. x86_64 only.
 * docs/safety.md says what it refuses and what it guarantees.
 */
#ifndef CORE_GPU_INJECT_H
#define CORE_GPU_INJECT_H

#include <stddef.h>
#include <sys/types.h>

/* How long cuprobe waits for dlopen to return in the target (libcupti loads with it). */
#define INJECT_TIMEOUT_S 15.0

/*
 * Loads the agent at agent (a path this process opens; the same file must be
 * at that path in the target's mount namespace) into pid, and waits at most
 * timeout_s for dlopen to return there. 0 once the agent is mapped (or was
 * already); else -errno and the reason in msg: -ENOTSUP (not x86_64, no
 * XSAVE), -EBUSY (traced, stopped, no thread at a safe point), -EPERM
 * (seccomp, ptrace refused), -ENOENT (no dlopen: static binary or old libc),
 * -EXDEV (the agent is not the same file in the target's mount namespace),
 * -ENODATA (it maps no CUDA library: a launcher, a shell; left alone),
 * -ELIBBAD (dlopen failed there: msg has dlerror()), -ETIMEDOUT (dlopen had
 * not returned; it goes on in the target, which resumes by itself).
 */
int inject_agent(pid_t pid, const char *agent, double timeout_s, char *msg, size_t len);

/* Whether pid maps the agent (the file at agent, or any libcuprobe-agent.so). */
int inject_has_agent(pid_t pid, const char *agent);

#endif /* CORE_GPU_INJECT_H */
