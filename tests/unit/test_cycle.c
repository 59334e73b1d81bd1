// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The loader's mirror of a process's schedule (user/core/cycles/), driven
 * with synthetic step and launch events: where cycles begin and end, which
 * cycle each launch lands in, and what each written trace says of itself.
 */
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>
#include "core/cycles/proc_cycles.h"
#include "core/session/target.h"
#include "trace/format.h"
#include "util/log.h"

#define MAX_SEEN 32

/* What the mirror told the front-end. */
struct seen {
	char root[64];
	enum window_mode mode;	/* given for every cycle */
	uint32_t asked[MAX_SEEN];
	size_t nasked;
	struct cycle_step_info steps[MAX_SEEN];
	size_t nsteps;
	struct cycle_info cycles[MAX_SEEN];
	char paths[MAX_SEEN][256];
	size_t ncycles;
};

static enum window_mode cycle_mode(void *ctx, const struct target *t, uint32_t k)
{
	struct seen *s = ctx;

	(void)t;
	if (s->nasked < MAX_SEEN)
		s->asked[s->nasked++] = k;
	return s->mode;
}

static int cycle_dir(void *ctx, const struct target *t, uint32_t k, char *buf, size_t len)
{
	struct seen *s = ctx;

	(void)t;
	snprintf(buf, len, "%s/run_%u", s->root, k);
	return 0;
}

static void step_done(void *ctx, const struct target *t, const struct cycle_step_info *si)
{
	struct seen *s = ctx;

	(void)t;
	if (s->nsteps < MAX_SEEN)
		s->steps[s->nsteps++] = *si;
}

static void cycle_done(void *ctx, const struct target *t, const struct cycle_info *ci)
{
	struct seen *s = ctx;

	(void)t;
	if (s->ncycles == MAX_SEEN)
		return;
	s->cycles[s->ncycles] = *ci;
	if (ci->path) {
		snprintf(s->paths[s->ncycles], sizeof(s->paths[0]), "%s", ci->path);
		s->cycles[s->ncycles].path = s->paths[s->ncycles];
	}
	s->ncycles++;
}

struct fixture {
	struct seen seen;
	struct cycle_env env;
	struct target t;
	struct schedule sched;
	struct proc_cycles *pc;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	if (!f)
		return -1;
	snprintf(f->seen.root, sizeof(f->seen.root), "/tmp/cuprobe-test-cycle.XXXXXX");
	if (!mkdtemp(f->seen.root))
		return -1;
	f->seen.mode = MODE_BPF;
	f->env = (struct cycle_env){
		.host = "testhost", .probe_ns = -1, .ctx = &f->seen, .proc = target__cycle_proc,
		.cycle_mode = cycle_mode,
		.cycle_dir = cycle_dir, .step_done = step_done, .cycle_done = cycle_done,
	};
	f->t.pid = 4242;
	f->t.rank = -1;
	f->t.world_size = -1;
	snprintf(f->t.comm, sizeof(f->t.comm), "train");
	*state = f;
	return 0;
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	proc_cycles__free(f->pc);
	nftw(f->seen.root, rm_one, 8, FTW_DEPTH | FTW_PHYS);
	free(f);
	return 0;
}

static void start(struct fixture *f, const struct schedule *sched, enum cycle_clock clock)
{
	f->sched = *sched;
	f->pc = proc_cycles__new(&f->env, &f->t, 1000, sched, clock);
	assert_non_null(f->pc);
}

/* Step n begins at n * 1000 ns with the counters given, in the phase BPF gives it. */
static void step_c(struct fixture *f, uint32_t n, uint64_t hits, uint64_t drops, uint64_t nested)
{
	struct step_event e = {
		.type = REC_STEP, .tgid = 4242, .tid = 4242, .step = n, .ts_ns = n * 1000ull,
		.phase = schedule_action(&f->sched, n), .launch_hits = hits, .drops = drops,
		.nested = nested,
	};

	assert_int_equal(proc_cycles__step(f->pc, &e), 0);
}

static void step(struct fixture *f, uint32_t n)
{
	step_c(f, n, 0, 0, 0);
}

static struct launch_event launch_at(uint32_t n, uint32_t phase, uint64_t ts)
{
	return (struct launch_event){ .type = REC_LAUNCH, .api = API_cudaLaunchKernel,
				      .tgid = 4242, .tid = 4243, .ts_ns = ts, .func = 0x1000,
				      .step = n, .phase = phase };
}

/* A launch in step n, 100 ns after it began, in the phase the schedule gives it. */
static void launch(struct fixture *f, uint32_t n)
{
	struct launch_event e = launch_at(n, schedule_action(&f->sched, n), n * 1000ull + 100);

	assert_int_equal(proc_cycles__launch(f->pc, &e, "kern", false, 0), 0);
}

/* The cuprobe object of the trace at path: its integer field key. */
static json_int_t field(const char *path, const char *key)
{
	json_error_t err;
	json_t *root = json_load_file(path, 0, &err), *cp, *v;
	json_int_t n;

	if (!root)
		fail_msg("%s: %s", path, err.text);
	cp = json_object_get(root, TRACE_KEY_CUPROBE);
	assert_non_null(cp);
	v = json_object_get(cp, key);
	if (!v)
		fail_msg("%s: no %s in the cuprobe object", path, key);
	n = json_is_true(v) ? 1 : json_is_false(v) ? 0 : json_integer_value(v);
	json_decref(root);
	return n;
}

/* The cuprobe object's steps: [first, last]. */
static void steps_of(const char *path, json_int_t *first, json_int_t *last)
{
	json_t *root = json_load_file(path, 0, NULL), *a;

	assert_non_null(root);
	a = json_object_get(json_object_get(root, TRACE_KEY_CUPROBE), TRACE_KEY_STEPS);
	assert_true(json_is_array(a) && json_array_size(a) == 2);
	*first = json_integer_value(json_array_get(a, 0));
	*last = json_integer_value(json_array_get(a, 1));
	json_decref(root);
}

static void check_cycle(const struct cycle_info *ci, uint32_t k, int64_t first, int64_t last,
			uint64_t launches)
{
	json_int_t f, l;

	assert_int_equal(ci->k, k);
	assert_int_equal(ci->err, 0);
	assert_false(ci->partial);
	assert_int_equal(ci->first_step, first);
	assert_int_equal(ci->last_step, last);
	assert_int_equal(ci->launches, launches);
	assert_non_null(ci->path);
	assert_int_equal(field(ci->path, TRACE_KEY_LAUNCHES), launches);
	assert_int_equal(field(ci->path, TRACE_KEY_CYCLE), k);
	assert_int_equal(field(ci->path, TRACE_KEY_PARTIAL), 0);
	steps_of(ci->path, &f, &l);
	assert_int_equal(f, first);
	assert_int_equal(l, last);
}

/*
 * schedule(wait=1, warmup=1, active=2, repeat=2): step 0 waits; cycle 0 is
 * warmup 1, active 2-3; cycle 1 is warmup 5, active 6-7; then nothing.
 */
static void test_cycles_follow_schedule(void **state)
{
	struct fixture *f = *state;
	struct cycle_status st;

	start(f, &(struct schedule){ .wait = 1, .warmup = 1, .active = 2, .repeat = 2 },
	      CLOCK_STEPS);
	for (uint32_t n = 1; n <= 10; n++) {
		step(f, n);
		launch(f, n); /* kept only where the step records */
		assert_int_equal(proc_cycles__flush(f->pc, n * 1000ull + 1), 0);
		/* Each cycle is written once the step after its last active step began. */
		assert_int_equal(f->seen.ncycles, n < 4 ? 0 : n < 8 ? 1 : 2);
	}
	check_cycle(&f->seen.cycles[0], 0, 2, 3, 2);
	assert_int_equal(f->seen.cycles[0].start_mono, 2000);
	assert_int_equal(f->seen.cycles[0].end_mono, 4000);
	check_cycle(&f->seen.cycles[1], 1, 6, 7, 2);
	assert_int_equal(f->seen.cycles[1].start_mono, 6000);
	assert_int_equal(f->seen.cycles[1].end_mono, 8000);
	/* Modes are asked as cycles begin, at their warmup. */
	assert_int_equal(f->seen.nasked, 2);
	assert_int_equal(f->seen.asked[0], 0);
	assert_int_equal(f->seen.asked[1], 1);
	/* Steps 0-9 ended, each with its phase and cycle. */
	assert_int_equal(f->seen.nsteps, 10);
	for (uint32_t n = 0; n < 10; n++) {
		assert_int_equal(f->seen.steps[n].step, n);
		assert_int_equal(f->seen.steps[n].phase, schedule_action(&f->sched, n));
		assert_int_equal(f->seen.steps[n].start_mono, n ? n * 1000 : 1000);
		if (f->seen.steps[n].phase != PHASE_NONE)
			assert_int_equal(f->seen.steps[n].cycle, n < 4 ? 0 : 1);
	}
	proc_cycles__status(f->pc, &st);
	assert_int_equal(st.step, 10);
	assert_int_equal(st.launches, 4);
	assert_int_equal(st.written, 2);
	assert_int_equal(proc_cycles__stop(f->pc, 11000, NULL), 0);
	assert_int_equal(f->seen.ncycles, 2);
}

/* skip_first=3, then warmup 1 and active 1, once: the only cycle is step 4. */
static void test_skip_first(void **state)
{
	struct fixture *f = *state;

	start(f, &(struct schedule){ .skip_first = 3, .warmup = 1, .active = 1, .repeat = 1 },
	      CLOCK_STEPS);
	for (uint32_t n = 1; n <= 8; n++) {
		step(f, n);
		launch(f, n);
	}
	assert_int_equal(proc_cycles__flush(f->pc, UINT64_MAX), 0);
	assert_int_equal(f->seen.ncycles, 1);
	check_cycle(&f->seen.cycles[0], 0, 4, 4, 1);
}

/* A launch whose cycle is written is late: the next trace says so. */
static void test_late_launch_goes_into_next(void **state)
{
	struct fixture *f = *state;
	struct launch_event e;

	start(f, &(struct schedule){ .wait = 1, .active = 1 }, CLOCK_STEPS);
	step(f, 1);
	launch(f, 1);
	step(f, 2);
	assert_int_equal(proc_cycles__flush(f->pc, UINT64_MAX), 0);
	assert_int_equal(f->seen.ncycles, 1);
	e = launch_at(1, PHASE_RECORD_AND_SAVE, 1500);
	assert_int_equal(proc_cycles__launch(f->pc, &e, "kern", false, 0), 0);
	step(f, 3);
	launch(f, 3);
	step(f, 4);
	assert_int_equal(proc_cycles__flush(f->pc, UINT64_MAX), 0);
	assert_int_equal(f->seen.ncycles, 2);
	assert_int_equal(field(f->seen.cycles[0].path, TRACE_KEY_LATE_LAUNCHES), 0);
	assert_int_equal(field(f->seen.cycles[1].path, TRACE_KEY_LATE_LAUNCHES), 1);
	check_cycle(&f->seen.cycles[1], 1, 3, 3, 1);
}

/* A cycle's hits, drops and nested are the deltas of the counters over its steps. */
static void test_counters_are_deltas(void **state)
{
	struct fixture *f = *state;
	const char *path;

	start(f, &(struct schedule){ .wait = 1, .warmup = 1, .active = 2 }, CLOCK_STEPS);
	step_c(f, 1, 3, 1, 1);	 /* warmup: not counted */
	step_c(f, 2, 10, 2, 1);	 /* active */
	step_c(f, 3, 15, 4, 3);	 /* active, last */
	step_c(f, 4, 22, 7, 6);	 /* wait */
	step_c(f, 5, 40, 9, 9);
	assert_int_equal(proc_cycles__flush(f->pc, UINT64_MAX), 0);
	assert_int_equal(f->seen.ncycles, 1);
	assert_int_equal(f->seen.cycles[0].hits, 12);
	assert_int_equal(f->seen.cycles[0].drops, 5);
	path = f->seen.cycles[0].path;
	assert_int_equal(field(path, TRACE_KEY_DROPS), 5);
	assert_int_equal(field(path, TRACE_KEY_NESTED_SKIPPED), 5);
	assert_int_equal(field(path, TRACE_KEY_LOST_STEPS), 0);
	/* Each step's own hits, for the ones whose counters are known. */
	assert_int_equal(f->seen.steps[2].hits, 5);
	assert_int_equal(f->seen.steps[3].hits, 7);
}

/* Boundaries lost on the way: counted, and their phases taken from the schedule. */
static void test_lost_steps(void **state)
{
	struct fixture *f = *state;

	start(f, &(struct schedule){ .wait = 1, .warmup = 1, .active = 3 }, CLOCK_STEPS);
	step_c(f, 1, 0, 0, 0);
	step_c(f, 2, 4, 0, 0);
	launch(f, 2);
	step_c(f, 5, 30, 1, 2); /* 3 and 4 lost */
	launch(f, 5);
	step_c(f, 6, 40, 1, 2);
	assert_int_equal(proc_cycles__flush(f->pc, UINT64_MAX), 0);
	assert_int_equal(f->seen.ncycles, 1);
	check_cycle(&f->seen.cycles[0], 0, 2, 4, 1);
	assert_int_equal(field(f->seen.cycles[0].path, TRACE_KEY_LOST_STEPS), 2);
	/* Steps 3 and 4 were filled: 3 active, 4 its last; their own hits unknown. */
	assert_int_equal(f->seen.steps[3].step, 3);
	assert_int_equal(f->seen.steps[3].phase, PHASE_RECORD);
	assert_int_equal(f->seen.steps[3].hits, -1);
	assert_int_equal(f->seen.steps[4].step, 4);
	assert_int_equal(f->seen.steps[4].phase, PHASE_RECORD_AND_SAVE);
	/* The counters of step 5's boundary cover all the lost ones: totals stay exact. */
	assert_int_equal(f->seen.cycles[0].hits, 26);
	assert_int_equal(field(f->seen.cycles[0].path, TRACE_KEY_NESTED_SKIPPED), 2);
}

/*
 * Launch probes that came in after the window's first active step: the trace
 * says for how long it recorded without them, told as the attach's answer
 * came (an open cycle) or, with the answer still out, when it was written.
 */
static void test_unprobed(void **state)
{
	struct fixture *f = *state;

	start(f, &(struct schedule){ .wait = 1, .warmup = 1, .active = 2, .repeat = 2 },
	      CLOCK_STEPS);
	for (uint32_t n = 1; n <= 3; n++)
		step(f, n);
	/* Step 2 (active) began at 2000; the probes were in at 2600. */
	assert_true(proc_cycles__unprobed(f->pc, 2, 2000, 2600));
	step(f, 4);
	/* Cycle 1's active step 6 begins at 6000, its attach still out when it is written. */
	f->t.warm_step = 6;
	f->t.warm_ts = 6000;
	f->t.attaching = 1;
	for (uint32_t n = 5; n <= 8; n++)
		step(f, n);
	assert_int_equal(proc_cycles__flush(f->pc, UINT64_MAX), 0);
	assert_int_equal(f->seen.ncycles, 2);
	assert_int_equal(field(f->seen.cycles[0].path, TRACE_KEY_UNPROBED_NS), 600);
	/* From step 6 to the end of its last active step (step 8 began at 8000). */
	assert_int_equal(field(f->seen.cycles[1].path, TRACE_KEY_UNPROBED_NS), 2000);
	/* A cycle written already is not told again. */
	assert_false(proc_cycles__unprobed(f->pc, 2, 2000, 9000));
}

/* A launch of a step the mirror has not seen begin brings it there. */
static void test_launch_ahead(void **state)
{
	struct fixture *f = *state;
	struct launch_event e = launch_at(2, PHASE_RECORD, 2100);
	struct cycle_status st;

	start(f, &(struct schedule){ .wait = 1, .warmup = 1, .active = 2 }, CLOCK_STEPS);
	step(f, 1);
	assert_true(proc_cycles__ahead(f->pc, &e));
	assert_int_equal(proc_cycles__launch(f->pc, &e, "kern", false, 0), 0);
	proc_cycles__status(f->pc, &st);
	assert_int_equal(st.step, 2);
	assert_int_equal(st.phase, PHASE_RECORD);
	assert_false(proc_cycles__ahead(f->pc, &e));
	/* Its boundary, if it comes after all, changes nothing. */
	step(f, 2);
	step(f, 3);
	launch(f, 3);
	step(f, 4);
	assert_int_equal(proc_cycles__flush(f->pc, UINT64_MAX), 0);
	assert_int_equal(f->seen.ncycles, 1);
	check_cycle(&f->seen.cycles[0], 0, 2, 3, 2);
}

/* A baseline window: reported with its launches, never written. */
static void test_mode_off_writes_nothing(void **state)
{
	struct fixture *f = *state;
	char dir[128];

	f->seen.mode = MODE_OFF;
	start(f, &(struct schedule){ .wait = 1, .active = 2, .repeat = 1 }, CLOCK_STEPS);
	for (uint32_t n = 1; n <= 4; n++) {
		step(f, n);
		launch(f, n);
	}
	assert_int_equal(proc_cycles__flush(f->pc, UINT64_MAX), 0);
	assert_int_equal(f->seen.ncycles, 1);
	assert_int_equal(f->seen.cycles[0].mode, MODE_OFF);
	assert_null(f->seen.cycles[0].path);
	assert_int_equal(f->seen.cycles[0].err, 0);
	assert_int_equal(f->seen.cycles[0].launches, 2);
	snprintf(dir, sizeof(dir), "%s/run_0", f->seen.root);
	assert_int_equal(access(dir, F_OK), -1);
}

/* Time slices: a launch lands in the cycle whose time holds it, whatever step it says. */
static void test_slices_place_by_time(void **state)
{
	struct fixture *f = *state;
	struct launch_event e;

	start(f, &(struct schedule){ .wait = 1, .warmup = 1, .active = 2, .repeat = 1 },
	      CLOCK_SLICES);
	step(f, 1);
	step(f, 2);
	/* Tagged with the warmup slice, made in the first active one. */
	e = launch_at(1, PHASE_RECORD, 2500);
	assert_false(proc_cycles__ahead(f->pc, &e));
	assert_int_equal(proc_cycles__launch(f->pc, &e, "kern", false, 0), 0);
	step(f, 3);
	step(f, 4);
	/* After the window: no cycle, and not late either. */
	e = launch_at(3, PHASE_RECORD, 4500);
	assert_int_equal(proc_cycles__launch(f->pc, &e, "kern", false, 0), 0);
	step(f, 5);
	assert_int_equal(proc_cycles__flush(f->pc, UINT64_MAX), 0);
	assert_int_equal(f->seen.ncycles, 1);
	check_cycle(&f->seen.cycles[0], 0, 2, 3, 1);
	assert_int_equal(field(f->seen.cycles[0].path, TRACE_KEY_LATE_LAUNCHES), 0);
}

/* A stop in an active step writes the running cycle, marked partial. */
static void test_stop_writes_partial(void **state)
{
	struct fixture *f = *state;
	struct cycle_counts c = { .hits = 9, .drops = 1, .nested = 2 };
	json_int_t first, last;

	start(f, &(struct schedule){ .wait = 1, .active = 3 }, CLOCK_STEPS);
	step_c(f, 1, 0, 0, 0);
	launch(f, 1);
	step_c(f, 2, 4, 0, 0);
	launch(f, 2);
	assert_int_equal(proc_cycles__flush(f->pc, UINT64_MAX), 0);
	assert_int_equal(f->seen.ncycles, 0);
	assert_int_equal(proc_cycles__stop(f->pc, 2500, &c), 0);
	assert_int_equal(f->seen.ncycles, 1);
	assert_true(f->seen.cycles[0].partial);
	assert_int_equal(f->seen.cycles[0].end_mono, 2500);
	assert_int_equal(f->seen.cycles[0].hits, 9);
	assert_int_equal(field(f->seen.cycles[0].path, TRACE_KEY_PARTIAL), 1);
	assert_int_equal(field(f->seen.cycles[0].path, TRACE_KEY_LAUNCHES), 2);
	assert_int_equal(field(f->seen.cycles[0].path, TRACE_KEY_DROPS), 1);
	assert_int_equal(field(f->seen.cycles[0].path, TRACE_KEY_NESTED_SKIPPED), 2);
	steps_of(f->seen.cycles[0].path, &first, &last);
	assert_int_equal(first, 1);
	assert_int_equal(last, 2);
	assert_true(f->seen.steps[f->seen.nsteps - 1].partial);
}

/*
 * cupti windows that follow each other with no step between them (compare's
 * rotation), while the agent sends nothing: every cycle waits for GPU
 * records until --cupti-wait. The run goes on past any number of them; past
 * the bound on waiting cycles, the oldest are written early, in order.
 */
static void test_cupti_cycles_back_to_back(void **state)
{
	struct fixture *f = *state;
	struct cycle_status st;

	f->seen.mode = MODE_CUPTI;
	f->t.facts.agent_found = true;
	f->env.cupti_wait_ns = 1000000000000ull;
	start(f, &(struct schedule){ .active = 1 }, CLOCK_STEPS);
	for (uint32_t n = 1; n <= 100; n++) {
		step(f, n);
		launch(f, n);
		assert_int_equal(proc_cycles__flush(f->pc, n * 1000ull + 500), 0);
	}
	proc_cycles__status(f->pc, &st);
	/* 101 cycles begun, the running one and 63 finished ones wait. */
	assert_int_equal(st.written, 101 - 64);
	assert_int_equal(proc_cycles__stop(f->pc, 100500, NULL), 0);
	proc_cycles__status(f->pc, &st);
	assert_int_equal(st.written, 101);
	for (uint32_t k = 0; k < MAX_SEEN; k++) {
		assert_int_equal(f->seen.cycles[k].k, k);
		assert_int_equal(f->seen.cycles[k].err, 0);
		assert_int_equal(f->seen.cycles[k].launches, k ? 1 : 0);
		assert_non_null(f->seen.cycles[k].path);
	}
}

/* A cupti cycle of a process with no agent is written at its grace: no record can come. */
static void test_cupti_no_agent_no_wait(void **state)
{
	struct fixture *f = *state;

	f->seen.mode = MODE_CUPTI;
	f->env.cupti_wait_ns = 1000000000000ull;
	start(f, &(struct schedule){ .wait = 1, .active = 2, .repeat = 1 }, CLOCK_STEPS);
	for (uint32_t n = 1; n <= 3; n++) {
		step(f, n);
		launch(f, n);
	}
	assert_int_equal(proc_cycles__flush(f->pc, 3500), 0);
	assert_int_equal(f->seen.ncycles, 1);
	check_cycle(&f->seen.cycles[0], 0, 1, 2, 2);
}

/* With the agent in the process, the same cycle waits for its records, up to --cupti-wait. */
static void test_cupti_agent_waits(void **state)
{
	struct fixture *f = *state;

	f->seen.mode = MODE_CUPTI;
	f->t.facts.agent_found = true;
	f->env.cupti_wait_ns = 10000;
	start(f, &(struct schedule){ .wait = 1, .active = 2, .repeat = 1 }, CLOCK_STEPS);
	for (uint32_t n = 1; n <= 3; n++) {
		step(f, n);
		launch(f, n);
	}
	assert_int_equal(proc_cycles__flush(f->pc, 3500), 0);
	assert_int_equal(f->seen.ncycles, 0);
	assert_int_equal(proc_cycles__flush(f->pc, 3000 + 10000), 0);
	assert_int_equal(f->seen.ncycles, 1);
	check_cycle(&f->seen.cycles[0], 0, 1, 2, 2);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, setup, teardown)

int main(void)
{
	const struct CMUnitTest tests[] = {
		T(test_cycles_follow_schedule),
		T(test_skip_first),
		T(test_late_launch_goes_into_next),
		T(test_counters_are_deltas),
		T(test_lost_steps),
		T(test_unprobed),
		T(test_launch_ahead),
		T(test_mode_off_writes_nothing),
		T(test_slices_place_by_time),
		T(test_stop_writes_partial),
		T(test_cupti_cycles_back_to_back),
		T(test_cupti_no_agent_no_wait),
		T(test_cupti_agent_waits),
	};

	/* The drops and lost steps these tests make are warned about: expected here. */
	log_level = LOG_ERROR;
	return cmocka_run_group_tests(tests, NULL, NULL);
}
