// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `cuprobe record`: the command-line front-end of a session. It checks what
 * it was given, starts the session on a command or on running processes,
 * turns the session's crank until the targets end, --duration passes or a
 * signal comes, and exits with the command's status.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cmd/cmd_start.h"
#include "cmd/commands.h"
#include "cmd/record_opts.h"
#include "core/loop/cmd_loop.h"
#include "core/schedule/schedule_parse.h"
#include "core/session/preflight.h"
#include "core/session/session.h"
#include "util/log.h"
#include "util/safe_file.h"

struct record {
	struct record_opts o;
	struct session *s;
	struct out_dir out;	/* -o, and which of its folders this run made */
	char agent[PATH_MAX];	/* --cupti: the agent the command loads, or -p brings in */
	struct cmd_loop *loop;
	bool status_tty;	/* the status line is redrawn in place */
	bool told_remade;	/* said that -o was removed and made again */
};

static void print_status(void *ctx, const struct session_target *t,
			 const struct cycle_status *st, bool changed)
{
	struct record *r = ctx;
	char cyc[32] = "";

	if (r->o.quiet || !r->o.has_step || !(changed || r->status_tty))
		return;
	if (phase_probes(st->phase))
		snprintf(cyc, sizeof(cyc), ", cycle %u%s%.0u", st->cycle, r->o.sched.repeat ? "/" : "",
			 r->o.sched.repeat);
	if (r->status_tty)
		log_status("cuprobe: pid %d: step %lu %s%s, %lu launches", t->pid,
			   (unsigned long)st->step, schedule_phase_name(st->phase), cyc,
			   (unsigned long)st->launches);
	else
		p_info("pid %d: step %lu %s%s, %lu launches", t->pid, (unsigned long)st->step,
		       schedule_phase_name(st->phase), cyc, (unsigned long)st->launches);
}

static int preflight(struct record *r)
{
	struct preflight_req req = {
		.pids = r->o.pids, .npids = r->o.npids,
		.step = r->o.has_step ? &r->o.step : NULL,
		.sched = r->o.has_schedule ? &r->o.sched : NULL,
		.out = r->o.output,
	};

	if (r->o.cupti && r->o.cmd && preflight_agent(r->agent, sizeof(r->agent))) {
		p_err("--cupti: libcuprobe-agent.so is not next to cuprobe (nor in .output/ or "
		      "../lib/cuprobe/): build it (make), or set CUPROBE_AGENT=/path/to/it");
		return -ENOENT;
	}
	/* -p: the agent is brought into processes that lack it, when found. */
	if (r->o.cupti && !r->o.cmd && preflight_agent(r->agent, sizeof(r->agent)))
		r->agent[0] = '\0';
	return preflight__run(&req, &r->out);
}

static int exit_code(struct record *r, int err)
{
	int st;

	if (err)
		return 1;
	/* A command that --duration ended did what was asked of it. */
	if (r->loop && cmd_loop__timed_out(r->loop))
		return 0;
	if (r->o.cmd && r->s && session__command_status(r->s, &st))
		return (st & 0xff00) ? (st >> 8) & 0xff : (st ? 128 + st : 0);
	return 0;
}

/*
 * -o was removed while recording: it is made again, as at the start, so
 * that the next cycles are kept (run numbers go on: none is reused). A
 * failure is left to the cycle's own, which the session says.
 */
static void remake_output(struct record *r)
{
	unsigned int made;
	int fd;

	if (!access(r->o.output, F_OK) || errno != ENOENT)
		return;
	fd = safe_file__make_dirs(r->o.output, 0755, &made);
	if (fd < 0)
		return;
	close(fd);
	if (!r->told_remade)
		p_warn("the output folder %s was removed while recording: made it again for the "
		       "next cycles; the traces that were in it are gone", r->o.output);
	r->told_remade = true;
}

/* Cycle k of every process goes to OUT/run_<k>, after the runs already there. */
static int cycle_dir(void *ctx, const struct session_target *t, uint32_t k, char *buf,
		     size_t len)
{
	struct record *r = ctx;

	(void)t;
	remake_output(r);
	return snprintf(buf, len, "%s/run_%ld", r->o.output, r->out.run_base + (long)k) <
			       (int)len ? 0 : -ENAMETOOLONG;
}

static int start(struct record *r, sigset_t *orig)
{
	enum window_mode mode = r->o.cupti ? MODE_CUPTI : r->o.latency ? MODE_LATENCY : MODE_BPF;
	struct session_opts so = {
		.ringbuf_bytes = r->o.ringbuf_bytes,
		.modes = 1u << mode,
		.steps = r->o.has_step,
		.cupti_wait = r->o.cupti_wait,
		.stack = r->o.stack,
		.agent = r->o.cupti && r->agent[0] ? r->agent : NULL,
		.plan = {
			.step = r->o.has_step ? &r->o.step : NULL,
			.sched = r->o.sched,
			.step_every = r->o.step_every,
			.mode = mode,
			.follow = r->o.cmd || r->o.children,
		},
	};
	struct session_hooks h = { .ctx = r, .step = print_status, .cycle_dir = cycle_dir };
	int err;

	/* --step alone: every step is recorded, all in one cycle. */
	if (!r->o.has_schedule)
		so.plan.sched = (struct schedule){ .active = UINT32_MAX };

	err = cmd_start(&(struct cmd_start){ .so = &so, .h = &h, .cmd = r->o.cmd,
					     .pids = r->o.pids, .npids = r->o.npids },
			orig, &r->s, &r->loop);
	for (size_t i = 0; !err && !r->o.cmd && i < r->o.npids; i++)
		p_info("recording pid %d; Ctrl-C to stop", r->o.pids[i]);
	return err;
}

int record_main(int argc, char **argv)
{
	struct record r = {};
	sigset_t orig;
	int err;

	err = record_opts__parse(&r.o, argc, argv);
	if (err) {
		record_opts__free(&r.o);
		return err > 0 ? 0 : 2;
	}
	log_level = r.o.quiet ? LOG_WARN : r.o.verbose ? LOG_DEBUG : LOG_INFO;
	log_setup_libbpf();
	r.status_tty = isatty(STDERR_FILENO);
	err = preflight(&r);
	if (!err)
		err = start(&r, &orig);
	if (!err) {
		err = cmd_loop__run(r.loop, r.o.duration);
		/* Like perf record: a command still running gets SIGTERM, then SIGKILL. */
		session__end_command(r.s);
		err = session__finish(r.s) ?: err;
	}
	err = exit_code(&r, err);
	session__free(r.s);
	/* A run that recorded nothing leaves no folder it made behind. */
	if (err)
		preflight__undo_output(&r.out);
	cmd_loop__free(r.loop);
	record_opts__free(&r.o);
	return err;
}
