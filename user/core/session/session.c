// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>
#include <sys/wait.h>
#include <bpf/libbpf.h>
#include "capture.h"
#include "core/graphs/graph_store.h"
#include "core/probes/bpfobj.h"
#include "core/probes/guard.h"
#include "core/probes/launch_files.h"
#include "core/probes/uprobe_warm.h"
#include "core/probes/uprobe_link.h"
#include "core/proc/handle_names.h"
#include "core/proc/objcache.h"
#include "core/proc/stacks.h"
#include "core/proc/symbols.h"
#include "core/steps/step_slices.h"
#include "core/steps/step_spec.h"
#include "core/session/prober.h"
#include "core/session/session_int.h"
#include "core/session/session_hooks.h"
#include "core/session/session_answers.h"
#include "core/session/session_held.h"
#include "core/session/session_children.h"
#include "core/session/session_holds.h"
#include "core/session/session_jobs.h"
#include "core/session/session_launches.h"
#include "core/session/session_lost.h"
#include "core/session/session_onetrap.h"
#include "core/session/session_records.h"
#include "core/session/session_ring.h"
#include "core/session/session_step_missing.h"
#include "core/session/session_targets.h"
#include "core/session/session_windows.h"
#include "names.h"
#include "proc_state.h"
#include "records.h"
#include "schedule.h"
#include "step.h"
#include "util/clock.h"
#include "util/log.h"

/* A finished cycle waits this long for launches still in the ring buffer. */
#define GRACE_NS (20 * 1000 * 1000ull)
/* Launches a turn places (symbols, JSON): a few ms, then the rings are read again. */
#define PLACE_SLICE 8192
/* A stage held by a preempted probe, waited for at the end: 100 us at a time, up to 20 ms. */
#define STAGE_WAITS 200
/* How often each target's BPF counters are looked at for lost ctrl events. */
#define POLL_STATE_NS (200 * 1000 * 1000ull)

/* Links the prober let go, closed on a reaper in order: an entry before its return. */
struct reap_job {
	struct uprobe_link *first, *then;
};

static void close_links(void *arg)
{
	struct reap_job *j = arg;

	uprobe_link__destroy(j->first);
	uprobe_link__destroy(j->then);
	free(j);
}

/*
 * Called on the prober thread, which goes on while a reaper closes. Each
 * close waits on the kernel for tens of ms, but closes made at once share
 * the wait: jobs go round the reapers, so that a process's twenty links, or
 * the exits of a DataLoader's workers, close in the time of a few.
 */
static void dispose_links(struct uprobe_link *first, struct uprobe_link *then, void *arg)
{
	struct session *s = arg;
	struct reap_job *j = malloc(sizeof(*j));
	unsigned int k = __atomic_fetch_add(&s->reap_next, 1, __ATOMIC_RELAXED);

	if (j) {
		*j = (struct reap_job){ .first = first, .then = then };
		if (!prober__submit(s->reaper[k % REAPERS], close_links, NULL, j))
			return;
		free(j);
	}
	uprobe_link__destroy(first);
	uprobe_link__destroy(then);
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
		t->mode = session_hook_mode(s, t, k);
	}
	/* A mode whose programs were not loaded attaches nothing. */
	if (!(s->o.modes & 1u << t->mode))
		t->mode = MODE_OFF;
	return t->mode;
}

static int cycle_dir(void *ctx, const struct target *t, uint32_t k, char *buf, size_t len)
{
	struct session *s = ctx;
	struct session_target v;

	target__view(t, &v);
	return s->h.cycle_dir(s->h.ctx, &v, k, buf, len);
}

static void step_done(void *ctx, const struct target *t, const struct cycle_step_info *si)
{
	struct session *s = ctx;
	struct session_target v;

	if (!s->h.step_done)
		return;
	target__view(t, &v);
	s->h.step_done(s->h.ctx, &v, si);
}

static void cycle_done(void *ctx, const struct target *t, const struct cycle_info *ci)
{
	struct session *s = ctx;
	struct session_target v;

	session_cycle_done(s, t, ci);
	if (!s->h.cycle_done)
		return;
	target__view(t, &v);
	s->h.cycle_done(s->h.ctx, &v, ci);
}

/* A cut cycle records no more: its window ends at the next step, so the probes go too. */
static void cycle_cut(void *ctx, const struct target *t, uint32_t k)
{
	struct session *s = ctx;

	(void)k;
	session_end_window(s, session_find(s, t->pid));
}

static void setup_env(struct session *s)
{
	struct cycle_env *c = &s->cenv;

	if (s->o.host)
		snprintf(s->host, sizeof(s->host), "%s", s->o.host);
	else
		gethostname(s->host, sizeof(s->host) - 1);
	c->host = s->host;
	c->grace_ns = GRACE_NS;
	c->cupti_wait_ns = (uint64_t)(s->o.cupti_wait * 1e9);
	c->mono_to_real = clock_mono_to_real_offset();
	c->ctx = s;
	c->proc = target__cycle_proc;
	c->cycle_mode = cycle_mode;
	c->cycle_dir = cycle_dir;
	c->step_done = step_done;
	c->cycle_done = cycle_done;
	c->cycle_cut = cycle_cut;
	c->bounds = s->o.bounds;
	c->out = s->o.out;
	s->graphs = (struct graph_budget){ .max = GRAPH_BUDGET_ITEMS };
	c->graphs = &s->graphs;
	s->penv = (struct probe_env){
		.cupti = s->o.modes & 1u << MODE_CUPTI, .dispose = dispose_links, .dispose_arg = s,
		/* Launches by handle are named, and captures told, only where launches are probed. */
		.names = (s->o.modes & ~(1u << MODE_OFF)) != 0,
		.captures = (s->o.modes & ~(1u << MODE_OFF)) != 0,
	};
	/* No steps and no slices: one active window from the start to the end. */
	s->one_cycle.sched.active = UINT32_MAX;
}

/* What a launch probe hit costs here, measured before any target is probed. */
static void calibrate(struct session *s)
{
	uint64_t lost = bpfobj__events_lost(s->bpf);
	int err;

	/*
	 * Its launches are read out of the ring as they come (a full ring would
	 * make them drops, which cost less than a launch recorded) and let go:
	 * left there, the first turn would read them while the command's exec
	 * was held.
	 */
	s->calibrating = true;
	err = bpfobj__calibrate(s->bpf, s->o.plan.mode == MODE_LATENCY, s->events,
				&s->cenv.probe_ns);
	s->calibrating = false;
	lost = bpfobj__events_lost(s->bpf) - lost;
	p_dbg("calibration: %lu launches read from the ring and let go, %llu lost", s->calib_read,
	      (unsigned long long)lost);

	/* Its own hits filled the ring up to half: that is no rate to grow by. */
	bpfobj__events_high(s->bpf);

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
		.stack = s->o.stack,
		.watch_exec = s->o.watch_exec,
	};
	int err;

	s->bpf = bpfobj__load(&bo);
	if (!s->bpf)
		return -errno;
	s->penv.bpf = s->bpf;
	err = bpfobj__attach_proc(s->bpf);
	if (err) {
		p_err("cannot attach the fork and exit tracepoints: %s", strerror(-err));
		return err;
	}
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
	err = session_epoll_add(s->epfd, ring_buffer__epoll_fd(s->ctrl), TAG(TAG_RING, 0));
	if (!err)
		err = session_epoll_add(s->epfd, ring_buffer__epoll_fd(s->events), TAG(TAG_RING, 1));
	if (!err)
		err = session_epoll_add(s->epfd, prober__fd(s->prober), TAG(TAG_PROBER, 0));
	for (int i = 0; i < REAPERS && !err; i++)
		err = session_epoll_add(s->epfd, prober__fd(s->reaper[i]), TAG(TAG_REAPER, i));
	if (!err)
		err = session_epoll_add(s->epfd, guard__fd(s->guard), TAG(TAG_GUARD, 0));
	return err;
}

/*
 * The host's cache of the files each program had launch probes in: a later
 * process of the program is probed on them before it maps them, with no
 * registration (and no kernel grace period) in its holds. A cache that is
 * unsafe to read or cannot be written costs that, and nothing else.
 */
static void load_launch_files(struct session *s)
{
	const char *path = launch_files__cache_path();
	char why[PATH_MAX + 200];
	size_t bad;
	int n;

	if (!path)
		return;
	n = launch_files__load(s->penv.launch_files, path, &bad, why, sizeof(why));
	s->cache_refused = n < 0;
	if (n < 0 && why[0])
		p_warn("%s", why);
	else if (n < 0)
		p_warn("cannot read the cache %s: %s; set CUPROBE_CACHE=off to go without it", path,
		       strerror(-n));
	else
		p_dbg("cache %s: %d files with launch probes, remembered by program%s", path, n,
		      bad ? ", some lines not understood (left out)" : "");
}

static void save_launch_files(struct session *s)
{
	const char *path = launch_files__cache_path();
	char why[PATH_MAX + 200];
	int err;

	if (!path || !s->penv.launch_files || !launch_files__learned(s->penv.launch_files))
		return;
	err = launch_files__save(s->penv.launch_files, path, why, sizeof(why));
	/* A refusal names its fix (launch_files.c); one said at the start is said once. */
	if (err && s->cache_refused)
		p_dbg("%s", why[0] ? why : strerror(-err));
	else if (err && why[0])
		p_warn("%s", why);
	else if (err)
		p_warn("%s; set CUPROBE_CACHE=off to go without it", strerror(-err));
}

struct session *session__new(const struct session_opts *o, const struct session_hooks *h)
{
	struct session *s = calloc(1, sizeof(*s));
	bool reapers_missing = false;
	int err;

	if (!s)
		return NULL;
	s->o = *o;
	if (h)
		s->h = *h;
	s->epfd = -1;
	session_children_init(s);
	s->targets = VEC_INIT(struct target *);
	launch_queue__init(&s->queue);
	err = session_ring_new(s);
	if (!err)
		err = session_lost_new(s);
	if (!err)
		err = session_holds_new(s);
	if (err)
		goto fail;
	setup_env(s);
	err = load(s);
	if (err)
		goto fail;
	/* Threads only now: the guardian was forked from a process with one thread. */
	s->syms = symbols__new();
	s->names = handle_names__new();
	s->penv.objects = objcache__new();
	s->penv.launch_files = launch_files__new();
	s->prober = prober__new();
	s->job_done = session_job_done;
	for (int i = 0; i < REAPERS; i++)
		if (!(s->reaper[i] = prober__new()))
			reapers_missing = true;
	if (!s->syms || !s->names || !s->penv.objects || !s->penv.launch_files || !s->prober ||
	    reapers_missing) {
		err = -ENOMEM;
		goto fail;
	}
	load_launch_files(s);
	/* On the guardian, which outlives every hold: NULL only without memory, and then none. */
	s->warm = uprobe_warm__new(s->guard ? guard__pid(s->guard) : 0);
	if (s->o.stack) {
		s->stacks = stacks__new(bpfobj__stacks_fd(s->bpf), bpfobj__py_stacks_fd(s->bpf),
					bpfobj__py_codes_fd(s->bpf), s->syms);
		if (!s->stacks) {
			err = -ENOMEM;
			goto fail;
		}
		s->cenv.stacks = s->stacks;
	}
	calibrate(s);
	session_ring_start(s);
	err = setup_loop(s);
	if (!err)
		return s;
fail:
	session__free(s);
	errno = -err;
	return NULL;
}

bool session_consume(struct session *s, struct ring_buffer *rb)
{
	int n = ring_buffer__consume(rb);

	if (n == -EAGAIN) {
		s->backlog = true;
		return false;
	}
	if (n < 0 && !s->err) {
		p_err("cannot read the BPF ring buffer: %s", strerror(-n));
		s->err = n;
	}
	return true;
}

/*
 * Reads both rings, ctrl first so that every launch finds its step, taking
 * at most about what the rings hold: producers that outrun cuprobe cannot
 * keep it here, away from answering holds and writing cycles. Launches are
 * copied into the queue as read; then at most place of them are placed.
 */
static int consume_turn(struct session *s, size_t place)
{
	s->budget = s->ring_events;
	s->backlog = false;
	if (session_consume(s, s->ctrl))
		session_consume(s, s->events);
	session_ring_turn(s);
	/*
	 * What the CPUs' stages hold short of a batch: a few launches each. A
	 * stage a probe holds (preempted mid-write) is left for the next turn;
	 * at the end of a target or of the session it is waited for, briefly.
	 */
	for (int k = 0; bpfobj__drain_stages(s->bpf, session_launch, s) && place == SIZE_MAX &&
			k < STAGE_WAITS; k++)
		usleep(100);
	if (!session_place(s, place))
		s->backlog = true;
	return s->err;
}

/* Everything read and placed: for the ends of targets and of the session. */
int session_consume_all(struct session *s)
{
	return consume_turn(s, SIZE_MAX);
}

/*
 * Holds answered within HOLD_MAX_NS whatever the prober is doing; lost ctrl
 * events noticed and the maps scanned again, since a library-map event may
 * have been among them.
 */
static void watch_targets(struct session *s, uint64_t now)
{
	for (size_t i = 0; i < s->targets.len; i++) {
		struct target *t = TARGET(s, i);
		struct proc_state ps;

		if (t->gone)
			continue;
		if (!t->plan.step && step_slices__due(&t->slices, now))
			session_end_slice(s, t, now);
		if (t->scan_due && now >= t->scan_due) {
			p_dbg("pid %d ran no program in %llu ms after its vfork: scanned as it is",
			      t->pid, SHARED_MM_SCAN_NS / 1000000);
			t->scan_due = 0;
			session_rescan(s, t);
		}
		if (t->hold_since && now - t->hold_since > HOLD_MAX_NS) {
			p_warn("pid %d: its new libraries took over %llu ms to probe: continued "
			       "first; their first launches may be missed", t->pid,
			       HOLD_MAX_NS / 1000000);
			session_answer_hold(s, t);
		}
		if (now - s->polled < POLL_STATE_NS || t->exited ||
		    bpfobj__proc_state(s->bpf, t->pid, &ps))
			continue;
		session_one_trap(s, t, &ps);
		session_capture_linger(s, t, &ps, now);
		session_check_step(s, t, &ps, now);
		if (ps.lost_ctrl == t->lost_ctrl)
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
	/* Every turn: a child may live a few hundred ms. */
	session_watch_children(s);
}

static void on_ready(struct session *s, uint64_t tag)
{
	struct target *t;

	switch (tag >> 32) {
	case TAG_TARGET:
		t = session_find(s, (pid_t)(uint32_t)tag);
		if (t)
			session_target_exit(s, t);
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
	for (int i = 0; i < REAPERS; i++)
		prober__collect(s->reaper[i]);
	/*
	 * Events are submitted without wakeups: read them on every turn. A turn
	 * places a slice of what it read, so that the rings are read again soon.
	 */
	consume_turn(s, PLACE_SLICE);
	for (int k = 0; k < n; k++)
		on_ready(s, evs[k].data.u64);
	now = clock_mono_ns();
	watch_targets(s, now);
	/* A cycle is written only once every launch read so far is placed. */
	for (size_t i = 0; i < s->targets.len && !s->queue.len; i++)
		if (TARGET(s, i)->cycles && proc_cycles__flush(TARGET(s, i)->cycles, now) &&
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
	for (size_t i = 0; i < s->targets.len; i++)
		if (!TARGET(s, i)->gone)
			return true;
	return false;
}

bool session__command_status(const struct session *s, int *status)
{
	*status = s->command_status;
	return s->command_done;
}

/* Whether any open window still waits for its agent's flush since since. */
static bool agents_waiting(struct session *s, const bool *open, uint64_t since)
{
	for (size_t i = 0; i < s->targets.len; i++) {
		struct target *t = TARGET(s, i);

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
	bool *open = calloc(s->targets.len ? s->targets.len : 1, sizeof(*open));

	if (!(s->o.modes & 1u << MODE_CUPTI) || !open) {
		free(open);
		return;
	}
	/* Only a window still open has a flush to come. The prober is idle: facts are settled. */
	prober__drain(s->prober);
	for (size_t i = 0; i < s->targets.len; i++) {
		struct target *t = TARGET(s, i);

		open[i] = t->want.agent && t->facts.agent_found && !t->gone;
		session_want_probes(s, t, false);
	}
	prober__drain(s->prober);
	while (agents_waiting(s, open, since) && clock_mono_ns() < deadline) {
		ring_buffer__poll(s->events, 20);
		session_consume_all(s);
	}
	if (agents_waiting(s, open, since))
		p_warn("an agent did not flush within --cupti-wait %.1f s: the last cycle may "
		       "lack GPU records", s->o.cupti_wait);
	free(open);
}

/* Handle records that never came: launches by those handles were counted unnamed. */
static void tell_name_counters(struct session *s)
{
	uint64_t lost, truncated;

	bpfobj__name_counters(s->bpf, &lost, &truncated);
	if (lost)
		p_warn("%lu kernel-handle records were lost (ring buffer full): launches by those "
		       "handles are unnamed; raise --ringbuf-size", (unsigned long)lost);
	if (truncated)
		p_warn("%lu kernel names were longer than %d bytes and were cut short",
		       (unsigned long)truncated, NAME_STR_MAX - 1);
}

static void tell_counters(struct session *s)
{
	struct cuprobe_counters c;
	uint64_t told, woke;

	bpfobj__counters(s->bpf, &c);
	p_dbg("launches queued between reading and placing: at most %zu; placed as read (queue "
	      "full): %lu", s->queue.peak, s->placed_at_once);
	p_dbg("returns with no entry (--latency): %lu; hits in no recorded process %lu, of them lost %lu",
	      (unsigned long)c.lat_misses, (unsigned long)c.hits, (unsigned long)c.drops);
	if (c.agent_bad)
		p_warn("%lu agent chunks had a bad length or could not be read: their GPU records "
		       "are missing", (unsigned long)c.agent_bad);
	if (c.agent_drops)
		p_warn("%lu agent chunks were lost (ring buffer full): their GPU records are "
		       "missing; raise --ringbuf-size", (unsigned long)c.agent_drops);
	if (bpfobj__capture_full(s->bpf))
		p_warn("%lu stream captures, joined streams or captured events found the capture "
		       "maps full (%d entries): launches into those streams may be counted as "
		       "launches, not captures", (unsigned long)bpfobj__capture_full(s->bpf),
		       CAPTURE_MAP_ENTRIES);
	if (bpfobj__graph_lost(s->bpf))
		p_warn("%lu graph calls could not be told (ctrl ring full): graphs they made or "
		       "changed are followed no more, their replays may be short",
		       (unsigned long)bpfobj__graph_lost(s->bpf));
	bpfobj__step_wakeups(s->bpf, &told, &woke);
	p_dbg("step records: %lu, of them %lu woke cuprobe (in, leaving or near a window); the "
	      "others waited for its poll", (unsigned long)told, (unsigned long)woke);
	if (bpfobj__torch_too_deep(s->bpf))
		p_warn("--step torch: %lu record_function ranges were entered more than %d deep: "
		       "they are no spans, and a step range among them ended no step",
		       (unsigned long)bpfobj__torch_too_deep(s->bpf), TORCH_DEPTH_MAX);
	tell_name_counters(s);
	session_ring_report(s);
	session_lost_report(s);
	session_holds_report(s);
	if (s->stacks) {
		struct stacks_counts sc;

		stacks__counts(s->stacks, &sc);
		p_dbg("--stack: %lu unique stacks named, %lu Python processes",
		      (unsigned long)sc.unique, (unsigned long)sc.python_procs);
		if (sc.lost || sc.python_lost)
			p_warn("--stack: %lu user stacks and %lu Python stacks were lost (their BPF "
			       "maps had no room): those launches lack them, counted in each trace's "
			       "stacks object", (unsigned long)sc.lost, (unsigned long)sc.python_lost);
	}
}

int session__finish(struct session *s)
{
	log_status_end();
	prober__drain(s->prober);
	session_consume_all(s);
	drain_agents(s);
	session_consume_all(s);
	/* end_target takes each target out of the list. */
	while (s->targets.len) {
		struct target *t = TARGET(s, 0);

		if (t->gone) {
			prober__drain(s->prober);
			if (s->targets.len && TARGET(s, 0) == t)
				session_remove(s, t); /* its free job could not be sent */
			continue;
		}
		session_end_target(s, t);
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
	for (size_t i = 0; i < s->targets.len; i++)
		if (TARGET(s, i)->probes)
			session_submit(s, TARGET(s, i), JOB_FREE, 0, NULL);
	prober__drain(s->prober);
	for (int i = 0; i < REAPERS; i++) {
		prober__free(s->reaper[i]);
		s->reaper[i] = NULL;
	}
	s->leaving = true;
	if (s->ctrl)
		session_consume_all(s);
	for (size_t i = 0; i < s->targets.len; i++)
		if (!TARGET(s, i)->exited)
			session_answer_hold(s, TARGET(s, i));
	uprobe_warm__free(s->warm);
	s->warm = NULL;
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
	for (int i = 0; i < REAPERS; i++)
		prober__free(s->reaper[i]);
	uprobe_warm__free(s->warm);
	guard__release(s->guard);
	for (size_t i = 0; i < s->targets.len; i++)
		free_target(TARGET(s, i));
	vec__free(&s->targets);
	vec__free(&s->children);
	launch_queue__free(&s->queue);
	session_ring_stop(s);
	ring_buffer__free(s->ctrl);
	ring_buffer__free(s->events);
	bpfobj__free(s->bpf);
	stacks__free(s->stacks);
	symbols__free(s->syms);
	/* The prober that owned it is gone. */
	objcache__free(s->penv.objects);
	save_launch_files(s);
	launch_files__free(s->penv.launch_files);
	handle_names__free(s->names);
	if (s->epfd >= 0)
		close(s->epfd);
	session_ring_free(s);
	session_lost_free(s);
	session_holds_free(s);
	free(s);
}

double session__probe_ns(const struct session *s)
{
	return s->cenv.probe_ns;
}

uint64_t session__lost_other(const struct session *s)
{
	struct cuprobe_counters c;

	bpfobj__counters(s->bpf, &c);
	return c.drops;
}

uint64_t session__lost_exec(const struct session *s)
{
	return bpfobj__lost_exec(s->bpf);
}
