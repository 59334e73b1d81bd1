// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * `cuprobe record`: load the probes, start or find the targets, stream
 * launch events into one trace per process, and finish cleanly on Ctrl-C,
 * --duration or the end of the targets.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <bpf/libbpf.h>
#include "attach.h"
#include "clock.h"
#include "cuprobe.h"
#include "launch.skel.h"
#include "launch.h"
#include "log.h"
#include "opts.h"
#include "record.h"
#include "symbols.h"
#include "target.h"
#include "trace.h"

#define POLL_MS 100

struct thread_name {
	pid_t tid;
	char name[16];	/* TASK_COMM_LEN */
};

/* What one process's cycle has recorded so far. */
struct proc_rec {
	struct trace *trace;
	uint64_t launches;
	uint64_t unnamed;
	struct thread_name *threads;
	size_t nthreads, cap;
};

struct session {
	struct record_opts o;
	struct launch_bpf *skel;
	struct ring_buffer *rb;
	struct symbols *syms;
	struct probe_ctx ctx;
	struct target targets[MAX_PIDS];
	struct proc_rec recs[MAX_PIDS];
	size_t ntargets;
	size_t last;		/* index of the last target an event named */
	int epfd, sigfd;
	char host[256];
	char *run_dir;		/* OUT/run_<k> for this session's cycle */
	int64_t mono_to_real;
	uint64_t start_mono;
	uint64_t deadline;	/* CLOCK_MONOTONIC ns, 0 for none */
	uint64_t correlation;
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

static int open_trace(struct session *s, size_t i)
{
	struct target *t = &s->targets[i];
	struct trace_meta m = {
		.pid = t->pid,
		.host = s->host,
		.command = t->comm,
		.rank = t->rank,
		.world_size = t->world_size,
		.cycle = 0,
		.mono_to_real = s->mono_to_real,
		.start_mono = s->start_mono,
	};

	if (mkdir(s->run_dir, 0755) && errno != EEXIST)
		return -errno;
	s->recs[i].trace = trace__open(s->run_dir, &m);
	return s->recs[i].trace ? 0 : -errno;
}

static void note_thread(struct proc_rec *r, const struct thread_event *e)
{
	for (size_t i = r->nthreads; i > 0; i--)
		if (r->threads[i - 1].tid == (pid_t)e->tid)
			return;
	if (r->nthreads == r->cap) {
		size_t cap = r->cap ? r->cap * 2 : 16;
		struct thread_name *v = realloc(r->threads, cap * sizeof(*v));

		if (!v)
			return; /* the thread only misses its name */
		r->threads = v;
		r->cap = cap;
	}
	r->threads[r->nthreads].tid = e->tid;
	memcpy(r->threads[r->nthreads].name, e->comm, sizeof(e->comm));
	r->threads[r->nthreads].name[sizeof(e->comm) - 1] = '\0';
	r->nthreads++;
}

static int on_launch(struct session *s, const struct launch_event *e)
{
	const char *kernel = "";
	char handle[48];
	struct proc_rec *r;
	size_t i;
	int err;

	if (e->api >= API__COUNT || !find_target(s, e->tgid, &i))
		return 0;
	if (e->phase == PHASE_NONE || e->phase == PHASE_WARMUP)
		return 0;
	r = &s->recs[i];
	if (!r->trace) {
		err = open_trace(s, i);
		if (err) {
			p_err("cannot create a trace in %s: %s", s->run_dir, strerror(-err));
			return err;
		}
	}
	if (launch_api_what(e->api) == LAUNCH_KERNEL) {
		if (launch_api_is_driver(e->api)) {
			/* A CUfunction is a handle, not code: CUPTI names it (--cupti). */
			snprintf(handle, sizeof(handle), "CUfunction 0x%llx", (unsigned long long)e->func);
			kernel = handle;
			r->unnamed++;
		} else if (symbols__name(s->syms, e->tgid, e->func, &kernel) != 0) {
			r->unnamed++;
		}
	}
	trace__launch(r->trace, e, kernel, ++s->correlation);
	r->launches++;
	return 0;
}

static void on_thread(struct session *s, const struct thread_event *e)
{
	size_t i;

	if (find_target(s, e->tgid, &i))
		note_thread(&s->recs[i], e);
}

static void on_libmap(struct session *s, const struct libmap_event *e)
{
	struct target *t;
	size_t i;
	int err;

	t = find_target(s, e->tgid, &i);
	if (!t)
		return;
	target__refresh_identity(t);
	bool had = t->has_launch_apis;

	err = target__scan(t, &s->ctx);
	if (err && err != -ESRCH)
		p_warn("pid %d: cannot read its new libraries: %s", t->pid, strerror(-err));
	if (!had && t->has_launch_apis && t->told_waiting)
		p_info("pid %d (%s): CUDA library loaded, probes attached", t->pid, t->comm);
	/* The probe stopped the process so that no launch of a new library is missed. */
	kill(t->pid, SIGCONT);
}

static int handle_event(void *ctx, void *data, size_t size)
{
	struct session *s = ctx;
	__u32 type = size >= sizeof(__u32) ? *(__u32 *)data : 0;

	switch (type) {
	case REC_LAUNCH:
		if (size < sizeof(struct launch_event))
			return 0;
		return on_launch(s, data);
	case REC_THREAD:
		if (size >= sizeof(struct thread_event))
			on_thread(s, data);
		return 0;
	case REC_LIBMAP:
		if (size >= sizeof(struct libmap_event))
			on_libmap(s, data);
		return 0;
	default:
		return 0;
	}
}

/* Preflight checks, before anything is attached: each names the fix. */
static bool has_cap(const struct __user_cap_data_struct *d, int cap)
{
	return d[cap / 32].effective & (1u << (cap % 32));
}

static int check_privileges(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {};

	/* CAP_BPF (39) and CAP_PERFMON (38) exist since Linux 5.8. */
	if (!syscall(SYS_capget, &h, d) &&
	    (has_cap(d, CAP_SYS_ADMIN) || (has_cap(d, 39) && has_cap(d, 38))))
		return 0;
	p_err("not enough privilege to load BPF programs: run as root (sudo cuprobe ...) "
	      "or grant CAP_BPF and CAP_PERFMON");
	return -EPERM;
}

static int check_btf(void)
{
	const char *btf = "/sys/kernel/btf/vmlinux";

	if (!access(btf, R_OK))
		return 0;
	p_err("%s is missing: this kernel has no BTF; use a kernel built with "
	      "CONFIG_DEBUG_INFO_BTF=y (5.8 or later)", btf);
	return -ENOENT;
}

/* mkdir -p: the output folder's parents are made as torch's trace handler makes them. */
static int mkdir_p(const char *dir)
{
	char buf[PATH_MAX];
	size_t len = strlen(dir);

	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, dir, len + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

/* OUT/run_<k> with k one past the highest existing: earlier runs are never touched. */
static int choose_run_dir(struct session *s)
{
	const char *out = s->o.output;
	char probe[PATH_MAX];
	struct dirent *d;
	long next = 0;
	DIR *dir;
	int fd, err;

	err = mkdir_p(out);
	if (err) {
		p_err("cannot create output folder %s: %s; choose another with -o", out, strerror(-err));
		return err;
	}
	snprintf(probe, sizeof(probe), "%s/.cuprobe-write-test.XXXXXX", out);
	fd = mkstemp(probe);
	if (fd < 0) {
		p_err("cannot write in output folder %s: %s; choose another with -o", out,
		      strerror(errno));
		return -errno;
	}
	close(fd);
	unlink(probe);
	dir = opendir(out);
	if (!dir)
		return -errno;
	while ((d = readdir(dir))) {
		char *end;
		long k;

		if (strncmp(d->d_name, "run_", 4))
			continue;
		k = strtol(d->d_name + 4, &end, 10);
		if (!*end && k >= next)
			next = k + 1;
	}
	closedir(dir);
	if (asprintf(&s->run_dir, "%s/run_%ld", out, next) < 0)
		return -ENOMEM;
	return 0;
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
	bpf_map__set_max_entries(skel->maps.events, s->o.ringbuf_bytes);
	s->ctx.multi = attach_has_uprobe_multi();
	if (s->ctx.multi) {
		bpf_program__set_expected_attach_type(
			skel->progs.launch_entry, (enum bpf_attach_type)CUPROBE_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(
			skel->progs.launch_return, (enum bpf_attach_type)CUPROBE_TRACE_UPROBE_MULTI);
	}
	if (!s->o.latency)
		bpf_program__set_autoload(skel->progs.launch_return, false);
	err = launch_bpf__load(skel);
	if (err) {
		p_err("cannot load the BPF programs: %s; run with -v for the verifier's log",
		      strerror(-err));
		return err;
	}
	s->ctx.skel = skel;
	s->ctx.syms = s->syms;
	s->ctx.latency = s->o.latency;
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

static void child_exec(char **cmd, int go_fd, int err_fd, const sigset_t *orig)
{
	char c;
	int e;

	sigprocmask(SIG_SETMASK, orig, NULL);
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
		child_exec(s->o.cmd, go[0], ex[1], orig);
	close(go[0]);
	close(ex[1]);
	err = target__init(&s->targets[0], pid, true);
	if (!err) {
		s->ntargets = 1;
		err = target__prepare_exec(&s->targets[0], &s->ctx, exe);
	}
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

static int attach_pids(struct session *s)
{
	for (size_t i = 0; i < s->o.npids; i++) {
		struct target *t = &s->targets[i];
		pid_t pid = s->o.pids[i];
		int err;

		err = target__init(t, pid, false);
		if (!err) {
			s->ntargets++;
			err = target__scan(t, &s->ctx);
		}
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
		if (!t->has_launch_apis) {
			t->told_waiting = true;
			p_info("pid %d (%s) has no CUDA library mapped yet: watching for one to be loaded",
			       pid, t->comm);
		}
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
		if (ring_buffer__consume(s->rb) < 0 && s->err)
			return s->err;
		if (s->deadline && clock_mono_ns() >= s->deadline)
			s->stop = s->timed_out = true;
	}
	return 0;
}

static int finish_traces(struct session *s)
{
	const struct cuprobe_counters *c = &s->skel->bss->counters;
	uint64_t end = clock_mono_ns();
	int ret = 0;

	for (size_t i = 0; i < s->ntargets; i++) {
		struct proc_rec *r = &s->recs[i];
		struct trace_summary sum = {
			.end_mono = end,
			.probe_hits = c->hits,
			.drops = c->drops,
		};
		int err;

		if (!r->trace && open_trace(s, i)) {
			p_err("cannot create a trace in %s: %s", s->run_dir, strerror(errno));
			ret = -EIO;
			continue;
		}
		sum.launches = r->launches;
		sum.unnamed = r->unnamed;
		for (size_t k = 0; k < r->nthreads; k++)
			trace__thread(r->trace, r->threads[k].tid, r->threads[k].name);
		err = trace__close(r->trace, &sum);
		if (err) {
			p_err("cannot write %s: %s", trace__path(r->trace), strerror(-err));
			ret = err;
			continue;
		}
		p_info("pid %d (%s): %lu launches -> %s", s->targets[i].pid, s->targets[i].comm,
		       (unsigned long)r->launches, trace__path(r->trace));
	}
	if (c->drops)
		p_warn("%lu events were dropped (ring buffer full): raise --ringbuf-size",
		       (unsigned long)c->drops);
	return ret;
}

static void session_free(struct session *s)
{
	for (size_t i = 0; i < s->ntargets; i++) {
		struct target *t = &s->targets[i];

		target__detach(t);
		/* Never leave a target held by the library-map probe. */
		if (!t->exited)
			kill(t->pid, SIGCONT);
		target__free(t);
		trace__free(s->recs[i].trace);
		free(s->recs[i].threads);
	}
	ring_buffer__free(s->rb);
	launch_bpf__destroy(s->skel);
	symbols__free(s->syms);
	if (s->epfd > 0)
		close(s->epfd);
	if (s->sigfd > 0)
		close(s->sigfd);
	free(s->run_dir);
}

static int preflight(struct session *s)
{
	int err;

	if (s->o.cupti) {
		p_err("--cupti: the CUPTI agent is not part of this build yet; record without --cupti");
		return -ENOTSUP;
	}
	if (s->o.step || s->o.schedule) {
		p_err("--step/--schedule: not part of this build yet; record without them");
		return -ENOTSUP;
	}
	err = check_privileges();
	if (!err)
		err = check_btf();
	if (!err)
		err = choose_run_dir(s);
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

int record_main(int argc, char **argv)
{
	struct session s = { .epfd = -1, .sigfd = -1 };
	sigset_t orig;
	int err;

	err = record_opts__parse(&s.o, argc, argv);
	if (err)
		return err > 0 ? 0 : 2;
	log_level = s.o.quiet ? LOG_WARN : s.o.verbose ? LOG_DEBUG : LOG_INFO;
	log_setup_libbpf();
	gethostname(s.host, sizeof(s.host) - 1);
	err = preflight(&s);
	if (err)
		goto out;
	s.syms = symbols__new();
	if (!s.syms) {
		err = -ENOMEM;
		goto out;
	}
	err = load_bpf(&s);
	if (!err)
		err = setup_loop(&s, &orig);
	if (err)
		goto out;
	s.mono_to_real = clock_mono_to_real_offset();
	s.start_mono = clock_mono_ns();
	if (s.o.duration > 0)
		s.deadline = s.start_mono + (uint64_t)(s.o.duration * 1e9);
	err = start_targets(&s, &orig);
	if (err)
		goto out;
	err = run_loop(&s);
	end_command(&s);
	ring_buffer__consume(s.rb);
	if (!err)
		err = finish_traces(&s);
out:
	err = exit_code(&s, err);
	session_free(&s);
	return err;
}
