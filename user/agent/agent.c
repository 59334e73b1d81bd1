// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libcuprobe-agent.so: CUPTI activity records for cuprobe, handed out through
 * USDT probes (include/agent.h describes the probes and the records).
 *
 * It loads through CUDA_INJECTION64_PATH (the driver calls
 * InitializeInjection at cuInit) or LD_PRELOAD (the constructor), and stays
 * dormant, without a single CUPTI call, until a loader attaches to
 * cuprobe:enable: the kernel then raises that probe's semaphore, and the
 * loader wakes the agent's thread through an eventfd (struct agent_wake).
 * The dormant thread sleeps on that eventfd without a timeout. On 0 -> 1 the
 * agent turns CUPTI activity on, reads the semaphore every
 * CUPROBE_AGENT_POLL_MS and asks CUPTI for completed buffers every
 * CUPROBE_AGENT_FLUSH_MS; on 1 -> 0, and at exit, it flushes CUPTI, hands out
 * every record, turns the kinds off and sends the FLUSHED marker. Between
 * windows it looks every CUPROBE_AGENT_IDLE_CHECK_MS whether a loader still
 * listens (cuprobe:records' semaphore); once none does, it tears CUPTI down
 * (cuptiFinalize) and sleeps without a timeout again.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>

#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

#include <cupti.h>

#include "agent.h"
#include "agent/convert.h"
#include "agent/emit.h"

/*
 * USDT semaphores: the kernel adds one per attached uprobe that names the
 * semaphore's offset as its reference counter (ref_ctr_offset).
 */
__extension__ volatile unsigned short cuprobe_enable_semaphore
	__attribute__((unused, section(".probes"), visibility("hidden")));
__extension__ volatile unsigned short cuprobe_records_semaphore
	__attribute__((unused, section(".probes"), visibility("hidden")));

#define AGENT_EXPORT __attribute__((visibility("default")))

/* Where a loader finds the eventfd that wakes the agent (include/agent.h). */
AGENT_EXPORT volatile struct agent_wake cuprobe_agent_wake = { .fd = -1 };

/* One copy of a probe site: a loader attaches to exactly one address. */
#ifdef __clang__
#define ONE_SITE __attribute__((noinline))
#else
#define ONE_SITE __attribute__((noinline, noclone))
#endif

/* Buffers as Kineto sizes them: 4 MiB each, 128 MiB at most. */
#define BUF_SIZE (4u << 20)
#define BUF_MAX 32

static const struct {
	CUpti_ActivityKind kind;
	const char *name;
} required_kinds[] = {
	{ CUPTI_ACTIVITY_KIND_RUNTIME, "RUNTIME" },
	{ CUPTI_ACTIVITY_KIND_DRIVER, "DRIVER" },
	{ CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL" },
	{ CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY" },
	{ CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET" },
};
#define N_REQUIRED (sizeof(required_kinds) / sizeof(required_kinds[0]))

static struct pool {
	pthread_mutex_t lock;
	void *free[BUF_MAX];
	unsigned int nfree;
	unsigned int allocated;
	__u64 refused; /* requests answered with no buffer, not yet reported */
} pool = { .lock = PTHREAD_MUTEX_INITIALIZER };

static struct agent {
	pthread_once_t once;
	pid_t pid;		/* the process that loaded the agent (not a fork of it) */
	struct emitter *em;	/* NULL: the agent could not start and stays inert */
	pthread_t poller;
	bool poller_running;
	atomic_bool stop;

	pthread_mutex_t lock; /* windows: the poller and the exit handler */
	__u32 window;	      /* the current or last window, from 1 */
	bool window_open;
	bool active;		 /* CUPTI kinds are on */
	bool overhead_on;
	unsigned int n_enabled;	 /* required kinds turned on */
	bool version_checked;	 /* cupti_version and version_ok are known */
	bool version_ok;
	__u32 cupti_version;
	bool callbacks_done;	 /* each once per process */
	bool clock_done;
	bool tid_type_done;
	bool cupti_live;	 /* a CUPTI call was made since the last teardown */
	int wake_fd;		 /* the eventfd loaders write; -1: none (timed checks) */
	char wake_id[128];	 /* its fdinfo "eventfd-id" line, to know it is still ours */
	unsigned int teardowns;
} agent = {
	.once = PTHREAD_ONCE_INIT,
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.wake_fd = -1,
};

static uint64_t CUPTIAPI monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static ONE_SITE void probe_records(unsigned long chunk, unsigned long len)
{
	STAP_PROBE2(cuprobe, records, chunk, len);
}

static ONE_SITE void probe_enable(unsigned long on, unsigned long window)
{
	STAP_PROBE2(cuprobe, enable, on, window);
}

static bool records_sink(const void *chunk, size_t len, void *ctx)
{
	(void)ctx;
	if (!cuprobe_records_semaphore)
		return false;
	probe_records((unsigned long)chunk, len);
	return true;
}

/* ---- buffers ------------------------------------------------------------ */

static void CUPTIAPI on_buffer_request(uint8_t **buffer, size_t *size, size_t *max_records)
{
	void *buf = NULL;

	pthread_mutex_lock(&pool.lock);
	if (pool.nfree) {
		buf = pool.free[--pool.nfree];
	} else if (pool.allocated < BUF_MAX) {
		buf = aligned_alloc(8, BUF_SIZE);
		if (buf)
			pool.allocated++;
	}
	if (!buf)
		pool.refused++; /* CUPTI drops records and counts them */
	pthread_mutex_unlock(&pool.lock);
	*buffer = buf;
	*size = buf ? BUF_SIZE : 0;
	*max_records = 0;
}

static void pool_release(void *buf)
{
	pthread_mutex_lock(&pool.lock);
	if (pool.nfree < BUF_MAX)
		pool.free[pool.nfree++] = buf;
	else
		free(buf); /* not one of ours: cannot happen with CUPTI */
	pthread_mutex_unlock(&pool.lock);
}

/* Gives the idle buffers back to the system once a window has closed. */
static void pool_trim(void)
{
	pthread_mutex_lock(&pool.lock);
	while (pool.nfree) {
		free(pool.free[--pool.nfree]);
		pool.allocated--;
	}
	pthread_mutex_unlock(&pool.lock);
}

static __u64 pool_take_refused(void)
{
	__u64 n;

	pthread_mutex_lock(&pool.lock);
	n = pool.refused;
	pool.refused = 0;
	pthread_mutex_unlock(&pool.lock);
	return n;
}

/* ---- records ------------------------------------------------------------ */

static void report_error(CUptiResult code, __u32 stage, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * When CUPTI fails as it does without a usable GPU, what can be told of the
 * cause without initialising anything: no NVIDIA kernel driver loaded (so the
 * CUDA driver finds no device; libcuda may make /dev/nvidiactl all the same,
 * so that node proves nothing), or a CUDA driver older than this CUPTI
 * (cuDriverGetVersion needs no cuInit). "" when neither.
 */
static void driver_cause(CUptiResult code, char *buf, size_t n)
{
	int (*driver_version)(int *);
	void *lib;
	int v = 0;

	buf[0] = '\0';
	if (code != CUPTI_ERROR_UNKNOWN && code != CUPTI_ERROR_NOT_INITIALIZED &&
	    code != CUPTI_ERROR_INVALID_DEVICE)
		return;
	if (access("/proc/driver/nvidia/version", F_OK) != 0) {
		snprintf(buf, n, "; no NVIDIA kernel driver (no /proc/driver/nvidia): "
				 "the CUDA driver finds no GPU here");
		return;
	}
	lib = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
	driver_version = lib ? (int (*)(int *))dlsym(lib, "cuDriverGetVersion") : NULL;
	if (driver_version && driver_version(&v) == 0 && v / 1000 < CUPTI_API_VERSION / 10000)
		snprintf(buf, n, "; the CUDA driver is %d.%d, older than this CUPTI (CUDA %d)",
			 v / 1000, v % 1000 / 10, CUPTI_API_VERSION / 10000);
	if (lib)
		dlclose(lib);
}

static void report_error(CUptiResult code, __u32 stage, const char *fmt, ...)
{
	char cause[96];
	char msg[CUPROBE_AGENT_ERROR_MAX];
	const char *what = NULL;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	if ((size_t)n < sizeof(msg) && code != CUPTI_SUCCESS) {
		if (cuptiGetResultString(code, &what) != CUPTI_SUCCESS || !what)
			what = "unknown CUPTI error";
		driver_cause(code, cause, sizeof(cause));
		snprintf(msg + n, sizeof(msg) - n, ": %s%s%s", what,
			 code == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED
				 ? " (another profiler holds CUPTI)"
				 : "", cause);
	}
	emitter__error(agent.em, code, stage, agent.window, msg);
}

static void report_dropped(void)
{
	size_t dropped = 0;
	__u64 refused;

	if (cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped) == CUPTI_SUCCESS && dropped)
		emitter__dropped(agent.em, AGENT_DROP_CUPTI, dropped);
	refused = pool_take_refused();
	if (refused)
		emitter__dropped(agent.em, AGENT_DROP_NO_BUFFER, refused);
}

static void handle_record(CUpti_Activity *rec)
{
	union agent_any out;
	const char *name;
	__u32 type = convert__record(rec, &out, &name);

	/* CUPTI leaves an overhead record's extra data for its client to free. */
	if (rec->kind == CUPTI_ACTIVITY_KIND_OVERHEAD)
		free(((CUpti_ActivityOverhead3 *)rec)->overheadData);
	if (type == AGENT_REC_KERNEL)
		emitter__kernel(agent.em, &out.kernel, name);
	else if (type)
		emitter__record(agent.em, &out);
}

static void CUPTIAPI on_buffer_complete(CUcontext ctx, uint32_t stream, uint8_t *buffer,
					size_t size, size_t valid)
{
	CUpti_Activity *rec = NULL;
	CUptiResult r;

	(void)ctx;
	(void)stream;
	(void)size;
	if (!buffer)
		return;
	while ((r = cuptiActivityGetNextRecord(buffer, valid, &rec)) == CUPTI_SUCCESS)
		handle_record(rec);
	/* An incomplete or unknown record ends the walk: the rest is lost. */
	if (r == CUPTI_ERROR_INVALID_KIND)
		emitter__dropped(agent.em, AGENT_DROP_BAD_RECORD, 1);
	else if (r != CUPTI_ERROR_MAX_LIMIT_REACHED)
		report_error(r, AGENT_STAGE_RECORD, "cuptiActivityGetNextRecord");
	report_dropped();
	emitter__flush(agent.em);
	pool_release(buffer);
}

/* ---- windows ------------------------------------------------------------ */

/* The steps CUPTI allows once per process, each kept once it succeeded. */
static int cupti_setup(void)
{
	CUptiResult r;

	if (!agent.version_checked) {
		r = cuptiGetVersion(&agent.cupti_version);
		if (r != CUPTI_SUCCESS) {
			report_error(r, AGENT_STAGE_VERSION, "cuptiGetVersion");
			return -EINVAL;
		}
		agent.version_checked = true;
		/* Since CUDA 13 the version is xxyyzz; the record layouts follow the major. */
		agent.version_ok = agent.cupti_version / 10000 == CUPTI_API_VERSION / 10000;
	}
	if (!agent.version_ok) {
		report_error(CUPTI_ERROR_NOT_COMPATIBLE, AGENT_STAGE_VERSION,
			     "CUPTI version %u, agent built for %u: use the CUPTI of CUDA %u",
			     agent.cupti_version, CUPTI_API_VERSION, CUPTI_API_VERSION / 10000);
		return -EINVAL;
	}
	/* From here on CUPTI holds state of ours: torn down once no loader listens. */
	agent.cupti_live = true;
	if (!agent.callbacks_done) {
		r = cuptiActivityRegisterCallbacks(on_buffer_request, on_buffer_complete);
		if (r != CUPTI_SUCCESS) {
			report_error(r, AGENT_STAGE_CALLBACKS, "cuptiActivityRegisterCallbacks");
			return -EINVAL;
		}
		agent.callbacks_done = true;
	}
	/* Once per process and before any kind: registering again corrupts timestamps. */
	if (!agent.clock_done) {
		r = cuptiActivityRegisterTimestampCallback(monotonic_ns);
		if (r != CUPTI_SUCCESS) {
			report_error(r, AGENT_STAGE_CLOCK, "cuptiActivityRegisterTimestampCallback");
			return -EINVAL;
		}
		agent.clock_done = true;
	}
	if (!agent.tid_type_done) {
		r = cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
		if (r != CUPTI_SUCCESS) {
			report_error(r, AGENT_STAGE_THREAD_ID, "cuptiSetThreadIdType(SYSTEM)");
			return -EINVAL;
		}
		agent.tid_type_done = true;
	}
	return 0;
}

static void disable_kinds(void)
{
	while (agent.n_enabled)
		cuptiActivityDisable(required_kinds[--agent.n_enabled].kind);
	if (agent.overhead_on)
		cuptiActivityDisable(CUPTI_ACTIVITY_KIND_OVERHEAD);
	agent.overhead_on = false;
}

static void flush_all(void)
{
	CUptiResult r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);

	if (r != CUPTI_SUCCESS)
		report_error(r, AGENT_STAGE_FLUSH, "cuptiActivityFlushAll(FORCED)");
}

static int enable_kinds(void)
{
	CUptiResult r;

	for (agent.n_enabled = 0; agent.n_enabled < N_REQUIRED; agent.n_enabled++) {
		r = cuptiActivityEnable(required_kinds[agent.n_enabled].kind);
		if (r != CUPTI_SUCCESS) {
			report_error(r, AGENT_STAGE_ENABLE, "cuptiActivityEnable(%s)",
				     required_kinds[agent.n_enabled].name);
			disable_kinds();
			/* Whatever the kinds made meanwhile stays in this window. */
			flush_all();
			return -EINVAL;
		}
	}
	r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_OVERHEAD);
	if (r == CUPTI_SUCCESS)
		agent.overhead_on = true;
	else
		report_error(r, AGENT_STAGE_ENABLE_OPTIONAL, "cuptiActivityEnable(OVERHEAD)");
	return 0;
}

/* 0 -> 1: a window begins. Called with agent.lock held. */
static void window_open(void)
{
	agent.window++;
	agent.window_open = true;
	emitter__new_window(agent.em);
	if (cupti_setup() || enable_kinds())
		return;
	agent.active = true;
	emitter__started(agent.em, monotonic_ns(), agent.window, agent.cupti_version,
			 (__u32)agent.pid);
	probe_enable(1, agent.window);
}

/*
 * 1 -> 0 or exit: the window ends. The first forced flush hands out what the
 * window made, with the kinds still on; the second, after the disable, what
 * came in between, so that nothing of this window waits for the next. A
 * kernel still running at the flush may come untimed (start and end 0).
 * Called with agent.lock held.
 */
static void window_close(__u32 reason)
{
	if (!agent.window_open)
		return;
	if (agent.active) {
		flush_all();
		disable_kinds();
		flush_all();
		report_dropped();
		agent.active = false;
		pool_trim();
		probe_enable(0, agent.window);
	}
	emitter__flushed(agent.em, monotonic_ns(), agent.window, reason);
	agent.window_open = false;
}

/*
 * No window and no loader listening (the session ended, or its loader died):
 * CUPTI is torn down, so that the process pays nothing for having been
 * profiled. Only this thread makes CUPTI calls, every kind is off and every
 * buffer came back (the forced flush of the window's close), so nothing
 * races cuptiFinalize. The next window sets CUPTI up again, as the first
 * did. Called with agent.lock held.
 */
static void cupti_teardown(void)
{
	CUptiResult r;

	if (!agent.cupti_live || agent.window_open)
		return;
	r = cuptiFinalize();
	if (r != CUPTI_SUCCESS)
		report_error(r, AGENT_STAGE_FLUSH, "cuptiFinalize");
	agent.callbacks_done = agent.clock_done = agent.tid_type_done = false;
	agent.cupti_live = false;
	agent.teardowns++;
	pool_trim();
}

/* While on, completed buffers are asked for now and then, so that records
 * stream out instead of coming all at once when the window closes. */
static void flush_completed(void)
{
	pthread_mutex_lock(&agent.lock);
	if (agent.active)
		cuptiActivityFlushAll(0);
	pthread_mutex_unlock(&agent.lock);
}

/* The fdinfo line that tells this eventfd from any other ("" when the kernel has none). */
static void eventfd_id(int fd, char *buf, size_t len)
{
	char path[64], line[128];
	FILE *f;

	buf[0] = 0;
	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "eventfd-id:", 11)) {
			snprintf(buf, len, "%s", line);
			break;
		}
	fclose(f);
}

/*
 * Whether wake_fd is still the agent's eventfd: an application that closes
 * descriptors it did not open may have closed it, and its number may since
 * name something of the application's, which the agent must never read.
 */
static bool wake_fd_ours(void)
{
	char path[64], target[64], id[128];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", agent.wake_fd);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0)
		return false;
	target[n] = 0;
	if (strcmp(target, "anon_inode:[eventfd]"))
		return false;
	eventfd_id(agent.wake_fd, id, sizeof(id));
	return !strcmp(id, agent.wake_id);
}

/* The eventfd is gone: loaders can no longer wake the agent, which checks on a timer. */
static void wake_lost(void)
{
	cuprobe_agent_wake.magic = 0;
	cuprobe_agent_wake.fd = -1;
	agent.wake_fd = -1;
}

/*
 * Sleeps until a loader's wake or timeout_ms (-1: none); returns whether it
 * timed out. Without the eventfd, the sleep is bounded by
 * CUPROBE_AGENT_IDLE_CHECK_MS.
 */
static bool wait_wake(int timeout_ms)
{
	struct pollfd p = { .fd = agent.wake_fd, .events = POLLIN };
	uint64_t v;
	int n;

	if (agent.wake_fd < 0) {
		int ms = timeout_ms < 0 || timeout_ms > CUPROBE_AGENT_IDLE_CHECK_MS
				 ? CUPROBE_AGENT_IDLE_CHECK_MS : timeout_ms;
		struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

		nanosleep(&ts, NULL);
		return true;
	}
	n = poll(&p, 1, timeout_ms);
	if (n <= 0)
		return true;
	if ((p.revents & POLLNVAL) || !wake_fd_ours()) {
		wake_lost();
		return true;
	}
	if (read(agent.wake_fd, &v, sizeof(v)) != sizeof(v) && errno != EAGAIN)
		wake_lost();
	return false;
}

static void *poll_main(void *arg)
{
	const unsigned int flush_every = CUPROBE_AGENT_FLUSH_MS / CUPROBE_AGENT_POLL_MS;
	unsigned int ticks = 0;
	bool on = false;

	(void)arg;
	while (!atomic_load(&agent.stop)) {
		bool want = cuprobe_enable_semaphore != 0;
		int timeout;

		if (want != on) {
			pthread_mutex_lock(&agent.lock);
			if (want)
				window_open();
			else
				window_close(AGENT_FLUSH_DISABLE);
			pthread_mutex_unlock(&agent.lock);
			on = want;
			ticks = 0;
		}
		if (!on && agent.cupti_live && !cuprobe_records_semaphore) {
			pthread_mutex_lock(&agent.lock);
			cupti_teardown();
			pthread_mutex_unlock(&agent.lock);
		}
		/* Active: the semaphore is read often. Idle with CUPTI set up: now and
		 * then, to tear it down once nobody listens. Dormant: never unwoken. */
		timeout = on ? CUPROBE_AGENT_POLL_MS
			     : agent.cupti_live ? CUPROBE_AGENT_IDLE_CHECK_MS : -1;
		if (wait_wake(timeout) && on && ++ticks >= flush_every) {
			flush_completed();
			ticks = 0;
		}
	}
	return NULL;
}

/* An eventfd for loaders' wakes, above the numbers applications use most, published. */
static void wake_setup(void)
{
	int fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK), high;

	if (fd < 0)
		return;
	high = fcntl(fd, F_DUPFD_CLOEXEC, 200);
	if (high >= 0) {
		close(fd);
		fd = high;
	}
	agent.wake_fd = fd;
	eventfd_id(fd, agent.wake_id, sizeof(agent.wake_id));
	cuprobe_agent_wake.fd = fd;
	cuprobe_agent_wake.pid = agent.pid;
	cuprobe_agent_wake.abi = CUPROBE_AGENT_ABI;
	__atomic_store_n(&cuprobe_agent_wake.magic, CUPROBE_AGENT_WAKE_MAGIC, __ATOMIC_RELEASE);
}

/* ---- life cycle --------------------------------------------------------- */

static void agent_start(void)
{
	sigset_t all, old;

	agent.pid = getpid();
	agent.em = emitter__new(records_sink, NULL);
	if (!agent.em)
		return;
	wake_setup();
	/* The poller takes no signals: they stay with the application's threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	if (pthread_create(&agent.poller, NULL, poll_main, NULL) == 0) {
		agent.poller_running = true;
		pthread_setname_np(agent.poller, "cuprobe-agent");
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void agent_init(void)
{
	pthread_once(&agent.once, agent_start);
}

/* The driver calls this at cuInit when CUDA_INJECTION64_PATH names the agent. */
AGENT_EXPORT int InitializeInjection(void)
{
	agent_init();
	return 1;
}

__attribute__((constructor)) static void agent_ctor(void)
{
	agent_init();
}

/* A window still open at exit is flushed here, while CUPTI is still loaded. */
__attribute__((destructor)) static void agent_dtor(void)
{
	if (!agent.em || agent.pid != getpid())
		return; /* never started, or a forked child without the poller */
	if (agent.poller_running) {
		uint64_t one = 1;

		atomic_store(&agent.stop, true);
		if (agent.wake_fd >= 0 && write(agent.wake_fd, &one, sizeof(one)) < 0)
			(void)0; /* the thread wakes within CUPROBE_AGENT_POLL_MS or at its check */
		pthread_join(agent.poller, NULL);
		agent.poller_running = false;
	}
	pthread_mutex_lock(&agent.lock);
	window_close(AGENT_FLUSH_EXIT);
	pthread_mutex_unlock(&agent.lock);
}
