// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `cuprobe compare`: one session whose windows rotate through the modes
 * (the cycle_mode hook), each window's trace in its mode's folder (cycle_dir),
 * every step's time and every window's counts fed to the compare model
 * (step_done, cycle_done). The run ends once every target has had all its
 * windows (a command is then ended as record ends one), or when the targets
 * end, --duration passes or a signal comes; then the model is analysed and
 * written: compare.json, compare.html, and a text summary on stdout.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include "cmd/cmd_start.h"
#include "cmd/commands.h"
#include "cmd/compare_opts.h"
#include "compare/compare_model.h"
#include "core/loop/cmd_loop.h"
#include "core/session/preflight.h"
#include "core/session/session.h"
#include "util/log.h"
#include "util/safe_file.h"

#define DEFAULT_PARENT "cuprobe-compare"

struct compare_run {
	struct compare_opts o;
	struct compare c;
	struct session *s;
	struct out_dir out;
	char out_path[PATH_MAX];
	char agent[PATH_MAX];
	struct cmd_loop *loop;
	bool done, failed;
};

static enum window_mode hook_mode(void *ctx, const struct session_target *t, uint32_t k)
{
	struct compare_run *r = ctx;

	(void)t;
	return k < r->c.norder ? r->c.order[k] : MODE_OFF;
}

/* Window k goes to OUT/<mode>/run_<j>, j counting that mode's windows. */
static int hook_dir(void *ctx, const struct session_target *t, uint32_t k, char *buf,
		    size_t len)
{
	struct compare_run *r = ctx;
	int n;

	(void)t;
	if (k < r->c.norder)
		n = snprintf(buf, len, "%s/%s/run_%u", r->out_path,
			     compare_mode_name(r->c.order[k]), compare__mode_index(&r->c, k));
	else
		n = snprintf(buf, len, "%s/extra/run_%u", r->out_path, k);
	return n < (int)len ? 0 : -ENAMETOOLONG;
}

static void hook_step(void *ctx, const struct session_target *t,
		      const struct cycle_step_info *si)
{
	struct compare_run *r = ctx;

	if (compare__step(&r->c, t->pid, si))
		p_warn("out of memory: step %lu of pid %d not kept", (unsigned long)si->step, t->pid);
}

static void hook_cycle(void *ctx, const struct session_target *t, const struct cycle_info *ci)
{
	struct compare_run *r = ctx;

	if (compare__window(&r->c, t->pid, ci, t->agent))
		p_warn("out of memory: window %u of pid %d not kept", ci->k, t->pid);
	p_info("pid %d: window %u of %zu (%s) done%s", t->pid, ci->k + 1, r->c.norder,
	       compare_mode_name(ci->mode), ci->partial ? ", cut short" : "");
	if (compare__complete(&r->c)) {
		r->done = true;
		cmd_loop__stop(r->loop);
	}
}

/* The first free cuprobe-compare/<n>. */
static int default_output(char *buf, size_t len)
{
	struct stat st;

	for (unsigned int n = 0; n < 100000; n++) {
		snprintf(buf, len, DEFAULT_PARENT "/%u", n);
		if (lstat(buf, &st) && errno == ENOENT)
			return 0;
	}
	p_err("no free folder under " DEFAULT_PARENT "/: name one with -o");
	return -EEXIST;
}

/* -o, or the first free cuprobe-compare/<n>; never an earlier compare's folder. */
static int choose_out(void *ctx, const char **out)
{
	struct compare_run *r = ctx;
	struct stat st;
	char path[PATH_MAX + 16];
	int err;

	if (r->o.r.has_output)
		snprintf(r->out_path, sizeof(r->out_path), "%s", r->o.r.output);
	else if ((err = default_output(r->out_path, sizeof(r->out_path))))
		return err;
	/* An earlier compare's folder is never written over. */
	snprintf(path, sizeof(path), "%s/compare.json", r->out_path);
	if (!lstat(path, &st)) {
		p_err("%s already holds a compare run (compare.json): choose another -o, or leave "
		      "-o out for a new cuprobe-compare/<n>", r->out_path);
		return -EEXIST;
	}
	*out = r->out_path;
	return 0;
}

static int preflight(struct compare_run *r)
{
	struct preflight_req req = {
		.pids = r->o.r.pids, .npids = r->o.r.npids,
		.step = r->o.r.has_step ? &r->o.r.step : NULL,
		.choose_out = choose_out, .ctx = r,
	};

	return preflight__run(&req, &r->out);
}

/* The folders of the probe modes' traces: the session makes only their run_<k>. */
static int make_mode_dirs(struct compare_run *r)
{
	char path[PATH_MAX + 16];

	for (size_t i = 0; i < r->c.cfg.nmodes; i++) {
		enum window_mode m = r->c.cfg.modes[i];

		if (m == MODE_OFF)
			continue;
		snprintf(path, sizeof(path), "%s/%s", r->out_path, compare_mode_name(m));
		if (mkdir(path, 0755) && errno != EEXIST) {
			p_err("cannot create %s: %s; choose another -o", path, strerror(errno));
			return -errno;
		}
	}
	return 0;
}

/* The folders make_mode_dirs made, when no window wrote into them (rmdir keeps any other). */
static void remove_mode_dirs(struct compare_run *r)
{
	char path[PATH_MAX + 16];

	for (size_t i = 0; i < r->c.cfg.nmodes; i++) {
		snprintf(path, sizeof(path), "%s/%s", r->out_path, compare_mode_name(r->c.cfg.modes[i]));
		rmdir(path);
	}
}

/* The modes as asked, less cupti when no agent can be given to the command. */
static void setup_compare(struct compare_run *r)
{
	struct compare_config cfg = {
		.rounds = r->o.rounds, .steps_per_mode = r->o.steps_per_mode,
		.skip_first = r->o.skip_first, .slice_ns = r->o.slice_ns,
		.step = r->o.r.has_step ? step_spec__str(&r->o.r.step) : NULL,
		.cmd = r->o.r.cmd, .pids = r->o.r.pids, .npids = r->o.r.npids, .out = r->out_path,
	};
	bool no_agent = false;

	for (size_t i = 0; i < r->o.nmodes; i++) {
		if (r->o.modes[i] == MODE_CUPTI && r->o.r.cmd &&
		    preflight_agent(r->agent, sizeof(r->agent))) {
			no_agent = true;
			continue;
		}
		cfg.modes[cfg.nmodes++] = r->o.modes[i];
	}
	/* -p: the agent is brought into processes that lack it, when found. */
	if (r->o.r.npids && preflight_agent(r->agent, sizeof(r->agent)))
		r->agent[0] = '\0';
	compare__init(&r->c, &cfg);
	if (no_agent)
		compare__note(&r->c, "cupti: no usable CUPTI: libcuprobe-agent.so is not next to "
			      "cuprobe (nor in .output/ or ../lib/cuprobe/), so the cupti mode did "
			      "not run; the other modes did (build it with make, or set "
			      "CUPROBE_AGENT=/path/to/it)");
	if (!r->c.res[MODE_OFF].selected)
		compare__note(&r->c, "no off mode: no baseline, so no ratio to it is given");
}

static int start(struct compare_run *r, sigset_t *orig)
{
	struct session_opts so = {
		.ringbuf_bytes = r->o.r.ringbuf_bytes,
		.steps = r->o.r.has_step,
		.cupti_wait = r->o.r.cupti_wait,
		.stack = r->o.r.stack,
		.plan = {
			.step = r->o.r.has_step ? &r->o.r.step : NULL,
			.slice_ns = r->o.r.has_step ? 0 : r->o.slice_ns,
			/* A warmup step before each window, no wait between them. */
			.sched = { .skip_first = r->o.skip_first, .warmup = 1,
				   .active = r->o.steps_per_mode, .repeat = (uint32_t)r->c.norder },
			.step_every = r->o.r.step_every,
			.mode = MODE_BPF,
			.follow = r->o.r.cmd || r->o.r.children,
		},
	};
	struct session_hooks h = {
		.ctx = r, .cycle_mode = hook_mode, .cycle_dir = hook_dir, .step_done = hook_step,
		.cycle_done = hook_cycle,
	};

	for (size_t i = 0; i < r->c.cfg.nmodes; i++)
		so.modes |= 1u << r->c.cfg.modes[i];
	/* The command loads it, or it is brought into the processes that lack it. */
	if (r->c.res[MODE_CUPTI].selected && r->agent[0])
		so.agent = r->agent;
	return cmd_start(&(struct cmd_start){ .so = &so, .h = &h, .cmd = r->o.r.cmd,
					      .pids = r->o.r.pids, .npids = r->o.r.npids },
			 orig, &r->s, &r->loop);
}

static int write_file(struct compare_run *r, const char *name,
		      int (*writer)(const struct compare *, FILE *))
{
	char path[PATH_MAX + 32];
	struct safe_file *sf;
	FILE *f;
	int fd, err;

	snprintf(path, sizeof(path), "%s/%s", r->out_path, name);
	sf = safe_file__open_path(path, SAFE_FILE_NEW, 0644);
	if (!sf) {
		err = -errno;
		goto fail;
	}
	fd = dup(safe_file__fd(sf));
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		err = -errno;
		if (fd >= 0)
			close(fd);
		safe_file__free(sf);
		goto fail;
	}
	err = writer(&r->c, f);
	if (fclose(f) && !err)
		err = -EIO;
	if (!err)
		err = safe_file__publish(sf);
	safe_file__free(sf);
	if (!err)
		return 0;
fail:
	p_err("cannot write %s: %s", path, strerror(-err));
	return err;
}

/* What the command's end says, beside the figures. */
static void note_end(struct compare_run *r)
{
	int st;

	if (r->done)
		return;
	r->c.ended_early = true;
	if (r->failed)
		return;
	if (r->loop && cmd_loop__timed_out(r->loop))
		compare__note(&r->c, "--duration ended the run before every window ran");
	else if (r->loop && cmd_loop__signalled(r->loop))
		compare__note(&r->c, "a signal ended the run before every window ran");
	else if (r->o.r.cmd && session__command_status(r->s, &st))
		compare__note(&r->c, "the command %s %d before every window ran",
			      WIFSIGNALED(st) ? "was killed by signal" : "exited with status",
			      WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
	else
		compare__note(&r->c, "the targets ended before every window ran");
}

static int finish(struct compare_run *r)
{
	int err;

	note_end(r);
	err = compare__analyse(&r->c);
	if (err) {
		p_err("cannot analyse the run: %s", strerror(-err));
		return err;
	}
	compare__write_text(&r->c, stdout);
	fflush(stdout);
	/* As record: a run that recorded nothing leaves nothing behind. */
	if (!r->c.windows.len) {
		p_err("no window ran: nothing was compared, nothing written (is the step probe "
		      "hit? see the notes above)");
		return -ENODATA;
	}
	err = write_file(r, "compare.json", compare__write_json);
	err = write_file(r, "compare.html", compare__write_html) ?: err;
	if (!err)
		p_info("wrote %s/compare.json, %s/compare.html; traces in %s/<mode>/run_<k>/",
		       r->out_path, r->out_path, r->out_path);
	return err;
}

int compare_main(int argc, char **argv)
{
	struct compare_run r = {};
	bool analysable = false;
	sigset_t orig;
	int err;

	err = compare_opts__parse(&r.o, argc, argv);
	if (err) {
		compare_opts__free(&r.o);
		return err > 0 ? 0 : 2;
	}
	log_level = r.o.r.quiet ? LOG_WARN : r.o.r.verbose ? LOG_DEBUG : LOG_INFO;
	log_setup_libbpf();
	err = preflight(&r);
	if (!err) {
		setup_compare(&r);
		analysable = true;
		err = make_mode_dirs(&r);
	}
	if (!err) {
		err = start(&r, &orig);
	}
	if (!err)
		err = cmd_loop__run(r.loop, r.o.r.duration);
	r.failed = err != 0;
	if (err && analysable)
		compare__note(&r.c, "the run stopped on an error (%s): see the messages above",
			      strerror(-err));
	if (r.s) {
		session__end_command(r.s);
		err = session__finish(r.s) ?: err;
	}
	/* What ran is written even when the run failed part-way. */
	if (analysable && (r.c.steps.len || r.c.windows.len || !err))
		err = finish(&r) ?: err;
	session__free(r.s);
	if (err && !r.c.windows.len) {
		remove_mode_dirs(&r);
		preflight__undo_output(&r.out);
	}
	if (analysable)
		compare__free(&r.c);
	cmd_loop__free(r.loop);
	compare_opts__free(&r.o);
	return err ? 1 : 0;
}
