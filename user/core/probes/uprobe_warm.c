// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Uprobe registration kept warm while holds come: see uprobe_warm.h. */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include "core/probes/uprobe_warm.h"
#include "core/proc/procmaps.h"
#include "util/clock.h"
#include "util/log.h"

#define GROUP "cuprobe"

struct uprobe_warm {
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t wake;
	pid_t base_pid;
	uint64_t until;		/* kept warm until then (mono ns) */
	uint64_t since;		/* the current stretch began then; 0: idle */
	bool stop;
	struct uprobe_warm_stats st;
	/* The thread's own from here. */
	bool ready;		/* set up: the event and its base perf event are there */
	char tracefs[64];
	char name[64];		/* the event, in GROUP */
	int memfd, base, tp_id;
	pid_t tid;
};

static int perf_open(int tp_id, pid_t pid)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = tp_id;
	a.disabled = 1;
	return syscall(SYS_perf_event_open, &a, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* One line to tracefs's uprobe_events; never truncating it, which would remove everyone's. */
static int uprobe_events_write(const char *tracefs, const char *line)
{
	char path[96];
	ssize_t n;
	int fd, err = 0;

	snprintf(path, sizeof(path), "%s/uprobe_events", tracefs);
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, line, strlen(line));
	if (n < 0)
		err = -errno;
	close(fd);
	return err;
}

#define TRACEFS_DIR "/sys/kernel/tracing"

/*
 * No tracefs mounted where it belongs (a host without systemd's mounts, a
 * container): mounted for this thread alone, in a mount namespace of its own
 * (a thread may unshare its file system information), so the host's mounts
 * stay as they are and nothing is left mounted when cuprobe is gone. The
 * uprobe events are the kernel's, whichever mount shows them. 0 or -errno.
 */
static int mount_own_tracefs(void)
{
	if (unshare(CLONE_FS | CLONE_NEWNS))
		return -errno;
	/* Nothing mounted here from now on reaches the namespace it came from. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return -errno;
	if (mount("tracefs", TRACEFS_DIR, "tracefs", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
		return -errno;
	return access(TRACEFS_DIR "/uprobe_events", W_OK) ? -errno : 0;
}

/* NULL and errno: the first place's, where tracefs belongs. */
static const char *find_tracefs(void)
{
	static const char *const dirs[] = { TRACEFS_DIR, "/sys/kernel/debug/tracing" };
	char path[96];
	int first = 0;

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/uprobe_events", dirs[i]);
		if (!access(path, W_OK))
			return dirs[i];
		if (!first)
			first = errno;
	}
	errno = first;
	return NULL;
}

int uprobe_warm__remove_stale(const char *tracefs)
{
	char path[96], line[512], cmd[96];
	int removed = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/uprobe_events", tracefs);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start = 0;
		unsigned int n;
		char event[64];
		int pid, got;

		/*
		 * p:cuprobe/warm_PID_START_N PATH:OFFSET, START the session's start
		 * time (a pid reused by another process is not the session's); an
		 * older cuprobe's warm_PID_N is judged by its pid alone.
		 */
		got = sscanf(line, "p:" GROUP "/warm_%d_%llu_%u", &pid, &start, &n);
		if (got < 2 || pid <= 0 || pid == getpid())
			continue;
		if (got == 3 ? proc_start_ticks(pid) == start : !kill(pid, 0) || errno != ESRCH)
			continue;
		if (sscanf(line, "p:" GROUP "/%63s", event) != 1)
			continue;
		snprintf(cmd, sizeof(cmd), "-:" GROUP "/%s\n", event);
		if (!uprobe_events_write(tracefs, cmd))
			removed++;
	}
	fclose(f);
	return removed;
}

/* Not kept warm for the session's rest: what failed, and how. teardown() takes out the rest. */
static void set_off(struct uprobe_warm *w, const char *what, int err)
{
	pthread_mutex_lock(&w->mu);
	w->st.off = true;
	snprintf(w->st.why, sizeof(w->st.why), "%s: %s", what, strerror(-err));
	pthread_mutex_unlock(&w->mu);
}

static void teardown(struct uprobe_warm *w)
{
	char cmd[96];

	if (w->base >= 0)
		close(w->base);	/* the uprobe's unregistration: a synchronize, once */
	w->base = -1;
	if (w->name[0]) {
		snprintf(cmd, sizeof(cmd), "-:" GROUP "/%s\n", w->name);
		if (uprobe_events_write(w->tracefs, cmd))
			p_dbg("cannot remove the tracefs event " GROUP "/%s: remove it with 'echo "
			      "-:" GROUP "/%s >> %s/uprobe_events'", w->name, w->name, w->tracefs);
		w->name[0] = '\0';
	}
	if (w->memfd >= 0)
		close(w->memfd);
	w->memfd = -1;
}

/* The event and the perf event that keeps it registered: false (and off) when it cannot be. */
static bool setup(struct uprobe_warm *w)
{
	static unsigned int seq;
	const char *tracefs = find_tracefs();
	char line[256], path[160];
	FILE *f;
	int err;

	if (!tracefs && errno == ENOENT) {
		err = mount_own_tracefs();
		if (err) {
			set_off(w, "no tracefs mounted at " TRACEFS_DIR " or /sys/kernel/debug/tracing, "
				   "and none could be mounted for cuprobe alone (mount tracefs there; run "
				   "cuprobe as root)", err);
			return false;
		}
		tracefs = TRACEFS_DIR;
		pthread_mutex_lock(&w->mu);
		w->st.own_tracefs = true;
		pthread_mutex_unlock(&w->mu);
	}
	if (!tracefs) {
		set_off(w, "no writable uprobe_events in " TRACEFS_DIR " or "
			   "/sys/kernel/debug/tracing (mount tracefs there; run cuprobe as root)",
			-errno);
		return false;
	}
	snprintf(w->tracefs, sizeof(w->tracefs), "%s", tracefs);
	uprobe_warm__remove_stale(w->tracefs);
	w->memfd = memfd_create("cuprobe-warm", MFD_CLOEXEC);
	if (w->memfd < 0 || ftruncate(w->memfd, 4096)) {
		set_off(w, "memfd_create", -errno);
		return false;
	}
	snprintf(w->name, sizeof(w->name), "warm_%d_%llu_%u", getpid(),
		 (unsigned long long)proc_start_ticks(getpid()),
		 __atomic_fetch_add(&seq, 1, __ATOMIC_RELAXED));
	snprintf(line, sizeof(line), "p:" GROUP "/%s /proc/%d/fd/%d:0x0\n", w->name, getpid(),
		 w->memfd);
	err = uprobe_events_write(w->tracefs, line);
	if (err) {
		w->name[0] = '\0';
		set_off(w, "cannot add a uprobe event in tracefs", err);
		return false;
	}
	snprintf(path, sizeof(path), "%s/events/" GROUP "/%s/id", w->tracefs, w->name);
	f = fopen(path, "re");
	if (!f || fscanf(f, "%d", &w->tp_id) != 1) {
		err = f ? -EINVAL : -errno;
		if (f)
			fclose(f);
		set_off(w, "cannot read the tracefs event's id", err);
		return false;
	}
	fclose(f);
	/* The registration: the first write, which may wait for a grace period. */
	w->base = perf_open(w->tp_id, w->base_pid);
	if (w->base < 0) {
		set_off(w, "cannot open a perf event on the tracefs event", -errno);
		return false;
	}
	return true;
}

/* One write of dup_mmap_sem each way; true when one of them waited for a grace period. */
static bool write_once(struct uprobe_warm *w)
{
	uint64_t t0 = clock_mono_ns();
	int fd = perf_open(w->tp_id, w->tid);

	if (fd >= 0)
		close(fd);
	return clock_mono_ns() - t0 >= UPROBE_WARM_SLOW_NS;
}

static void wait_until(struct uprobe_warm *w, uint64_t ns)
{
	struct timespec ts = { .tv_sec = ns / 1000000000ULL, .tv_nsec = ns % 1000000000ULL };

	pthread_cond_timedwait(&w->wake, &w->mu, &ts);
}

static void *run(void *arg)
{
	struct uprobe_warm *w = arg;
	uint64_t now;

	w->tid = gettid();
	pthread_mutex_lock(&w->mu);
	for (;;) {
		bool slow;

		now = clock_mono_ns();
		if (w->stop)
			break;
		if (now >= w->until || w->st.off) {
			if (w->since) {
				w->st.active_ns += now - w->since;
				w->since = 0;
			}
			pthread_cond_wait(&w->wake, &w->mu);
			continue;
		}
		if (!w->since) {
			w->since = now;
			w->st.stretches++;
		}
		pthread_mutex_unlock(&w->mu);
		if (!w->ready) {
			w->ready = setup(w);
			if (!w->ready)
				teardown(w);
		}
		slow = w->ready && write_once(w);
		pthread_mutex_lock(&w->mu);
		if (w->ready) {
			w->st.writes++;
			w->st.slow += slow;
		}
		if (!w->stop)
			wait_until(w, clock_mono_ns() + UPROBE_WARM_PERIOD_MS * 1000000ULL);
	}
	if (w->since)
		w->st.active_ns += clock_mono_ns() - w->since;
	w->since = 0;
	pthread_mutex_unlock(&w->mu);
	teardown(w);
	return NULL;
}

struct uprobe_warm *uprobe_warm__new(pid_t base)
{
	struct uprobe_warm *w = calloc(1, sizeof(*w));
	const char *env = getenv("CUPROBE_WARM");
	pthread_condattr_t ca;
	sigset_t all, old;
	int err;

	if (!w)
		return NULL;
	w->memfd = w->base = -1;
	w->base_pid = base;
	pthread_mutex_init(&w->mu, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&w->wake, &ca);
	pthread_condattr_destroy(&ca);
	if (env && !strcmp(env, "off")) {
		w->st.off = true;
		snprintf(w->st.why, sizeof(w->st.why), "CUPROBE_WARM=off");
	} else if (base <= 0) {
		w->st.off = true;
		snprintf(w->st.why, sizeof(w->st.why), "no guardian process to keep the event on");
	}
	/* The thread takes no signal: they belong to the event loop's signalfd. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&w->thread, NULL, run, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		free(w);
		errno = err;
		return NULL;
	}
	return w;
}

void uprobe_warm__keep(struct uprobe_warm *w, uint64_t ns)
{
	uint64_t until;
	bool idle;

	if (!w)
		return;
	until = clock_mono_ns() + ns;
	pthread_mutex_lock(&w->mu);
	idle = !w->since;
	if (until > w->until)
		w->until = until;
	if (idle && !w->st.off)
		pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->mu);
}

void uprobe_warm__hold(struct uprobe_warm *w)
{
	uprobe_warm__keep(w, UPROBE_WARM_WINDOW_MS * 1000000ULL);
}

void uprobe_warm__stats(struct uprobe_warm *w, struct uprobe_warm_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	*st = w->st;
	if (w->since)
		st->active_ns += clock_mono_ns() - w->since;
	pthread_mutex_unlock(&w->mu);
}

void uprobe_warm__free(struct uprobe_warm *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->mu);
	w->stop = true;
	pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	pthread_cond_destroy(&w->wake);
	pthread_mutex_destroy(&w->mu);
	free(w);
}
