// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A target's life in the session: started (spawned or attached) with its
 * plan, given windows, and ended (exit or detach) with its cycles written
 * and its probes taken out.
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
#include <sys/stat.h>
#include <sys/wait.h>
#include "core/gpu/inject.h"
#include "core/graphs/graph_store.h"
#include "core/probes/bpfobj.h"
#include "core/proc/procmaps.h"
#include "core/proc/stacks.h"
#include "core/proc/symbols.h"
#include "core/steps/step_slices.h"
#include "core/steps/step_spec.h"
#include "core/session/prober.h"
#include "core/session/session_int.h"
#include "core/session/session_holds.h"
#include "core/session/session_hooks.h"
#include "core/session/session_jobs.h"
#include "core/session/session_lead.h"
#include "core/session/session_step_missing.h"
#include "core/session/session_targets.h"
#include "proc_state.h"
#include "schedule.h"
#include "util/clock.h"
#include "util/log.h"

static int add_target(struct session *s, struct target *t)
{
	struct target **slot = vec__push(&s->targets);

	if (!slot)
		return -ENOMEM;
	*slot = t;
	return 0;
}

struct target *session_find(struct session *s, pid_t pid)
{
	if (s->last < s->targets.len && TARGET(s, s->last)->pid == pid)
		return TARGET(s, s->last);
	for (size_t i = 0; i < s->targets.len; i++) {
		if (TARGET(s, i)->pid == pid) {
			s->last = i;
			return TARGET(s, i);
		}
	}
	return NULL;
}

/* How a plan's steps are counted, and the schedule the loader's mirror follows. */
enum cycle_clock session_plan_clock(const struct target_plan *p)
{
	return p->step ? CLOCK_STEPS : p->slice_ns ? CLOCK_SLICES : CLOCK_ONE;
}

/*
 * Step 0 of a target starts now: its entries in BPF, its cycles, its
 * probeset, and whether its launch probes start attached. Without a step
 * probe, BPF's phase stays RECORD and the probes' presence is the window.
 */
static int adopt_generations(struct session *s, struct target *t)
{
	struct proc_state ps;
	int err = bpfobj__proc_state(s->bpf, t->pid, &ps);

	if (err)
		return err;
	t->conf.gen = ps.gen;
	t->conf.link_gen = state_gen(ps.state);
	return 0;
}

static int setup_target(struct session *s, struct target *t, const struct target_plan *p,
			bool adopted)
{
	enum cycle_clock clock = session_plan_clock(p);
	const struct schedule *sched = clock == CLOCK_ONE ? &s->one_cycle.sched : &p->sched;
	__u32 phase = schedule_action(sched, 0);
	uint64_t now = clock_mono_ns();
	int err;

	t->plan = *p;
	if (p->identity) {
		t->rank = p->rank;
		t->world_size = p->world_size;
	}
	t->conf.sched = *sched;
	t->conf.step_every = p->step_every ?: 1;
	t->conf.flags = p->follow ? CONF_FOLLOW : 0;
	t->conf.wake_ahead = WAKE_EVERY; /* until its steps' length is known (session_lead.c) */
	/* No capture probe is in yet: a capture that begins waits for them (session_capture_hold). */
	if (s->penv.captures)
		t->conf.flags |= CONF_CAPTURE_HOLD;
	/*
	 * An adopted child's entries are BPF's copy of its parent's: its counters
	 * already run, and its state names the parent's schedule and link
	 * generations, which the conf written here must keep.
	 */
	err = adopted ? adopt_generations(s, t) : -ENOENT;
	if (!err)
		err = bpfobj__set_conf(s->bpf, t->pid, &t->conf);
	if (err)
		err = bpfobj__add_proc(s->bpf, t->pid, &t->conf,
				       pack_state(0, t->conf.link_gen,
						  clock == CLOCK_STEPS ? phase : PHASE_RECORD));
	if (err)
		return err;
	step_slices__start(&t->slices, p->slice_ns, now);
	t->cycles = proc_cycles__new(&s->cenv, t, now, sched, clock);
	t->probes = probeset__new(&s->penv, t->pid, p->step);
	if (!t->cycles || !t->probes)
		return -ENOMEM;
	if (clock == CLOCK_STEPS)
		session_want_ahead(s, t, phase, 0);
	else
		session_want_probes(s, t, phase_probes(phase));
	return session_epoll_add(s->epfd, t->pidfd, TAG(TAG_TARGET, t->pid));
}

struct target *session_new_target(struct session *s, pid_t pid, bool child,
				 const struct target_plan *p, bool adopted, int *err)
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
	t->adopted = adopted;
	*err = setup_target(s, t, p, adopted);
	return t;
}

int session__attach(struct session *s, pid_t pid)
{
	return session__attach_plan(s, pid, &s->o.plan);
}

static int attach_one(struct session *s, pid_t pid, const struct target_plan *p, bool adopted);

/*
 * A followed process's children already there are followed too, and theirs:
 * adopted, as those to come are. One that exits meanwhile (a DataLoader's
 * worker) is no fault: the user did not name it.
 */
static void attach_children(struct session *s, pid_t pid, const struct target_plan *p)
{
	char path[64], line[4096];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid, (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fscanf(f, "%4095s", line) == 1) {
		pid_t child = (pid_t)atoi(line);

		if (child > 0 && !session_find(s, child) && !attach_one(s, child, p, true))
			p_info("pid %d, started by pid %d: recorded too", child, pid);
	}
	fclose(f);
}

/*
 * --cupti -p on a process without the agent: loaded now (inject.h), or why
 * not said. Returns whether something was said about the agent.
 */
static bool bring_agent(struct session *s, pid_t pid, const struct target_plan *p)
{
	/* The plan's mode, or a mode a window may take (compare, the daemon). */
	bool cupti = p->mode == MODE_CUPTI || (s->o.modes & (1u << MODE_CUPTI));
	char comm[64] = "", why[512];
	int err;

	if (!cupti || !s->o.agent || inject_has_agent(pid, s->o.agent) != 0)
		return false;
	proc_comm(pid, comm, sizeof(comm));
	err = inject_agent(pid, s->o.agent, INJECT_TIMEOUT_S, why, sizeof(why));
	if (err == -ENODATA) {
		p_dbg("pid %d (%s): the agent is not brought in: %s", pid, comm, why);
		return false;
	}
	if (err) {
		p_warn("pid %d (%s) has no cuprobe agent loaded, and cuprobe cannot bring it in: %s; "
		       "recording launches only (start it with CUDA_INJECTION64_PATH or LD_PRELOAD "
		       "naming libcuprobe-agent.so for GPU times)", pid, comm, why);
		return true;
	}
	p_info("pid %d (%s): agent loaded into the running process; CUPTI sees the GPU work of "
	       "launches from the first window on, none before", pid, comm);
	return true;
}

int session__attach_plan(struct session *s, pid_t pid, const struct target_plan *p)
{
	return attach_one(s, pid, p, false);
}

static int attach_one(struct session *s, pid_t pid, const struct target_plan *p, bool adopted)
{
	struct target *t;
	char msg[256];
	bool told_agent;
	int err;

	err = target_check_pid(pid, msg, sizeof(msg));
	if (err == -ESRCH && adopted) {
		p_dbg("pid %d, a child of a followed process, exited before it was attached", pid);
		return err;
	}
	if (err) {
		p_err("%s", msg);
		return err;
	}
	if (session_find(s, pid))
		return -EEXIST;
	/* Before any probe of it: the agent's dlopen is not held by the library-map probe. */
	told_agent = bring_agent(s, pid, p);
	t = session_new_target(s, pid, false, p, adopted, &err);
	if (!err)
		err = session_submit(s, t, JOB_SCAN, 0, NULL);
	if (t)
		t->scanning = !err;
	prober__drain(s->prober);
	if (!err && t->facts.err == -ESRCH)
		err = -ESRCH;
	if (err == -ESRCH) {
		log_msg(adopted ? LOG_DEBUG : LOG_ERROR,
			"process %d exited while cuprobe attached; nothing recorded", pid);
		return err;
	}
	if (err) {
		p_err("cannot probe process %d: %s", pid, strerror(-err));
		return err;
	}
	symbols__refresh(s->syms, pid);
	/* While it runs, what its program loaded before and it has not yet (session_exec). */
	if (t->probes)
		session_submit(s, t, JOB_PREREG, 0, NULL);
	if (!t->facts.has_launch_apis && !t->told_waiting) {
		t->told_waiting = true;
		p_info("pid %d (%s) has no CUDA library mapped yet: watching for one to be loaded",
		       pid, t->comm);
	}
	if (p->step && !t->facts.step_found) {
		t->told_step = true;
		session_step_missing(s, t, STEP_NOT_YET);
	}
	if (p->follow)
		attach_children(s, pid, p);
	if (p->mode == MODE_CUPTI && !t->facts.agent_found && !told_agent)
		p_warn("pid %d (%s) has no cuprobe agent loaded: --cupti needs the process "
		       "started with CUDA_INJECTION64_PATH or LD_PRELOAD naming "
		       "libcuprobe-agent.so (README: --cupti); recording launches only",
		       pid, t->comm);
	return 0;
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
	c->stale = ps->stale;
	return true;
}

/* Whether a launch probe of t was ever hit; true when BPF cannot say. */
static bool ever_launched(struct session *s, struct target *t)
{
	struct proc_state ps;

	return bpfobj__proc_state(s->bpf, t->pid, &ps) || ps.launch_hits || ps.stale || ps.nested;
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

/*
 * The end of a target, by exit or detach: what it made is placed, its
 * cycles are written, its probes go out; once they are, session_remove
 * frees it.
 */
void session_end_target(struct session *s, struct target *t)
{
	session_consume_all(s);
	/*
	 * A shell or launcher of the tree that never took up CUDA leaves no empty
	 * trace, nor does a forked worker that never launched (a DataLoader's:
	 * it has its parent's RANK, and a folder of ranks would have two), unless
	 * its agent sent GPU records (of launches made where no probe is).
	 */
	if (t->adopted && t->cycles &&
	    (!t->facts.has_launch_apis ||
	     (!ever_launched(s, t) && !proc_cycles__agent_heard(t->cycles)))) {
		if (t->facts.has_launch_apis)
			p_dbg("pid %d (%s) made no launch: no trace", t->pid, t->comm);
		proc_cycles__free(t->cycles);
		t->cycles = NULL;
	}
	if (stop_cycles(s, t) && !s->err)
		s->err = -EIO;
	/* In a followed tree, the step is in some of its processes (the ranks), not all. */
	if (t->plan.step && !t->facts.step_found && !t->plan.follow) {
		session_step_missing(s, t, STEP_NEVER);
		if (!s->err)
			s->err = -ENOENT;
	} else if (t->plan.step && !t->facts.step_found && !t->adopted && !s->steps_found) {
		session_step_missing(s, t, STEP_NEVER);
		p_err("no process of the tree of pid %d had the step probe", t->pid);
		if (!s->err)
			s->err = -ENOENT;
	}
	if (!t->exited)
		session_answer_hold(s, t);
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, t->pidfd, NULL);
	t->gone = true;
	session_hook_exited(s, t);
	if (!t->probes || session_submit(s, t, JOB_FREE, 0, NULL))
		session_remove(s, t);
}

void session_target_exit(struct session *s, struct target *t)
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
	session_end_target(s, t);
}

/* What its graphs' store could not follow: said, since its replays' kernels may be short. */
static void tell_graphs(const struct target *t)
{
	struct graph_store_stats st;

	if (!t->cycles)
		return;
	proc_cycles__graph_stats(t->cycles, &st);
	if (st.late_nodes)
		p_warn("pid %d: %lu launches into captures were read after a replay of their graph "
		       "was written: those replays lack them", t->pid, (unsigned long)st.late_nodes);
	if (st.unknown_changes)
		p_dbg("pid %d: %lu graph calls were about graphs or nodes made before cuprobe "
		      "attached: their replays are of unknown content", t->pid,
		      (unsigned long)st.unknown_changes);
	if (st.full)
		p_warn("pid %d: its graphs held more nodes than cuprobe keeps: %lu not kept, their "
		       "replays are of unknown content or short", t->pid, (unsigned long)st.full);
}

void session_remove(struct session *s, struct target *t)
{
	for (size_t i = 0; i < s->targets.len; i++) {
		if (TARGET(s, i) != t)
			continue;
		TARGET(s, i) = TARGET(s, s->targets.len - 1);
		vec__truncate(&s->targets, s->targets.len - 1);
		s->last = 0;
		break;
	}
	bpfobj__remove_proc(s->bpf, t->pid);
	bpfobj__remove_py_proc(s->bpf, t->pid);
	if (s->stacks)
		stacks__forget(s->stacks, t->pid);
	tell_graphs(t);
	proc_cycles__free(t->cycles);
	target__release(t);
	free(t);
}

int session__detach(struct session *s, pid_t pid)
{
	struct target *t = session_find(s, pid);

	if (!t || t->gone)
		return -ESRCH;
	session_end_target(s, t);
	return 0;
}

int session__target(const struct session *s, pid_t pid, struct session_target *out)
{
	for (size_t i = 0; i < s->targets.len; i++) {
		const struct target *t = TARGET(s, i);

		if (t->pid != pid || t->gone)
			continue;
		if (out)
			target__view(t, out);
		return 0;
	}
	return -ESRCH;
}

void session__end_command(struct session *s)
{
	struct target *t = s->command ? session_find(s, s->command) : NULL;
	struct pollfd pfd;

	if (!t || t->gone)
		return;
	pfd = (struct pollfd){ .fd = t->pidfd, .events = POLLIN };
	/* cuprobe's own child: continued whatever holds it, so that it can take SIGTERM. */
	kill(t->pid, SIGCONT);
	kill(t->pid, SIGTERM);
	if (poll(&pfd, 1, SESSION_END_GRACE_MS) == 0) {
		p_warn("pid %d ignored SIGTERM: killing it", t->pid);
		kill(t->pid, SIGKILL);
		poll(&pfd, 1, -1);
	}
	session_target_exit(s, t);
}
