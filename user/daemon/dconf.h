/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The daemon's settings: defaults, then the config file, then the command
 * line, each setting named the same way in both (the long option's name).
 * A config that does not parse is refused whole: at start the daemon exits,
 * on SIGHUP it keeps the settings it runs with. Step rules' specs are
 * pointed at by targets' plans: a config is freed only when the daemon ends.
 */
#ifndef DAEMON_DCONF_H
#define DAEMON_DCONF_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "core/steps/step_spec.h"
#include "util/opt.h"

/* A step rule: processes whose comm (or, with a '/', executable path) matches. */
struct step_rule {
	char match[PATH_MAX];
	struct step_spec spec;
};

#define DCONF_MAX_RULES 64
/* window-max-bytes when not given, and where both retentions are at least this. */
#define DCONF_WINDOW_MAX_BYTES (128ull << 20)

struct dconf {
	char listen[128];		/* ADDR:PORT */
	char web_config[PATH_MAX];	/* TLS and authentication (webconf.h); "": none, loopback only */
	uint32_t max_captures;		/* on-demand captures at once, daemon-wide */
	char output[PATH_MAX];
	double interval;		/* seconds between samples of a process */
	double probability;		/* that a process is sampled at its turn */
	uint32_t window_steps;		/* active steps of a sampled window */
	uint32_t warmup;		/* warmup steps before them */
	double budget;			/* percent of a process's CPU time */
	double budget_window;		/* seconds the budget is measured over */
	double linger;			/* seconds a gone process's series stay */
	double slice;			/* seconds of a time slice (no step rule) */
	uint64_t retention;		/* bytes of sampled windows' traces kept under output */
	uint64_t capture_retention;	/* bytes of captures' traces, under output/captures */
	uint64_t window_max_bytes;	/* a window's trace is cut at this size */
	bool window_max_bytes_given;	/* else it follows a retention under its default */
	uint64_t window_max_launches;	/* ... or at this many launches */
	char group[64];			/* traces readable by this group; "": root's only */
	uint32_t top_kernels;		/* kernel label values per process */
	uint32_t max_targets;
	double capture_timeout;		/* seconds an on-demand capture may take */
	bool cupti;			/* windows use the agent where a process has it */
	bool stack;			/* launches carry their stacks (read at start only) */
	bool torch_steps;		/* a PyTorch process no rule matches steps by torch */
	char cgroup[512];		/* only processes in this cgroup or under it; "": all */
	/* Jobs (daemon/jobinfo.h): where a process's job and rank are read, pods' labels. */
	char job_env[64];		/* an environment variable that names the job; "": none */
	char rank_env[64];		/* ... and its rank */
	char kubelet_root[PATH_MAX];	/* the kubelet's folder (pods/<uid>/...) */
	char pod_labels[256];		/* pod labels exported, "app,team"; "": none */
	uint32_t max_jobs;		/* job label values; the rest are job="other" */
	struct step_rule *rules;	/* owned; targets' plans point at their specs */
	size_t nrules;
};

/*
 * Every setting, once: its option's name (the config file's key), short
 * code, argument, setter and help line. The setters' obj is a struct dconf.
 */
extern const struct opt_table dconf_opts;

void dconf__defaults(struct dconf *c);
/*
 * Sets one setting by its long option name, through dconf_opts. 0, or
 * -EINVAL (-ENOMEM) with err saying what is wrong and what is accepted.
 */
int dconf__set(struct dconf *c, const char *key, const char *value, char *err, size_t len);
/* What holds only across settings (a window fits the retention). 0 or -EINVAL, err why. */
int dconf__check(const struct dconf *c, char *err, size_t len);
/*
 * Once every setting is in (at start and at each reload): what follows from
 * others, then dconf__check. A window-max-bytes not given is the least of its
 * default and the two retentions; a cgroup given as its file-system path
 * (/sys/fs/cgroup/x) becomes the cgroup's path (/x), and one that does not
 * exist is refused. 0 or -errno, err why and what to do.
 */
int dconf__finish(struct dconf *c, char *err, size_t len);
/* Reads "key = value" lines (# comments). 0 or -errno, err naming the file and line. */
int dconf__load(struct dconf *c, const char *path, char *err, size_t len);
/* The rule for a process, or NULL (time slices). */
const struct step_rule *dconf__match(const struct dconf *c, const char *comm, const char *exe);
void dconf__free(struct dconf *c);

#endif /* DAEMON_DCONF_H */
