// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <bpf/libbpf.h>
#include "attach.h"
#include "bpfobj.h"
#include "clock.h"
#include "guard.h"
#include "log.h"
#include "prober.h"
#include "schedule.h"
#include "session_int.h"
#include "step.h"
#include "symbols.h"

/* A finished cycle waits this long for launches still in the ring buffer. */
#define GRACE_NS (20 * 1000 * 1000ull)

/* epoll tags: a kind in the high half, a pid in the low one. */
enum { TAG_RING = 1, TAG_PROBER, TAG_REAPER, TAG_GUARD, TAG_TARGET };
#define TAG(kind, pid) ((uint64_t)(kind) << 32 | (uint32_t)(pid))

struct target *session_find(struct session *s, pid_t pid)
{
	if (s->last < s->ntargets && s->targets[s->last]->pid == pid)
		return s->targets[s->last];
	for (size_t i = 0; i < s->ntargets; i++) {
		if (s->targets[i]->pid == pid) {
			s->last = i;
			return s->targets[i];
		}
	}
	return NULL;
}

static int epoll_add(int epfd, int fd, uint64_t tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.u64 = tag };

	return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

/* Called on the prober thread: the reaper closes the link while the prober goes on. */
static void close_link(void *arg)
{
	uprobe_link__destroy(arg);
}

static void dispose_link(struct uprobe_link *l, void *arg)
{
	struct session *s = arg;

	if (prober__submit(s->reaper, close_link, NULL, l))
		uprobe_link__destroy(l);
}

static void setup_env(struct session *s)
{
	struct cycle_env *c = &s->cenv;

	c->out = s->o.out;
	c->run_base = s->o.run_base;
	c->host = s->o.host;
	c->steps = s->o.step != NULL;
	c->grace_ns = GRACE_NS;
	c->cupti = s->o.mode == MODE_CUPTI;
	c->cupti_wait_ns = (uint64_t)(s->o.cupti_wait * 1e9);
	c->sched = s->o.sched;
	if (!s->o.step) {
		/* No steps: one active window from the start to the end. */
		memset(&c->sched, 0, sizeof(c->sched));
		c->sched.active = UINT32_MAX;
	}
	c->mono_to_real = clock_mono_to_real_offset();
	s->penv = (struct probe_env){
		.step = s->o.step, .cupti = c->cupti, .dispose = dispose_link, .dispose_arg = s,
	};
}

/* What a launch probe hit costs here, measured before any target is probed. */
static void calibrate(struct session *s)
{
	int err = bpfobj__calibrate(s->bpf, s->o.mode == MODE_LATENCY, s->events,
				    &s->cenv.probe_ns);

	if (err) {
		s->cenv.probe_ns = -1;
		p_warn("cannot measure the probe's cost here (%s): traces give probe hits only",
		       strerror(-err));
	} else {
		p_dbg("one launch probe hit costs %.0f ns here", s->cenv.probe_ns);
	}
}

/* The BPF object and, before any thread exists, the guardian over its maps. */
static int load(struct session *s)
{
	struct bpfobj_opts bo = {
		.ringbuf_bytes = s->o.ringbuf_bytes,
		.latency = s->o.mode == MODE_LATENCY,
		.steps = s->o.step != NULL,
		.cupti = s->o.mode == MODE_CUPTI,
	};

	s->bpf = bpfobj__load(&bo);
	if (!s->bpf)
		return -errno;
	s->penv.bpf = s->bpf;
	s->guard = guard__start(bpfobj__state_fd(s->bpf), bpfobj__conf_fd(s->bpf));
	if (!s->guard) {
		p_err("cannot start the guardian process: %s", strerror(errno));
		return -errno;
	}
	s->ctrl = ring_buffer__new(bpfobj__ctrl_fd(s->bpf), session_ctrl_event, s, NULL);
	s->events = ring_buffer__new(bpfobj__events_fd(s->bpf), session_data_event, s, NULL);
	if (!s->ctrl || !s->events)
		return -errno;
	return 0;
}

static int setup_loop(struct session *s)
{
	int err;

	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (s->epfd < 0)
		return -errno;
	err = epoll_add(s->epfd, ring_buffer__epoll_fd(s->ctrl), TAG(TAG_RING, 0));
	if (!err)
		err = epoll_add(s->epfd, ring_buffer__epoll_fd(s->events), TAG(TAG_RING, 1));
	if (!err)
		err = epoll_add(s->epfd, prober__fd(s->prober), TAG(TAG_PROBER, 0));
	if (!err)
		err = epoll_add(s->epfd, prober__fd(s->reaper), TAG(TAG_REAPER, 0));
	if (!err)
		err = epoll_add(s->epfd, guard__fd(s->guard), TAG(TAG_GUARD, 0));
	return err;
}

struct session *session__new(const struct session_opts *o, const struct session_hooks *h)
{
	struct session *s = calloc(1, sizeof(*s));
	int err;

	if (!s)
		return NULL;
	s->o = *o;
	if (h)
		s->h = *h;
	s->epfd = -1;
	setup_env(s);
	err = load(s);
	if (err)
		goto fail;
	/* Threads only now: the guardian was forked from a process with one thread. */
	s->syms = symbols__new();
	s->prober = prober__new();
	s->reaper = prober__new();
	if (!s->syms || !s->prober || !s->reaper) {
		err = -ENOMEM;
		goto fail;
	}
	calibrate(s);
	err = setup_loop(s);
	if (!err)
		return s;
fail:
	session__free(s);
	errno = -err;
	return NULL;
}

static int add_target(struct session *s, struct target *t)
{
	if (s->ntargets == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 8;
		struct target **v = realloc(s->targets, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->targets = v;
		s->cap = cap;
	}
	s->targets[s->ntargets++] = t;
	return 0;
}

/*
 * Step 0 of a target starts now: its entries in BPF, its cycles, its
 * probeset, and whether its launch probes start attached.
 */
static int setup_target(struct session *s, struct target *t)
{
	__u32 phase = schedule_action(&s->cenv.sched, 0);
	int err;

	t->conf.sched = s->cenv.sched;
	t->conf.step_every = s->o.step_every ?: 1;
	err = bpfobj__add_proc(s->bpf, t->pid, &t->conf, pack_state(0, phase));
	if (err)
		return err;
	t->cycles = proc_cycles__new(&s->cenv, t, clock_mono_ns());
	t->probes = probeset__new(&s->penv, t->pid);
	if (!t->cycles || !t->probes)
		return -ENOMEM;
	session_want_probes(s, t, phase_probes(phase));
	return epoll_add(s->epfd, t->pidfd, TAG(TAG_TARGET, t->pid));
}

static struct target *new_target(struct session *s, pid_t pid, bool child, int *err)
{
	struct target *t = calloc(1, sizeof(*t));

	*err = -ENOMEM;
	if (!t)
		return NULL;
	*err = target__init(t, pid, child);
	if (!*err)
		*err = add_target(s, t);
	if (*err) {
		target__release(t);
		free(t);
		return NULL;
	}
	*err = setup_target(s, t);
	return t;
}

/* The step probe was not found in pid's objects: say what was searched, and what is close. */
static void tell_step_missing(struct session *s, struct target *t, bool final)
{
	char close[512];

	session_suggest_step(s, t, close, sizeof(close));
	log_msg(final ? LOG_ERROR : LOG_WARN, "step probe %s %s in the %zu objects of pid %d (%s)%s%s%s",
		step_spec__str(s->o.step), final ? "was never found" : "not found yet",
		t->facts.nobjs, t->pid, t->comm, close[0] ? "; close matches: " : "", close,
		final ? "; check --step (cuprobe record --help)" :
			"; waiting for a library that defines it");
}

int session__attach(struct session *s, pid_t pid)
{
	struct target *t;
	char msg[256];
	int err;

	err = target_check_pid(pid, msg, sizeof(msg));
	if (err) {
		p_err("%s", msg);
		return err;
	}
	t = new_target(s, pid, false, &err);
	if (!err)
		err = session_submit(s, t, JOB_SCAN, 0, NULL);
	prober__drain(s->prober);
	if (!err && t->facts.err == -ESRCH)
		err = -ESRCH;
	if (err == -ESRCH) {
		p_err("process %d exited while cuprobe attached; nothing recorded", pid);
		return err;
	}
	if (err) {
		p_err("cannot probe process %d: %s", pid, strerror(-err));
		return err;
	}
	symbols__refresh(s->syms, pid);
	if (!t->facts.has_launch_apis && !t->told_waiting) {
		t->told_waiting = true;
		p_info("pid %d (%s) has no CUDA library mapped yet: watching for one to be loaded",
		       pid, t->comm);
	}
	if (s->o.step && !t->facts.step_found)
		tell_step_missing(s, t, false);
	if (s->o.mode == MODE_CUPTI && !t->facts.agent_found)
		p_warn("pid %d (%s) has no cuprobe agent loaded: --cupti needs the process "
		       "started with CUDA_INJECTION64_PATH or LD_PRELOAD naming "
		       "libcuprobe-agent.so (README: --cupti); recording launches only",
		       pid, t->comm);
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

static void child_exec(char **cmd, const char *agent, int go_fd, int err_fd, const sigset_t *mask)
{
	char c;
	int e;

	sigprocmask(SIG_SETMASK, mask, NULL);
	/* The driver loads the agent at cuInit; it stays dormant until a window opens. */
	if (agent && agent[0])
		setenv("CUDA_INJECTION64_PATH", agent, 1);
	/* Wait until the parent has probed what the command will map; its death is a no. */
	if (read(go_fd, &c, 1) != 1)
		_exit(127);
	execvp(cmd[0], cmd);
	e = errno;
	if (write(err_fd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

/* The child exists and waits for go: probe what it will run, for its pid. */
static int prepare_child(struct session *s, pid_t pid, const char *exe)
{
	struct target *t;
	int err;

	t = new_target(s, pid, true, &err);
	if (err)
		return err;
	s->command = pid;
	err = session_submit(s, t, JOB_EXEC, 0, exe);
	prober__drain(s->prober);
	if (!err)
		err = t->facts.err;
	if (!err && s->o.step && !t->facts.step_found && s->o.step->kind == STEP_SYMBOL)
		p_info("step symbol %s is not in %s: looking for it in libraries as they load",
		       s->o.step->symbol, exe);
	return err;
}

int session__spawn(struct session *s, char **argv, const char *agent, const sigset_t *mask)
{
	int go[2], ex[2], e = 0, err;
	char exe[PATH_MAX];
	pid_t pid;

	err = resolve_command(argv[0], exe, sizeof(exe));
	if (err) {
		p_err("cannot execute %s: %s; check the command name and PATH", argv[0],
		      strerror(-err));
		return err;
	}
	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(ex, O_CLOEXEC)) {
		err = -errno;
		close(go[0]);
		close(go[1]);
		return err;
	}
	pid = fork();
	if (pid == 0)
		child_exec(argv, agent, go[0], ex[1], mask);
	close(go[0]);
	close(ex[1]);
	err = pid < 0 ? -errno : prepare_child(s, pid, exe);
	if (err && pid > 0) {
		p_err("cannot probe %s: %s", exe, strerror(-err));
		kill(pid, SIGKILL);
	}
	if (err)
		close(go[1]); /* the child reads no "go" and exits */
	else if (write(go[1], "g", 1) != 1) {
		err = -errno;
	}
	if (!err)
		close(go[1]);
	if (!err && read(ex[0], &e, sizeof(e)) == sizeof(e)) {
		p_err("cannot execute %s: %s", argv[0], strerror(e));
		err = -e;
	}
	close(ex[0]);
	return err;
}

/* The counters BPF keeps for t, as the cycles count them. */
static bool target_counts(struct session *s, struct target *t, struct cycle_counts *c,
			  struct proc_state *ps)
{
	if (bpfobj__proc_state(s->bpf, t->pid, ps))
		return false;
	c->hits = ps->launch_hits;
	c->drops = ps->drops;
	c->nested = ps->nested;
	return true;
}

/* Writes what t's cycles still hold, with its counters as they are now. */
static int stop_cycles(struct session *s, struct target *t)
{
	struct cycle_counts c;
	struct proc_state ps;
	int err;

	if (!t->cycles)
		return 0;
	err = proc_cycles__stop(t->cycles, clock_mono_ns(),
				target_counts(s, t, &c, &ps) ? &c : NULL);
	proc_cycles__free(t->cycles);
	t->cycles = NULL;
	return err;
}

/* Reads both rings to their end: ctrl first, so every launch finds its step. */
static int consume(struct session *s)
{
	int n = ring_buffer__consume(s->ctrl);

	if (n >= 0)
		n = ring_buffer__consume(s->events);
	if (n < 0 && !s->err)
		s->err = n;
	return s->err;
}

static void on_target_exit(struct session *s, struct target *t)
{
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
	t->hold_since = 0;
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, t->pidfd, NULL);
	/* Everything it made is in the rings by now: place it, then write its cycles. */
	consume(s);
	if (stop_cycles(s, t) && !s->err)
		s->err = -EIO;
	if (t->probes)
		session_submit(s, t, JOB_FREE, 0, NULL);
}

/*
 * Holds answered within HOLD_MAX_NS whatever the prober is doing; lost ctrl
 * events noticed and the maps scanned again, since a library-map event may
 * have been among them.
 */
static void watch_targets(struct session *s, uint64_t now)
{
	for (size_t i = 0; i < s->ntargets; i++) {
		struct target *t = s->targets[i];
		struct proc_state ps;

		if (t->hold_since && now - t->hold_since > HOLD_MAX_NS) {
			p_warn("pid %d: its new libraries took over %llu ms to probe: continued "
			       "first; their first launches may be missed", t->pid,
			       HOLD_MAX_NS / 1000000);
			session_answer_hold(s, t);
		}
		if (now - s->polled < POLL_STATE_NS || t->exited ||
		    bpfobj__proc_state(s->bpf, t->pid, &ps) || ps.lost_ctrl == t->lost_ctrl)
			continue;
		p_warn("pid %d: %llu step, library or thread events were lost (ctrl ring full): "
		       "looking at its libraries again", t->pid,
		       (unsigned long long)(ps.lost_ctrl - t->lost_ctrl));
		t->lost_ctrl = ps.lost_ctrl;
		session_submit(s, t, JOB_SCAN, 0, NULL);
	}
	if (now - s->polled >= POLL_STATE_NS)
		s->polled = now;
}

static void on_ready(struct session *s, uint64_t tag)
{
	struct target *t;

	switch (tag >> 32) {
	case TAG_TARGET:
		t = session_find(s, (pid_t)(uint32_t)tag);
		if (t)
			on_target_exit(s, t);
		break;
	case TAG_GUARD:
		if (!s->guard_gone)
			p_warn("the guardian process exited: should cuprobe now be killed, a "
			       "process it holds could stay stopped");
		s->guard_gone = true;
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, guard__fd(s->guard), NULL);
		break;
	default:
		break; /* rings and probers are read on every turn */
	}
}

int session__fd(const struct session *s)
{
	return s->epfd;
}

int session__dispatch(struct session *s)
{
	struct epoll_event evs[16];
	uint64_t now;
	int n;

	n = epoll_wait(s->epfd, evs, 16, 0);
	if (n < 0 && errno != EINTR)
		return -errno;
	/* Answers first, so that a warmup check sees the attach that came before it. */
	prober__collect(s->prober);
	prober__collect(s->reaper);
	/* Events are submitted without wakeups: read them on every turn. */
	consume(s);
	for (int k = 0; k < n; k++)
		on_ready(s, evs[k].data.u64);
	now = clock_mono_ns();
	watch_targets(s, now);
	for (size_t i = 0; i < s->ntargets; i++)
		if (s->targets[i]->cycles && proc_cycles__flush(s->targets[i]->cycles, now) &&
		    !s->err)
			s->err = -EIO;
	return s->err;
}

bool session__alive(const struct session *s)
{
	for (size_t i = 0; i < s->ntargets; i++)
		if (!s->targets[i]->exited)
			return true;
	return false;
}

bool session__command_status(const struct session *s, int *status)
{
	for (size_t i = 0; i < s->ntargets; i++) {
		if (s->targets[i]->pid == s->command && s->targets[i]->exited) {
			*status = s->targets[i]->status;
			return true;
		}
	}
	return false;
}

void session__end_command(struct session *s, int grace_ms)
{
	struct target *t = s->command ? session_find(s, s->command) : NULL;
	struct pollfd pfd;

	if (!t || t->exited)
		return;
	pfd = (struct pollfd){ .fd = t->pidfd, .events = POLLIN };
	/* cuprobe's own child: continued whatever holds it, so that it can take SIGTERM. */
	kill(t->pid, SIGCONT);
	kill(t->pid, SIGTERM);
	if (poll(&pfd, 1, grace_ms) == 0) {
		p_warn("pid %d ignored SIGTERM: killing it", t->pid);
		kill(t->pid, SIGKILL);
		poll(&pfd, 1, -1);
	}
	on_target_exit(s, t);
}

/* Whether any open window still waits for its agent's flush since since. */
static bool agents_waiting(struct session *s, const bool *open, uint64_t since)
{
	for (size_t i = 0; i < s->ntargets; i++) {
		struct target *t = s->targets[i];

		if (open[i] && !t->exited && t->cycles &&
		    !proc_cycles__flushed_since(t->cycles, since))
			return true;
	}
	return false;
}

/*
 * --cupti: switch the agents off, so that they flush what the open windows
 * recorded, and wait (boundedly) for it before the last cycles are written.
 */
static void drain_agents(struct session *s)
{
	uint64_t since = clock_mono_ns(), deadline = since + s->cenv.cupti_wait_ns;
	bool *open = calloc(s->ntargets ? s->ntargets : 1, sizeof(*open));

	if (s->o.mode != MODE_CUPTI || !open) {
		free(open);
		return;
	}
	/* Only a window still open has a flush to come. The prober is idle: facts are settled. */
	prober__drain(s->prober);
	for (size_t i = 0; i < s->ntargets; i++) {
		struct target *t = s->targets[i];

		open[i] = t->want.agent && t->facts.agent_found && !t->exited;
		session_want_probes(s, t, false);
	}
	prober__drain(s->prober);
	while (agents_waiting(s, open, since) && clock_mono_ns() < deadline) {
		ring_buffer__poll(s->events, 20);
		consume(s);
	}
	if (agents_waiting(s, open, since))
		p_warn("an agent did not flush within --cupti-wait %.1f s: the last cycle may "
		       "lack GPU records", s->o.cupti_wait);
	free(open);
}

static void tell_counters(struct session *s)
{
	struct cuprobe_counters c;

	bpfobj__counters(s->bpf, &c);
	p_dbg("returns with no entry (--latency): %lu; calibration hits %lu, of them lost %lu",
	      (unsigned long)c.lat_misses, (unsigned long)c.hits, (unsigned long)c.drops);
	if (c.agent_bad)
		p_warn("%lu agent chunks had a bad length or could not be read: their GPU records "
		       "are missing", (unsigned long)c.agent_bad);
	if (c.agent_drops)
		p_warn("%lu agent chunks were lost (ring buffer full): their GPU records are "
		       "missing; raise --ringbuf-size", (unsigned long)c.agent_drops);
}

int session__finish(struct session *s)
{
	int ret = 0;

	log_status_end();
	prober__drain(s->prober);
	consume(s);
	drain_agents(s);
	consume(s);
	for (size_t i = 0; i < s->ntargets; i++) {
		struct target *t = s->targets[i];

		if (stop_cycles(s, t))
			ret = -EIO;
		if (s->o.step && !t->facts.step_found) {
			tell_step_missing(s, t, true);
			ret = -ENOENT;
		}
	}
	tell_counters(s);
	return ret ?: s->err;
}

/*
 * Every probe out (the prober and the reaper are drained, so every link is
 * closed), then every hold answered, and only then is the guardian told
 * that it may go.
 */
static void let_go(struct session *s)
{
	for (size_t i = 0; i < s->ntargets; i++)
		if (s->targets[i]->probes)
			session_submit(s, s->targets[i], JOB_FREE, 0, NULL);
	prober__free(s->prober);
	prober__free(s->reaper);
	s->prober = s->reaper = NULL;
	s->leaving = true;
	if (s->ctrl)
		ring_buffer__consume(s->ctrl);
	for (size_t i = 0; i < s->ntargets; i++)
		if (!s->targets[i]->exited)
			session_answer_hold(s, s->targets[i]);
	guard__release(s->guard);
	s->guard = NULL;
}

static void free_target(struct session *s, struct target *t)
{
	/* cuprobe's own command never outlives it unseen (record ended it already). */
	if (t->child && !t->exited) {
		kill(t->pid, SIGKILL);
		waitpid(t->pid, NULL, 0);
	}
	if (s->bpf)
		bpfobj__remove_proc(s->bpf, t->pid);
	proc_cycles__free(t->cycles);
	target__release(t);
	free(t);
}

void session__free(struct session *s)
{
	if (!s)
		return;
	if (s->prober)
		let_go(s);
	prober__free(s->reaper);
	guard__release(s->guard);
	for (size_t i = 0; i < s->ntargets; i++)
		free_target(s, s->targets[i]);
	free(s->targets);
	ring_buffer__free(s->ctrl);
	ring_buffer__free(s->events);
	bpfobj__free(s->bpf);
	symbols__free(s->syms);
	if (s->epfd >= 0)
		close(s->epfd);
	free(s);
}
