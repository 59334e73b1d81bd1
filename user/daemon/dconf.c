// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "daemon/dconf.h"
#include "daemon/procinfo.h"
#include "daemon/webconf.h"
#include "util/log.h"
#include "util/parse.h"
#include "util/safe_file.h"

void dconf__defaults(struct dconf *c)
{
	*c = (struct dconf){
		.listen = "127.0.0.1:9464",
		.output = "/var/lib/cuprobe/daemon",
		.interval = 60,
		.probability = 1.0,
		.window_steps = 5,
		.warmup = 1,
		.budget = 1.0,
		.budget_window = 300,
		.linger = 300,
		.slice = 0.1,
		.retention = 1ull << 30,
		.capture_retention = 1ull << 30,
		.window_max_bytes = DCONF_WINDOW_MAX_BYTES,
		.window_max_launches = 1000000,
		.top_kernels = 20,
		.max_targets = 1024,
		.capture_timeout = 120,
		.max_captures = 4,
		.kubelet_root = "/var/lib/kubelet",
		.max_jobs = 64,
		.torch_steps = true,
	};
}

/* ---- the setters: obj is a struct dconf, name the key or the option ---- */

static int number(const char *name, const char *v, double lo, double hi, double *out, char *err,
		  size_t len)
{
	if (!parse_number(v, lo, hi, out))
		return 0;
	snprintf(err, len, "%s: '%s' is not a number from %g to %g", name, v, lo, hi);
	return -EINVAL;
}

static int seconds(const char *name, const char *v, double lo, double hi, double *out, char *err,
		   size_t len)
{
	if (!parse_duration(v, PARSE_SECONDS, lo, hi, out))
		return 0;
	snprintf(err, len, "%s: '%s' is not a number of seconds from %g to %g (or with ms, s or "
		 "m after it: 500ms, 2m)", name, v, lo, hi);
	return -EINVAL;
}

static int count(const char *name, const char *v, uint64_t lo, uint64_t hi, uint64_t *out,
		 char *err, size_t len)
{
	if (!parse_count(v, lo, hi, out))
		return 0;
	snprintf(err, len, "%s: '%s' is not a whole number from %llu to %llu", name, v,
		 (unsigned long long)lo, (unsigned long long)hi);
	return -EINVAL;
}

static int count32(const char *name, const char *v, uint32_t lo, uint32_t hi, uint32_t *out,
		   char *err, size_t len)
{
	uint64_t x;
	int rc = count(name, v, lo, hi, &x, err, len);

	if (!rc)
		*out = (uint32_t)x;
	return rc;
}

static int size_at_least(const char *name, const char *v, uint64_t min, const char *eg,
			 uint64_t *out, char *err, size_t len)
{
	uint64_t x;

	if (!parse_size(v, &x) && x >= min) {
		*out = x;
		return 0;
	}
	snprintf(err, len, "%s: '%s' is not a size of %s (%s)", name, v, eg, PARSE_SIZE_FORMS);
	return -EINVAL;
}

static int boolean(const char *name, const char *v, bool *out, char *err, size_t len)
{
	if (!parse_bool(v, out))
		return 0;
	snprintf(err, len, "%s: '%s' is not true or false (%s)", name, v, PARSE_BOOL_FORMS);
	return -EINVAL;
}

#define CONF(obj) ((struct dconf *)(obj))

static int set_listen(void *obj, const char *name, const char *v, char *err, size_t len)
{
	struct addr_port ap;
	char why[256];

	if (strlen(v) >= sizeof(CONF(obj)->listen)) {
		snprintf(err, len, "%s: '%.40s...' is too long for ADDR:PORT", name, v);
		return -EINVAL;
	}
	if (parse_addr_port(v, &ap, why, sizeof(why))) {
		snprintf(err, len, "%s: '%s' is %s", name, v, why);
		return -EINVAL;
	}
	snprintf(CONF(obj)->listen, sizeof(CONF(obj)->listen), "%s", v);
	return 0;
}

static int set_web_config(void *obj, const char *name, const char *v, char *err, size_t len)
{
	if (!*v || strlen(v) >= sizeof(CONF(obj)->web_config)) {
		snprintf(err, len, "%s: give a file (the exporter toolkit's web-config YAML)", name);
		return -EINVAL;
	}
	snprintf(CONF(obj)->web_config, sizeof(CONF(obj)->web_config), "%s", v);
	return 0;
}

static int set_output(void *obj, const char *name, const char *v, char *err, size_t len)
{
	if (!*v || strlen(v) >= sizeof(CONF(obj)->output)) {
		snprintf(err, len, "%s: give a folder", name);
		return -EINVAL;
	}
	snprintf(CONF(obj)->output, sizeof(CONF(obj)->output), "%s", v);
	return 0;
}

static int set_interval(void *obj, const char *name, const char *v, char *err, size_t len)
{
	return seconds(name, v, 0.1, 86400, &CONF(obj)->interval, err, len);
}

static int set_probability(void *obj, const char *name, const char *v, char *err, size_t len)
{
	return number(name, v, 0, 1, &CONF(obj)->probability, err, len);
}

static int set_window_steps(void *obj, const char *name, const char *v, char *err, size_t len)
{
	return count32(name, v, 1, 10000, &CONF(obj)->window_steps, err, len);
}

static int set_warmup(void *obj, const char *name, const char *v, char *err, size_t len)
{
	return count32(name, v, 0, 100, &CONF(obj)->warmup, err, len);
}

static int set_budget(void *obj, const char *name, const char *v, char *err, size_t len)
{
	return number(name, v, 0.001, 100, &CONF(obj)->budget, err, len);
}

static int set_budget_window(void *obj, const char *name, const char *v, char *err, size_t len)
{
	return seconds(name, v, 1, 86400, &CONF(obj)->budget_window, err, len);
}

/* step = MATCH=SPEC: MATCH is a comm, or an executable's path when it has a '/'. */
static int set_step(void *obj, const char *name, const char *v, char *err, size_t len)
{
	struct dconf *c = obj;
	const char *eq = strchr(v, '=');
	struct step_rule *r, *nr;
	char perr[256];

	if (!eq || eq == v || !eq[1] || (size_t)(eq - v) >= sizeof(r->match)) {
		snprintf(err, len, "%s: '%s' is not COMM=SPEC (e.g. python3=usdt:libtrain.so:train:step, "
			 "or /usr/bin/train=train_step)", name, v);
		return -EINVAL;
	}
	if (c->nrules >= DCONF_MAX_RULES) {
		snprintf(err, len, "%s: more than %d rules", name, DCONF_MAX_RULES);
		return -EINVAL;
	}
	nr = realloc(c->rules, (c->nrules + 1) * sizeof(*nr));
	if (!nr)
		return -ENOMEM;
	c->rules = nr;
	r = &c->rules[c->nrules];
	memset(r, 0, sizeof(*r));
	memcpy(r->match, v, (size_t)(eq - v));
	if (step_spec__parse(eq + 1, &r->spec, perr, sizeof(perr))) {
		snprintf(err, len, "%s: '%s': %s", name, eq + 1, perr);
		return -EINVAL;
	}
	c->nrules++;
	return 0;
}

static int set_slice(void *obj, const char *name, const char *v, char *err, size_t len)
{
	return seconds(name, v, 0.001, 60, &CONF(obj)->slice, err, len);
}

static int set_cupti(void *obj, const char *name, const char *v, char *err, size_t len)
{
	return boolean(name, v, &CONF(obj)->cupti, err, len);
}

static int set_stack(void *obj, const char *name, const char *v, char *err, size_t len)
{
	return boolean(name, v, &CONF(obj)->stack, err, len);
}

static int set_torch_steps(void *obj, const char *name, const char *v, char *err, size_t len)
{
	return boolean(name, v, &CONF(obj)->torch_steps, err, len);
}

static int set_cgroup(void *obj, const char *name, const char *v, char *err, size_t len)
{
	if (*v != '/' || strlen(v) >= sizeof(CONF(obj)->cgroup)) {
		snprintf(err, len, "%s: '%s' is not a cgroup path (e.g. /kubepods.slice, or "
			 "/sys/fs/cgroup/kubepods.slice)", name, v);
		return -EINVAL;
	}
	snprintf(CONF(obj)->cgroup, sizeof(CONF(obj)->cgroup), "%s", v);
	return 0;
}

static int set_linger(void *obj, const char *name, const char *v, char *err, size_t len)
{
	return seconds(name, v, 0, 86400, &CONF(obj)->linger, err, len);
}

static int set_retention(void *obj, const char *name, const char *v, char *err, size_t len)
{
	return size_at_least(name, v, 1 << 20, "1M or more, e.g. 512M or 10G",
			     &CONF(obj)->retention, err, len);
}

static int set_capture_retention(void *obj, const char *name, const char *v, char *err,
				 size_t len)
{
	return size_at_least(name, v, 1 << 20, "1M or more, e.g. 512M or 10G",
			     &CONF(obj)->capture_retention, err, len);
}

static int set_window_max_bytes(void *obj, const char *name, const char *v, char *err, size_t len)
{
	int rc = size_at_least(name, v, 64 << 10, "64K or more, e.g. 128M",
			       &CONF(obj)->window_max_bytes, err, len);

	if (!rc)
		CONF(obj)->window_max_bytes_given = true;
	return rc;
}

static int set_window_max_launches(void *obj, const char *name, const char *v, char *err,
				   size_t len)
{
	return count(name, v, 1, 1000000000000ull, &CONF(obj)->window_max_launches, err, len);
}

static int set_group(void *obj, const char *name, const char *v, char *err, size_t len)
{
	if (strlen(v) >= sizeof(CONF(obj)->group) || strchr(v, '/') || strchr(v, ':')) {
		snprintf(err, len, "%s: '%s' is not a group name", name, v);
		return -EINVAL;
	}
	snprintf(CONF(obj)->group, sizeof(CONF(obj)->group), "%s", v);
	return 0;
}

static int set_top_kernels(void *obj, const char *name, const char *v, char *err, size_t len)
{
	return count32(name, v, 1, 1000, &CONF(obj)->top_kernels, err, len);
}

static int set_max_targets(void *obj, const char *name, const char *v, char *err, size_t len)
{
	return count32(name, v, 1, 65536, &CONF(obj)->max_targets, err, len);
}

static int set_max_captures(void *obj, const char *name, const char *v, char *err, size_t len)
{
	return count32(name, v, 1, 64, &CONF(obj)->max_captures, err, len);
}

static int set_capture_timeout(void *obj, const char *name, const char *v, char *err, size_t len)
{
	return seconds(name, v, 1, 86400, &CONF(obj)->capture_timeout, err, len);
}

/* ---- jobs: the environment variables, the kubelet's folder, pod labels ---- */

/* A name as the environment spells it: letters, digits and '_', not first a digit. */
static int set_env_name(char *dst, size_t cap, const char *name, const char *v, char *err,
			size_t len)
{
	bool good = *v && strlen(v) < cap && !(*v >= '0' && *v <= '9');

	for (const char *p = v; good && *p; p++)
		good = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		       (*p >= '0' && *p <= '9') || *p == '_';
	if (!good) {
		snprintf(err, len, "%s: '%s' is not an environment variable's name (e.g. MY_JOB_ID)",
			 name, v);
		return -EINVAL;
	}
	snprintf(dst, cap, "%s", v);
	return 0;
}

static int set_job_env(void *obj, const char *name, const char *v, char *err, size_t len)
{
	return set_env_name(CONF(obj)->job_env, sizeof(CONF(obj)->job_env), name, v, err, len);
}

static int set_rank_env(void *obj, const char *name, const char *v, char *err, size_t len)
{
	return set_env_name(CONF(obj)->rank_env, sizeof(CONF(obj)->rank_env), name, v, err, len);
}

static int set_kubelet_root(void *obj, const char *name, const char *v, char *err, size_t len)
{
	if (*v != '/' || strlen(v) >= sizeof(CONF(obj)->kubelet_root)) {
		snprintf(err, len, "%s: '%s' is not an absolute folder (e.g. /var/lib/kubelet)",
			 name, v);
		return -EINVAL;
	}
	snprintf(CONF(obj)->kubelet_root, sizeof(CONF(obj)->kubelet_root), "%s", v);
	return 0;
}

/* Label keys (app, app.kubernetes.io/name), comma-separated, at most 8 of them. */
static int set_pod_labels(void *obj, const char *name, const char *v, char *err, size_t len)
{
	size_t n = *v ? 1 : 0;
	bool good = strlen(v) < sizeof(CONF(obj)->pod_labels);

	for (const char *p = v; good && *p; p++) {
		n += *p == ',';
		good = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		       (*p >= '0' && *p <= '9') || strchr("-_./,", *p);
	}
	if (!good || n > 8 || strstr(v, ",,") || *v == ',' || (*v && v[strlen(v) - 1] == ',')) {
		snprintf(err, len, "%s: '%s' is not a list of at most 8 label keys (e.g. app,team)",
			 name, v);
		return -EINVAL;
	}
	snprintf(CONF(obj)->pod_labels, sizeof(CONF(obj)->pod_labels), "%s", v);
	return 0;
}

static int set_max_jobs(void *obj, const char *name, const char *v, char *err, size_t len)
{
	return count32(name, v, 1, 4096, &CONF(obj)->max_jobs, err, len);
}

/* Every setting, in --help's order: the config file's keys are these names. */
static const struct opt settings[] = {
	{ "listen", 'l', "ADDR:PORT", set_listen,
	  "HTTP for /metrics and /capture\n(default 127.0.0.1:9464; another address needs\n"
	  "--web-config)" },
	{ "web-config", 0, "FILE", set_web_config,
	  "TLS and authentication: the exporter toolkit's\nweb-config YAML (read at start only)" },
	{ "output", 'o', "DIR", set_output,
	  "window traces, DIR/run_<n>\n(default /var/lib/cuprobe/daemon)" },
	{ "interval", 'i', "SEC", set_interval,
	  "seconds between samples of a process\n(default 60, jittered)" },
	{ "probability", 'P', "P", set_probability,
	  "chance a process is sampled at its turn (default 1)" },
	{ "window-steps", 'n', "N", set_window_steps, "active steps of a window (default 5)" },
	{ "warmup", 0, "N", set_warmup, "warmup steps before them (default 1)" },
	{ "budget", 'b', "PCT", set_budget,
	  "probe cost kept under PCT% of each process's CPU time\n(default 1)" },
	{ "budget-window", 0, "SEC", set_budget_window,
	  "the sliding window the budget is measured over\n(default 300)" },
	{ "step", 's', "COMM=SPEC", set_step,
	  "step probe for processes named COMM (or with the\nexecutable path COMM); repeatable. "
	  "Others: time slices" },
	{ "slice", 0, "SEC", set_slice, "a time slice where no rule matches (default 0.1)" },
	{ "torch-steps", 0, "BOOL", set_torch_steps,
	  "a process that maps PyTorch's libtorch_cpu.so and\nmatches no rule steps by "
	  "--step torch (default true);\nfalse: time slices" },
	{ "cupti", 0, "BOOL", set_cupti,
	  "cupti windows where the process has the agent\n(default false)" },
	{ "stack", 0, "BOOL", set_stack,
	  "each launch's CPU stack in the traces, as record\n--stack (default false; read at "
	  "start only)" },
	{ "cgroup", 0, "PATH", set_cgroup,
	  "only processes in cgroup PATH or under it: /x,\nor its folder on a cgroup2 mount" },
	{ "linger", 0, "SEC", set_linger, "a gone process's series stay this long (default 300)" },
	{ "retention", 0, "SIZE", set_retention,
	  "sampled windows' traces kept under -o, oldest removed\nfirst, windows being "
	  "written included (default 1G)" },
	{ "capture-retention", 0, "SIZE", set_capture_retention,
	  "the same for on-demand captures, apart, under\n-o's captures/ (default 1G)" },
	{ "window-max-bytes", 0, "SIZE", set_window_max_bytes,
	  "a window's trace is cut at this size (default 128M,\nor a retention under that)" },
	{ "window-max-launches", 0, "N", set_window_max_launches,
	  "... or at this many launches (default 1000000)" },
	{ "group", 0, "GROUP", set_group,
	  "traces and folders readable by GROUP (0640, 0750);\nwithout it they are root's only "
	  "(0600, 0700)" },
	{ "top-kernels", 0, "K", set_top_kernels, "kernel label values per process (default 20)" },
	{ "max-targets", 0, "N", set_max_targets, "processes sampled at once (default 1024)" },
	{ "capture-timeout", 0, "SEC", set_capture_timeout,
	  "longest wait of an on-demand capture (default 120)" },
	{ "max-captures", 0, "N", set_max_captures,
	  "on-demand captures at once, 1 to 64; more are 429\n(default 4; read at start only)" },
	{ "job-env", 0, "NAME", set_job_env,
	  "the environment variable naming a process's job,\nover the launchers' own" },
	{ "rank-env", 0, "NAME", set_rank_env, "... and the one giving its rank" },
	{ "kubelet-root", 0, "DIR", set_kubelet_root,
	  "the kubelet's folder, for pods' names\n(default /var/lib/kubelet)" },
	{ "pod-labels", 0, "KEYS", set_pod_labels,
	  "pod labels exported, e.g. app,team (default none)" },
	{ "max-jobs", 0, "N", set_max_jobs, "job label values; the rest are \"other\"\n(default 64)" },
};

const struct opt_table dconf_opts = OPT_TABLE(settings);

int dconf__set(struct dconf *c, const char *key, const char *v, char *err, size_t len)
{
	const struct opt *o = opt__find(&dconf_opts, key);

	if (!o) {
		snprintf(err, len, "unknown setting '%s' (cuprobe daemon --help lists them)", key);
		return -EINVAL;
	}
	return o->set(c, key, v, err, len);
}

int dconf__check(const struct dconf *c, char *err, size_t len)
{
	struct addr_port ap;
	char why[256];

	/* The web-config's content is checked once it is read (webconf__check_listen). */
	if (!c->web_config[0] && !parse_addr_port(c->listen, &ap, why, sizeof(why)) &&
	    !addr_is_loopback(&ap))
		return webconf__check_listen(NULL, c->listen, false, err, len);
	if (c->window_max_bytes > c->retention) {
		snprintf(err, len, "window-max-bytes (%llu) is more than retention (%llu): a window "
			 "must fit in what is kept; lower window-max-bytes or raise retention",
			 (unsigned long long)c->window_max_bytes, (unsigned long long)c->retention);
		return -EINVAL;
	}
	if (c->window_max_bytes > c->capture_retention) {
		snprintf(err, len, "window-max-bytes (%llu) is more than capture-retention (%llu): a "
			 "capture must fit in what is kept; lower window-max-bytes or raise "
			 "capture-retention", (unsigned long long)c->window_max_bytes,
			 (unsigned long long)c->capture_retention);
		return -EINVAL;
	}
	return 0;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'))
		*--e = '\0';
	return s;
}

int dconf__finish(struct dconf *c, char *err, size_t len)
{
	char cg[sizeof(c->cgroup)];
	int rc;

	if (!c->window_max_bytes_given) {
		c->window_max_bytes = DCONF_WINDOW_MAX_BYTES;
		if (c->retention < c->window_max_bytes)
			c->window_max_bytes = c->retention;
		if (c->capture_retention < c->window_max_bytes)
			c->window_max_bytes = c->capture_retention;
	}
	if (c->cgroup[0]) {
		rc = procinfo__cgroup_path(PROCINFO_MOUNTINFO, c->cgroup, cg, sizeof(cg), err, len);
		if (rc == -ENODEV)
			p_warn("%s", err);
		else if (rc)
			return rc;
		snprintf(c->cgroup, sizeof(c->cgroup), "%s", cg);
	}
	return dconf__check(c, err, len);
}

int dconf__load(struct dconf *c, const char *path, char *err, size_t len)
{
	char line[4096], msg[512];
	/* It chooses the web-config and the listen address: held as the web-config is. */
	int fd = safe_file__open_trusted(path, false, msg, sizeof(msg)), lineno = 0, rc = 0;
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;

	if (!f) {
		rc = fd < 0 ? fd : -errno;
		snprintf(err, len, "cannot read config %s: %s", path, fd < 0 ? msg : strerror(errno));
		if (fd >= 0)
			close(fd);
		return rc;
	}
	while (!rc && fgets(line, sizeof(line), f)) {
		char *s = trim(line), *eq;

		lineno++;
		if (!*s || *s == '#')
			continue;
		eq = strchr(s, '=');
		if (!eq) {
			snprintf(err, len, "%s:%d: '%s' is not 'key = value'", path, lineno, s);
			rc = -EINVAL;
			break;
		}
		*eq = '\0';
		rc = dconf__set(c, trim(s), trim(eq + 1), msg, sizeof(msg));
		if (rc)
			snprintf(err, len, "%s:%d: %s", path, lineno, msg);
	}
	fclose(f);
	return rc;
}

const struct step_rule *dconf__match(const struct dconf *c, const char *comm, const char *exe)
{
	for (size_t i = 0; i < c->nrules; i++) {
		const struct step_rule *r = &c->rules[i];

		if (strchr(r->match, '/') ? !strcmp(r->match, exe) : !strcmp(r->match, comm))
			return r;
	}
	return NULL;
}

void dconf__free(struct dconf *c)
{
	for (size_t i = 0; i < c->nrules; i++)
		step_spec__free(&c->rules[i].spec);
	free(c->rules);
	c->rules = NULL;
	c->nrules = 0;
}
