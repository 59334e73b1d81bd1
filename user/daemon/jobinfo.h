/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The job and rank of a process, from its environment as its launcher left
 * it (torchrun, Slurm, mpirun, PMI/PMIx, or a variable the config names),
 * and its Kubernetes pod, from its cgroup path and the kubelet's folder,
 * without the API server. Read once, when the daemon finds the process;
 * every read is bounded. The precedence is docs/daemon.md's ("Jobs and
 * ranks"). The parsers are pure; jobinfo__read reads /proc and the kubelet's
 * folder on the daemon's thread.
 */
#ifndef DAEMON_JOBINFO_H
#define DAEMON_JOBINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Longest value kept of a job name, a pod's name or namespace, a label. */
#define JOBINFO_VALUE_MAX 128
/* At most this much of /proc/PID/environ is read. */
#define JOBINFO_ENV_MAX (256 << 10)

struct jobinfo {
	char job[JOBINFO_VALUE_MAX];		/* "" unknown */
	const char *source;			/* where job came from: "config", "torchelastic",
						 * "ompi", "slurm", "pmix", "master"; NULL */
	int rank, local_rank, world_size;	/* -1 unknown */
	char pod_uid[40];			/* "" outside a pod */
	char pod[JOBINFO_VALUE_MAX];		/* "" unknown */
	char ns[JOBINFO_VALUE_MAX];		/* the pod's namespace, "" unknown */
	char labels[512];			/* the configured labels the pod has: key=value
						 * pairs, each ended by '\n'; "" none */
};

/* What the config says to read (the dconf keys job-env, rank-env, kubelet-root, pod-labels). */
struct jobinfo_conf {
	const char *job_env, *rank_env;		/* "" none */
	const char *kubelet_root;
	const char *pod_labels;			/* "app,team"; "" none */
};

/*
 * Job and rank from an environment block (NUL-separated NAME=value, len
 * bytes, as /proc/PID/environ holds it; need not end in NUL). Also keeps
 * POD_NAME / POD_NAMESPACE (the downward API) and HOSTNAME for the pod. Pure.
 */
void jobinfo__parse_env(const char *env, size_t len, const struct jobinfo_conf *c,
			struct jobinfo *j, char *hostname, size_t hlen);
/*
 * The pod UID a kubelet's cgroup path names (systemd driver:
 * .../kubepods-burstable-pod<uid with '_'>.slice/..., cgroupfs:
 * .../kubepods/burstable/pod<uid>/...), into buf with '-'. 0, or -ENOENT. Pure.
 */
int jobinfo__pod_uid(const char *cgroup, char *buf, size_t len);
/* The pod's hostname in a kubelet's etc-hosts text: its own line's last name. 0 or -ENOENT. Pure. */
int jobinfo__hosts_name(const char *hosts, char *buf, size_t len);
/*
 * The wanted keys' values in a downward API labels file (key="value" lines,
 * Go-quoted), as "key=value\n" pairs into out. Pure.
 */
void jobinfo__labels(const char *text, const char *wanted, char *out, size_t len);
/*
 * Everything above for a process: its environment, then its pod (the
 * namespace and labels from the kubelet's folder). Fields stay unknown
 * where nothing says them.
 */
void jobinfo__read(pid_t pid, const char *cgroup, const struct jobinfo_conf *c,
		   struct jobinfo *j);

#endif /* DAEMON_JOBINFO_H */
