// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/proc/procmaps.h"
#include "core/session/target.h"
#include "core/schedule/step_spec.h"
#include "daemon/procinfo.h"

static int maps_flags(pid_t pid, bool *cuda, bool *agent, bool *torch)
{
	struct procmaps m;

	if (procmaps__read(pid, &m))
		return -ESRCH;
	*cuda = *agent = *torch = false;
	for (size_t i = 0; i < m.n; i++) {
		const char *p = m.v[i].path;

		if (!p)
			continue;
		*cuda |= strstr(p, "/libcudart") || strstr(p, "/libcuda.so");
		*agent |= strstr(p, "/libcuprobe-agent") != NULL;
		*torch |= strstr(p, "/" STEP_TORCH_LIB ".so") != NULL;
	}
	procmaps__free(&m);
	return 0;
}

int procinfo__cuda(pid_t pid)
{
	bool cuda, agent, torch;

	return maps_flags(pid, &cuda, &agent, &torch) ?: cuda;
}

/* 64 hex digits, the way container runtimes name their cgroups. */
void procinfo__container(const char *cg, char *buf, size_t len)
{
	size_t run = 0;

	buf[0] = '\0';
	for (const char *p = cg; *p; p++) {
		run = isxdigit((unsigned char)*p) ? run + 1 : 0;
		if (run == 64 && !isxdigit((unsigned char)p[1])) {
			snprintf(buf, len, "%.12s", p - 63);
			return;
		}
	}
}

static void read_cgroup(pid_t pid, char *buf, size_t len)
{
	char path[64], line[1024];
	FILE *f;

	buf[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		/* The unified hierarchy, else the first line's path. */
		if (!strncmp(line, "0::", 3)) {
			snprintf(buf, len, "%.*s", (int)len - 1, line + 3);
			break;
		}
		if (!buf[0] && strrchr(line, ':'))
			snprintf(buf, len, "%.*s", (int)len - 1, strrchr(line, ':') + 1);
	}
	fclose(f);
}

/* Field 22 of /proc/PID/stat, after the comm in parentheses. */
int procinfo__read(pid_t pid, struct procinfo *pi)
{
	char path[64];
	ssize_t n;
	int err;

	memset(pi, 0, sizeof(*pi));
	err = maps_flags(pid, &pi->cuda, &pi->agent, &pi->torch);
	if (err)
		return err;
	target_comm(pid, pi->comm, sizeof(pi->comm));
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	n = readlink(path, pi->exe, sizeof(pi->exe) - 1);
	pi->exe[n > 0 ? n : 0] = '\0';
	read_cgroup(pid, pi->cgroup, sizeof(pi->cgroup));
	procinfo__container(pi->cgroup, pi->container, sizeof(pi->container));
	pi->start_ticks = proc_start_ticks(pid);
	return pi->start_ticks ? 0 : -ESRCH;
}

/* On-CPU ns from schedstat; utime + stime from stat where schedstat is missing. */
int procinfo__cpu_ns(pid_t pid, uint64_t *ns)
{
	char path[64], buf[1024], *p;
	unsigned long long on_cpu, ut, st;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	f = fopen(path, "re");
	if (f) {
		int ok = fscanf(f, "%llu", &on_cpu) == 1;

		fclose(f);
		if (ok) {
			*ns = on_cpu;
			return 0;
		}
	}
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -ESRCH;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	p = p ? strrchr(buf, ')') : NULL;
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -ESRCH;
	*ns = (ut + st) * (1000000000ull / (unsigned long long)sysconf(_SC_CLK_TCK));
	return 0;
}
