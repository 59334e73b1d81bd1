// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/proc/procmaps.h"
#include "core/steps/step_spec.h"
#include "daemon/procinfo.h"

static int maps_flags(pid_t pid, struct procinfo *pi)
{
	struct procmaps m;

	if (procmaps__read(pid, &m))
		return -ESRCH;
	pi->cuda = pi->agent = pi->torch = pi->torch_deps = false;
	for (size_t i = 0; i < m.n; i++) {
		const char *p = m.v[i].path;

		if (!p)
			continue;
		pi->cuda |= strstr(p, "/libcudart") || strstr(p, "/libcuda.so");
		pi->agent |= strstr(p, "/libcuprobe-agent") != NULL;
		pi->torch |= strstr(p, "/" STEP_TORCH_LIB ".so") != NULL;
		pi->torch_deps |= strstr(p, "/libtorch_global_deps.so") != NULL;
	}
	procmaps__free(&m);
	return 0;
}

bool procinfo__ready(const struct procinfo *pi)
{
	return pi->cuda && (pi->torch || !pi->torch_deps);
}

int procinfo__cuda_ready(pid_t pid)
{
	struct procinfo pi;
	int err = maps_flags(pid, &pi);

	if (err)
		return err;
	return procinfo__ready(&pi) ? 1 : pi.cuda ? PROCINFO_IMPORTING_TORCH : 0;
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

/* A cgroup file system's mount: the cgroup at its root, and where it is mounted. */
struct cg_mount {
	char root[PATH_MAX], dir[PATH_MAX];
};

#define CG_MAX_MOUNTS 32

/* mountinfo's octal escapes (\040 for a space), undone in place. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++, o++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*o = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*o = *s;
		}
	}
	*o = '\0';
}

/* The rest of path under dir ("" or "/..."), or NULL when path is not dir or under it. */
static const char *under(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	if (!strcmp(dir, "/"))
		return path;
	if (strncmp(path, dir, n) || (path[n] && path[n] != '/'))
		return NULL;
	return path + n;
}

bool procinfo__in_cgroup(const char *cgroup, const char *in)
{
	return under(cgroup, in) != NULL;
}

/* The cgroup2 mounts in mountinfo, or the cgroup v1 ones where there is none. */
static size_t cg_mounts(const char *mountinfo, struct cg_mount *m, size_t max)
{
	char line[3 * PATH_MAX], type[32];
	struct cg_mount one;
	size_t n = 0;
	bool v2 = false, is2;
	FILE *f = fopen(mountinfo, "re");

	while (f && fgets(line, sizeof(line), f)) {
		const char *dash = strstr(line, " - ");

		if (!dash || sscanf(dash, " - %31s", type) != 1 ||
		    (strcmp(type, "cgroup2") && strcmp(type, "cgroup")) ||
		    sscanf(line, "%*s %*s %*s %4095s %4095s", one.root, one.dir) != 2)
			continue;
		is2 = !strcmp(type, "cgroup2");
		if (v2 && !is2)
			continue;
		if (is2 && !v2) /* the v1 ones kept so far give way */
			n = 0;
		v2 |= is2;
		if (n == max)
			continue;
		unescape(one.root);
		unescape(one.dir);
		m[n++] = one;
	}
	if (f)
		fclose(f);
	return n;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISDIR(st.st_mode);
}

/* arg as a folder on a cgroup mount (not one at "/"): its cgroup's path; -ENOENT if none. */
static int from_folder(const struct cg_mount *m, size_t n, const char *arg, char *out, size_t len)
{
	const struct cg_mount *best = NULL;
	const char *rest = NULL;

	for (size_t i = 0; i < n; i++) {
		const char *r = strcmp(m[i].dir, "/") ? under(arg, m[i].dir) : NULL;

		if (r && (!best || strlen(m[i].dir) > strlen(best->dir))) {
			best = &m[i];
			rest = r;
		}
	}
	if (!best)
		return -ENODEV;
	if (!is_dir(arg))
		return -ENOENT;
	if (!strcmp(best->root, "/"))
		snprintf(out, len, "%s", *rest ? rest : "/");
	else
		snprintf(out, len, "%s%s", best->root, rest);
	return 0;
}

/* arg as a cgroup's path: whether some mount shows it. */
static bool cgroup_exists(const struct cg_mount *m, size_t n, const char *arg)
{
	char path[2 * PATH_MAX];

	for (size_t i = 0; i < n; i++) {
		const char *rel = under(arg, m[i].root);

		snprintf(path, sizeof(path), "%s%s", m[i].dir, rel ? rel : "");
		if (rel && is_dir(path))
			return true;
	}
	return false;
}

int procinfo__cgroup_path(const char *mountinfo, const char *arg, char *out, size_t len,
			  char *err, size_t elen)
{
	struct cg_mount *m = calloc(CG_MAX_MOUNTS, sizeof(*m));
	char a[PATH_MAX];
	size_t n, k;
	int rc;

	if (!m)
		return -ENOMEM;
	n = cg_mounts(mountinfo, m, CG_MAX_MOUNTS);
	snprintf(a, sizeof(a), "%s", arg);
	for (k = strlen(a); k > 1 && a[k - 1] == '/'; k--)
		a[k - 1] = '\0';
	/* No cgroup mount here (ip netns exec mounts a /sys without them): taken as given. */
	rc = n ? from_folder(m, n, a, out, len) : -ENODEV;
	if (rc == -ENODEV && !n)
		snprintf(out, len, "%s", a);
	else if (rc == -ENODEV) {
		rc = cgroup_exists(m, n, a) ? 0 : -ENOENT;
		if (!rc)
			snprintf(out, len, "%s", a);
	}
	if (rc && n)
		snprintf(err, elen, "cgroup: there is no cgroup %s: give one that exists, as "
			 "/proc/PID/cgroup shows it for a process in it (the path after 0::), or "
			 "its folder under %s", arg, m[0].dir);
	else if (rc)
		snprintf(err, elen, "cgroup: cannot check that cgroup %s exists: no cgroup file "
			 "system is mounted here (%s has none); it is taken as the path "
			 "/proc/PID/cgroup shows", a, mountinfo);
	free(m);
	return rc;
}

/* Field 22 of /proc/PID/stat, after the comm in parentheses. */
int procinfo__read(pid_t pid, struct procinfo *pi)
{
	char path[64];
	ssize_t n;
	int err;

	memset(pi, 0, sizeof(*pi));
	err = maps_flags(pid, pi);
	if (err)
		return err;
	proc_comm(pid, pi->comm, sizeof(pi->comm));
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
