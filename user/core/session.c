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

/* The mirror asks as a cycle begins: a window asked for, else the front-end, else the plan. */
static enum window_mode cycle_mode(void *ctx, const struct target *ct, uint32_t k)
{
	struct session *s = ctx;
	struct target *t = session_find(s, ct->pid);

	if (!t)
		return MODE_OFF;
	if (t->asked) {
		t->mode = t->asked_mode;
		t->asked = false;
	} else {
		t->mode = s->h.cycle_mode ? s->h.cycle_mode(s->h.ctx, t, k) : t->plan.mode;
	}
	/* A mode whose programs were not loaded attaches nothing. */
	if (!(s->o.modes & 1u << t->mode))
		t->mode = MODE_OFF;
	return t->mode;
}

static int cycle_dir(void *ctx, const struct target *t, uint32_t k, char *buf, size_t len)
{
	struct session *s = ctx;

	return s->h.cycle_dir(s->h.ctx, t, k, buf, len);
}

static void step_done(void *ctx, const struct target *t, const struct cycle_step_info *si)
{
	struct session *s = ctx;

	if (s->h.step_done)
		s->h.step_done(s->h.ctx, t, si);
}

static void cycle_done(void *ctx, const struct target *t, const struct cycle_info *ci)
{
	struct session *s = ctx;

	if (s->h.cycle_done)
		s->h.cycle_done(s->h.ctx, t, ci);
}

static void setup_env(struct session *s)
{
	struct cycle_env *c = &s->cenv;

	c->host = s->o.host;
	c->grace_ns = GRACE_NS;
	c->cupti_wait_ns = (uint64_t)(s->o.cupti_wait * 1e9);
	c->mono_to_real = clock_mono_to_real_offset();
	c->ctx = s;
	c->cycle_mode = cycle_mode;
	c->cycle_dir = cycle_dir;
	c->step_done = step_done;
	c->cycle_done = cycle_done;
	s->penv = (struct probe_env){
		.cupti = s->o.modes & 1u << MODE_CUPTI, .dispose = dispose_link, .dispose_arg = s,
	};
	/* No steps and no slices: one active window from the start to the end. */
	s->one_cycle.sched.active = UINT32_MAX;
}

/* What a launch probe hit costs here, measured before any target is probed. */
static void calibrate(struct session *s)
{
	int err = bpfobj__calibrate(s->bpf, s->o.plan.mode == MODE_LATENCY, s->events,
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
		.latency = s->o.modes & 1u << MODE_LATENCY,
		.steps = s->o.steps,
		.cupti = s->o.modes & 1u << MODE_CUPTI,
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
	/* A turn takes about what both rings can hold (the smallest record is 16 bytes). */
	s->ring_events = (long)((s->o.ringbuf_bytes + CUPROBE_CTRL_RING) / 16);
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

/* How a plan's steps are counted, and the schedule the loader's mirror follows. */
static enum cycle_clock plan_clock(const struct target_plan *p)
{
	return p->step ? CLOCK_STEPS : p->slice_ns ? CLOCK_SLICES : CLOCK_ONE;
}

/*
 * Step 0 of a target starts now: its entries in BPF, its cycles, its
 * probeset, and whether its launch probes start attached. Without a step
 * probe, BPF's phase stays RECORD and the probes' presence is the window.
 */
static int setup_target(struct session *s, struct target *t, const struct target_plan *p)
{
	enum cycle_clock clock = plan_clock(p);
	const struct schedule *sched = clock == CLOCK_ONE ? &s->one_cycle.sched : &p->sched;
	__u32 phase = schedule_action(sched, 0);
	uint64_t now = clock_mono_ns();
	int err;

	t->plan = *p;
	t->conf.sched = *sched;
	t->conf.step_every = p->step_every ?: 1;
	err = bpfobj__add_proc(s->bpf, t->pid, &t->conf,
			       pack_state(0, clock == CLOCK_STEPS ? phase : PHASE_RECORD));
	if (err)
		return err;
	t->slice_next = now + p->slice_ns;
	t->cycles = proc_cycles__new(&s->cenv, t, now, sched, clock);
	t->probes = probeset__new(&s->penv, t->pid, p->step);
	if (!t->cycles || !t->probes)
		return -ENOMEM;
	session_want_probes(s, t, phase_probes(phase));
	return epoll_add(s->epfd, t->pidfd, TAG(TAG_TARGET, t->pid));
}

static struct target *new_target(struct session *s, pid_t pid, bool child,
				 const struct target_plan *p, int *err)
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
	*err = setup_target(s, t, p);
	return t;
}

/* The step probe was not found in pid's objects: say what was searched, and what is close. */
static void tell_step_missing(struct session *s, struct target *t, bool final)
{
	char close[512];

	session_suggest_step(s, t, close, sizeof(close));
	log_msg(final ? LOG_ERROR : LOG_WARN, "step probe %s %s in the %zu objects of pid %d (%s)%s%s%s",
		step_spec__str(t->plan.step), final ? "was never found" : "not found yet",
		t->facts.nobjs, t->pid, t->comm, close[0] ? "; close matches: " : "", close,
		final ? "; check --step (cuprobe record --help)" :
			"; waiting for a library that defines it");
}

int session__attach(struct session *s, pid_t pid)
{
	return session__attach_plan(s, pid, &s->o.plan);
}

int session__attach_plan(struct session *s, pid_t pid, const struct target_plan *p)
{
	struct target *t;
	char msg[256];
	int err;

	err = target_check_pid(pid, msg, sizeof(msg));
	if (err) {
		p_err("%s", msg);
		return err;
	}
	if (session_find(s, pid))
		return -EEXIST;
	t = new_target(s, pid, false, p, &err);
	if (!err)
		err = session_submit(s, t, JOB_SCAN, 0, NULL);
	t->scanning = !err;
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
	if (p->step && !t->facts.step_found)
		tell_step_missing(s, t, false);
	if (p->mode == MODE_CUPTI && !t->facts.agent_found)
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

	t = new_target(s, pid, true, &s->o.plan, &err);
	if (err)
		return err;
	s->command = pid;
	err = session_submit(s, t, JOB_EXEC, 0, exe);
	prober__drain(s->prober);
	if (!err)
		err = t->facts.err;
	if (!err && t->plan.step && !t->facts.step_found && t->plan.step->kind == STEP_SYMBOL)
		p_info("step symbol %s is not in %s: looking for it in libraries as they load",
		       t->plan.step->symbol, exe);
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

bool session_consume(struct session *s, struct ring_buffer *rb)
{
	int n = ring_buffer__consume(rb);

	if (n == -EAGAIN) {
		s->backlog = true;
		return false;
	}
	if (n < 0 && !s->err)
		s->err = n;
	return true;
}

/*
 * Reads both rings, ctrl first so that every launch finds its step, taking
 * at most about what the rings hold: producers that outrun cuprobe cannot
 * keep it here, away from answering holds and writing cycles.
 */
static int consume(struct session *s)
{
	s->budget = s->ring_events;
	s->backlog = false;
	if (session_consume(s, s->ctrl))
		session_consume(s, s->events);
	return s->err;
}

/*
 * The end of a target, by exit or detach: what it made is placed, its
 * cycles are written, its probes go out; once they are, session_remove
 * frees it.
 */
static void end_target(struct session *s, struct target *t)
{
	consume(s);
	if (stop_cycles(s, t) && !s->err)
		s->err = -EIO;
	if (t->plan.step && !t->facts.step_found) {
		tell_step_missing(s, t, true);
		if (!s->err)
			s->err = -ENOENT;
	}
	if (!t->exited)
		session_answer_hold(s, t);
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, t->pidfd, NULL);
	t->gone = true;
	if (s->h.exited)
		s->h.exited(s->h.ctx, t);
	if (!t->probes || session_submit(s, t, JOB_FREE, 0, NULL))
		session_remove(s, t);
}

static void on_target_exit(struct session *s, struct target *t)
{
	siginfo_t si;

	if (t->gone)
		return;
	if (t->child) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_PID, t->pid, &si, WEXITED | WNOHANG) || si.si_pid != t->pid)
			return;
		t->status = si.si_code == CLD_EXITED ? si.si_status << 8 : si.si_status;
		if (t->pid == s->command) {
			s->command_done = true;
			s->command_status = t->status;
		}
	}
	t->exited = true;
	t->hold_since = 0;
	end_target(s, t);
}

void session_remove(struct session *s, struct target *t)
{
	for (size_t i = 0; i < s->ntargets; i++) {
		if (s->targets[i] != t)
			continue;
		s->targets[i] = s->targets[--s->ntargets];
		s->last = 0;
		break;
	}
	bpfobj__remove_proc(s->bpf, t->pid);
	proc_cycles__free(t->cycles);
	target__release(t);
	free(t);
}

int session__detach(struct session *s, pid_t pid)
{
	struct target *t = session_find(s, pid);

	if (!t || t->gone)
		return -ESRCH;
	end_target(s, t);
	return 0;
}

const struct target *session__target(const struct session *s, pid_t pid)
{
	for (size_t i = 0; i < s->ntargets; i++)
		if (s->targets[i]->pid == pid && !s->targets[i]->gone)
			return s->targets[i];
	return NULL;
}

int session__window(struct session *s, pid_t pid, uint32_t warmup, uint32_t active,
		    enum window_mode mode)
{
	struct schedule w = { .warmup = warmup, .active = active ? active : 1, .repeat = 1 };
	struct target *t = session_find(s, pid);
	struct cycle_status st;

	if (!t || t->gone)
		return -ESRCH;
	proc_cycles__status(t->cycles, &st);
	if (st.phase != PHASE_NONE || t->asked)
		return -EBUSY;
	t->asked = true;
	t->asked_mode = mode;
	t->conf.sched = w;
	if (plan_clock(&t->plan) == CLOCK_SLICES) {
		t->slice_base = t->slice + 1;
		proc_cycles__set_schedule(t->cycles, &w, t->slice_base);
		return 0;
	}
	/* BPF counts the new schedule from the next step hit; the mirror estimates it. */
	t->conf.gen++;
	proc_cycles__set_schedule(t->cycles, &w, st.step + 1);
	return bpfobj__set_conf(s->bpf, t->pid, &t->conf);
}

/* Time slices: the loader ends a slice as a step probe would end a step. */
static void end_slice(struct session *s, struct target *t, uint64_t now)
{
	struct step_event e = {
		.type = REC_STEP, .tgid = t->pid, .tid = t->pid, .ts_ns = now,
	};
	struct proc_state ps;

	if (bpfobj__proc_state(s->bpf, t->pid, &ps))
		return;
	e.step = ++t->slice;
	e.phase = schedule_action(&t->conf.sched, t->slice - t->slice_base);
	e.launch_hits = ps.launch_hits;
	e.drops = ps.drops;
	e.nested = ps.nested;
	t->slice_next += t->plan.slice_ns;
	if (t->slice_next < now)
		t->slice_next = now + t->plan.slice_ns; /* cuprobe was late: slices restart from now */
	session_step(s, t, &e);
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

		if (t->gone)
			continue;
		if (plan_clock(&t->plan) == CLOCK_SLICES && now >= t->slice_next)
			end_slice(s, t, now);
		if (t->hold_since && now - t->hold_since > HOLD_MAX_NS) {
			p_warn("pid %d: its new libraries took over %llu ms to probe: continued "
			       "first; their first launches may be missed", t->pid,
			       HOLD_MAX_NS / 1000000);
			session_answer_hold(s, t);
		}
		if (now - s->polled < POLL_STATE_NS || t->exited ||
		    bpfobj__proc_state(s->bpf, t->pid, &ps) || ps.lost_ctrl == t->lost_ctrl)
			continue;
		log_msg(t->lost_ctrl ? LOG_DEBUG : LOG_WARN,
			"pid %d: %llu step, library or thread events were lost (ctrl ring full): "
			"looking at its libraries again", t->pid,
			(unsigned long long)(ps.lost_ctrl - t->lost_ctrl));
		t->lost_ctrl = ps.lost_ctrl;
		session_rescan(s, t);
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

bool session__busy(const struct session *s)
{
	return s->backlog;
}

bool session__alive(const struct session *s)
{
	for (size_t i = 0; i < s->ntargets; i++)
		if (!s->targets[i]->gone)
			return true;
	return false;
}

bool session__command_status(const struct session *s, int *status)
{
	*status = s->command_status;
	return s->command_done;
}

void session__end_command(struct session *s, int grace_ms)
{
	struct target *t = s->command ? session_find(s, s->command) : NULL;
	struct pollfd pfd;

	if (!t || t->gone)
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

		if (open[i] && !t->gone && t->cycles &&
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

	if (!(s->o.modes & 1u << MODE_CUPTI) || !open) {
		free(open);
		return;
	}
	/* Only a window still open has a flush to come. The prober is idle: facts are settled. */
	prober__drain(s->prober);
	for (size_t i = 0; i < s->ntargets; i++) {
		struct target *t = s->targets[i];

		open[i] = t->want.agent && t->facts.agent_found && !t->gone;
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
	log_status_end();
	prober__drain(s->prober);
	consume(s);
	drain_agents(s);
	consume(s);
	/* end_target takes each target out of the list. */
	while (s->ntargets) {
		struct target *t = s->targets[0];

		if (t->gone) {
			prober__drain(s->prober);
			if (s->ntargets && s->targets[0] == t)
				session_remove(s, t); /* its free job could not be sent */
			continue;
		}
		end_target(s, t);
	}
	tell_counters(s);
	return s->err;
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
	prober__drain(s->prober);
	prober__free(s->reaper);
	s->reaper = NULL;
	s->leaving = true;
	if (s->ctrl)
		consume(s);
	for (size_t i = 0; i < s->ntargets; i++)
		if (!s->targets[i]->exited)
			session_answer_hold(s, s->targets[i]);
	guard__release(s->guard);
	s->guard = NULL;
}

/* cuprobe's own command never outlives it unseen (record ended it already). */
static void free_target(struct target *t)
{
	if (t->child && !t->exited) {
		kill(t->pid, SIGKILL);
		waitpid(t->pid, NULL, 0);
	}
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
	prober__free(s->prober);
	prober__free(s->reaper);
	guard__release(s->guard);
	for (size_t i = 0; i < s->ntargets; i++)
		free_target(s->targets[i]);
	free(s->targets);
	ring_buffer__free(s->ctrl);
	ring_buffer__free(s->events);
	bpfobj__free(s->bpf);
	symbols__free(s->syms);
	if (s->epfd >= 0)
		close(s->epfd);
	free(s);
}
