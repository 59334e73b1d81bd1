// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cuprobe daemon's command line: the config file first, then these options over it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmd/commands.h"
#include "daemon/caps.h"
#include "daemon/dconf.h"
#include "daemon/service.h"
#include "daemon/webconf.h"
#include "util/log.h"
#include "util/parse.h"

struct args {
	int argc;
	char **argv;
	const char *config;
	int verbose;
	bool quiet;
};

/* Root in a container may hold only some of root's capabilities: the missing
 * ones are said before anything fails for want of them. 0, or -EPERM (said). */
static int check_caps(void)
{
	char buf[512];
	uint64_t eff;

	if (daemon_caps__effective(&eff))
		return 0;
	if (daemon_caps__missing(eff, buf, sizeof(buf))) {
		fprintf(stderr, "cuprobe daemon: missing capabilities: %s: grant them (in a container, "
			"securityContext.capabilities.add as in deploy/daemonset.yaml), or run it as "
			"root with all of root's\n", buf);
		return -EPERM;
	}
	daemon_caps__degraded(eff, buf, sizeof(buf));
	if (buf[0])
		p_warn("without %s: such files are opened by their names, or not probed "
		       "(deleted ones); deploy/daemonset.yaml adds them", buf);
	return 0;
}

static int set_config(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	(void)name, (void)err, (void)len;
	((struct args *)obj)->config = arg;
	return 0;
}

static int set_verbose(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	(void)name, (void)arg, (void)err, (void)len;
	((struct args *)obj)->verbose++;
	return 0;
}

static int set_quiet(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	(void)name, (void)arg, (void)err, (void)len;
	((struct args *)obj)->quiet = true;
	return 0;
}

/* The command line's own options, before and after the settings (dconf_opts). */
static const struct opt first_opts[] = {
	{ "config", 'c', "FILE", set_config,
	  "settings as 'key = value' lines (the long names\nbelow); read again on SIGHUP; "
	  "the command line\nwins" },
};

static const struct opt last_opts[] = {
	{ "verbose", 'v', NULL, set_verbose, "debug messages" },
	{ "quiet", 'q', NULL, set_quiet, "warnings and errors only" },
};

static const struct opt_table first_table = OPT_TABLE(first_opts);
static const struct opt_table last_table = OPT_TABLE(last_opts);

static void usage(FILE *f)
{
	const struct opt_group groups[] = { { &first_table, NULL }, { &dconf_opts, NULL },
					    { &last_table, NULL } };

	fputs("usage: cuprobe daemon [--config FILE] [OPTIONS]\n"
	      "\n"
	      "Samples short windows of every CUDA process on the host, within a CPU budget,\n"
	      "keeps their traces and serves Prometheus metrics. Runs as root, one per host.\n"
	      "\n", f);
	opt__help(f, groups, sizeof(groups) / sizeof(groups[0]));
	fputs("\n" PARSE_UNITS_HELP
	      "\n"
	      "Examples:\n"
	      "  cuprobe daemon --config /etc/cuprobe/daemon.conf\n"
	      "  cuprobe daemon -i 30 -P 0.2 --step python3=torch:Optimizer.step#Adam\n"
	      "  curl -s localhost:9464/metrics\n"
	      "  curl -X POST 'localhost:9464/capture?pid=42&steps=3'\n",
	      f);
}

/*
 * The command line over c (NULL: only -c, -v, -q and --help are taken); also
 * how SIGHUP applies it again. 0, 1 (--help, printed) or -EINVAL (printed).
 */
static int apply_args(struct dconf *c, void *arg)
{
	struct args *a = arg;
	const struct opt_group groups[] = { { &first_table, a }, { &dconf_opts, c },
					    { &last_table, a } };
	const struct opt_cmd cmd = { .name = "daemon", .groups = groups,
				     .ngroups = sizeof(groups) / sizeof(groups[0]), .usage = usage };
	int first, rc = opt__parse(&cmd, a->argc, a->argv, &first);

	if (rc)
		return rc;
	if (first < a->argc) {
		fprintf(stderr, "cuprobe daemon: unexpected argument '%s' (cuprobe daemon --help)\n",
			a->argv[first]);
		return -EINVAL;
	}
	return 0;
}

/* The web-config, when there is one, and whether it may serve the listen address. */
static int load_web(const struct dconf *c, struct webconf *web, char *err, size_t len)
{
	struct addr_port ap;
	char why[256];
	int rc;

	memset(web, 0, sizeof(*web));
	if (!c->web_config[0])
		return 0;
	rc = webconf__load(web, c->web_config, err, len);
	if (rc)
		return rc;
	rc = parse_addr_port(c->listen, &ap, why, sizeof(why));
	if (!rc)
		rc = webconf__check_listen(web, c->listen, addr_is_loopback(&ap), err, len);
	if (rc)
		webconf__free(web);
	return rc;
}

int daemon_main(int argc, char **argv)
{
	struct args a = { .argc = argc, .argv = argv };
	static struct webconf web;
	struct dconf c;
	char err[1024];
	int rc;

	/* First only which file, -v and --help; then the file; then the options over it. */
	switch (apply_args(NULL, &a)) {
	case 0: break;
	case 1: return 0;
	default: return 2;
	}
	log_level = a.quiet ? LOG_WARN : a.verbose ? LOG_DEBUG : LOG_INFO;
	log_setup_libbpf();
	dconf__defaults(&c);
	if (a.config && dconf__load(&c, a.config, err, sizeof(err))) {
		fprintf(stderr, "cuprobe daemon: %s\n", err);
		dconf__free(&c);
		return 2;
	}
	if (apply_args(&c, &a)) {
		dconf__free(&c);
		return 2;
	}
	if (dconf__finish(&c, err, sizeof(err)) || load_web(&c, &web, err, sizeof(err))) {
		fprintf(stderr, "cuprobe daemon: %s\n", err);
		dconf__free(&c);
		return 2;
	}
	if (!c.window_max_bytes_given && c.window_max_bytes < DCONF_WINDOW_MAX_BYTES)
		p_info("window-max-bytes is %llu bytes, as %s is: its default, %lluM, would not "
		       "fit there (give window-max-bytes to choose)",
		       (unsigned long long)c.window_max_bytes,
		       c.window_max_bytes == c.retention ? "retention" : "capture-retention",
		       DCONF_WINDOW_MAX_BYTES >> 20);
	if (geteuid() != 0) {
		fprintf(stderr, "cuprobe daemon: must run as root (it loads BPF programs and reads "
			"every process's maps): run it with sudo, or as the systemd unit\n");
		dconf__free(&c);
		rc = 1;
	} else if (check_caps()) {
		dconf__free(&c);
		rc = 1;
	} else {
		/* The service owns c from here (it frees it). */
		rc = service__run(&c, c.web_config[0] ? &web : NULL, a.config, apply_args, &a);
	}
	webconf__free(&web);
	return rc;
}
