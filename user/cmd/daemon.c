// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* cuprobe daemon's command line: the config file first, then these options over it. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "daemon_cmd.h"
#include "daemon/daemon.h"
#include "dconf.h"
#include "log.h"

static const char usage_text[] =
	"usage: cuprobe daemon [--config FILE] [OPTIONS]\n"
	"\n"
	"Samples short windows of every CUDA process on the host, within a CPU budget,\n"
	"keeps their traces and serves Prometheus metrics. Runs as root, one per host.\n"
	"\n"
	"  -c, --config FILE        settings as 'key = value' lines (the long names below);\n"
	"                           read again on SIGHUP; the command line wins\n"
	"  -l, --listen ADDR:PORT   HTTP for /metrics and /capture (default 127.0.0.1:9464)\n"
	"  -o, --output DIR         window traces, DIR/run_<n> (default /var/lib/cuprobe/daemon)\n"
	"  -i, --interval SEC       seconds between samples of a process (default 60, jittered)\n"
	"  -P, --probability P      chance a process is sampled at its turn (default 1)\n"
	"  -n, --window-steps N     active steps of a window (default 5)\n"
	"      --warmup N           warmup steps before them (default 1)\n"
	"  -b, --budget PCT         probe cost kept under PCT%% of each process's CPU time\n"
	"                           (default 1)\n"
	"      --budget-window SEC  the sliding window the budget is measured over (default 300)\n"
	"  -s, --step COMM=SPEC     step probe for processes named COMM (or with the\n"
	"                           executable path COMM); repeatable. Others: time slices\n"
	"      --slice SEC          a time slice where no rule matches (default 0.1)\n"
	"      --cupti BOOL         cupti windows where the process has the agent (default false)\n"
	"      --stack BOOL         each launch's CPU stack in the traces, as record --stack\n"
	"                           (default false; read at start only)\n"
	"      --cgroup PATH        only processes whose cgroup path begins with PATH\n"
	"      --linger SEC         a gone process's series stay this long (default 300)\n"
	"      --retention BYTES    traces kept under -o, oldest removed first, windows being\n"
	"                           written included (default 1G)\n"
	"      --window-max-bytes BYTES  a window's trace is cut at this size (default 128M)\n"
	"      --window-max-launches N   ... or at this many launches (default 1000000)\n"
	"      --group GROUP        traces and folders readable by GROUP (0640, 0750); without\n"
	"                           it they are root's only (0600, 0700)\n"
	"      --top-kernels K      kernel label values per process (default 20)\n"
	"      --max-targets N      processes sampled at once (default 1024)\n"
	"      --capture-timeout SEC  longest wait of an on-demand capture (default 120)\n"
	"  -v, --verbose            debug messages\n"
	"  -q, --quiet              warnings and errors only\n"
	"\n"
	"Examples:\n"
	"  cuprobe daemon --config /etc/cuprobe/daemon.conf\n"
	"  cuprobe daemon -i 30 -P 0.2 --step python3=usdt:libtorch_cpu.so:torch:step\n"
	"  curl -s localhost:9464/metrics; curl -X POST 'localhost:9464/capture?pid=42&steps=3'\n";

enum { OPT_WARMUP = 256, OPT_BUDGET_WINDOW, OPT_SLICE, OPT_CUPTI, OPT_LINGER, OPT_RETENTION,
       OPT_TOP, OPT_MAX_TARGETS, OPT_CAPTURE_TIMEOUT, OPT_CGROUP, OPT_STACK, OPT_WMAX_BYTES,
       OPT_WMAX_LAUNCHES, OPT_GROUP };

static const struct option longopts[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "listen", required_argument, NULL, 'l' },
	{ "output", required_argument, NULL, 'o' },
	{ "interval", required_argument, NULL, 'i' },
	{ "probability", required_argument, NULL, 'P' },
	{ "window-steps", required_argument, NULL, 'n' },
	{ "warmup", required_argument, NULL, OPT_WARMUP },
	{ "budget", required_argument, NULL, 'b' },
	{ "budget-window", required_argument, NULL, OPT_BUDGET_WINDOW },
	{ "step", required_argument, NULL, 's' },
	{ "slice", required_argument, NULL, OPT_SLICE },
	{ "cupti", required_argument, NULL, OPT_CUPTI },
	{ "stack", required_argument, NULL, OPT_STACK },
	{ "cgroup", required_argument, NULL, OPT_CGROUP },
	{ "linger", required_argument, NULL, OPT_LINGER },
	{ "retention", required_argument, NULL, OPT_RETENTION },
	{ "window-max-bytes", required_argument, NULL, OPT_WMAX_BYTES },
	{ "window-max-launches", required_argument, NULL, OPT_WMAX_LAUNCHES },
	{ "group", required_argument, NULL, OPT_GROUP },
	{ "top-kernels", required_argument, NULL, OPT_TOP },
	{ "max-targets", required_argument, NULL, OPT_MAX_TARGETS },
	{ "capture-timeout", required_argument, NULL, OPT_CAPTURE_TIMEOUT },
	{ "verbose", no_argument, NULL, 'v' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "help", no_argument, NULL, 'h' },
	{},
};

struct args {
	int argc;
	char **argv;
	const char *config;
	int verbose;
	bool quiet, help;
};

static const char *long_name(int c)
{
	for (const struct option *o = longopts; o->name; o++)
		if (o->val == c)
			return o->name;
	return "?";
}

/* The command line over c; also how SIGHUP applies it again. 0, 1 (--help) or -EINVAL. */
static int apply_args(struct dconf *c, void *arg)
{
	struct args *a = arg;
	char err[512];
	int opt;

	optind = 0; /* 0: GNU getopt starts over (SIGHUP parses again) */
	opterr = 1;
	while ((opt = getopt_long(a->argc, a->argv, "c:l:o:i:P:n:b:s:vqh", longopts, NULL)) != -1) {
		switch (opt) {
		case 'c': a->config = optarg; break;
		case 'v': a->verbose++; break;
		case 'q': a->quiet = true; break;
		case 'h': a->help = true; break;
		case '?': return -EINVAL;
		default:
			if (c && dconf__set(c, long_name(opt), optarg, err, sizeof(err))) {
				fprintf(stderr, "cuprobe daemon: --%s\n", err);
				return -EINVAL;
			}
		}
	}
	if (optind < a->argc) {
		fprintf(stderr, "cuprobe daemon: unexpected argument '%s' (cuprobe daemon --help)\n",
			a->argv[optind]);
		return -EINVAL;
	}
	return 0;
}

int daemon_main(int argc, char **argv)
{
	struct args a = { .argc = argc, .argv = argv };
	struct dconf c;
	char err[512];

	/* First only which file, -v and --help; then the file; then the options over it. */
	if (apply_args(NULL, &a))
		return 2;
	if (a.help) {
		fputs(usage_text, stdout);
		return 0;
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
	if (dconf__check(&c, err, sizeof(err))) {
		fprintf(stderr, "cuprobe daemon: %s\n", err);
		dconf__free(&c);
		return 2;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "cuprobe daemon: must run as root (it loads BPF programs and reads "
			"every process's maps): run it with sudo, or as the systemd unit\n");
		dconf__free(&c);
		return 1;
	}
	return daemon__run(&c, a.config, apply_args, &a);
}
