// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The programs of the ctrl ring, loaded from cuprobe's own object: the step
 * probe (bpf/step.bpf.c) that evaluates torch's schedule in the kernel, the
 * thread names launch_entry sends, and the library-map hold
 * (bpf/libmap.bpf.c) that stops the caller. Needs root.
 */
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>
#include <bpf/bpf.h>
#include "bpf_test.h"
#include "schedule.h"
#include "util/clock.h"

static volatile unsigned long step_calls, launch_calls, dl_calls;

/* Where a training loop's step ends (--step). */
STAND_IN void sim_step(void)
{
	STAND_IN_FRAME();
	step_calls++;
}

/* cudaGraphLaunch(exec, stream): the launch between steps. */
STAND_IN int sim_graph_launch(void *exec, void *stream)
{
	STAND_IN_FRAME();
	launch_calls += (uintptr_t)exec != (uintptr_t)stream;
	return 0;
}

/* The dynamic linker's hook, called after each change of the map. */
STAND_IN void sim_dl_debug_state(void)
{
	STAND_IN_FRAME();
	dl_calls++;
}

static const char *const step_name = "sim_step", *const launch_name = "sim_graph_launch";
static const uint64_t no_cookie = 0, graph_cookie = API_cudaGraphLaunch;

static struct bt *load_with_steps(const struct proc_conf *conf)
{
	struct bt *t = bt__new(1 << 20);

	assert_non_null(t);
	assert_int_equal(bt__attach(t, PROG_STEP, getpid(), &step_name, &no_cookie, 1), 0);
	assert_int_equal(bt__attach(t, PROG_LAUNCH, getpid(), &launch_name, &graph_cookie, 1), 0);
	assert_int_equal(bt__add_self(t, conf, pack_state(0, 0, PHASE_NONE)), 0);
	return t;
}

/* One step: the step probe, then one launch in the step that began. */
static void step_and_launch(unsigned long i)
{
	sim_step();
	sim_graph_launch((void *)(0x1000 + i), (void *)0x2000);
}

/*
 * Checks the step events [from, from + n) against steps first.. and their
 * phases, with the counters the process had when each began: one launch per
 * step before it.
 */
static void check_steps(const struct bt *t, size_t from, const uint32_t *phases, size_t n,
			uint32_t first, uint64_t hits_before)
{
	for (size_t i = 0; i < n; i++) {
		const struct step_event *e = &t->steps[from + i];

		assert_int_equal(e->type, REC_STEP);
		assert_int_equal(e->tgid, getpid());
		assert_int_equal(e->tid, bt__gettid());
		assert_int_equal(e->step, first + i);
		assert_int_equal(e->phase, phases[i]);
		assert_int_equal(e->launch_hits, hits_before + i);
		assert_int_equal(e->drops, 0);
		assert_int_equal(e->nested, 0);
		if (from + i > 0)
			assert_true(e->ts_ns > t->steps[from + i - 1].ts_ns);
	}
}

/* The launches recorded: exactly those of RECORD and RECORD_AND_SAVE steps, tagged with them. */
static void check_launches(const struct bt *t, const uint32_t *phases, size_t n, uint32_t first)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		if (!phase_records(phases[i]))
			continue;
		assert_true(k < t->n_launches);
		assert_int_equal(t->launches[k].step, first + i);
		assert_int_equal(t->launches[k].phase, phases[i]);
		assert_int_equal(t->launches[k].func, 0x1000 + first + i);
		k++;
	}
	assert_int_equal(t->n_launches, k);
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

/*
 * torch.profiler.schedule(skip_first=2, wait=1, warmup=1, active=2, repeat=2):
 * step n is the n-th call of step(), the state before the first being step 0.
 */
static void test_step_schedule(void **state)
{
	static const uint32_t phases[] = {
		PHASE_NONE, /* 1: skip_first (steps 0 and 1) */
		PHASE_NONE, PHASE_WARMUP, PHASE_RECORD, PHASE_RECORD_AND_SAVE, /* 2-5: cycle 1 */
		PHASE_NONE, PHASE_WARMUP, PHASE_RECORD, PHASE_RECORD_AND_SAVE, /* 6-9: cycle 2 */
		PHASE_NONE, PHASE_NONE, PHASE_NONE, /* 10-12: after repeat cycles */
	};
	/* A window opened at step 13: wait=1, active=1, forever, counted from there. */
	static const uint32_t again[] = { PHASE_NONE, PHASE_RECORD_AND_SAVE, PHASE_NONE,
					  PHASE_RECORD_AND_SAVE };
	struct proc_conf conf = { .sched = { .skip_first = 2, .wait = 1, .warmup = 1, .active = 2,
					     .repeat = 2 } };
	struct bt *t = load_with_steps(&conf);
	struct proc_state ps;

	(void)state;
	for (unsigned long i = 1; i <= N(phases); i++)
		step_and_launch(i);
	bt__drain(t);
	assert_int_equal(t->n_steps, N(phases));
	check_steps(t, 0, phases, N(phases), 1, 0);
	check_launches(t, phases, N(phases), 1);
	ps = bt__state(t, getpid());
	assert_int_equal(ps.step_hits, N(phases));
	assert_int_equal(ps.state, pack_state(N(phases), 0, PHASE_NONE));
	assert_int_equal(ps.launch_hits, N(phases));
	assert_int_equal(ps.lost_ctrl, 0);

	conf.sched = (struct schedule){ .wait = 1, .active = 1 };
	conf.gen = 1;
	assert_int_equal(bpfobj__set_conf(t->obj, getpid(), &conf), 0);
	t->n_launches = 0;
	for (unsigned long i = N(phases) + 1; i <= N(phases) + N(again); i++)
		step_and_launch(i);
	bt__drain(t);
	assert_int_equal(t->n_steps, N(phases) + N(again));
	check_steps(t, N(phases), again, N(again), N(phases) + 1, N(phases));
	check_launches(t, again, N(again), N(phases) + 1);
	ps = bt__state(t, getpid());
	assert_int_equal(ps.gen, 1);
	assert_int_equal(ps.base, N(phases) + 1);
	assert_int_equal(ps.state, pack_state(N(phases) + N(again), 0, PHASE_RECORD_AND_SAVE));
	bt__free(t);
}

/* --step-every 3: one step per three hits of the step probe. */
static void test_step_every(void **state)
{
	struct proc_conf conf = { .sched = { .active = 1 }, .step_every = 3 };
	struct bt *t = load_with_steps(&conf);
	struct proc_state ps;

	(void)state;
	for (int i = 0; i < 7; i++)
		sim_step();
	bt__drain(t);
	assert_int_equal(t->n_steps, 2);
	assert_int_equal(t->steps[0].step, 1);
	assert_int_equal(t->steps[1].step, 2);
	ps = bt__state(t, getpid());
	assert_int_equal(ps.step_hits, 7);
	assert_int_equal(ps.state, pack_state(2, 0, PHASE_RECORD_AND_SAVE));
	bt__free(t);
}

/* A process without conf is not stepped: no event, no state. */
static void test_step_without_conf(void **state)
{
	struct bt *t = bt__new(1 << 20);

	(void)state;
	assert_non_null(t);
	assert_int_equal(bt__attach(t, PROG_STEP, getpid(), &step_name, &no_cookie, 1), 0);
	sim_step();
	bt__drain(t);
	assert_int_equal(t->n_steps, 0);
	bt__free(t);
}

struct worker {
	pid_t tid;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	prctl(PR_SET_NAME, "bt-worker");
	w->tid = bt__gettid();
	sim_graph_launch((void *)1, (void *)2);
	sim_graph_launch((void *)3, (void *)4);
	return NULL;
}

/* Each thread is named once, at its first recorded launch, with its own comm. */
static void test_thread_names(void **state)
{
	struct bt *t = bt__new(1 << 20);
	struct worker w = {};
	char comm[16] = {};
	pthread_t th;

	(void)state;
	assert_non_null(t);
	assert_int_equal(bt__attach(t, PROG_LAUNCH, getpid(), &launch_name, &graph_cookie, 1), 0);
	assert_int_equal(bt__add_self(t, NULL, pack_state(1, 0, PHASE_RECORD)), 0);
	prctl(PR_GET_NAME, comm);
	sim_graph_launch((void *)5, (void *)6);
	assert_int_equal(pthread_create(&th, NULL, worker_main, &w), 0);
	pthread_join(th, NULL);
	sim_graph_launch((void *)7, (void *)8);
	bt__drain(t);
	assert_int_equal(t->n_launches, 4);
	assert_int_equal(t->n_threads, 2);
	for (size_t i = 0; i < 2; i++) {
		assert_int_equal(t->threads[i].type, REC_THREAD);
		assert_int_equal(t->threads[i].tgid, getpid());
		assert_int_equal(t->threads[i].pad, 0);
	}
	assert_int_equal(t->threads[0].tid, bt__gettid());
	assert_string_equal(t->threads[0].comm, comm);
	assert_int_equal(t->threads[1].tid, w.tid);
	assert_string_equal(t->threads[1].comm, "bt-worker");
	bt__free(t);
}

/* A child that calls the linker's hook when told to, then says it ran on. */
struct child {
	pid_t pid;
	int go;	  /* write a byte: call the hook */
	int done; /* a byte arrives: the hook returned */
};

static void child_main(int go, int done)
{
	char c;

	if (read(go, &c, 1) != 1)
		_exit(2);
	sim_dl_debug_state();
	_exit(write(done, "x", 1) == 1 ? 0 : 3);
}

static void child_start(struct child *ch)
{
	int go[2], done[2];

	assert_int_equal(pipe(go), 0);
	assert_int_equal(pipe(done), 0);
	ch->pid = fork();
	assert_true(ch->pid >= 0);
	if (ch->pid == 0) {
		/* A failed test leaves no stopped child behind. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(go[1]);
		close(done[0]);
		child_main(go[0], done[1]);
	}
	close(go[0]);
	close(done[1]);
	ch->go = go[1];
	ch->done = done[0];
}

/* Waits up to ms for the child to stop or exit; its wait status, or -1. */
static int child_wait(pid_t pid, int ms)
{
	int status;

	for (int i = 0; i < ms; i++) {
		pid_t r = waitpid(pid, &status, WNOHANG | WUNTRACED);

		if (r == pid)
			return status;
		usleep(1000);
	}
	return -1;
}

static struct bt *load_libmap(pid_t pid)
{
	static const char *const name = "sim_dl_debug_state";
	struct bt *t = bt__new(1 << 20);

	assert_non_null(t);
	assert_int_equal(bt__attach(t, PROG_LIBMAP, pid, &name, &no_cookie, 1), 0);
	return t;
}

/* The hook stops its caller and says so; the loader's SIGCONT lets it run on. */
static void test_libmap_holds(void **state)
{
	struct proc_conf conf = {};
	struct proc_state ps;
	struct child ch;
	struct bt *t;
	uint64_t t0;
	int status;
	char c;

	(void)state;
	child_start(&ch);
	t = load_libmap(ch.pid);
	assert_int_equal(bpfobj__add_proc(t->obj, ch.pid, &conf, 0), 0);
	t0 = clock_mono_ns();
	assert_int_equal(write(ch.go, "g", 1), 1);
	status = child_wait(ch.pid, 5000);
	assert_true(status != -1 && WIFSTOPPED(status));
	assert_int_equal(WSTOPSIG(status), SIGSTOP);
	bt__drain(t);
	assert_int_equal(t->n_libmaps, 1);
	assert_int_equal(t->libmaps[0].type, REC_LIBMAP);
	assert_int_equal(t->libmaps[0].tgid, ch.pid);
	assert_int_equal(t->libmaps[0].seq, 1);
	assert_int_equal(t->libmaps[0].held, 1);
	assert_int_equal(t->libmaps[0].pad, 0);
	assert_in_range(t->libmaps[0].ts_ns, t0, clock_mono_ns());
	ps = bt__state(t, ch.pid);
	assert_int_equal(ps.stops, 1);
	assert_int_equal(ps.last_stop_ns, t->libmaps[0].ts_ns);
	assert_int_equal(ps.holds_skipped, 0);
	/* Answered and continued, as the loader does: the child runs on and exits. */
	conf.holds_answered = 1;
	assert_int_equal(bpfobj__set_conf(t->obj, ch.pid, &conf), 0);
	assert_int_equal(kill(ch.pid, SIGCONT), 0);
	assert_int_equal(read(ch.done, &c, 1), 1);
	status = child_wait(ch.pid, 5000);
	assert_true(status != -1 && WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	bt__free(t);
	close(ch.go);
	close(ch.done);
}

/*
 * A followed process's child: at fork it gets its parent's entries (the
 * schedule and link generations kept, its holds not), and the fork is told;
 * at exec it is held until answered, as a library map holds.
 */
static void test_follow_fork_and_exec(void **state)
{
	struct proc_conf conf = {
		.sched = { .active = UINT32_MAX }, .flags = CONF_FOLLOW, .gen = 2, .link_gen = 3,
		.holds_answered = 7,
	}, cconf;
	struct proc_state ps;
	struct bt *t = bt__new(1 << 20);
	int go[2], status;
	__u32 key;
	pid_t pid;
	char c;

	(void)state;
	assert_non_null(t);
	assert_int_equal(bpfobj__attach_proc(t->obj), 0);
	assert_int_equal(bt__add_self(t, &conf, pack_state(5, 3, PHASE_RECORD)), 0);
	assert_int_equal(pipe(go), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(2);
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	close(go[0]);
	key = pid;
	ps = bt__state(t, pid);
	assert_int_equal(ps.state, pack_state(0, 3, PHASE_RECORD));
	assert_int_equal(ps.gen, 2);
	assert_int_equal(ps.launch_hits, 0);
	assert_int_equal(bpf_map_lookup_elem(bpfobj__conf_fd(t->obj), &key, &cconf), 0);
	assert_int_equal(cconf.flags, CONF_FOLLOW);
	assert_int_equal(cconf.link_gen, 3);
	assert_int_equal(cconf.holds_answered, 0);
	bt__drain(t);
	assert_int_equal(t->n_forks, 1);
	assert_int_equal(t->forks[0].tgid, pid);
	assert_int_equal(t->forks[0].parent, getpid());
	assert_int_equal(t->forks[0].flags, 0);
	/* exec: held, and told. */
	assert_int_equal(write(go[1], "g", 1), 1);
	status = child_wait(pid, 5000);
	assert_true(status != -1 && WIFSTOPPED(status));
	bt__drain(t);
	assert_int_equal(t->n_libmaps, 1);
	assert_int_equal(t->libmaps[0].type, REC_EXEC);
	assert_int_equal(t->libmaps[0].tgid, pid);
	assert_int_equal(t->libmaps[0].held, 1);
	assert_int_equal(bt__state(t, pid).stops, 1);
	assert_int_equal(kill(pid, SIGCONT), 0);
	status = child_wait(pid, 5000);
	assert_true(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(go[1]);
	bt__free(t);
}

/*
 * A vfork child shares its parent's memory until its exec: the fork says so
 * (FORK_F_SHARED_MM), and the loader then waits for the exec to scan it.
 */
static void test_vfork_shares_mm(void **state)
{
	struct proc_conf conf = { .sched = { .active = UINT32_MAX }, .flags = CONF_FOLLOW };
	struct bt *t = bt__new(1 << 20);
	int status;
	pid_t pid;

	(void)state;
	assert_non_null(t);
	assert_int_equal(bpfobj__attach_proc(t->obj), 0);
	assert_int_equal(bt__add_self(t, &conf, pack_state(0, 0, PHASE_RECORD)), 0);
	pid = vfork();
	assert_true(pid >= 0);
	if (pid == 0) {
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	}
	/* Back here once the child's exec let go of this memory; the exec is held. */
	status = child_wait(pid, 5000);
	assert_true(status != -1 && WIFSTOPPED(status));
	bt__drain(t);
	assert_int_equal(t->n_forks, 1);
	assert_int_equal(t->forks[0].tgid, pid);
	assert_int_equal(t->forks[0].flags, FORK_F_SHARED_MM);
	assert_int_equal(t->n_libmaps, 1);
	assert_int_equal(t->libmaps[0].type, REC_EXEC);
	assert_int_equal(kill(pid, SIGCONT), 0);
	status = child_wait(pid, 5000);
	assert_true(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	bt__free(t);
}

/* A process nobody accounts for is never held, and nothing is said about it. */
static void test_libmap_without_state(void **state)
{
	struct child ch;
	struct bt *t;
	int status;

	(void)state;
	child_start(&ch);
	t = load_libmap(ch.pid);
	assert_int_equal(write(ch.go, "g", 1), 1);
	status = child_wait(ch.pid, 5000);
	assert_true(status != -1 && WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	bt__drain(t);
	assert_int_equal(t->n_libmaps, 0);
	assert_int_equal(t->n_other, 0);
	bt__free(t);
	close(ch.go);
	close(ch.done);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_step_schedule),
		cmocka_unit_test(test_step_every),
		cmocka_unit_test(test_step_without_conf),
		cmocka_unit_test(test_thread_names),
		cmocka_unit_test(test_libmap_holds),
		cmocka_unit_test(test_libmap_without_state),
		cmocka_unit_test(test_follow_fork_and_exec),
		cmocka_unit_test(test_vfork_shares_mm),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
