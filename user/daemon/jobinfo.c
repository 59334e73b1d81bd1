// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "daemon/jobinfo.h"

/* Volumes of a pod looked at for its namespace and labels, at most. */
#define MAX_VOLUMES 16

/* NAME's value in the block, its length in *n; NULL when it is not there. */
static const char *env_get(const char *env, size_t len, const char *name, size_t *n)
{
	size_t nl = strlen(name);

	for (size_t i = 0; i < len;) {
		const char *e = env + i;
		size_t el = strnlen(e, len - i);

		if (el > nl && !memcmp(e, name, nl) && e[nl] == '=') {
			*n = el - nl - 1;
			return e + nl + 1;
		}
		i += el + 1;
	}
	return NULL;
}

/* NAME's value into buf (cut to fit): true when it is there and not empty. */
static bool env_str(const char *env, size_t len, const char *name, char *buf, size_t cap)
{
	size_t n;
	const char *v = name && *name ? env_get(env, len, name, &n) : NULL;

	if (!v || !n)
		return false;
	snprintf(buf, cap, "%.*s", (int)(n < cap ? n : cap - 1), v);
	return true;
}

/* The first of names whose value is a plain decimal number below 2^31; -1 when none. */
static int env_int(const char *env, size_t len, const char *const *names, size_t nn)
{
	for (size_t i = 0; i < nn; i++) {
		char buf[16], *end;
		long v;

		if (!env_str(env, len, names[i], buf, sizeof(buf)) || !isdigit((unsigned char)buf[0]))
			continue;
		errno = 0;
		v = strtol(buf, &end, 10);
		if (!*end && !errno && v <= 0x7fffffff)
			return (int)v;
	}
	return -1;
}

#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

/*
 * The job: the config's variable; torchrun's run id (its default, "none",
 * names nothing); mpirun's job id; Slurm's job and step; a PMIx namespace;
 * the rendezvous address torch.distributed uses, last.
 */
static void env_job(const char *env, size_t len, const struct jobinfo_conf *c, struct jobinfo *j)
{
	char a[JOBINFO_VALUE_MAX], b[32];

	j->source = NULL;
	if (env_str(env, len, c->job_env, j->job, sizeof(j->job)))
		j->source = "config";
	else if (env_str(env, len, "TORCHELASTIC_RUN_ID", j->job, sizeof(j->job)) &&
		 strcmp(j->job, "none"))
		j->source = "torchelastic";
	else if (env_str(env, len, "OMPI_MCA_orte_jobid", j->job, sizeof(j->job)) ||
		 env_str(env, len, "OMPI_MCA_ess_base_jobid", j->job, sizeof(j->job)))
		j->source = "ompi";
	else if (env_str(env, len, "SLURM_JOB_ID", a, sizeof(a))) {
		if (env_str(env, len, "SLURM_STEP_ID", b, sizeof(b)))
			snprintf(j->job, sizeof(j->job), "%.90s.%s", a, b);
		else
			snprintf(j->job, sizeof(j->job), "%s", a);
		j->source = "slurm";
	} else if (env_str(env, len, "PMIX_NAMESPACE", j->job, sizeof(j->job)))
		j->source = "pmix";
	else if (env_str(env, len, "MASTER_ADDR", a, sizeof(a)) &&
		 env_str(env, len, "MASTER_PORT", b, sizeof(b))) {
		snprintf(j->job, sizeof(j->job), "%.100s:%.20s", a, b);
		j->source = "master";
	}
	if (!j->source)
		j->job[0] = '\0';
}

void jobinfo__parse_env(const char *env, size_t len, const struct jobinfo_conf *c,
			struct jobinfo *j, char *hostname, size_t hlen)
{
	/* torchrun's (and any launcher that sets RANK) over MPI's, PMI's, then Slurm's task's. */
	const char *ranks[] = { c->rank_env, "RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK",
				"PMI_RANK", "SLURM_PROCID" };
	static const char *const sizes[] = { "WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
					     "SLURM_NTASKS" };
	static const char *const locals[] = { "LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
					      "MPI_LOCALRANKID", "SLURM_LOCALID" };

	env_job(env, len, c, j);
	j->rank = env_int(env, len, ranks, NELEM(ranks));
	j->world_size = env_int(env, len, sizes, NELEM(sizes));
	j->local_rank = env_int(env, len, locals, NELEM(locals));
	env_str(env, len, "POD_NAME", j->pod, sizeof(j->pod));
	env_str(env, len, "POD_NAMESPACE", j->ns, sizeof(j->ns));
	if (hostname && hlen && !env_str(env, len, "HOSTNAME", hostname, hlen))
		hostname[0] = '\0';
}

/* A 36-character UUID at p, in '-' or (systemd) '_' form: copied with '-'. */
static bool uuid_at(const char *p, char *buf, size_t len)
{
	for (int i = 0; i < 36; i++) {
		bool dash = i == 8 || i == 13 || i == 18 || i == 23;

		if (dash ? p[i] != '-' && p[i] != '_' : !isxdigit((unsigned char)p[i]))
			return false;
	}
	if (len < 37)
		return false;
	for (int i = 0; i < 36; i++)
		buf[i] = p[i] == '_' ? '-' : p[i];
	buf[36] = '\0';
	return true;
}

/*
 * A path component is a pod's: "pod<uid>" under a "kubepods" one (cgroupfs),
 * or "kubepods[-<qos>]-pod<uid>.slice" (systemd).
 */
int jobinfo__pod_uid(const char *cgroup, char *buf, size_t len)
{
	bool under = false;

	for (const char *p = cgroup; p && *p;) {
		const char *end = strchrnul(p + 1, '/');
		size_t n = (size_t)(end - p);

		if (*p == '/') {
			p++;
			n--;
		}
		if (!strncmp(p, "kubepods", 8)) {
			const char *pod = strstr(p, "-pod");

			if (pod && pod < p + n && n == (size_t)(pod + 4 - p) + 36 + 6 &&
			    !strncmp(pod + 40, ".slice", 6) && uuid_at(pod + 4, buf, len))
				return 0;
			under = true;
		} else if (under && n == 39 && !strncmp(p, "pod", 3) && uuid_at(p + 3, buf, len)) {
			return 0;
		}
		p = end;
	}
	buf[0] = '\0';
	return -ENOENT;
}

int jobinfo__hosts_name(const char *hosts, char *buf, size_t len)
{
	char line[512];

	buf[0] = '\0';
	for (const char *p = hosts; *p;) {
		size_t n = strcspn(p, "\n");
		char *name, *last = NULL, *save = NULL;

		snprintf(line, sizeof(line), "%.*s", (int)(n < sizeof(line) ? n : sizeof(line) - 1), p);
		p += n + (p[n] == '\n');
		/* The kubelet writes hostAliases after its own lines, under this comment. */
		if (strstr(line, "HostAliases"))
			break;
		if (line[0] == '#' || !strtok_r(line, " \t", &save))
			continue;
		while ((name = strtok_r(NULL, " \t", &save)))
			last = name;
		if (!last || !strcmp(last, "localhost") || !strncmp(last, "ip6-", 4))
			continue;
		snprintf(buf, len, "%s", last);
		return 0;
	}
	return -ENOENT;
}

/* Go's %q of a label value: \" \\ \n \t unquoted; the rest as they are. */
static void unquote(const char *s, size_t n, char *out, size_t len)
{
	size_t o = 0;

	for (size_t i = 0; i < n && o + 1 < len; i++) {
		char ch = s[i];

		if (ch == '\\' && i + 1 < n) {
			ch = s[++i];
			ch = ch == 'n' ? '\n' : ch == 't' ? '\t' : ch;
		}
		out[o++] = ch;
	}
	out[o] = '\0';
}

static bool wanted_key(const char *wanted, const char *key, size_t kl)
{
	for (const char *p = wanted; *p;) {
		size_t n = strcspn(p, ",");

		if (n == kl && !memcmp(p, key, kl))
			return true;
		p += n + (p[n] == ',');
	}
	return false;
}

void jobinfo__labels(const char *text, const char *wanted, char *out, size_t len)
{
	size_t used = strlen(out);

	for (const char *p = text; *p && wanted && *wanted;) {
		size_t n = strcspn(p, "\n");
		const char *eq = memchr(p, '=', n);
		char val[JOBINFO_VALUE_MAX];

		if (eq && eq + 1 < p + n && eq[1] == '"' && p[n - 1] == '"' && eq + 2 <= p + n - 1 &&
		    wanted_key(wanted, p, (size_t)(eq - p))) {
			int w;

			unquote(eq + 2, (size_t)(p + n - 1 - (eq + 2)), val, sizeof(val));
			w = snprintf(out + used, len - used, "%.*s=%s\n", (int)(eq - p), p, val);
			if (w < 0 || (size_t)w >= len - used)
				out[used] = '\0';
			else
				used += (size_t)w;
		}
		p += n + (p[n] == '\n');
	}
}

/*
 * A small regular file, whole or cut at len - 1 bytes, never blocking on a
 * FIFO. The kubelet's own files: links inside a volume (..data) are its
 * atomic writer's and are followed.
 */
static ssize_t read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	struct stat st;
	ssize_t n = -1;

	if (fd < 0)
		return -1;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode))
		n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return n;
}

/* The trimmed first line of a file into buf; true when not empty. */
static bool read_line(const char *path, char *buf, size_t len)
{
	if (read_small(path, buf, len) <= 0)
		return false;
	buf[strcspn(buf, "\r\n")] = '\0';
	return buf[0] != '\0';
}

/*
 * The volumes of one plugin (kubernetes.io~projected, ...~downward-api):
 * the service-account token's has the namespace, a downward API volume
 * with the pod's labels as "labels" has those.
 */
static void pod_volumes(const char *pod_dir, const char *plugin, const struct jobinfo_conf *c,
			struct jobinfo *j)
{
	char path[PATH_MAX + 512], text[16384];
	struct dirent *de;
	DIR *dir;
	int seen = 0;

	snprintf(path, sizeof(path), "%s/volumes/%s", pod_dir, plugin);
	dir = opendir(path);
	if (!dir)
		return;
	while ((de = readdir(dir)) && seen < MAX_VOLUMES) {
		if (de->d_name[0] == '.')
			continue;
		seen++;
		snprintf(path, sizeof(path), "%s/volumes/%s/%s/namespace", pod_dir, plugin, de->d_name);
		if (!j->ns[0])
			read_line(path, j->ns, sizeof(j->ns));
		snprintf(path, sizeof(path), "%s/volumes/%s/%s/labels", pod_dir, plugin, de->d_name);
		if (*c->pod_labels && !j->labels[0] && read_small(path, text, sizeof(text)) > 0)
			jobinfo__labels(text, c->pod_labels, j->labels, sizeof(j->labels));
	}
	closedir(dir);
}

static void pod_info(const struct jobinfo_conf *c, struct jobinfo *j, const char *hostname)
{
	char dir[PATH_MAX + 64], path[PATH_MAX + 128], hosts[8192], name[JOBINFO_VALUE_MAX];

	snprintf(dir, sizeof(dir), "%s/pods/%s", c->kubelet_root, j->pod_uid);
	snprintf(path, sizeof(path), "%s/etc-hosts", dir);
	if (!j->pod[0] && read_small(path, hosts, sizeof(hosts)) > 0 &&
	    !jobinfo__hosts_name(hosts, name, sizeof(name)))
		snprintf(j->pod, sizeof(j->pod), "%s", name);
	if (!j->pod[0] && hostname[0])
		snprintf(j->pod, sizeof(j->pod), "%s", hostname);
	pod_volumes(dir, "kubernetes.io~projected", c, j);
	pod_volumes(dir, "kubernetes.io~downward-api", c, j);
}

void jobinfo__read(pid_t pid, const char *cgroup, const struct jobinfo_conf *c,
		   struct jobinfo *j)
{
	char path[64], hostname[JOBINFO_VALUE_MAX] = "", *env = malloc(JOBINFO_ENV_MAX);
	ssize_t n = -1;

	memset(j, 0, sizeof(*j));
	j->rank = j->local_rank = j->world_size = -1;
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	if (env)
		n = read_small(path, env, JOBINFO_ENV_MAX);
	if (n > 0)
		jobinfo__parse_env(env, (size_t)n, c, j, hostname, sizeof(hostname));
	free(env);
	if (!jobinfo__pod_uid(cgroup, j->pod_uid, sizeof(j->pod_uid)))
		pod_info(c, j, hostname);
	else
		j->pod[0] = j->ns[0] = '\0';
}
