// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "cmd/compare_opts.h"
#include "compare/compare_model.h"
#include "util/parse.h"

/* ---- compare's own options: obj is a struct compare_opts ---- */

static int add_mode(struct compare_opts *o, const char *tok, char *err, size_t len)
{
	int m = compare_mode_parse(tok);

	if (m < 0) {
		snprintf(err, len, "--modes: unknown mode: use off, bpf, cupti and latency, "
			 "separated by commas");
		return -EINVAL;
	}
	for (size_t i = 0; i < o->nmodes; i++) {
		if (o->modes[i] == (enum window_mode)m) {
			snprintf(err, len, "--modes: a mode is given twice: name each mode once");
			return -EINVAL;
		}
	}
	o->modes[o->nmodes++] = m;
	return 0;
}

static int set_modes(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	struct compare_opts *o = obj;
	char *copy = strdup(arg), *save = NULL, *tok;
	int rc = 0;

	(void)name;
	if (!copy)
		return -ENOMEM;
	o->nmodes = 0;
	for (tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save))
		rc = add_mode(o, tok, err, len);
	free(copy);
	if (!rc && !o->nmodes) {
		snprintf(err, len, "--modes: no mode given: e.g. --modes off,bpf,cupti");
		rc = -EINVAL;
	}
	return rc;
}

static int count_into(const char *name, const char *arg, uint64_t min, uint64_t max,
		      uint32_t *out, char *err, size_t len)
{
	uint64_t v;

	if (parse_count(arg, min, max, &v)) {
		snprintf(err, len, "%s: not a count from %llu to %llu: give a whole number in that "
			 "range", name, (unsigned long long)min, (unsigned long long)max);
		return -EINVAL;
	}
	*out = (uint32_t)v;
	return 0;
}

static int set_steps_per_mode(void *obj, const char *name, const char *arg, char *err,
			      size_t len)
{
	return count_into(name, arg, 1, 100000, &((struct compare_opts *)obj)->steps_per_mode,
			  err, len);
}

static int set_rounds(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	return count_into(name, arg, 1, COMPARE_MAX_ROUNDS, &((struct compare_opts *)obj)->rounds,
			  err, len);
}

static int set_skip_first(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	return count_into(name, arg, 0, 1000000, &((struct compare_opts *)obj)->skip_first, err,
			  len);
}

static int set_slice(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	struct compare_opts *o = obj;
	double s;

	if (parse_duration(arg, PARSE_MILLISECONDS, 0.001, 3600, &s)) {
		snprintf(err, len, "%s: not a duration from 1 ms to an hour: e.g. --slice 100 (ms), "
			 "250ms or 1s", name);
		return -EINVAL;
	}
	o->slice_ns = (uint64_t)(s * 1e9 + 0.5);
	o->has_slice = true;
	return 0;
}

static const struct opt own_opts[] = {
	{ "modes", 0, "LIST", set_modes,
	  "of off (the step probe only: the baseline), bpf\n(launch probes), cupti (launch "
	  "probes and the agent),\nlatency (launch and return probes); default\noff,bpf,cupti" },
	{ "steps-per-mode", 0, "N", set_steps_per_mode,
	  "steps measured in each window (default 5)" },
	{ "rounds", 0, "R", set_rounds,
	  "rounds through the modes (default 2); each window\nhas a warmup step before it, "
	  "as in record" },
	{ "skip-first", 0, "N", set_skip_first,
	  "steps left alone before the first window (default 0)" },
	{ "slice", 0, "MS", set_slice,
	  "without --step, time slices stand in for steps (and\nthe output says so): "
	  "their length (default 100 ms)" },
};

static const struct opt_table compare_own_opts = OPT_TABLE(own_opts);

static int check(const struct compare_opts *o, char *err, size_t len)
{
	const struct record_opts *r = &o->r;
	bool cupti = false;
	int rc = record_opts__validate(r, "compare", err, len);

	for (size_t i = 0; i < o->nmodes; i++)
		cupti |= o->modes[i] == MODE_CUPTI;
	if (rc)
		return rc;
	if (o->has_slice && r->has_step) {
		snprintf(err, len, "--slice with --step: slices stand in for steps only without "
			 "--step: leave one out");
		return -EINVAL;
	}
	if (r->has_cupti_wait && !cupti) {
		snprintf(err, len, "--cupti-wait without the cupti mode: add cupti to --modes, or "
			 "leave --cupti-wait out");
		return -EINVAL;
	}
	return 0;
}

/* The tables in --help's order; a parse gives each the object its setters set. */
#define COMPARE_GROUPS(o) { { &record_target_opts, (o) ? &(o)->r : NULL }, \
			    { &compare_own_opts, (o) }, \
			    { &record_common_opts, (o) ? &(o)->r : NULL } }

void compare_usage(FILE *f)
{
	struct compare_opts *none = NULL;
	const struct opt_group groups[] = COMPARE_GROUPS(none);

	fputs("usage: cuprobe compare [OPTIONS] -- COMMAND [ARGS...]\n"
	      "       cuprobe compare [OPTIONS] -p PID[,PID...]\n"
	      "\n"
	      "Measures what profiling costs, in one run: windows of steps rotate through\n"
	      "the modes in a balanced order (A B C C B A ...), the step probe times every\n"
	      "step in every mode, and each mode's step time is set against off's, with a\n"
	      "95% bootstrap confidence interval, beside the probe cost and CUPTI's own\n"
	      "overhead records. compare.json, compare.html and each mode's traces\n"
	      "(DIR/<mode>/run_<k>/) go to -o DIR, by default a new cuprobe-compare/<n>.\n"
	      "\n", f);
	opt__help(f, groups, sizeof(groups) / sizeof(groups[0]));
	fputs("\n" PARSE_UNITS_HELP
	      "\n"
	      "examples:\n"
	      "  cuprobe compare --step train_step -- ./train\n"
	      "  cuprobe compare --modes off,bpf,latency --rounds 4 --step train_step -p 4242\n"
	      "  cuprobe report cuprobe-compare/0/cupti/run_0\n",
	      f);
}

void compare_opts__free(struct compare_opts *o)
{
	record_opts__free(&o->r);
}

static void defaults(struct compare_opts *o)
{
	memset(o, 0, sizeof(*o));
	record_opts__defaults(&o->r);
	o->modes[0] = MODE_OFF;
	o->modes[1] = MODE_BPF;
	o->modes[2] = MODE_CUPTI;
	o->nmodes = 3;
	o->steps_per_mode = 5;
	o->rounds = 2;
	o->slice_ns = 100 * 1000000ull;
}

int compare_opts__parse(struct compare_opts *o, int argc, char **argv)
{
	const struct opt_group groups[] = COMPARE_GROUPS(o);
	const struct opt_cmd cmd = { .name = "compare", .groups = groups,
				     .ngroups = sizeof(groups) / sizeof(groups[0]),
				     .usage = compare_usage, .stop_at_operand = true };
	char err[512];
	int first, rc;

	defaults(o);
	rc = opt__parse(&cmd, argc, argv, &first);
	if (rc)
		return rc > 0 ? 1 : -EINVAL;
	if (first < argc)
		o->r.cmd = &argv[first];
	rc = check(o, err, sizeof(err));
	if (rc)
		opt__error(&cmd, err);
	return rc;
}
