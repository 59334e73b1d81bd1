// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include "compare.h"
#include "compare_opts.h"

#define DEFAULT_RINGBUF (16ull << 20)

void compare_usage(FILE *f)
{
	fputs("usage: cuprobe compare [OPTIONS] -- COMMAND [ARGS...]\n"
	      "       cuprobe compare [OPTIONS] -p PID[,PID...]\n"
	      "\n"
	      "Measures what profiling costs, in one run: windows of steps rotate through\n"
	      "the modes in a balanced order (A B C C B A ...), the step probe times every\n"
	      "step in every mode, and each mode's step time is set against off's, with a\n"
	      "95% bootstrap confidence interval, beside the probe cost and CUPTI's own\n"
	      "overhead records.\n"
	      "\n"
	      "  -o, --output DIR         where compare.json, compare.html and the traces\n"
	      "                           (DIR/<mode>/run_<k>/) go; default a new\n"
	      "                           cuprobe-compare/<n>\n"
	      "  -p, --pid PID[,PID...]   attach to running processes\n"
	      "      --children           with -p: their descendants too\n"
	      "      --modes LIST         of off (the step probe only: the baseline), bpf\n"
	      "                           (launch probes), cupti (launch probes and the agent),\n"
	      "                           latency (launch and return probes); default\n"
	      "                           off,bpf,cupti\n"
	      "      --steps-per-mode N   steps measured in each window (default 5)\n"
	      "      --rounds R           rounds through the modes (default 2); each window\n"
	      "                           has a warmup step before it, as in record\n"
	      "      --skip-first N       steps left alone before the first window (default 0)\n"
	      "      --step SPEC          step boundary, as in record; without it, time\n"
	      "                           slices stand in for steps (and the output says so)\n"
	      "      --step-every N       count one step every N hits of the step probe\n"
	      "      --slice MS           without --step: the slice, in ms (default 100)\n"
	      "      --duration SEC       stop after SEC seconds, with what ran by then\n"
	      "      --cupti-wait SEC     how long a cupti window waits for its GPU records\n"
	      "      --ringbuf-size SIZE  ring buffer between BPF and cuprobe, its starting size\n"
	      "                           (default 16M; it grows with the rate)\n"
	      "      --stack              each launch's CPU stack in the probed windows'\n"
	      "                           traces, as record --stack\n"
	      "  -q, --quiet              no progress on stderr\n"
	      "  -v, --verbose            more detail\n"
	      "  -h, --help               this text\n"
	      "\n"
	      "examples:\n"
	      "  cuprobe compare --step train_step -- ./train\n"
	      "  cuprobe compare --modes off,bpf,latency --rounds 4 --step train_step -p 4242\n"
	      "  cuprobe report cuprobe-compare/0/cupti/run_0\n",
	      f);
}

static int bad(const char *what, const char *fix)
{
	fprintf(stderr, "cuprobe compare: %s: %s (see cuprobe compare --help)\n", what, fix);
	return -EINVAL;
}

static int parse_modes(struct compare_opts *o, const char *arg)
{
	char *copy = strdup(arg), *save = NULL, *tok;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	o->nmodes = 0;
	for (tok = strtok_r(copy, ",", &save); tok && !err; tok = strtok_r(NULL, ",", &save)) {
		int m = compare_mode_parse(tok);

		if (m < 0) {
			err = bad("--modes: unknown mode", "use off, bpf, cupti and latency, "
				  "separated by commas");
			break;
		}
		for (size_t i = 0; i < o->nmodes; i++)
			if (o->modes[i] == (enum window_mode)m)
				err = bad("--modes: a mode is given twice", "name each mode once");
		if (!err)
			o->modes[o->nmodes++] = m;
	}
	free(copy);
	if (!err && !o->nmodes)
		err = bad("--modes: no mode given", "e.g. --modes off,bpf,cupti");
	return err;
}

static int parse_count(const char *arg, const char *opt, unsigned long min, unsigned long max,
		       uint32_t *out)
{
	char *end, what[96];
	unsigned long v;

	errno = 0;
	v = strtoul(arg, &end, 10);
	if (errno || *end || *arg == '-' || !*arg || v < min || v > max) {
		snprintf(what, sizeof(what), "%s: not a count from %lu to %lu", opt, min, max);
		return bad(what, "give a whole number in that range");
	}
	*out = (uint32_t)v;
	return 0;
}

static int parse_own(struct compare_opts *o, int c, const char *arg)
{
	uint32_t ms;
	int err;

	switch (c) {
	case 'm':
		return parse_modes(o, arg);
	case 'n':
		return parse_count(arg, "--steps-per-mode", 1, 100000, &o->steps_per_mode);
	case 'R':
		return parse_count(arg, "--rounds", 1, COMPARE_MAX_ROUNDS, &o->rounds);
	case 'k':
		return parse_count(arg, "--skip-first", 0, 1000000, &o->skip_first);
	case 'L':
		err = parse_count(arg, "--slice", 1, 3600000, &ms);
		o->slice_ns = (uint64_t)ms * 1000000;
		o->has_slice = true;
		return err;
	case 'S':
		o->r.stack = true;
		return 0;
	case 'O':
		o->has_output = true;
		return record_opts__parse_shared(&o->r, 'o', arg, "compare");
	default:
		return record_opts__parse_shared(&o->r, c, arg, "compare");
	}
}

static int check(struct compare_opts *o)
{
	struct record_opts *r = &o->r;
	bool cupti = false;

	for (size_t i = 0; i < o->nmodes; i++)
		cupti |= o->modes[i] == MODE_CUPTI;
	if (!r->cmd && !r->npids)
		return bad("nothing to compare", "give -p PID or -- COMMAND");
	if (r->cmd && r->npids)
		return bad("both -p and a command given", "use one of them");
	if (r->children && !r->npids)
		return bad("--children goes with -p", "a command's children are always followed");
	if (r->step_every > 1 && !r->has_step)
		return bad("--step-every needs --step", "name a step function with --step SYMBOL");
	if (o->has_slice && r->has_step)
		return bad("--slice with --step", "slices stand in for steps only without --step: "
			   "leave one out");
	if (r->cupti_wait != 5 && !cupti)
		return bad("--cupti-wait without the cupti mode", "add cupti to --modes, or leave "
			   "--cupti-wait out");
	if (r->ringbuf_bytes < 4096 || r->ringbuf_bytes > (1ull << 30) ||
	    (r->ringbuf_bytes & (r->ringbuf_bytes - 1)))
		return bad("--ringbuf-size must be a power of two from 4K to 1G", "e.g. 16M or 64M");
	return 0;
}

void compare_opts__free(struct compare_opts *o)
{
	record_opts__free(&o->r);
}

int compare_opts__parse(struct compare_opts *o, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'O' },
		{ "pid", required_argument, NULL, 'p' },
		{ "children", no_argument, NULL, 'C' },
		{ "modes", required_argument, NULL, 'm' },
		{ "steps-per-mode", required_argument, NULL, 'n' },
		{ "rounds", required_argument, NULL, 'R' },
		{ "skip-first", required_argument, NULL, 'k' },
		{ "step", required_argument, NULL, 's' },
		{ "step-every", required_argument, NULL, 'e' },
		{ "slice", required_argument, NULL, 'L' },
		{ "duration", required_argument, NULL, 'd' },
		{ "cupti-wait", required_argument, NULL, 'w' },
		{ "ringbuf-size", required_argument, NULL, 'r' },
		{ "stack", no_argument, NULL, 'S' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{},
	};
	int c, err;

	memset(o, 0, sizeof(*o));
	o->r.ringbuf_bytes = DEFAULT_RINGBUF;
	o->r.step_every = 1;
	o->r.cupti_wait = 5;
	o->modes[0] = MODE_OFF;
	o->modes[1] = MODE_BPF;
	o->modes[2] = MODE_CUPTI;
	o->nmodes = 3;
	o->steps_per_mode = 5;
	o->rounds = 2;
	o->slice_ns = 100 * 1000000ull;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:o:p:qvh", longopts, NULL)) != -1) {
		if (c == 'h') {
			compare_usage(stdout);
			return 1;
		}
		if (c == '?' || c == ':') {
			fprintf(stderr, "cuprobe compare: %s %s: see cuprobe compare --help\n",
				c == ':' ? "missing value for" : "unknown option", argv[optind - 1]);
			return -EINVAL;
		}
		err = parse_own(o, c == 'o' ? 'O' : c, optarg);
		if (err)
			return err;
	}
	if (optind < argc)
		o->r.cmd = &argv[optind];
	return check(o);
}
