// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `cuprobe record`: load the probes, start or find the targets, follow each
 * one's schedule, stream launch events into one trace per process and
 * cycle, and finish cleanly on Ctrl-C, --duration or the end of the targets.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <stddef.h>
#include "agent.h"
#include "attach.h"
#include "calibrate.h"
#include "clock.h"
#include "cuprobe.h"
#include "schedule.h"
#include "launch.skel.h"
#include "cycle.h"
#include "launch.h"
#include "log.h"
#include "opts.h"
#include "preflight.h"
#include "prober.h"
#include "record.h"
#include "schedule_parse.h"
#include "symbols.h"
#include "target.h"

#define POLL_MS 100
/* A finished cycle waits this long for launches still in the ring buffer. */
#define GRACE_NS (20 * 1000 * 1000ull)

struct session {
	struct record_opts o;
	struct launch_bpf *skel;
	struct ring_buffer *rb;
	struct symbols *syms;
	struct prober *prober;
	struct prober *reaper;	/* closes detached links, off the prober's path */
	struct probe_ctx ctx;
	struct cycle_env env;
	struct target targets[MAX_PIDS];
	struct proc_cycles *cycles[MAX_PIDS];
	bool want_probes[MAX_PIDS];	/* what the schedule asked the prober for */
	size_t ntargets;
	size_t last;		/* index of the last target an event named */
	int epfd, sigfd;
	char host[256];
	char agent[PATH_MAX];	/* --cupti -- COMMAND: the agent the command loads */
	uint64_t start_mono;
	uint64_t deadline;	/* CLOCK_MONOTONIC ns, 0 for none */
	uint64_t correlation;
	bool status_tty;	/* the status line is redrawn in place */
	bool stop;
	bool timed_out;		/* --duration ended the recording */
	int err;		/* cuprobe's own failure, -errno */
};

static struct target *find_target(struct session *s, pid_t pid, size_t *idx)
{
	if (s->last < s->ntargets && s->targets[s->last].pid == pid) {
		*idx = s->last;
		return &s->targets[s->last];
	}
	for (size_t i = 0; i < s->ntargets; i++) {
		if (s->targets[i].pid == pid) {
			*idx = s->last = i;
			return &s->targets[i];
		}
	}
	return NULL;
}

/* The kernel's name: the host stub's symbol; a CUfunction is a handle, named by CUPTI. */
static bool kernel_name(struct session *s, const struct launch_event *e, char *buf, size_t len,
			const char **kernel)
{
	*kernel = "";
	if (launch_api_what(e->api) != LAUNCH_KERNEL)
		return false;
	if (launch_api_is_driver(e->api)) {
		snprintf(buf, len, "CUfunction 0x%llx", (unsigned long long)e->func);
		*kernel = buf;
		return true;
	}
	return symbols__name(s->syms, e->tgid, e->func, kernel) != 0;
}

static int on_launch(struct session *s, const struct launch_event *e)
{
	const char *kernel;
	char handle[48];
	bool unnamed;
	size_t i;

	if (e->api >= API__COUNT || !find_target(s, e->tgid, &i))
		return 0;
	unnamed = kernel_name(s, e, handle, sizeof(handle), &kernel);
	return proc_cycles__launch(s->cycles[i], e, kernel, unnamed, ++s->correlation);
}

static void on_thread(struct session *s, const struct thread_event *e)
{
	size_t i;

	if (find_target(s, e->tgid, &i))
		proc_cycles__thread(s->cycles[i], e);
}

/*
 * Jobs for the prober thread: they change what is attached, never the
 * session's state. A probe job does what the schedule wants when it runs, so
 * a detach still queued when the next warmup begins changes nothing.
 */
static void job_probes(void *ctx, long i)
{
	struct session *s = ctx;
	struct target *t = &s->targets[i];
	bool on = __atomic_load_n(&s->want_probes[i], __ATOMIC_ACQUIRE);
	int err;

	if (on == t->probes_on)
		return;
	err = target__set_probes(t, &s->ctx, on);
	if (err && err != -ESRCH)
		p_warn("pid %d: cannot %s launch probes: %s", t->pid, on ? "attach" : "detach",
		       strerror(-err));
}

static void job_scan(void *ctx, long i)
{
	struct session *s = ctx;
	struct target *t = &s->targets[i];
	bool had = t->has_launch_apis, had_step = t->step;
	int err;

	err = target__scan(t, &s->ctx);
	if (err && err != -ESRCH)
		p_warn("pid %d: cannot read its new libraries: %s", t->pid, strerror(-err));
	if (!had && t->has_launch_apis && t->told_waiting)
		p_info("pid %d (%s): CUDA library loaded, probes attached", t->pid, t->comm);
	/* More than the executable and the dynamic linker: the startup libraries are in. */
	if (!t->has_launch_apis && !t->told_waiting && t->nobjs > 2) {
		t->told_waiting = true;
		p_info("pid %d (%s) has no CUDA library mapped yet: watching for one to be loaded",
		       t->pid, t->comm);
	}
	if (!had_step && t->step)
		p_info("pid %d: step probe found in %s", t->pid, t->step_object);
	/* The library-map probe stopped the process so that no launch is missed. */
	kill(t->pid, SIGCONT);
}

static void job_close(void *ctx, long arg)
{
	(void)ctx;
	uprobe_link__destroy((struct uprobe_link *)arg);
}

/* Called on the prober thread: the reaper closes the link while the prober goes on. */
static void dispose_link(struct uprobe_link *l, void *arg)
{
	struct session *s = arg;

	if (prober__submit(s->reaper, job_close, NULL, (long)l))
		uprobe_link__destroy(l);
}

static void request_probes(struct session *s, size_t i, bool on)
{
	if (s->want_probes[i] == on)
		return;
	__atomic_store_n(&s->want_probes[i], on, __ATOMIC_RELEASE);
	if (prober__submit(s->prober, job_probes, s, (long)i))
		p_warn("pid %d: probe requests pile up; some %s may be late", s->targets[i].pid,
		       on ? "attaches" : "detaches");
}

static void print_status(struct session *s, size_t i)
{
	const struct cuprobe_counters *c = &s->skel->bss->counters;
	struct cycle_status st;
	char cyc[32] = "";

	if (s->o.quiet || !s->o.has_step)
		return;
	proc_cycles__status(s->cycles[i], &st);
	if (phase_probes(st.phase))
		snprintf(cyc, sizeof(cyc), ", cycle %u%s%.0u", st.cycle, s->env.sched.repeat ? "/" : "",
			 s->env.sched.repeat);
	fprintf(stderr, "%scuprobe: pid %d: step %lu %s%s, %lu launches, %lu drops%s",
		s->status_tty ? "\r\033[K" : "", s->targets[i].pid, (unsigned long)st.step,
		schedule_phase_name(st.phase), cyc, (unsigned long)st.launches,
		(unsigned long)c->drops, s->status_tty ? "" : "\n");
	log_status_line = s->status_tty;
}

/* Warmup is there to absorb the attach: say so when it was too short to. */
static void check_warmup(struct session *s, size_t i, const struct step_event *e)
{
	uint64_t since = __atomic_load_n(&s->targets[i].probes_since, __ATOMIC_ACQUIRE);

	if (since && since <= e->ts_ns)
		return;
	p_warn("pid %d: step %u began before the launch probes were in: its first launches are "
	       "missed; give warmup more time (warmup=2, or longer steps)", s->targets[i].pid,
	       e->step);
}

static void on_step(struct session *s, const struct step_event *e)
{
	struct cycle_status before, after;
	size_t i;

	if (!find_target(s, e->tgid, &i))
		return;
	proc_cycles__status(s->cycles[i], &before);
	if (proc_cycles__step(s->cycles[i], e))
		s->err = -EIO;
	proc_cycles__status(s->cycles[i], &after);
	request_probes(s, i, phase_probes(after.phase));
	if (before.phase == PHASE_WARMUP && phase_records(after.phase))
		check_warmup(s, i, e);
	if (before.phase != after.phase || s->status_tty)
		print_status(s, i);
}

static void on_agent(struct session *s, const struct agent_chunk_event *e, size_t size)
{
	size_t i, room = size - offsetof(struct agent_chunk_event, data);

	/* BPF bounded len; the loader checks it again: the chunk came from a target's memory. */
	if (e->len > room || !find_target(s, e->tgid, &i))
		return;
	proc_cycles__agent_chunk(s->cycles[i], e->data, e->len);
}

static void on_libmap(struct session *s, const struct libmap_event *e)
{
	struct target *t;
	size_t i;

	t = find_target(s, e->tgid, &i);
	if (!t)
		return;
	/* Read while the process is held: its map is the one the new probes are for. */
	target__refresh_identity(t);
	symbols__refresh(s->syms, t->pid);
	if (prober__submit(s->prober, job_scan, s, i))
		kill(t->pid, SIGCONT);
}

static int handle_event(void *ctx, void *data, size_t size)
{
	struct session *s = ctx;
	__u32 type = size >= sizeof(__u32) ? *(__u32 *)data : 0;

	switch (type) {
	case REC_LAUNCH:
		if (size >= sizeof(struct launch_event))
			return on_launch(s, data);
		return 0;
	case REC_STEP:
		if (size >= sizeof(struct step_event))
			on_step(s, data);
		return 0;
	case REC_THREAD:
		if (size >= sizeof(struct thread_event))
			on_thread(s, data);
		return 0;
	case REC_LIBMAP:
		if (size >= sizeof(struct libmap_event))
			on_libmap(s, data);
		return 0;
	case REC_AGENT:
		if (size >= offsetof(struct agent_chunk_event, data))
			on_agent(s, data, size);
		return 0;
	default:
		return 0;
	}
}

static int load_bpf(struct session *s)
{
	struct launch_bpf *skel;
	int err;

	skel = launch_bpf__open();
	if (!skel) {
		err = -errno;
		p_err("cannot open the BPF programs: %s", strerror(-err));
		return err;
	}
	s->skel = skel;
	skel->rodata->latency = s->o.latency;
	skel->rodata->sched = s->env.sched;
	skel->rodata->step_every = s->o.step_every;
	bpf_map__set_max_entries(skel->maps.events, s->o.ringbuf_bytes);
	s->ctx.multi = attach_has_uprobe_multi();
	if (s->ctx.multi) {
		bpf_program__set_expected_attach_type(
			skel->progs.launch_entry, (enum bpf_attach_type)CUPROBE_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(
			skel->progs.launch_return, (enum bpf_attach_type)CUPROBE_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(
			skel->progs.agent_enable, (enum bpf_attach_type)CUPROBE_TRACE_UPROBE_MULTI);
	}
	if (!s->o.latency)
		bpf_program__set_autoload(skel->progs.launch_return, false);
	if (!s->o.has_step)
		bpf_program__set_autoload(skel->progs.step_hit, false);
	if (!s->o.cupti) {
		bpf_program__set_autoload(skel->progs.agent_records, false);
		bpf_program__set_autoload(skel->progs.agent_enable, false);
	}
	err = launch_bpf__load(skel);
	if (err) {
		p_err("cannot load the BPF programs: %s; run with -v for the verifier's log",
		      strerror(-err));
		return err;
	}
	s->ctx.skel = skel;
	s->ctx.step = s->o.has_step ? &s->o.step : NULL;
	s->ctx.latency = s->o.latency;
	s->ctx.cupti = s->o.cupti;
	s->ctx.dispose = dispose_link;
	s->ctx.dispose_arg = s;
	s->rb = ring_buffer__new(bpf_map__fd(skel->maps.events), handle_event, s, NULL);
	if (!s->rb)
		return -errno;
	return 0;
}

static int epoll_add(int epfd, int fd, uint64_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = tag };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

/* Tags for epoll: targets are 0..MAX_PIDS-1. */
#define TAG_RING (1ull << 32)
#define TAG_SIGNAL (TAG_RING + 1)

static int setup_loop(struct session *s, sigset_t *orig)
{
	sigset_t mask;
	int err;

	/*
	 * A shell starts background jobs with SIGINT ignored, and an ignored
	 * signal never reaches a signalfd: `kill -INT` must still stop cuprobe,
	 * as it stops perf record. SIGHUP keeps what it inherited (nohup).
	 */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGCHLD);
	sigaddset(&mask, SIGHUP);
	if (sigprocmask(SIG_BLOCK, &mask, orig))
		return -errno;
	s->sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->sigfd < 0 || s->epfd < 0)
		return -errno;
	err = epoll_add(s->epfd, ring_buffer__epoll_fd(s->rb), TAG_RING);
	if (!err)
		err = epoll_add(s->epfd, s->sigfd, TAG_SIGNAL);
	return err;
}

/*
 * Step 0 of a target starts now: its schedule state in BPF, its cycles, and
 * whether its launch probes start attached.
 */
static int setup_target(struct session *s, size_t i)
{
	struct target *t = &s->targets[i];
	__u32 phase = schedule_action(&s->env.sched, 0);
	struct proc_state ps = { .state = pack_state(0, phase) };
	__u32 key = t->pid;
	int err;

	/* Without --step the state stays RECORD at step 0; it still counts the hits. */
	err = bpf_map__update_elem(s->skel->maps.proc_state, &key, sizeof(key), &ps, sizeof(ps),
				   BPF_ANY);
	if (err)
		return err;
	s->cycles[i] = proc_cycles__new(&s->env, t, clock_mono_ns());
	if (!s->cycles[i])
		return -errno ?: -ENOMEM;
	s->want_probes[i] = t->probes_on = phase_probes(phase);
	return 0;
}

/* Finds what execvp would run, so that it can be probed before it starts. */
static int resolve_command(const char *cmd, char *buf, size_t len)
{
	const char *path = getenv("PATH");

	if (strchr(cmd, '/')) {
		snprintf(buf, len, "%s", cmd);
		return access(buf, X_OK) ? -errno : 0;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");

		snprintf(buf, len, "%.*s/%s", (int)n, n ? path : ".", cmd);
		if (!access(buf, X_OK))
			return 0;
		path += n + (path[n] == ':');
	}
	return -ENOENT;
}

static void child_exec(char **cmd, const char *agent, int go_fd, int err_fd, const sigset_t *orig)
{
	char c;
	int e;

	sigprocmask(SIG_SETMASK, orig, NULL);
	/* The driver loads the agent at cuInit; it stays dormant until a window opens. */
	if (agent[0])
		setenv("CUDA_INJECTION64_PATH", agent, 1);
	/* Wait until the parent has probed what the command will map. */
	if (read(go_fd, &c, 1) != 1)
		_exit(127);
	execvp(cmd[0], cmd);
	e = errno;
	if (write(err_fd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

static int start_command(struct session *s, const sigset_t *orig)
{
	int go[2], ex[2], e = 0, err;
	char exe[PATH_MAX];
	pid_t pid;

	err = resolve_command(s->o.cmd[0], exe, sizeof(exe));
	if (err) {
		p_err("cannot execute %s: %s; check the command name and PATH", s->o.cmd[0],
		      strerror(-err));
		return err;
	}
	if (pipe2(go, O_CLOEXEC) || pipe2(ex, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0)
		child_exec(s->o.cmd, s->agent, go[0], ex[1], orig);
	close(go[0]);
	close(ex[1]);
	err = target__init(&s->targets[0], pid, true);
	if (!err) {
		s->ntargets = 1;
		err = setup_target(s, 0);
	}
	if (!err)
		err = target__prepare_exec(&s->targets[0], &s->ctx, exe);
	if (!err && s->o.has_step && !s->targets[0].step && s->o.step.kind == STEP_SYMBOL)
		p_info("step symbol %s is not in %s: looking for it in libraries as they load",
		       s->o.step.symbol, exe);
	if (err) {
		p_err("cannot probe %s: %s", exe, strerror(-err));
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		s->targets[0].exited = true;
		return err;
	}
	if (write(go[1], "g", 1) != 1)
		err = -errno;
	close(go[1]);
	if (read(ex[0], &e, sizeof(e)) == sizeof(e)) {
		p_err("cannot execute %s: %s", s->o.cmd[0], strerror(e));
		waitpid(pid, NULL, 0);
		s->targets[0].exited = true;
		err = -e;
	}
	close(ex[0]);
	return err;
}

/* A zombie is listed in /proc but cannot be attached to: it has exited. */
static bool process_listed(pid_t pid)
{
	char path[32];

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	return !access(path, F_OK);
}

/* The step probe was not found in pid's objects: say what was searched, and what is close. */
static void tell_step_missing(struct session *s, struct target *t, bool final)
{
	char close[512] = "";

	target__suggest_step(t, &s->ctx, close, sizeof(close));
	log_msg(final ? LOG_ERROR : LOG_WARN, "step probe %s %s in the %zu objects of pid %d (%s)%s%s%s",
		step_spec__str(&s->o.step), final ? "was never found" : "not found yet", t->nobjs,
		t->pid, t->comm, close[0] ? "; close matches: " : "", close,
		final ? "; check --step (cuprobe record --help)" :
			"; waiting for a library that defines it");
}

static int attach_pids(struct session *s)
{
	for (size_t i = 0; i < s->o.npids; i++) {
		struct target *t = &s->targets[i];
		pid_t pid = s->o.pids[i];
		int err;

		err = target__init(t, pid, false);
		if (!err) {
			s->ntargets++;
			err = setup_target(s, i);
		}
		if (!err)
			err = target__scan(t, &s->ctx);
		if (err == -ESRCH && !process_listed(pid)) {
			p_err("no process with PID %d: check the PID (ps -p %d)", pid, pid);
			return err;
		}
		if (err == -ESRCH) {
			p_err("process %d exited while cuprobe attached; nothing recorded", pid);
			return err;
		}
		if (err) {
			p_err("cannot probe process %d: %s", pid, strerror(-err));
			return err;
		}
		symbols__refresh(s->syms, pid);
		if (!t->has_launch_apis) {
			t->told_waiting = true;
			p_info("pid %d (%s) has no CUDA library mapped yet: watching for one to be loaded",
			       pid, t->comm);
		}
		if (s->o.has_step && !t->step)
			tell_step_missing(s, t, false);
		if (s->o.cupti && !t->agent)
			p_warn("pid %d (%s) has no cuprobe agent loaded: --cupti needs the process "
			       "started with CUDA_INJECTION64_PATH or LD_PRELOAD naming "
			       "libcuprobe-agent.so (README: --cupti); recording launches only",
			       pid, t->comm);
	}
	return 0;
}

static void on_target_exit(struct session *s, size_t i)
{
	struct target *t = &s->targets[i];
	siginfo_t si;

	if (t->exited)
		return;
	if (t->child) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, t->pid, &si, WEXITED | WNOHANG) || si.si_pid != t->pid)
			return;
		t->status = si.si_code == CLD_EXITED ? si.si_status << 8 : si.si_status;
	}
	t->exited = true;
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, t->pidfd, NULL);
}

static bool all_exited(struct session *s)
{
	for (size_t i = 0; i < s->ntargets; i++)
		if (!s->targets[i].exited)
			return false;
	return true;
}

static void on_signal(struct session *s)
{
	struct signalfd_siginfo si;

	while (read(s->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo == SIGCHLD)
			continue; /* the pidfd tells */
		s->stop = true;
	}
}

static int run_loop(struct session *s)
{
	struct epoll_event evs[16];

	while (!s->stop && !all_exited(s)) {
		int n = epoll_wait(s->epfd, evs, 16, POLL_MS);
		uint64_t now;

		if (n < 0 && errno != EINTR)
			return -errno;
		for (int k = 0; k < n; k++) {
			uint64_t tag = evs[k].data.u64;

			if (tag == TAG_SIGNAL)
				on_signal(s);
			else if (tag < MAX_PIDS)
				on_target_exit(s, tag);
		}
		/* Events are submitted without wakeups: read them on every turn. */
		ring_buffer__consume(s->rb);
		if (s->err)
			return s->err;
		now = clock_mono_ns();
		for (size_t i = 0; i < s->ntargets; i++)
			proc_cycles__flush(s->cycles[i], now);
		if (s->deadline && now >= s->deadline)
			s->stop = s->timed_out = true;
	}
	return 0;
}

/* The launch probe hits of a target so far, from its schedule state. */
static uint64_t target_hits(struct session *s, size_t i)
{
	struct proc_state ps;
	__u32 key = s->targets[i].pid;

	if (bpf_map__lookup_elem(s->skel->maps.proc_state, &key, sizeof(key), &ps, sizeof(ps), 0))
		return UINT64_MAX;
	return ps.launch_hits;
}

/*
 * --cupti: switch the agents off, so that they flush what the open windows
 * recorded, and wait (boundedly) for it before the last cycles are written.
 */
static void drain_agents(struct session *s)
{
	uint64_t since = clock_mono_ns(), deadline = since + s->env.cupti_wait_ns;
	bool open[MAX_PIDS], waiting = true;

	if (!s->o.cupti)
		return;
	/* Only a window still open has a flush to come. The prober is idle: t->agent is settled. */
	prober__drain(s->prober);
	for (size_t i = 0; i < s->ntargets; i++) {
		open[i] = s->want_probes[i] && s->targets[i].agent && !s->targets[i].exited;
		request_probes(s, i, false);
	}
	prober__drain(s->prober);
	while (waiting && clock_mono_ns() < deadline) {
		ring_buffer__poll(s->rb, 20);
		waiting = false;
		for (size_t i = 0; i < s->ntargets; i++)
			waiting |= open[i] && !s->targets[i].exited &&
				   !proc_cycles__flushed_since(s->cycles[i], since);
	}
	if (waiting)
		p_warn("an agent did not flush within --cupti-wait %.1f s: the last cycle may "
		       "lack GPU records", s->o.cupti_wait);
}

static int finish(struct session *s)
{
	const struct cuprobe_counters *c = &s->skel->bss->counters;
	uint64_t now = clock_mono_ns();
	int ret = 0;

	if (log_status_line) {
		fputc('\n', stderr);
		log_status_line = false;
	}
	for (size_t i = 0; i < s->ntargets; i++) {
		if (proc_cycles__stop(s->cycles[i], now, target_hits(s, i)))
			ret = -EIO;
		if (s->o.has_step && !s->targets[i].step) {
			tell_step_missing(s, &s->targets[i], true);
			ret = -ENOENT;
		}
	}
	if (c->drops)
		p_warn("%lu events were dropped (ring buffer full): raise --ringbuf-size",
		       (unsigned long)c->drops);
	p_dbg("nested driver entries skipped: %lu; returns with no entry (--latency): %lu",
	      (unsigned long)c->nested, (unsigned long)c->lat_misses);
	if (c->agent_bad)
		p_warn("%lu agent chunks had a bad length or could not be read: their GPU records "
		       "are missing", (unsigned long)c->agent_bad);
	return ret;
}

static void session_free(struct session *s)
{
	prober__free(s->prober);
	prober__free(s->reaper);
	for (size_t i = 0; i < s->ntargets; i++) {
		struct target *t = &s->targets[i];

		target__detach(t);
		/* Never leave a target held by the library-map probe. */
		if (!t->exited)
			kill(t->pid, SIGCONT);
		target__free(t);
		proc_cycles__free(s->cycles[i]);
	}
	ring_buffer__free(s->rb);
	launch_bpf__destroy(s->skel);
	symbols__free(s->syms);
	if (s->epfd >= 0)
		close(s->epfd);
	if (s->sigfd >= 0)
		close(s->sigfd);
	record_opts__free(&s->o);
}

/* The agent library for --cupti -- COMMAND: CUPROBE_AGENT, or beside the cuprobe binary. */
static int find_agent(char *buf, size_t len)
{
	static const char *const rel[] = { "", ".output/", "../lib/cuprobe/" };
	const char *env = getenv("CUPROBE_AGENT");
	char exe[PATH_MAX], *slash;

	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return access(buf, R_OK) ? -errno : 0;
	}
	if (!realpath("/proc/self/exe", exe) || !(slash = strrchr(exe, '/')))
		return -ENOENT;
	slash[1] = '\0';
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		if (snprintf(buf, len, "%.*s%slibcuprobe-agent.so", (int)(len / 2), exe, rel[i]) <
			    (int)len &&
		    !access(buf, R_OK))
			return 0;
	}
	return -ENOENT;
}

/* A step probe in a named file is checked now; elsewhere it may come with a library. */
static int preflight_step(struct session *s)
{
	const struct step_spec *st = &s->o.step;
	struct step_sites sites;
	char close[512] = "";
	int found;

	if (s->o.has_schedule && s->o.sched.warmup == 0)
		p_warn("warmup=0: launch probes attach only as the first active step begins, so "
		       "its first launches can be missed (torch.profiler warns likewise)");
	if (!st->object || !strchr(st->object, '/'))
		return 0;
	found = step_spec__find(st, st->object, &sites);
	if (found > 0)
		return 0;
	if (found < 0) {
		p_err("--step: cannot read %s: %s; check the path", st->object, strerror(-found));
		return found;
	}
	step_spec__suggest(st, st->object, close, sizeof(close));
	p_err("--step: %s not found in %s%s%s; check the name (nm -D %s%s)", step_spec__str(st),
	      st->object, close[0] ? "; close matches: " : "", close, st->object,
	      st->kind == STEP_USDT ? ", readelf -n for USDT probes" : "");
	return -ENOENT;
}

static int preflight(struct session *s)
{
	int err;

	if (s->o.cupti && s->o.cmd && find_agent(s->agent, sizeof(s->agent))) {
		p_err("--cupti: libcuprobe-agent.so is not next to cuprobe (nor in .output/ or "
		      "../lib/cuprobe/): build it (make), or set CUPROBE_AGENT=/path/to/it");
		return -ENOENT;
	}
	err = preflight_privileges();
	if (!err)
		err = preflight_btf();
	if (!err)
		err = preflight_output(s->o.output, &s->env.run_base);
	if (!err && s->o.has_step)
		err = preflight_step(s);
	return err;
}

static int start_targets(struct session *s, const sigset_t *orig)
{
	int err = s->o.cmd ? start_command(s, orig) : attach_pids(s);

	if (err)
		return err;
	for (size_t i = 0; i < s->ntargets; i++) {
		err = epoll_add(s->epfd, s->targets[i].pidfd, i);
		if (err)
			return err;
		if (!s->o.cmd)
			p_info("recording pid %d (%s); Ctrl-C to stop", s->targets[i].pid,
			       s->targets[i].comm);
	}
	return 0;
}

/*
 * Like perf record: a command still running when recording stops gets
 * SIGTERM (then SIGKILL), so that its status is known and nothing outlives
 * cuprobe unseen. Processes given with -p are never touched.
 */
static void end_command(struct session *s)
{
	struct target *t = &s->targets[0];
	struct pollfd pfd = { .fd = t->pidfd, .events = POLLIN };

	if (!s->o.cmd || !s->ntargets || t->exited)
		return;
	kill(t->pid, SIGCONT);
	kill(t->pid, SIGTERM);
	if (poll(&pfd, 1, 3000) == 0) {
		p_warn("pid %d ignored SIGTERM: killing it", t->pid);
		kill(t->pid, SIGKILL);
		poll(&pfd, 1, -1);
	}
	on_target_exit(s, 0);
}

static int exit_code(struct session *s, int err)
{
	if (err)
		return 1;
	/* A command that --duration ended did what was asked of it. */
	if (s->timed_out)
		return 0;
	if (s->o.cmd && s->ntargets && s->targets[0].exited) {
		int st = s->targets[0].status;

		return (st & 0xff00) ? (st >> 8) & 0xff : (st ? 128 + st : 0);
	}
	return 0;
}

/* What a launch probe hit costs here, measured before any target is probed. */
static void calibrate(struct session *s)
{
	struct launch_bpf *skel = s->skel;
	int err;

	err = calibrate_probe(skel->progs.launch_entry, s->o.latency ? skel->progs.launch_return : NULL,
			      s->ctx.multi, &s->env.probe_ns);
	if (err) {
		s->env.probe_ns = -1;
		p_warn("cannot measure the probe's cost here (%s): traces give probe hits only",
		       strerror(-err));
	} else {
		p_dbg("one launch probe hit costs %.0f ns here", s->env.probe_ns);
	}
}

static void setup_env(struct session *s)
{
	s->env.out = s->o.output;
	s->env.host = s->host;
	s->env.steps = s->o.has_step;
	s->env.grace_ns = GRACE_NS;
	s->env.cupti = s->o.cupti;
	s->env.cupti_wait_ns = (uint64_t)(s->o.cupti_wait * 1e9);
	if (s->o.has_schedule) {
		s->env.sched = s->o.sched;
	} else {
		/* No schedule: one active window from the start to the end. */
		memset(&s->env.sched, 0, sizeof(s->env.sched));
		s->env.sched.active = UINT32_MAX;
	}
	s->env.mono_to_real = clock_mono_to_real_offset();
	s->status_tty = isatty(STDERR_FILENO);
}

int record_main(int argc, char **argv)
{
	struct session s = { .epfd = -1, .sigfd = -1 };
	sigset_t orig;
	int err;

	err = record_opts__parse(&s.o, argc, argv);
	if (err) {
		record_opts__free(&s.o);
		return err > 0 ? 0 : 2;
	}
	log_level = s.o.quiet ? LOG_WARN : s.o.verbose ? LOG_DEBUG : LOG_INFO;
	log_setup_libbpf();
	gethostname(s.host, sizeof(s.host) - 1);
	setup_env(&s);
	err = preflight(&s);
	if (err)
		goto out;
	s.syms = symbols__new();
	s.prober = prober__new();
	s.reaper = prober__new();
	if (!s.syms || !s.prober || !s.reaper) {
		err = -ENOMEM;
		goto out;
	}
	err = load_bpf(&s);
	if (!err)
		calibrate(&s);
	if (!err)
		err = setup_loop(&s, &orig);
	if (err)
		goto out;
	s.env.counters = &s.skel->bss->counters;
	s.start_mono = clock_mono_ns();
	if (s.o.duration > 0)
		s.deadline = s.start_mono + (uint64_t)(s.o.duration * 1e9);
	err = start_targets(&s, &orig);
	if (err)
		goto out;
	err = run_loop(&s);
	end_command(&s);
	ring_buffer__consume(s.rb);
	prober__drain(s.prober);
	drain_agents(&s);
	err = finish(&s) ?: err;
out:
	err = exit_code(&s, err);
	session_free(&s);
	return err;
}
