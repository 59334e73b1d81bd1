// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cuprobe report: counts the launch events of Kineto trace files per kernel,
 * per API and per thread, times the steps of traces recorded with --step,
 * lists each trace's cycle with what cuprobe's probes cost in it, gives the
 * GPU time and launch-to-start delay of each kernel and the GPU busy time of
 * each step when the traces carry CUPTI's GPU work, and prints it all as
 * text, JSON or CSV. This file is the command: its options, where the report
 * goes, and what it warns about; reading (report/read.c), the model
 * (report/model.c, report/stats.c) and the formats (report/text.c, json.c,
 * csv.c) are their own.
 *
 * The work is linear in the number of events plus one sort of the distinct keys.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "cmd/commands.h"
#include "report/err.h"
#include "report/folded.h"
#include "report/output.h"
#include "report/read.h"
#include "report/walk.h"
#include "util/opt.h"
#include "util/plural.h"
#include "util/safe_file.h"

enum report_format { FORMAT_TEXT, FORMAT_JSON, FORMAT_CSV, FORMAT_FOLDED };

struct report_opts {
	enum report_format format;
	const char *out_path; /* NULL: standard output */
	char **paths;
	int npaths;
	bool weight_gpu;	/* --weight gpu: folded stacks weigh GPU ns, not launches */
	const char *flamegraph;	/* --flamegraph FILE: an SVG of the folded stacks */
};

/* ---- where the report goes ---- */

/* Standard output, or -o FILE written unnamed and put in FILE's place when whole. */
struct output {
	FILE *f;
	struct safe_file *sf;
};

/* -o FILE must not be one of the traces read: replacing it would lose it. */
static int check_not_input(const char *out_path, const struct vec *inputs)
{
	struct stat out, in;

	if (stat(out_path, &out))
		return 0; /* nothing there yet, or nothing to compare: opening says */
	for (size_t i = 0; i < inputs->len; i++) {
		if (stat(*vec_at(inputs, char *, i), &in))
			continue;
		if (in.st_dev == out.st_dev && in.st_ino == out.st_ino) {
			report_err("-o %s is one of the input traces: choose another name", out_path);
			return -EINVAL;
		}
	}
	return 0;
}

/* Why -o FILE cannot be written: what is there, when it is not a regular file. */
static void output_error(const char *path, int err)
{
	struct stat st;

	if ((err == -ELOOP || err == -EEXIST || err == -EISDIR) && !lstat(path, &st) &&
	    !S_ISREG(st.st_mode))
		report_err("-o %s: not a regular file (%s): give a path to a regular file", path,
			   safe_file__kind(st.st_mode));
	else
		report_err("cannot write %s: %s: check that its folder exists and is writable",
			   path, strerror(-err));
}

static int open_output(const struct report_opts *o, const struct vec *inputs, struct output *out)
{
	int fd, err;

	memset(out, 0, sizeof(*out));
	if (!o->out_path) {
		out->f = stdout;
		return 0;
	}
	err = check_not_input(o->out_path, inputs);
	if (err)
		return err;
	/* FILE's folder may be anyone's: never through a link, never into a FIFO or a device. */
	out->sf = safe_file__open_path(o->out_path, SAFE_FILE_REPLACE, 0666);
	if (!out->sf) {
		err = -errno;
		output_error(o->out_path, err);
		return err;
	}
	fd = fcntl(safe_file__fd(out->sf), F_DUPFD_CLOEXEC, 3);
	out->f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!out->f) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		output_error(o->out_path, err);
		safe_file__free(out->sf);
		out->sf = NULL;
		return err;
	}
	return 0;
}

static int write_report(FILE *f, enum report_format fmt, const struct report *r,
			const struct section_rows *secs)
{
	int err;

	errno = 0;
	switch (fmt) {
	case FORMAT_JSON:
		err = report_json__write(f, r, secs);
		break;
	case FORMAT_CSV:
		err = report_csv__write(f, r, secs);
		break;
	default:
		err = report_text__write(f, r, secs);
		break;
	}
	if (!err && (fflush(f) || ferror(f)))
		err = errno ? -errno : -EIO;
	return err;
}

/* Writes the report; -o FILE takes its name only once whole, else nothing is left. */
static int write_output(const struct report_opts *o, struct output *out, const struct report *r,
			const struct section_rows *secs)
{
	int err = write_report(out->f, o->format, r, secs);

	if (!out->sf) {
		if (err)
			report_err("cannot write the report: %s: check where standard output goes",
				   strerror(-err));
		return err;
	}
	if (fclose(out->f) && !err)
		err = errno ? -errno : -EIO;
	out->f = NULL;
	if (!err)
		err = safe_file__publish(out->sf);
	if (err)
		output_error(o->out_path, err);
	return err;
}

static void close_output(struct output *out)
{
	if (out->sf && out->f)
		fclose(out->f);
	safe_file__free(out->sf);
	memset(out, 0, sizeof(*out));
}

/* ---- what the report warns about ---- */

static void warn_gpu(const struct report *r)
{
	const uint64_t *n = r->gpu_counts;

	if (!n[GPU_CLOCK_FAULTS] && !n[GPU_DROPPED] && !n[GPU_MISSING])
		return;
	report_err("warning: GPU records are incomplete or skewed: %" PRIu64 " start before "
		   "their launch (clock faults: their delays are negative), %" PRIu64 " were "
		   "dropped by CUPTI or the agent, %" PRIu64 " launches had no GPU work yet when "
		   "their cycle was written, so GPU times and busy times miss the dropped and "
		   "missing work: record again, with a longer --cupti-wait if work was missing",
		   n[GPU_CLOCK_FAULTS], n[GPU_DROPPED], n[GPU_MISSING]);
}

/* Graph replays whose kernels the report could not count, or that CUPTI saw otherwise. */
static void warn_graphs(const struct report *r)
{
	uint64_t unseen = r->graphs.unknown - r->graphs.unknown_no_driver;

	if (r->graphs.unknown_no_driver)
		report_err("warning: %" PRIu64 " %s ran no graph: the processes that made them had "
			   "no CUDA driver loaded (no GPU or driver where they ran), so no graph "
			   "was built and their CUDA calls failed: record where the GPU and its "
			   "driver are",
			   r->graphs.unknown_no_driver,
			   plural(r->graphs.unknown_no_driver, "graph replay", "graph replays"));
	if (unseen)
		report_err("warning: %" PRIu64 " %s ran graphs of unknown content (made "
			   "before cuprobe attached, or built where it did not see), so the kernels "
			   "they ran are in no count: record from the start of the program, or "
			   "attach with -p before the graphs are captured",
			   unseen, plural(unseen, "graph replay", "graph replays"));
	if (r->graphs.mismatches)
		report_err("warning: %" PRIu64 " %s ran another number of kernels on "
			   "the GPU (CUPTI) than their graphs hold (a node changed where cuprobe did "
			   "not see, conditional or child graph nodes, or records CUPTI lost): the "
			   "Kernels table counts what the graphs held",
			   r->graphs.mismatches,
			   plural(r->graphs.mismatches, "graph replay", "graph replays"));
}

/* What the traces miss or the report could not use, said on stderr in every format. */
static void warn(const struct report *r)
{
	if (r->drops)
		report_err("warning: %" PRIu64 " launch records were dropped while recording (the "
			   "ring buffer was full), so the counts are low by at least that many: "
			   "record again with a larger --ringbuf-size",
			   r->drops);
	if (r->late_launches)
		report_err("warning: %" PRIu64 " launches arrived after their cycle was written, "
			   "so they are in no trace and the counts are low by that many: the Cycles "
			   "table shows which traces noted them (each in the next file its process "
			   "wrote)",
			   r->late_launches);
	if (r->lost_steps)
		report_err("warning: %" PRIu64 " step boundaries were lost while recording (their "
			   "events did not fit in the ring buffer), so the steps around them are "
			   "not timed exactly: record again with a larger --ringbuf-size",
			   r->lost_steps);
	if (r->unprobed_ns)
		report_err("warning: windows recorded %.1f ms before their launch probes were in "
			   "(the attach came late), so launches made then are in no trace and not "
			   "counted: record with a longer warmup (warmup=2, or longer steps)",
			   r->unprobed_ns / 1e6);
	warn_gpu(r);
	warn_graphs(r);
	if (r->malformed)
		report_err("warning: %" PRIu64 " events were skipped, with a field missing or of "
			   "the wrong type (pid, tid, name, ts, dur or args), so the counts leave "
			   "them out: check what wrote the traces",
			   r->malformed);
}

/* ---- options ---- */

static void usage(FILE *f);

static int set_format(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	static const char *const names[] = {
		[FORMAT_TEXT] = "text",
		[FORMAT_JSON] = "json",
		[FORMAT_CSV] = "csv",
		[FORMAT_FOLDED] = "folded",
	};

	(void)name;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (!strcmp(arg, names[i])) {
			((struct report_opts *)obj)->format = (enum report_format)i;
			return 0;
		}
	}
	snprintf(err, len, "unknown format '%s': use text, json, csv or folded", arg);
	return -EINVAL;
}

static int set_weight(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	(void)name;
	if (strcmp(arg, "launches") && strcmp(arg, "gpu")) {
		snprintf(err, len, "unknown weight '%s': use launches or gpu", arg);
		return -EINVAL;
	}
	((struct report_opts *)obj)->weight_gpu = !strcmp(arg, "gpu");
	return 0;
}

static int set_flamegraph(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	(void)name;
	if (!*arg) {
		snprintf(err, len, "empty flame graph file name: give --flamegraph a file name");
		return -EINVAL;
	}
	((struct report_opts *)obj)->flamegraph = arg;
	return 0;
}

static int set_output(void *obj, const char *name, const char *arg, char *err, size_t len)
{
	(void)name;
	if (!*arg) {
		snprintf(err, len, "empty output file name: give -o a file name");
		return -EINVAL;
	}
	((struct report_opts *)obj)->out_path = arg;
	return 0;
}

static const struct opt report_opts_list[] = {
	{ "format", 0, "FORMAT", set_format,
	  "text (the default), json, csv, or folded: the launch\nstacks of traces recorded with "
	  "--stack, one line per\nunique stack (root;...;kernel COUNT), flamegraph.pl's\nand "
	  "speedscope's input" },
	{ "weight", 0, "WHAT", set_weight,
	  "folded stacks weigh launches (the default) or gpu: the\nGPU ns of their work (traces "
	  "recorded with --cupti)" },
	{ "flamegraph", 0, "FILE", set_flamegraph,
	  "write a flame graph of the stacks to FILE (SVG)" },
	{ "output", 'o', "FILE", set_output,
	  "write the report to FILE instead of standard output" },
};

static const struct opt_table report_table = OPT_TABLE(report_opts_list);

static void usage(FILE *f)
{
	const struct opt_group groups[] = { { &report_table, NULL } };

	fputs("Usage: cuprobe report [--format text|json|csv|folded] [-o FILE] PATH...\n"
	      "       cuprobe report [--weight launches|gpu] --flamegraph FILE.svg PATH...\n"
	      "\n"
	      "Counts launches per kernel, per API and per thread over trace files.\n"
	      "PATH is a *.pt.trace.json file, or a folder searched at any depth for\n"
	      "them (the output of cuprobe record); the counts of all of them add up.\n"
	      "Traces recorded with --step also give each step's wall time and launches,\n"
	      "and every trace of cuprobe record gives a row per process and cycle, with\n"
	      "an estimate of what cuprobe's probes cost it. Traces recorded with --cupti\n"
	      "also give each kernel's GPU time and launch-to-start delay, and each\n"
	      "step's GPU busy time. Percentiles interpolate between the closest ranks,\n"
	      "as numpy's and pandas' do.\n"
	      "\n"
	      "Options:\n", f);
	opt__help(f, groups, 1);
	fputs("\n"
	      "Examples:\n"
	      "  cuprobe report cuprobe-runs                     every cycle of a recording\n"
	      "  cuprobe report cuprobe-runs/run_0               one cycle, all its processes\n"
	      "  cuprobe report --format json -o report.json cuprobe-runs\n"
	      "  cuprobe report --format csv cuprobe-runs > launches.csv\n"
	      "  cuprobe report --format folded cuprobe-runs > stacks.folded\n"
	      "  cuprobe report --weight gpu --flamegraph gpu.svg cuprobe-runs\n", f);
}

/* What holds across the options, once they are all read. 0 or -EINVAL (said). */
static int check_opts(const struct report_opts *o)
{
	if (!o->npaths) {
		report_err("no trace given: pass trace files or folders (see cuprobe report --help)");
		return -EINVAL;
	}
	if (o->weight_gpu && o->format != FORMAT_FOLDED && !o->flamegraph) {
		report_err("--weight applies to stacks: add --format folded or --flamegraph FILE");
		return -EINVAL;
	}
	if (o->flamegraph && o->format != FORMAT_TEXT && o->format != FORMAT_FOLDED) {
		report_err("--flamegraph writes an SVG; --format %s goes with another report: run "
			   "them one at a time", o->format == FORMAT_JSON ? "json" : "csv");
		return -EINVAL;
	}
	return 0;
}

/* 0: run; 1: help was printed; -EINVAL: a usage error, already reported. */
static int parse_opts(int argc, char **argv, struct report_opts *o)
{
	const struct opt_group groups[] = { { &report_table, o } };
	const struct opt_cmd cmd = { .name = "report", .groups = groups, .ngroups = 1,
				     .usage = usage, .missing = "argument" };
	int first, rc;

	memset(o, 0, sizeof(*o));
	rc = opt__parse(&cmd, argc, argv, &first);
	if (rc)
		return rc > 0 ? 1 : -EINVAL;
	o->paths = argv + first;
	o->npaths = argc - first;
	return check_opts(o);
}


/* ---- the command ---- */

static int read_traces(struct vec *inputs, struct report *r)
{
	int err = 0;

	for (size_t i = 0; !err && i < inputs->len; i++)
		err = report__read_file(r, *vec_at(inputs, char *, i));
	if (err)
		return err;
	err = report__finish(r);
	if (err)
		report_err("out of memory computing step and GPU times: report on fewer traces "
			   "at a time");
	return err;
}

static int list_traces(const struct report_opts *o, struct vec *inputs)
{
	int err = 0;

	for (int i = 0; !err && i < o->npaths; i++)
		err = walk__expand(o->paths[i], inputs);
	if (err == -ENOMEM)
		report_err("out of memory listing traces: report on fewer traces at a time");
	return err;
}

static int sort_sections(const struct report *r, struct section_rows secs[SEC__COUNT])
{
	for (int i = 0; i < SEC__COUNT; i++) {
		if (report__sort_section(r, (enum section_id)i, &secs[i])) {
			report_err("out of memory sorting %s: report on fewer traces at a time",
				   section_descs[i].json_key);
			return -ENOMEM;
		}
	}
	return 0;
}

/* ---- stacks: folded lines and flame graphs ---- */

static int stacks_read(const struct report_opts *o, const struct vec *inputs, struct folded *f)
{
	struct folded_stats st;
	int err = 0;

	for (size_t i = 0; !err && i < inputs->len; i++)
		err = folded__read(f, *vec_at(inputs, char *, i));
	if (err == -ENOMEM)
		report_err("out of memory reading stacks: report on fewer traces at a time");
	if (err)
		return err;
	folded__stats(f, &st);
	if (!st.stack_traces) {
		report_err("the traces carry no stacks: record with cuprobe record --stack");
		return -EINVAL;
	}
	if (o->weight_gpu && !st.gpu_records) {
		report_err("--weight gpu: the traces carry no GPU work: record with --cupti, or "
			   "weigh launches");
		return -EINVAL;
	}
	if (st.lost || st.python_lost)
		report_err("warning: %" PRIu64 " user stacks and %" PRIu64 " Python stacks were lost "
			   "while recording (their BPF maps were full or the stack unreadable): those "
			   "launches are under [no stack] or lack their Python frames",
			   st.lost, st.python_lost);
	if (st.truncated)
		report_err("warning: %" PRIu64 " launches had stacks deeper than cuprobe takes (127 "
			   "native or 64 Python frames): their roots are cut",
			   st.truncated);
	if (st.unsymbolized)
		report_err("warning: %" PRIu64 " frames are named only by an address (objects "
			   "without symbols, stripped, or unreadable)",
			   st.unsymbolized);
	if (st.without_stack)
		report_err("warning: %" PRIu64 " of %" PRIu64 " launches have no stack (lost while "
			   "recording, or recorded without --stack): they are under [no stack]",
			   st.without_stack, st.launches);
	if (!o->weight_gpu && st.graph_unknown)
		report_err("warning: %" PRIu64 " %s ran graphs of unknown content: each "
			   "is one launch under [graph of unknown content], its kernels unknown",
			   st.graph_unknown, plural(st.graph_unknown, "graph replay", "graph replays"));
	if (o->weight_gpu && st.without_gpu)
		report_err("warning: %" PRIu64 " launches have no GPU work in the traces: they "
			   "weigh nothing",
			   st.without_gpu);
	return 0;
}

/* The flame graph's file: written unnamed, named when whole (as -o FILE is). */
static int write_flamegraph(const struct report_opts *o, const struct vec *inputs,
			    const struct folded_line *lines, size_t n)
{
	struct report_opts svg = { .out_path = o->flamegraph };
	struct output out;
	int err = open_output(&svg, inputs, &out);

	if (err)
		return err;
	err = flamegraph__write(out.f, lines, n, o->weight_gpu ? "GPU time by launch stack" :
								  "Launches by stack",
				o->weight_gpu ? "ns" : "launches");
	if (!err && fclose(out.f))
		err = -errno;
	out.f = NULL;
	if (!err)
		err = safe_file__publish(out.sf);
	if (err)
		output_error(o->flamegraph, err);
	close_output(&out);
	return err;
}

static int stacks_main(const struct report_opts *o, const struct vec *inputs)
{
	struct folded *f = folded__new(o->weight_gpu);
	const struct folded_line *lines;
	struct output out = {};
	size_t n;
	int err;

	if (!f) {
		report_err("out of memory");
		return -ENOMEM;
	}
	err = stacks_read(o, inputs, f);
	lines = folded__lines(f, &n);
	if (!err && o->flamegraph)
		err = write_flamegraph(o, inputs, lines, n);
	if (!err && o->format == FORMAT_FOLDED) {
		err = open_output(o, inputs, &out);
		if (!err) {
			err = folded__write(out.f, lines, n);
			if (!err && out.sf) {
				if (fclose(out.f))
					err = -errno;
				out.f = NULL;
				if (!err)
					err = safe_file__publish(out.sf);
			} else if (!err && (fflush(out.f) || ferror(out.f))) {
				err = -EIO;
			}
			if (err)
				report_err("cannot write the folded stacks: %s", strerror(-err));
		}
		close_output(&out);
	}
	folded__free(f);
	return err;
}

int report_main(int argc, char **argv)
{
	struct section_rows secs[SEC__COUNT] = {};
	struct vec inputs = VEC_INIT(char *);
	struct report_opts opts;
	struct output out = {};
	struct report r;
	int err;

	err = parse_opts(argc, argv, &opts);
	if (err)
		return err > 0 ? 0 : 2;
	report__init(&r);
	err = list_traces(&opts, &inputs);
	if (!err && (opts.format == FORMAT_FOLDED || opts.flamegraph)) {
		err = stacks_main(&opts, &inputs);
		walk__free(&inputs);
		report__free(&r);
		return err ? 1 : 0;
	}
	if (!err)
		err = open_output(&opts, &inputs, &out);
	if (!err)
		err = read_traces(&inputs, &r);
	if (!err)
		err = sort_sections(&r, secs);
	if (!err) {
		warn(&r);
		err = write_output(&opts, &out, &r, secs);
	}
	close_output(&out);
	for (int i = 0; i < SEC__COUNT; i++)
		free(secs[i].rows);
	walk__free(&inputs);
	report__free(&r);
	return err ? 1 : 0;
}
