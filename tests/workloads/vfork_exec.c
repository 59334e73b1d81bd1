// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * vfork_exec MS PROG [ARG...]: runs PROG in a vfork child that waits MS
 * milliseconds in its parent's memory before its exec, as a launcher that
 * does work between vfork and exec would; exits with PROG's status.
 */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

int main(int argc, char **argv)
{
	struct timespec ts;
	int status;
	pid_t pid;
	long ms;

	if (argc < 3)
		return 2;
	ms = strtol(argv[1], NULL, 10);
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000;
	pid = vfork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		/* Only system calls here: the memory is the parent's. */
		nanosleep(&ts, NULL);
		execv(argv[2], argv + 2);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) != pid)
		return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
