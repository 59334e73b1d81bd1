// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "record_opts.h"
#include "schedule_parse.h"

#define DEFAULT_RINGBUF (16ull << 20)

void record_usage(FILE *f)
{
	fputs("usage: cuprobe record [OPTIONS] -- COMMAND [ARGS...]\n"
	      "       cuprobe record [OPTIONS] -p PID[,PID...]\n"
	      "\n"
	      "Records every CUDA kernel launch, graph launch, async copy and set of the\n"
	      "target processes with uprobes, into Kineto-format traces.\n"
	      "\n"
	      "  -o, --output DIR        trace folder (default ./cuprobe-runs); each cycle\n"
	      "                          goes to DIR/run_<k>/, never overwriting\n"
	      "  -p, --pid PID[,PID...]  attach to running processes\n"
	      "      --children          with -p: their children and descendants too, those\n"
	      "                          running and those to come (a command's always are)\n"
	      "      --step SPEC         step boundary: SYMBOL | OBJECT:SYMBOL |\n"
	      "                          usdt:OBJECT:PROVIDER:NAME; the k-th hit ends step k-1\n"
	      "      --step-every N      count one step every N hits of the step probe\n"
	      "      --schedule SPEC     torch.profiler's schedule: wait=N,warmup=N,active=N\n"
	      "                          [,repeat=N][,skip_first=N][,skip_first_wait=0|1];\n"
	      "                          each cycle goes to its own DIR/run_<k>/\n"
	      "      --duration SEC      stop after SEC seconds (Ctrl-C also stops cleanly)\n"
	      "      --cupti             full GPU timings through the in-process agent\n"
	      "      --cupti-wait SEC    how long a cycle waits for its GPU records (default 5)\n"
	      "      --latency           API durations (adds return probes: ~1.6x the cost)\n"
	      "      --stack             each launch's CPU stack (frame pointers; Python 3.10-3.13\n"
	      "                          frames too), as python_function spans in the trace\n"
	      "      --ringbuf-size SIZE ring buffer between BPF and cuprobe, its starting size\n"
	      "                          (default 16M; it grows with the rate)\n"
	      "  -q, --quiet             no progress on stderr\n"
	      "  -v, --verbose           more detail, libbpf's messages too\n"
	      "  -h, --help              this text\n"
	      "\n"
	      "examples:\n"
	      "  cuprobe record -- python train.py\n"
	      "  cuprobe record -p 4242 --duration 10 -o /tmp/traces\n"
	      "  cuprobe record --step train_step --schedule wait=5,warmup=1,active=3,repeat=2 \\\n"
	      "      -- ./train\n"
	      "  cuprobe record --step libcudart:cudaDeviceSynchronize \\\n"
	      "      --schedule wait=1,warmup=1,active=2 -p 4242\n"
	      "  cuprobe report cuprobe-runs/run_0\n",
	      f);
}

int parse_size(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;
	int shift = 0;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s || *s == '-')
		return -EINVAL;
	switch (*end) {
	case 'G': case 'g': shift = 30; end++; break;
	case 'M': case 'm': shift = 20; end++; break;
	case 'K': case 'k': shift = 10; end++; break;
	case '\0': break;
	default: return -EINVAL;
	}
	if (*end || v > (UINT64_MAX >> shift))
		return -EINVAL;
	*out = (uint64_t)v << shift;
	return 0;
}

/* The subcommand whose options are parsed: compare shares record's. */
static const char *opts_cmd = "record";

static int bad(const char *what, const char *fix)
{
	fprintf(stderr, "cuprobe %s: %s: %s (see cuprobe %s --help)\n", opts_cmd, what, fix,
		opts_cmd);
	return -EINVAL;
}

static int parse_pids(struct record_opts *o, const char *arg)
{
	char *copy = strdup(arg), *save = NULL, *tok, *end;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		long v;

		errno = 0;
		v = strtol(tok, &end, 10);
		if (errno || *end || v <= 0 || v > INT_MAX) {
			err = bad("-p: not a process id", "give positive numbers separated by commas");
			break;
		}
		for (size_t i = 0; i < o->npids; i++) {
			if (o->pids[i] == (pid_t)v) {
				err = bad("-p: a process is given twice", "name each process once");
				break;
			}
		}
		if (err)
			break;
		if (o->npids == MAX_PIDS) {
			err = bad("-p: too many processes", "give at most 64; run one cuprobe per group");
			break;
		}
		o->pids[o->npids++] = (pid_t)v;
	}
	free(copy);
	return err;
}

static int check(struct record_opts *o)
{
	if (o->has_schedule && !o->has_step)
		return bad("--schedule needs --step", "the schedule counts steps: name a step "
			   "function with --step SYMBOL");
	if (o->cupti_wait != 5 && !o->cupti)
		return bad("--cupti-wait needs --cupti", "add --cupti, or leave --cupti-wait out");
	if (o->step_every > 1 && !o->has_step)
		return bad("--step-every needs --step", "name a step function with --step SYMBOL");
	if (o->latency && o->cupti)
		return bad("--latency and --cupti together", "a recording has one mode: --cupti for "
			   "GPU timings, --latency for API durations");
	if (o->children && !o->npids)
		return bad("--children goes with -p", "a command's children are always followed");
	if (!o->cmd && !o->npids)
		return bad("nothing to record", "give -p PID or -- COMMAND");
	if (o->cmd && o->npids)
		return bad("both -p and a command given", "use one of them");
	if (o->ringbuf_bytes < 4096 || o->ringbuf_bytes > (1ull << 30) ||
	    (o->ringbuf_bytes & (o->ringbuf_bytes - 1)))
		return bad("--ringbuf-size must be a power of two from 4K to 1G", "e.g. 16M or 64M");
	return 0;
}

static int parse_one(struct record_opts *o, int c, const char *arg)
{
	char *end, msg[256];
	unsigned long v;

	switch (c) {
	case 'o':
		o->output = arg;
		return 0;
	case 'p':
		return parse_pids(o, arg);
	case 'd':
		errno = 0;
		o->duration = strtod(arg, &end);
		/* Up to a year: the deadline stays well inside 64-bit nanoseconds. */
		if (errno || *end || !(o->duration > 0) || !(o->duration <= 366 * 86400.0))
			return bad("--duration: not a number of seconds between 0 and a year",
				   "e.g. --duration 30");
		return 0;
	case 's':
		step_spec__free(&o->step);
		if (step_spec__parse(arg, &o->step, msg, sizeof(msg)))
			return bad(msg, "e.g. --step train_step, --step libtrain.so:train_step or "
				   "--step usdt:./train:train:step");
		o->has_step = true;
		return 0;
	case 'S':
		if (schedule_parse(arg, &o->sched, msg, sizeof(msg)))
			return bad(msg, "e.g. --schedule wait=1,warmup=1,active=3,repeat=2");
		o->has_schedule = true;
		return 0;
	case 'e':
		errno = 0;
		v = strtoul(arg, &end, 10);
		if (errno || *end || *arg == '-' || v == 0 || v > 1000000)
			return bad("--step-every: not a positive count", "e.g. --step-every 3");
		o->step_every = v;
		return 0;
	case 'r':
		if (parse_size(arg, &o->ringbuf_bytes))
			return bad("--ringbuf-size: not a size", "e.g. 16M");
		return 0;
	case 'c':
		o->cupti = true;
		return 0;
	case 'w':
		errno = 0;
		o->cupti_wait = strtod(arg, &end);
		if (errno || *end || !(o->cupti_wait >= 0) || !(o->cupti_wait <= 3600))
			return bad("--cupti-wait: not a number of seconds from 0 to 3600",
				   "e.g. --cupti-wait 10");
		return 0;
	case 'l':
		o->latency = true;
		return 0;
	case 'k':
		o->stack = true;
		return 0;
	case 'C':
		o->children = true;
		return 0;
	case 'q':
		o->quiet = true;
		return 0;
	case 'v':
		o->verbose++;
		return 0;
	default:
		return bad("unknown option", "check the spelling");
	}
}

int record_opts__parse_shared(struct record_opts *o, int c, const char *arg, const char *cmd)
{
	int err;

	opts_cmd = cmd;
	err = parse_one(o, c, arg);
	opts_cmd = "record";
	return err;
}

void record_opts__free(struct record_opts *o)
{
	step_spec__free(&o->step);
}

int record_opts__parse(struct record_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },
		{ "pid", required_argument, NULL, 'p' },
		{ "duration", required_argument, NULL, 'd' },
		{ "step", required_argument, NULL, 's' },
		{ "schedule", required_argument, NULL, 'S' },
		{ "step-every", required_argument, NULL, 'e' },
		{ "ringbuf-size", required_argument, NULL, 'r' },
		{ "cupti", no_argument, NULL, 'c' },
		{ "cupti-wait", required_argument, NULL, 'w' },
		{ "latency", no_argument, NULL, 'l' },
		{ "children", no_argument, NULL, 'C' },
		{ "stack", no_argument, NULL, 'k' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	int c, err;

	memset(o, 0, sizeof(*o));
	o->output = "cuprobe-runs";
	o->ringbuf_bytes = DEFAULT_RINGBUF;
	o->step_every = 1;
	o->cupti_wait = 5;
	optind = 0; /* glibc: 0 reinitialises fully, 1 would keep state from a previous argv */
	opterr = 0;
	/* "+": stop at the command's name, so its own options stay its own. */
	while ((c = getopt_long(argc, argv, "+:o:p:qvh", longopts, NULL)) != -1) {
		if (c == 'h') {
			record_usage(stdout);
			return 1;
		}
		if (c == '?' || c == ':') {
			fprintf(stderr, "cuprobe record: %s %s: see cuprobe record --help\n",
				c == ':' ? "missing value for" : "unknown option", argv[optind - 1]);
			return -EINVAL;
		}
		err = parse_one(o, c, optarg);
		if (err)
			return err;
	}
	if (optind < argc)
		o->cmd = &argv[optind];
	return check(o);
}
