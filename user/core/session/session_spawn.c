// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The command a session runs: forked, held before its exec while the
 * prober probes what it will run, then let go. Session's thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "core/probes/uprobe_warm.h"
#include "core/steps/step_source.h"
#include "core/steps/step_spec.h"
#include "core/session/prober.h"
#include "core/session/session_int.h"
#include "core/session/session_jobs.h"
#include "core/session/session_step_missing.h"
#include "core/session/session_targets.h"
#include "util/log.h"

/* Finds what execvp would run, so that it can be probed before it starts. */
/* 0 when path is a regular file one may execute; else what execve would say. */
static int executable(const char *path)
{
	struct stat sb;

	if (access(path, X_OK))
		return -errno;
	return stat(path, &sb) ? -errno : S_ISREG(sb.st_mode) ? 0 : -EACCES;
}

static int resolve_command(const char *cmd, char *buf, size_t len)
{
	const char *path = getenv("PATH");

	if (strchr(cmd, '/')) {
		snprintf(buf, len, "%s", cmd);
		return executable(buf);
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		snprintf(buf, len, "%.*s/%s", (int)n, n ? path : ".", cmd);
		if (!executable(buf))
			return 0;
		path += n + (path[n] == ':');
	}
	return -ENOENT;
}

/*
 * The command's child, between fork and exec. go[1] and ex[0] are the
 * parent's ends: closed first, so that a parent killed before it said go
 * is an end of file here (with them open, the child would wait forever and
 * keep the guardian's pipe open with it).
 */
static void child_exec(char **cmd, const char *agent, const int go[2], const int ex[2],
		       const sigset_t *mask)
{
	char c;
	int e;

	close(go[1]);
	close(ex[0]);
	sigprocmask(SIG_SETMASK, mask, NULL);
	/* The driver loads the agent at cuInit; it stays dormant until a window opens. */
	if (agent && agent[0])
		setenv("CUDA_INJECTION64_PATH", agent, 1);
	/* Wait until the parent has probed what the command will map; its death is a no. */
	if (read(go[0], &c, 1) != 1)
		_exit(127);
	execvp(cmd[0], cmd);
	e = errno;
	if (write(ex[1], &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

/* The child exists and waits for go: probe what it will run, for its pid. */
static int prepare_child(struct session *s, pid_t pid, const char *exe)
{
	struct target *t;
	int err;

	t = session_new_target(s, pid, true, &s->o.plan, false, &err);
	if (err)
		return err;
	s->command = pid;
	err = session_submit(s, t, JOB_EXEC, 0, exe);
	prober__drain(s->prober);
	if (!err)
		err = t->facts.err;
	t->exec_prepared = !err;
	if (!err && t->plan.step && !t->facts.step_found && !step_source(t->plan.step)->suggests)
		session_tell_step_missing(t, "", STEP_NOT_YET);
	if (!err && t->plan.step && !t->facts.step_found && step_source(t->plan.step)->anywhere)
		p_info("step symbol %s is not in %s: looking for it in libraries as they load",
		       t->plan.step->symbol, exe);
	return err;
}

/*
 * Test hook: CUPROBE_SPAWN_TEST_PAUSE_MS=N (at most 1000) waits N ms after the
 * command's fork, before it is probed: a cuprobe killed while its command
 * waits to exec, whatever the machine's load (tests/e2e/test_safety.sh).
 */
static void spawn_test_pause(void)
{
	const char *v = getenv("CUPROBE_SPAWN_TEST_PAUSE_MS");
	int ms = v ? atoi(v) : 0;

	if (ms > 0 && ms <= 1000)
		usleep((useconds_t)ms * 1000);
}

int session__spawn(struct session *s, char **argv, const sigset_t *mask)
{
	int go[2], ex[2], e = 0, err;
	char exe[PATH_MAX];
	pid_t pid;

	err = resolve_command(argv[0], exe, sizeof(exe));
	if (err) {
		p_err("cannot execute %s: %s; check the command name and PATH", argv[0],
		      strerror(-err));
		return err;
	}
	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(ex, O_CLOEXEC)) {
		err = -errno;
		close(go[0]);
		close(go[1]);
		return err;
	}
	/* Its start is a run of holds: the dynamic linker's, its libraries'. */
	uprobe_warm__hold(s->warm);
	pid = fork();
	if (pid == 0)
		child_exec(argv, s->o.agent, go, ex, mask);
	close(go[0]);
	close(ex[1]);
	if (pid > 0)
		spawn_test_pause();
	err = pid < 0 ? -errno : prepare_child(s, pid, exe);
	if (err && pid > 0) {
		p_err("cannot probe %s: %s", exe, strerror(-err));
		kill(pid, SIGKILL);
	}
	if (err)
		close(go[1]); /* the child reads no "go" and exits */
	else if (write(go[1], "g", 1) != 1) {
		err = -errno;
	}
	if (!err)
		close(go[1]);
	if (!err && read(ex[0], &e, sizeof(e)) == sizeof(e)) {
		p_err("cannot execute %s: %s", argv[0], strerror(e));
		err = -e;
	}
	close(ex[0]);
	return err;
}
