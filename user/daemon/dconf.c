// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dconf.h"

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
		.window_max_bytes = 128ull << 20,
		.window_max_launches = 1000000,
		.top_kernels = 20,
		.max_targets = 1024,
		.capture_timeout = 120,
	};
}

static int parse_num(const char *v, double lo, double hi, double *out)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(v, &end);
	if (errno || end == v || *end || isnan(d) || d < lo || d > hi)
		return -EINVAL;
	*out = d;
	return 0;
}

/* Bytes with an optional K, M, G or T (powers of 1024). */
static int parse_bytes(const char *v, uint64_t *out)
{
	char *end;
	double d;
	int shift = 0;

	errno = 0;
	d = strtod(v, &end);
	if (errno || end == v || d < 0)
		return -EINVAL;
	switch (*end) {
	case 'T': case 't': shift += 10; /* fall through */
	case 'G': case 'g': shift += 10; /* fall through */
	case 'M': case 'm': shift += 10; /* fall through */
	case 'K': case 'k': shift += 10; end++; break;
	}
	if (*end == 'B' || *end == 'b')
		end++;
	if (*end)
		return -EINVAL;
	*out = (uint64_t)(d * (double)(1ull << shift));
	return 0;
}

static int parse_bool(const char *v, bool *out)
{
	if (!strcmp(v, "true") || !strcmp(v, "yes") || !strcmp(v, "1") || !strcmp(v, "on"))
		*out = true;
	else if (!strcmp(v, "false") || !strcmp(v, "no") || !strcmp(v, "0") || !strcmp(v, "off"))
		*out = false;
	else
		return -EINVAL;
	return 0;
}

/* step = MATCH=SPEC: MATCH is a comm, or an executable's path when it has a '/'. */
static int add_rule(struct dconf *c, const char *v, char *err, size_t len)
{
	const char *eq = strchr(v, '=');
	struct step_rule *r, *nr;
	char perr[256];

	if (!eq || eq == v || !eq[1] || (size_t)(eq - v) >= sizeof(r->match)) {
		snprintf(err, len, "step: '%s' is not COMM=SPEC (e.g. python3=usdt:libtrain.so:train:step, "
			 "or /usr/bin/train=train_step)", v);
		return -EINVAL;
	}
	if (c->nrules >= DCONF_MAX_RULES) {
		snprintf(err, len, "step: more than %d rules", DCONF_MAX_RULES);
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
		snprintf(err, len, "step: '%s': %s", eq + 1, perr);
		return -EINVAL;
	}
	c->nrules++;
	return 0;
}

static int set_num(const char *key, const char *v, double lo, double hi, double *out, char *err,
		   size_t len)
{
	if (!parse_num(v, lo, hi, out))
		return 0;
	snprintf(err, len, "%s: '%s' is not a number from %g to %g", key, v, lo, hi);
	return -EINVAL;
}

static int set_u32(const char *key, const char *v, double lo, double hi, uint32_t *out, char *err,
		   size_t len)
{
	double d;
	int rc = set_num(key, v, lo, hi, &d, err, len);

	if (!rc && d != floor(d)) {
		snprintf(err, len, "%s: '%s' is not a whole number", key, v);
		return -EINVAL;
	}
	*out = rc ? *out : (uint32_t)d;
	return rc;
}

static int set_listen(struct dconf *c, const char *v, char *err, size_t len)
{
	const char *colon = strrchr(v, ':');
	char *end;
	long port;

	port = colon ? strtol(colon + 1, &end, 10) : -1;
	if (!colon || colon == v || !colon[1] || *end || port < 1 || port > 65535 ||
	    strlen(v) >= sizeof(c->listen)) {
		snprintf(err, len, "listen: '%s' is not ADDR:PORT (e.g. 127.0.0.1:9464 or 0.0.0.0:9464)",
			 v);
		return -EINVAL;
	}
	snprintf(c->listen, sizeof(c->listen), "%s", v);
	return 0;
}

int dconf__set(struct dconf *c, const char *key, const char *v, char *err, size_t len)
{
	if (!strcmp(key, "listen"))
		return set_listen(c, v, err, len);
	if (!strcmp(key, "output")) {
		if (!*v || strlen(v) >= sizeof(c->output)) {
			snprintf(err, len, "output: give a folder");
			return -EINVAL;
		}
		snprintf(c->output, sizeof(c->output), "%s", v);
		return 0;
	}
	if (!strcmp(key, "interval"))
		return set_num(key, v, 0.1, 86400, &c->interval, err, len);
	if (!strcmp(key, "probability"))
		return set_num(key, v, 0, 1, &c->probability, err, len);
	if (!strcmp(key, "window-steps"))
		return set_u32(key, v, 1, 10000, &c->window_steps, err, len);
	if (!strcmp(key, "warmup"))
		return set_u32(key, v, 0, 100, &c->warmup, err, len);
	if (!strcmp(key, "budget"))
		return set_num(key, v, 0.001, 100, &c->budget, err, len);
	if (!strcmp(key, "budget-window"))
		return set_num(key, v, 1, 86400, &c->budget_window, err, len);
	if (!strcmp(key, "linger"))
		return set_num(key, v, 0, 86400, &c->linger, err, len);
	if (!strcmp(key, "slice"))
		return set_num(key, v, 0.001, 60, &c->slice, err, len);
	if (!strcmp(key, "top-kernels"))
		return set_u32(key, v, 1, 1000, &c->top_kernels, err, len);
	if (!strcmp(key, "max-targets"))
		return set_u32(key, v, 1, 65536, &c->max_targets, err, len);
	if (!strcmp(key, "capture-timeout"))
		return set_num(key, v, 1, 86400, &c->capture_timeout, err, len);
	if (!strcmp(key, "retention")) {
		if (!parse_bytes(v, &c->retention) && c->retention >= 1 << 20)
			return 0;
		snprintf(err, len, "retention: '%s' is not a size of 1M or more (e.g. 512M, 10G)", v);
		return -EINVAL;
	}
	if (!strcmp(key, "window-max-bytes")) {
		if (!parse_bytes(v, &c->window_max_bytes) && c->window_max_bytes >= 64 << 10)
			return 0;
		snprintf(err, len, "window-max-bytes: '%s' is not a size of 64K or more (e.g. 128M)", v);
		return -EINVAL;
	}
	if (!strcmp(key, "window-max-launches")) {
		double d;

		if (!parse_num(v, 1, 1e12, &d) && d == floor(d)) {
			c->window_max_launches = (uint64_t)d;
			return 0;
		}
		snprintf(err, len, "window-max-launches: '%s' is not a whole number of 1 or more", v);
		return -EINVAL;
	}
	if (!strcmp(key, "group")) {
		if (strlen(v) >= sizeof(c->group) || strchr(v, '/') || strchr(v, ':')) {
			snprintf(err, len, "group: '%s' is not a group name", v);
			return -EINVAL;
		}
		snprintf(c->group, sizeof(c->group), "%s", v);
		return 0;
	}
	if (!strcmp(key, "cupti")) {
		if (!parse_bool(v, &c->cupti))
			return 0;
		snprintf(err, len, "cupti: '%s' is not true or false", v);
		return -EINVAL;
	}
	if (!strcmp(key, "stack")) {
		if (!parse_bool(v, &c->stack))
			return 0;
		snprintf(err, len, "stack: '%s' is not true or false", v);
		return -EINVAL;
	}
	if (!strcmp(key, "cgroup")) {
		if (*v != '/' || strlen(v) >= sizeof(c->cgroup)) {
			snprintf(err, len, "cgroup: '%s' is not a cgroup path (e.g. /kubepods.slice)", v);
			return -EINVAL;
		}
		snprintf(c->cgroup, sizeof(c->cgroup), "%s", v);
		return 0;
	}
	if (!strcmp(key, "step"))
		return add_rule(c, v, err, len);
	snprintf(err, len, "unknown setting '%s' (cuprobe daemon --help lists them)", key);
	return -EINVAL;
}

int dconf__check(const struct dconf *c, char *err, size_t len)
{
	if (c->window_max_bytes > c->retention) {
		snprintf(err, len, "window-max-bytes (%llu) is more than retention (%llu): a window "
			 "must fit in what is kept; lower window-max-bytes or raise retention",
			 (unsigned long long)c->window_max_bytes, (unsigned long long)c->retention);
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

int dconf__load(struct dconf *c, const char *path, char *err, size_t len)
{
	char line[4096], msg[512];
	FILE *f = fopen(path, "re");
	int lineno = 0, rc = 0;

	if (!f) {
		rc = -errno;
		snprintf(err, len, "cannot read config %s: %s", path, strerror(errno));
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
