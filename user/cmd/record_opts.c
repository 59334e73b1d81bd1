// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "cmd/record_opts.h"
#include "core/schedule/schedule_parse.h"
#include "core/session/session.h"
#include "util/parse.h"

#define DEFAULT_RINGBUF (16ull << 20)
#define DEFAULT_CUPTI_WAIT 5.0

/* ---- the shared options' setters: obj is a struct record_opts ---- */

static int set_output(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	struct record_opts *o = obj;

	(void)name, (void)err, (void)len;
	o->output = arg;
	o->has_output = true;
	return 0;
}

static int add_pid(struct record_opts *o, const char *tok, char *err, size_t len)
{
	uint64_t v;

	if (parse_count(tok, 1, INT_MAX, &v)) {
		snprintf(err, len, "-p: not a process id: give positive numbers separated by commas");
		return -EINVAL;
	}
	for (size_t i = 0; i < o->npids; i++) {
		if (o->pids[i] == (pid_t)v) {
			snprintf(err, len, "-p: a process is given twice: name each process once");
			return -EINVAL;
		}
	}
	if (o->npids == MAX_PIDS) {
		snprintf(err, len, "-p: too many processes: give at most %d; run one cuprobe per "
			 "group", MAX_PIDS);
		return -EINVAL;
	}
	o->pids[o->npids++] = (pid_t)v;
	return 0;
}

/* Empty fields are skipped (strtok_r): "1,,2" is "1,2", and "," no PID at all. */
static int set_pid(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	char *copy = strdup(arg), *save = NULL, *tok;
	int rc = 0;

	(void)name;
	if (!copy)
		return -ENOMEM;
	for (tok = strtok_r(copy, ",", &save); tok && !rc; tok = strtok_r(NULL, ",", &save))
		rc = add_pid(obj, tok, err, len);
	free(copy);
	return rc;
}

static int set_children(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	(void)name, (void)arg, (void)err, (void)len;
	((struct record_opts *)obj)->children = true;
	return 0;
}

static int set_step(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	struct record_opts *o = obj;
	char msg[256];

	(void)name;
	step_spec__free(&o->step);
	if (step_spec__parse(arg, &o->step, msg, sizeof(msg))) {
		snprintf(err, len, "%s: e.g. --step torch, --step torch:train_step, --step "
			 "train_step, --step libtrain.so:train_step or --step "
			 "usdt:./train:train:step", msg);
		return -EINVAL;
	}
	o->has_step = true;
	return 0;
}

static int set_step_every(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	struct record_opts *o = obj;
	uint64_t v;

	if (parse_count(arg, 1, 1000000, &v)) {
		snprintf(err, len, "%s: not a positive count (1 to 1000000): e.g. --step-every 3",
			 name);
		return -EINVAL;
	}
	o->step_every = (unsigned int)v;
	o->has_step_every = true;
	return 0;
}

static int set_duration(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	/* Up to a year: the deadline stays well inside 64-bit nanoseconds. */
	if (parse_duration(arg, PARSE_SECONDS, 1e-9, 366 * 86400.0,
			   &((struct record_opts *)obj)->duration)) {
		snprintf(err, len, "%s: not a number of seconds between 0 and a year: e.g. "
			 "--duration 30, 90s or 5m", name);
		return -EINVAL;
	}
	return 0;
}

static int set_cupti_wait(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	struct record_opts *o = obj;

	if (parse_duration(arg, PARSE_SECONDS, 0, 3600, &o->cupti_wait)) {
		snprintf(err, len, "%s: not a number of seconds from 0 to 3600: e.g. --cupti-wait 10",
			 name);
		return -EINVAL;
	}
	o->has_cupti_wait = true;
	return 0;
}

static int set_stack(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	(void)name, (void)arg, (void)err, (void)len;
	((struct record_opts *)obj)->stack = true;
	return 0;
}

static int set_ringbuf(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	int rc = parse_size(arg, &((struct record_opts *)obj)->ringbuf_bytes);

	if (rc == -ERANGE)
		snprintf(err, len, "%s must be a power of two from 8K to 1G: e.g. 16M or 64M", name);
	else if (rc)
		snprintf(err, len, "%s: not a size: e.g. 16M (%s)", name, PARSE_SIZE_FORMS);
	return rc ? -EINVAL : 0;
}

static int set_quiet(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	(void)name, (void)arg, (void)err, (void)len;
	((struct record_opts *)obj)->quiet = true;
	return 0;
}

static int set_verbose(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	(void)name, (void)arg, (void)err, (void)len;
	((struct record_opts *)obj)->verbose++;
	return 0;
}

static const struct opt target_opts[] = {
	{ "output", 'o', "DIR", set_output,
	  "the output folder, made with its parents if missing;\nnothing in it is overwritten" },
	{ "pid", 'p', "PID[,PID...]", set_pid, "attach to running processes (up to 64)" },
	{ "children", 0, NULL, set_children,
	  "with -p: their children and descendants too, those\nrunning and those to come "
	  "(a command's always are)" },
	{ "step", 0, "SPEC", set_step,
	  "step boundary: torch | torch:PREFIX (PyTorch's\noptimizer steps, or record_function "
	  "ranges\nnamed PREFIX...) | SYMBOL | OBJECT:SYMBOL |\nusdt:OBJECT:PROVIDER:NAME; the "
	  "k-th hit ends\nstep k-1" },
	{ "step-every", 0, "N", set_step_every, "count one step every N hits of the step probe" },
};

static const struct opt common_opts[] = {
	{ "duration", 0, "SEC", set_duration,
	  "stop after SEC seconds, with what ran by then\n(Ctrl-C also stops cleanly)" },
	{ "cupti-wait", 0, "SEC", set_cupti_wait,
	  "how long a cycle waits for its GPU records (default 5;\nneeds record's --cupti or "
	  "compare's cupti mode)" },
	{ "stack", 0, NULL, set_stack,
	  "each launch's CPU stack (frame pointers, and Python\n3.10-3.13 frames), as "
	  "python_function spans in\nthe trace" },
	{ "ringbuf-size", 0, "SIZE", set_ringbuf,
	  "ring buffer between BPF and cuprobe, its starting size\n(default 16M; it grows "
	  "with the rate)" },
	{ "quiet", 'q', NULL, set_quiet, "no progress on stderr" },
	{ "verbose", 'v', NULL, set_verbose, "more detail, libbpf's messages too" },
};

const struct opt_table record_target_opts = OPT_TABLE(target_opts);
const struct opt_table record_common_opts = OPT_TABLE(common_opts);

void record_opts__defaults(struct record_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->output = "cuprobe-runs";
	o->ringbuf_bytes = DEFAULT_RINGBUF;
	o->step_every = 1;
	o->cupti_wait = DEFAULT_CUPTI_WAIT;
}

static int fail(char *err, size_t len, const char *what, const char *fix)
{
	snprintf(err, len, "%s: %s", what, fix);
	return -EINVAL;
}

int record_opts__validate(const struct record_opts *o, const char *verb, char *err, size_t len)
{
	char what[64];

	snprintf(what, sizeof(what), "nothing to %s", verb);
	if (!o->cmd && !o->npids)
		return fail(err, len, what, "give -p PID or -- COMMAND");
	if (o->cmd && o->npids)
		return fail(err, len, "both -p and a command given", "use one of them");
	if (o->children && !o->npids)
		return fail(err, len, "--children goes with -p",
			    "a command's children are always followed");
	if (o->has_step_every && !o->has_step)
		return fail(err, len, "--step-every needs --step",
			    "name a step function with --step SYMBOL");
	if (o->ringbuf_bytes < SESSION_RINGBUF_MIN || o->ringbuf_bytes > (1ull << 30) ||
	    (o->ringbuf_bytes & (o->ringbuf_bytes - 1)))
		return fail(err, len, "--ringbuf-size must be a power of two from 8K to 1G",
			    "e.g. 16M or 64M");
	return 0;
}

/* ---- record's own options ---- */

static int set_schedule(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	struct record_opts *o = obj;
	char msg[256];
	int rc = schedule_parse(arg, &o->sched, msg, sizeof(msg));

	(void)name;
	if (rc == -EINVAL)
		snprintf(err, len, "%s: e.g. --schedule wait=1,warmup=1,active=3,repeat=2", msg);
	o->has_schedule = !rc;
	return rc;
}

static int set_cupti(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	(void)name, (void)arg, (void)err, (void)len;
	((struct record_opts *)obj)->cupti = true;
	return 0;
}

static int set_latency(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	(void)name, (void)arg, (void)err, (void)len;
	((struct record_opts *)obj)->latency = true;
	return 0;
}

static const struct opt own_opts[] = {
	{ "schedule", 0, "SPEC", set_schedule,
	  "torch.profiler's schedule: wait=N,warmup=N,active=N\n[,repeat=N][,skip_first=N]"
	  "[,skip_first_wait=0|1];\neach cycle goes to its own DIR/run_<k>/" },
	{ "cupti", 0, NULL, set_cupti, "full GPU timings through the in-process agent" },
	{ "latency", 0, NULL, set_latency, "API durations (adds return probes: ~1.6x the cost)" },
};

static const struct opt_table record_own_opts = OPT_TABLE(own_opts);

/* The checks of record's own options, then the shared ones. */
static int check(const struct record_opts *o, char *err, size_t len)
{
	if (o->has_schedule && !o->has_step)
		return fail(err, len, "--schedule needs --step", "the schedule counts steps: name "
			    "a step function with --step SYMBOL");
	if (o->has_cupti_wait && !o->cupti)
		return fail(err, len, "--cupti-wait needs --cupti",
			    "add --cupti, or leave --cupti-wait out");
	if (o->latency && o->cupti)
		return fail(err, len, "--latency and --cupti together", "a recording has one mode: "
			    "--cupti for GPU timings, --latency for API durations");
	return record_opts__validate(o, "record", err, len);
}

/* The tables in --help's order; a parse gives each the object its setters set. */
#define RECORD_GROUPS(obj) { { &record_target_opts, (obj) }, { &record_own_opts, (obj) }, \
			     { &record_common_opts, (obj) } }

void record_usage(FILE *f)
{
	const struct opt_group groups[] = RECORD_GROUPS(NULL);

	fputs("usage: cuprobe record [OPTIONS] -- COMMAND [ARGS...]\n"
	      "       cuprobe record [OPTIONS] -p PID[,PID...]\n"
	      "\n"
	      "Records every CUDA kernel launch, graph launch, async copy and set of the\n"
	      "target processes with uprobes, into Kineto-format traces: each cycle goes\n"
	      "to DIR/run_<k>/ of -o DIR (default ./cuprobe-runs).\n"
	      "\n", f);
	opt__help(f, groups, sizeof(groups) / sizeof(groups[0]));
	fputs("\n" PARSE_UNITS_HELP
	      "\n"
	      "examples:\n"
	      "  cuprobe record -- python train.py\n"
	      "  cuprobe record -p 4242 --duration 10 -o /tmp/traces\n"
	      "  cuprobe record --step torch \\\n"
	      "      --schedule wait=5,warmup=1,active=3,repeat=2 -- python train.py\n"
	      "  cuprobe record --step train_step \\\n"
	      "      --schedule wait=5,warmup=1,active=3,repeat=2 -- ./train\n"
	      "  cuprobe record --step libcudart:cudaDeviceSynchronize \\\n"
	      "      --schedule wait=1,warmup=1,active=2 -p 4242\n"
	      "  cuprobe report cuprobe-runs/run_0\n",
	      f);
}

void record_opts__free(struct record_opts *o)
{
	step_spec__free(&o->step);
}

int record_opts__parse(struct record_opts *o, int argc, char **argv)
{
	const struct opt_group groups[] = RECORD_GROUPS(o);
	/* Options stop at the command's name, so that its own options stay its own. */
	const struct opt_cmd cmd = { .name = "record", .groups = groups,
				     .ngroups = sizeof(groups) / sizeof(groups[0]),
				     .usage = record_usage, .stop_at_operand = true };
	char err[512];
	int first, rc;

	record_opts__defaults(o);
	rc = opt__parse(&cmd, argc, argv, &first);
	if (rc)
		return rc > 0 ? 1 : -EINVAL;
	if (first < argc)
		o->cmd = &argv[first];
	rc = check(o, err, sizeof(err));
	if (rc)
		opt__error(&cmd, err);
	return rc;
}
