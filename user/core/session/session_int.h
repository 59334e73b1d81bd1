/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The session's insides, shared by session.c, session_events.c and session_jobs.c only. */
#ifndef CORE_SESSION_SESSION_INT_H
#define CORE_SESSION_SESSION_INT_H

#include <limits.h>
#include <pthread.h>
#include "core/graphs/graph_store.h"
#include "core/probes/probeset.h"
#include "core/probes/uprobe_warm.h"
#include "core/proc/procmaps.h"
#include "core/schedule/proc_cycles.h"
#include "core/session/launch_queue.h"
#include "core/session/session.h"
#include "core/session/target.h"
#include "core/probes/launch_api.h"
#include "cuprobe.h"

/* Reaper threads, which close links side by side (dispose_links). */
#define REAPERS 32
#include "util/vec.h"

struct bpfobj;

/* A process a target (or its descendant) started, watched for CUDA until it exits. */
struct child {
	pid_t pid, parent;
};
struct guard;
struct prober;
struct ring_buffer;
struct symbols;
struct handle_names;
struct stacks;

/*
 * A library-map hold is answered within this long, probed or not: long
 * enough to read the symbols of a library the size of libtorch_cuda on a
 * loaded machine, short enough that a stuck prober costs a process little.
 */
#define HOLD_MAX_NS (3000 * 1000 * 1000ull)
/*
 * A followed child that shares its parent's memory (vfork, posix_spawn) runs
 * a program within microseconds: it is scanned at that exec. One that has
 * not after this long is scanned as the copy of its parent it is.
 */
#define SHARED_MM_SCAN_NS (50 * 1000 * 1000ull)
/* How often each target's BPF counters are looked at for lost ctrl events. */
#define POLL_STATE_NS (200 * 1000 * 1000ull)
/* A process that maps CUDA and loads nothing new this long likely has all it needs. */
#define STEP_QUIET_NS (5 * 1000 * 1000 * 1000ull)

/* Launches and bytes that came (read, or lost for want of room) over ns. */
struct ring_span {
	double launches, bytes;
	uint64_t ns;		/* 0: no span long enough to measure */
};

/* The events ring's growth (session_ring.c). */
struct session_ring {
	uint64_t cap;		/* the largest it may grow to; 0 until the first turn */
	bool stuck;		/* a bigger ring was refused: said once, not tried again */
	unsigned int grows;
	unsigned long launches_read;	/* from the events ring */
	uint64_t bytes_read;		/* of records, with their headers */
	uint64_t rate_ts;	/* the rate's window began, rate_n launches and rate_b bytes in */
	unsigned long rate_n;
	double rate_b;
	struct ring_span window;	/* what came in the latest whole window */
	uint64_t turn_ts;	/* the last turn, turn_n launches and turn_b bytes in then */
	unsigned long turn_n;
	double turn_b;
	uint64_t lost_said;	/* launches lost for want of room, as the last growth said */
	uint64_t lost_grown;	/* launches lost for want of room when the last growth began */
	unsigned long last_n;	/* what had come by the last turn */
	uint64_t quiet_ts;	/* the last turn to which nothing came, quiet_n launches, */
	unsigned long quiet_n;	/* quiet_b bytes and quiet_lost lost in then: the start */
	double quiet_b;		/* of a burst, which a growth's rate is measured over */
	uint64_t quiet_lost;
	bool putting;		/* putter is putting a new ring in BPF's slot */
	bool put_done;		/* it has, with put_err */
	int put_err;
	uint64_t grow_at, put_at;	/* when the growth began, and the update came back */
	pthread_t putter;
	char said[256];		/* what the growth under way says once it is done */
};

/* The library-map and exec holds answered, in every target (session_jobs.c). */
struct session_holds {
	unsigned long count;
	uint64_t total_ns, max_ns;
	pid_t max_pid;			/* the longest one's */
	char max_what[200];		/* and what it was for */
	unsigned long files_read, files_reused;	/* object files read, and answered from the cache */
};

/* Cycles whose trace could not be written (session_lost.c). */
struct session_lost {
	uint64_t cycles, launches;	/* lost */
	uint64_t written;		/* cycles whose trace was written */
	int told[8];			/* the causes (-errno) said already */
	size_t ntold;
};

struct session {
	struct session_opts o;
	char host[256];		/* o.host, or this machine's name: traces are named by it */
	struct target_plan one_cycle;	/* the schedule of a target without steps or slices */
	struct session_hooks h;
	struct bpfobj *bpf;
	struct guard *guard;
	struct ring_buffer *ctrl, *events;
	struct prober *prober;
	struct prober *reaper[REAPERS]; /* close detached links, off the prober's path */
	unsigned int reap_next;		/* the next job's reaper, round the REAPERS */
	struct uprobe_warm *warm;	/* registration kept warm while holds come */
	bool cache_refused;	/* the cache of launch files could not be read: said once */
	struct symbols *syms;
	struct handle_names *names;	/* kernel handles' names, from the handle probes */
	struct probe_env penv;	/* what every probeset shares; fixed once set */
	struct cycle_env cenv;
	struct graph_budget graphs;	/* what its targets' graph stores hold together */
	struct vec targets;	/* struct target *, owned */
	size_t last;		/* the target the latest event named */
	pid_t command;		/* started by session__spawn; 0 when none */
	bool command_done;	/* it has exited, with command_status */
	int command_status;
	int epfd;
	uint64_t correlation;
	uint64_t polled;	/* when targets' counters were last looked at */
	bool leaving;		/* holds are answered at once: cuprobe is going */
	long budget;		/* events this turn may still take from the rings */
	bool calibrating;	/* the ring's launches are the calibration's: read and let go */
	unsigned long calib_read;	/* how many of them */
	long ring_events;	/* a turn's budget */
	bool backlog;		/* the rings held more than a turn takes */
	bool guard_gone;	/* the guardian died: said once */
	char suggest[512];	/* the latest JOB_SUGGEST answer */
	unsigned long steps_found;	/* targets whose step probe was found */
	struct vec children;	/* struct child: descendants of targets, not recorded */
	int err;		/* cuprobe's own failure, -errno */
	struct launch_queue queue; /* launches read, not yet placed (launch_queue.h) */
	unsigned long placed_at_once; /* launches placed as read: the queue was full */
	struct stacks *stacks;	/* --stack; NULL without */
	struct session_ring ring;
	struct session_lost lost;
	struct session_holds holds;
};

/* A message to the prober about one target's probeset, and its answer. */
/* JOB_DROP lets go of a probeset the target no longer needs (after exec); JOB_FREE of the target's last. */
/* JOB_KEEP asks whether a probeset serves the program its process now runs (probeset.h). */
/* JOB_PREREG probes the session's launch files before the process maps them (probeset__preregister). */
/* JOB_WALK: the step object's walk and probes, off its hold (probeset__step_walk). */
enum probe_job_kind { JOB_SCAN, JOB_SET, JOB_EXEC, JOB_SUGGEST, JOB_DROP, JOB_FREE, JOB_KEEP,
		      JOB_PREREG, JOB_WALK };

struct probe_job {
	struct session *s;
	enum probe_job_kind kind;
	pid_t pid;
	struct probeset *ps;
	struct probe_want want;		/* JOB_SET */
	uint64_t hold_seq;		/* JOB_SCAN: the hold it answers, 0 for none */
	bool kept;			/* JOB_KEEP: the answer */
	bool more;			/* JOB_PREREG: it let other jobs go first, and goes on */
	struct procmaps maps;		/* JOB_SCAN: the maps it read while the process was held */
	char arg[PATH_MAX];		/* JOB_EXEC: the executable; JOB_SUGGEST: the answer */
	struct probe_facts facts;	/* the answer */
};

/* The session's i-th target. */
#define TARGET(s, i) (*vec_at(&(s)->targets, struct target *, i))

/* epoll tags: a kind in the high half, a pid in the low one. */
enum { TAG_RING = 1, TAG_PROBER, TAG_REAPER, TAG_GUARD, TAG_TARGET };
#define TAG(kind, pid) ((uint64_t)(kind) << 32 | (uint32_t)(pid))

/* session.c */
struct target *session_find(struct session *s, pid_t pid);
/*
 * The front-end's hooks, each given t's public view: the mode of t's cycle k
 * (the plan's without a cycle_mode hook), a step begun, an exit.
 */
enum window_mode session_hook_mode(struct session *s, const struct target *t, uint32_t k);
void session_hook_step(struct session *s, const struct target *t, const struct cycle_status *st,
		       bool changed);
void session_hook_exited(struct session *s, const struct target *t);
int session_epoll_add(int epfd, int fd, uint64_t tag);
/* Reads both rings, ctrl first, within a turn's budget. 0 or the session's error. */
int session_consume_all(struct session *s);
/* session_targets.c */
/* How a plan's steps are counted, and the schedule the loader's mirror follows. */
enum cycle_clock session_plan_clock(const struct target_plan *p);
/*
 * A new target for pid with plan p, its step 0 begun (its entries in BPF, its
 * cycles, its probeset). NULL with *err; a target set up with an error is
 * returned with it, to be ended.
 */
struct target *session_new_target(struct session *s, pid_t pid, bool child,
				  const struct target_plan *p, bool adopted, int *err);
void session_target_exit(struct session *s, struct target *t);
void session_end_target(struct session *s, struct target *t);
void session_remove(struct session *s, struct target *t);
/* session_windows.c */
void session_end_slice(struct session *s, struct target *t, uint64_t now);
/*
 * The window running in t ends at its next step (or slice): a schedule that
 * records nothing, in BPF and in the mirror. t may be NULL. Session's thread.
 */
void session_end_window(struct session *s, struct target *t);
/* session_exec.c */
/* A followed process ran a new program: its old probes go, the new program is probed. */
void session_exec(struct session *s, struct target *t);
/* The same, its old probes dropped and the new program probed from nothing. */
void session_exec_anew(struct session *s, struct target *t);
/*
 * session_lead.c: how many steps before warmup t's launch probes must go
 * in for its warmup to cover their attach (0: warmup is long enough).
 */
uint32_t session_lead(const struct target *t);
/*
 * What t's launch probes should be as its step is in phase: on while it
 * warms up or records, and ahead of a window near enough (the lead; before
 * its step length is known, a window within its first steps), in the mode
 * the next cycle (next_cycle) will have.
 */
void session_want_ahead(struct session *s, struct target *t, uint32_t phase, uint32_t next_cycle);
/* Says when t's warmup began (step, at ts) before its launch probes were in. */
void session_check_warmup(struct target *t, uint64_t step, uint64_t ts);
/* session_records.c: the rings' records, dispatched by type (ring_buffer__new's callbacks). */
int session_ctrl_event(void *ctx, void *data, size_t size);
int session_data_event(void *ctx, void *data, size_t size);
/*
 * The records' handlers, one per record type (session_records.c's table):
 * given a record at least as long as the table says, 0 or the session's error.
 */
/* session_launches.c */
int session_on_launches(struct session *s, void *data, size_t size);
int session_on_agent(struct session *s, void *data, size_t size);
int session_on_name(struct session *s, void *data, size_t size);
int session_on_graph(struct session *s, void *data, size_t size);
/* A launch from the ring or a CPU's stage: queued, or placed now when the queue is full. */
void session_launch(void *ctx, const struct launch_event *e);
/* A launch placed into its cycle: the first error stays in s->err. */
void session_place_launch(void *ctx, const struct launch_event *e);
/* Places queued launches, at most max; whether the queue is now empty. */
bool session_place(struct session *s, size_t max);
/* session_steps.c */
int session_on_step(struct session *s, void *data, size_t size);
int session_on_thread(struct session *s, void *data, size_t size);
int session_on_range(struct session *s, void *data, size_t size);
/* A step boundary, from BPF or a time slice's end. */
void session_step(struct session *s, struct target *t, const struct step_event *e);
/* session_children.c */
int session_on_fork(struct session *s, void *data, size_t size);
int session_on_exec_seen(struct session *s, void *data, size_t size);
/* Children of targets not followed that took up CUDA are said, with how to record them. */
void session_watch_children(struct session *s);
/* A followed process's new child, with its parent's plan (BPF made its entries). */
struct target *session_adopt(struct session *s, pid_t pid, const struct target *parent,
			     bool shared_mm);
/* session_jobs.c */
/* arg: JOB_EXEC's executable. 0 or -ENOMEM. */
int session_submit(struct session *s, struct target *t, enum probe_job_kind kind,
		   uint64_t hold_seq, const char *arg);
void session_want_probes(struct session *s, struct target *t, bool on);
/* Looks at t's maps again (library loaded, events lost); one scan at a time. */
void session_rescan(struct session *s, struct target *t);
/* session_onetrap.c */
/*
 * One trap per launch, once the runtime launches entering the driver have
 * shown t's host stubs (ps, as BPF counts them): its runtime's kernel launch
 * probes are left out from then on, the driver's record those launches.
 */
void session_one_trap(struct session *s, struct target *t, const struct proc_state *ps);
/* session_holds.c */
int session_on_hold(struct session *s, void *data, size_t size);
/* Continues t if a hold stops it; its length goes into t's next trace and -v. */
void session_answer_hold(struct session *s, struct target *t);
/* The same, with what the scan that ended it found (f; NULL: no scan ended it). */
void session_answer_hold_facts(struct session *s, struct target *t, const struct probe_facts *f);
/* A capture began with no launch probe in (REC_CAPTURE): they go in, then it goes on. */
void session_capture_hold(struct session *s, struct target *t);
/* CONF_CAPTURE_HOLD as BPF reads it: set while a capture's probes of t are not all in. */
void session_capture_hold_flag(struct session *s, struct target *t, bool on);
/* The capture's hold: its launch probes are in (or cannot be put in: f NULL). */
void session_capture_hold_done(struct session *s, struct target *t, const struct probe_facts *f);
/* Launch probes kept for captures go once none is open for a while. */
void session_capture_linger(struct session *s, struct target *t, const struct proc_state *ps,
			    uint64_t now);
/* How many holds there were and how long they took, said with -v at the end. */
void session_holds_report(const struct session *s);
/* session_step_missing.c */
/* When a missing step probe is said: at attach, once it launches, at its end (an error). */
enum step_missing { STEP_NOT_YET, STEP_LIKELY, STEP_NEVER };
/* That t's step probe is not found, with the close names the prober found (close). */
void session_tell_step_missing(const struct target *t, const char *close, enum step_missing when);
/* The same, the close names asked of the prober first (none for --step torch). */
void session_step_missing(struct session *s, struct target *t, enum step_missing when);
/* --step torch with no probes: no torch loaded (yet, or at its end: final). */
void session_tell_torch_missing(const struct target *t, bool final);
/* The prober's close names for t's step (JOB_SUGGEST), waited for, in buf. */
void session_suggest_step(struct session *s, struct target *t, char *buf, size_t len);
/*
 * Once t uses CUDA (it launched, as ps counts, or it mapped CUDA and loaded
 * nothing new for STEP_QUIET_NS while no launch probe is in), with every
 * object it loaded searched and no step probe in any target: asks the
 * prober for the close names, said when it answers.
 */
void session_check_step(struct session *s, struct target *t, const struct proc_state *ps,
			uint64_t now);
/* session.c: reads a ring within this turn's budget; false when it held more. */
bool session_consume(struct session *s, struct ring_buffer *rb);
/* session_ring.c: the events ring grows with the rate, looked at every turn. */
void session_ring_turn(struct session *s);
/* What came so far (the calibration's own hits) is no rate: measured from now. */
void session_ring_start(struct session *s);
/* A growth under way waited for (before the BPF object goes). */
void session_ring_stop(struct session *s);
/* Its final size, said at the end when it grew, a growth under way waited for first. */
void session_ring_report(struct session *s);
/*
 * session_lost.c: a cycle written or lost (ci->err), before the front-end
 * hears of it; a loss is counted and its cause said once.
 */
void session_cycle_done(struct session *s, const struct target *t, const struct cycle_info *ci);
/* The lost cycles and launches, said at the end when there were any. */
void session_lost_report(const struct session *s);

#endif /* CORE_SESSION_SESSION_INT_H */
