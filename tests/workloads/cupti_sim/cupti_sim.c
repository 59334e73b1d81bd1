// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A CUPTI simulator: the activity API calls the agent makes, with CUPTI's
 * signatures and CUDA 13.0 record layouts, built as libcupti.so.13 so that
 * LD_LIBRARY_PATH decides between it and the real one. Records come from
 * the workload's real launches (sim_launch.c). Every call is counted, and the
 * counts go to the file named by CUPTI_SIM_STATS at exit. README.md lists the
 * CUPTI_SIM_* faults.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "sim.h"

struct sim_config sim_cfg = {
	.gpu_delay_ns = 1000,
	.gpu_dur_ns = 2000,
	.graph_nodes = 2,
	.version = CUPTI_API_VERSION,
};

/* ---- statistics --------------------------------------------------------- */

enum sim_fn {
	F_GetVersion,
	F_GetResultString,
	F_RegisterCallbacks,
	F_RegisterTimestampCallback,
	F_SetThreadIdType,
	F_Enable,
	F_Disable,
	F_FlushAll,
	F_GetNextRecord,
	F_GetNumDroppedRecords,
	F_Finalize,
	F__COUNT,
};

static const char *const fn_names[F__COUNT] = {
	"cuptiGetVersion",
	"cuptiGetResultString",
	"cuptiActivityRegisterCallbacks",
	"cuptiActivityRegisterTimestampCallback",
	"cuptiSetThreadIdType",
	"cuptiActivityEnable",
	"cuptiActivityDisable",
	"cuptiActivityFlushAll",
	"cuptiActivityGetNextRecord",
	"cuptiActivityGetNumDroppedRecords",
	"cuptiFinalize",
};

static atomic_ullong fn_calls[F__COUNT];

#define SIM_STATS(X)                                                                              \
	X(records_written) X(records_api) X(records_kernel) X(records_memcpy) X(records_memset)  \
	X(records_overhead) X(dropped_fault) X(dropped_no_buffer) X(buffers_requested)            \
	X(buffers_refused) X(buffers_completed) X(buffers_misaligned) X(flush_forced)             \
	X(flush_default) X(enable_before_clock) X(enable_before_callbacks)

static struct {
#define X(name) atomic_ullong name;
	SIM_STATS(X)
#undef X
} stats;

/* ---- state -------------------------------------------------------------- */

struct sim_buf {
	struct sim_buf *next;
	uint8_t *base;
	size_t size;
	size_t used;
	size_t limit;
};

struct buf_list {
	struct sim_buf *head, *tail;
};

static struct {
	pthread_mutex_t lock; /* everything below */
	pthread_cond_t cond;
	CUpti_BuffersCallbackRequestFunc request;
	CUpti_BuffersCallbackCompleteFunc complete;
	struct sim_buf *cur;
	struct buf_list ready; /* complete, for the delivery thread */
	struct buf_list held;  /* complete, kept until a forced flush (hold) */
	uint8_t *late;	       /* GPU records kept until a forced flush (late) */
	size_t late_len, late_cap;
	unsigned int in_flight; /* buffers being handed to the client */
	bool deliverer;
	size_t dropped; /* for cuptiActivityGetNumDroppedRecords */
	uint64_t drop_left;
} sim = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.cond = PTHREAD_COND_INITIALIZER,
};

static _Atomic(CUpti_TimestampCallbackFunc) clock_cb;
static atomic_uint tid_type = CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT;
static atomic_ullong kinds_on;
static atomic_ullong finalize_with_kinds_on;
static atomic_uint correlation;
static atomic_uint clock_registrations;

/* Injected failures: CUPTI_SIM_FAIL=name[@kind]=code,... */
#define MAX_FAILS 8
static struct {
	char name[64];
	int kind; /* -1: any */
	int code;
} fails[MAX_FAILS];
static int n_fails;

static CUptiResult injected(const char *fn, int kind)
{
	int i;

	for (i = 0; i < n_fails; i++)
		if (!strcmp(fails[i].name, fn) && (fails[i].kind < 0 || fails[i].kind == kind))
			return (CUptiResult)fails[i].code;
	return CUPTI_SUCCESS;
}

static void list_push(struct buf_list *l, struct sim_buf *b)
{
	b->next = NULL;
	if (l->tail)
		l->tail->next = b;
	else
		l->head = b;
	l->tail = b;
}

static struct sim_buf *list_take(struct buf_list *l)
{
	struct sim_buf *b = l->head;

	l->head = l->tail = NULL;
	return b;
}

/* ---- helpers for sim_launch.c ------------------------------------------- */

uint64_t sim_now(void)
{
	CUpti_TimestampCallbackFunc cb = atomic_load(&clock_cb);
	struct timespec ts;

	if (cb)
		return cb();
	clock_gettime(CLOCK_REALTIME, &ts); /* CUPTI's default clock on Linux */
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

uint32_t sim_thread_id(void)
{
	if (atomic_load(&tid_type) == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM)
		return (uint32_t)syscall(SYS_gettid);
	return (uint32_t)pthread_self();
}

bool sim_kind_on(CUpti_ActivityKind kind)
{
	return (unsigned)kind < 64 && (atomic_load(&kinds_on) & (1ull << kind));
}

bool sim_tracing(void)
{
	return atomic_load(&kinds_on) != 0;
}

uint32_t sim_next_correlation(void)
{
	return atomic_fetch_add(&correlation, 1) + 1;
}

static size_t record_size(CUpti_ActivityKind kind)
{
	switch (kind) {
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
		return sizeof(CUpti_ActivityAPI);
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		return sizeof(CUpti_ActivityKernel10);
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return sizeof(CUpti_ActivityMemcpy6);
	case CUPTI_ACTIVITY_KIND_MEMSET:
		return sizeof(CUpti_ActivityMemset4);
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		return sizeof(CUpti_ActivityOverhead3);
	default:
		return 0;
	}
}

static void count_record(CUpti_ActivityKind kind)
{
	atomic_fetch_add(&stats.records_written, 1);
	switch (kind) {
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
		atomic_fetch_add(&stats.records_api, 1);
		break;
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		atomic_fetch_add(&stats.records_kernel, 1);
		break;
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		atomic_fetch_add(&stats.records_memcpy, 1);
		break;
	case CUPTI_ACTIVITY_KIND_MEMSET:
		atomic_fetch_add(&stats.records_memset, 1);
		break;
	default:
		atomic_fetch_add(&stats.records_overhead, 1);
		break;
	}
}

/* ---- buffers ------------------------------------------------------------ */

static void reverse_records(struct sim_buf *b)
{
	uint8_t *tmp = malloc(b->used);
	size_t off = 0, end = b->used;

	if (!tmp)
		return;
	while (off < b->used) {
		size_t n = record_size(((CUpti_Activity *)(b->base + off))->kind);

		end -= n;
		memcpy(tmp + end, b->base + off, n);
		off += n;
	}
	memcpy(b->base, tmp, b->used);
	free(tmp);
}

static void *deliver_main(void *arg);

/* The current buffer is done: to the delivery thread, or held. Lock held. */
static void complete_cur(void)
{
	struct sim_buf *b = sim.cur;
	pthread_t t;

	sim.cur = NULL;
	if (sim_cfg.reorder)
		reverse_records(b);
	if (sim_cfg.hold) {
		list_push(&sim.held, b);
		return;
	}
	list_push(&sim.ready, b);
	if (!sim.deliverer && pthread_create(&t, NULL, deliver_main, NULL) == 0) {
		pthread_detach(t);
		sim.deliverer = true;
	}
	pthread_cond_broadcast(&sim.cond);
}

/* A buffer from the client for at least size bytes. Lock held. */
static bool request_buffer(size_t size)
{
	uint8_t *base = NULL;
	size_t n = 0, max = 0;
	struct sim_buf *b;

	if (!sim.request)
		return false;
	atomic_fetch_add(&stats.buffers_requested, 1);
	sim.request(&base, &n, &max);
	if (!base || n < size) {
		atomic_fetch_add(&stats.buffers_refused, 1);
		return false;
	}
	if ((uintptr_t)base % 8)
		atomic_fetch_add(&stats.buffers_misaligned, 1);
	b = calloc(1, sizeof(*b));
	if (!b)
		return false;
	b->base = base;
	b->size = n;
	b->limit = sim_cfg.buffer_bytes && sim_cfg.buffer_bytes < n ? sim_cfg.buffer_bytes : n;
	if (b->limit < size)
		b->limit = size;
	sim.cur = b;
	return true;
}

/* Lock held. */
static void write_record(const void *rec, size_t size)
{
	if (sim.cur && sim.cur->used + size > sim.cur->limit)
		complete_cur();
	if (!sim.cur && !request_buffer(size)) {
		sim.dropped++;
		atomic_fetch_add(&stats.dropped_no_buffer, 1);
		return;
	}
	memcpy(sim.cur->base + sim.cur->used, rec, size);
	sim.cur->used += size;
	count_record(((const CUpti_Activity *)rec)->kind);
}

static void keep_late(const void *rec, size_t size)
{
	if (sim.late_len + size > sim.late_cap) {
		size_t cap = sim.late_cap ? sim.late_cap * 2 : 65536;
		uint8_t *p;

		while (cap < sim.late_len + size)
			cap *= 2;
		p = realloc(sim.late, cap);
		if (!p) {
			sim.dropped++;
			return;
		}
		sim.late = p;
		sim.late_cap = cap;
	}
	memcpy(sim.late + sim.late_len, rec, size);
	sim.late_len += size;
}

void sim_emit(const void *rec, size_t size, bool gpu)
{
	pthread_mutex_lock(&sim.lock);
	if (gpu && sim.drop_left) {
		sim.drop_left--;
		sim.dropped++;
		atomic_fetch_add(&stats.dropped_fault, 1);
	} else if (gpu && sim_cfg.late) {
		keep_late(rec, size);
	} else {
		write_record(rec, size);
	}
	pthread_mutex_unlock(&sim.lock);
}

static void deliver(struct sim_buf *b)
{
	sim.complete(NULL, 0, b->base, b->size, b->used);
	atomic_fetch_add(&stats.buffers_completed, 1);
	free(b);
}

/* Hands complete buffers to the client from a thread of its own, as CUPTI does. */
static void *deliver_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&sim.lock);
	for (;;) {
		struct sim_buf *b;

		while (!sim.ready.head)
			pthread_cond_wait(&sim.cond, &sim.lock);
		b = sim.ready.head;
		sim.ready.head = b->next;
		if (!sim.ready.head)
			sim.ready.tail = NULL;
		sim.in_flight++;
		pthread_mutex_unlock(&sim.lock);
		deliver(b);
		pthread_mutex_lock(&sim.lock);
		sim.in_flight--;
		pthread_cond_broadcast(&sim.cond);
	}
	return NULL;
}

/* ---- the CUPTI API ------------------------------------------------------ */

#define CALLED(fn) atomic_fetch_add(&fn_calls[F_##fn], 1)

SIM_EXPORT CUptiResult cuptiGetVersion(uint32_t *version)
{
	CALLED(GetVersion);
	if (!version)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*version = sim_cfg.version;
	return injected("cuptiGetVersion", -1);
}

SIM_EXPORT CUptiResult cuptiGetResultString(CUptiResult result, const char **str)
{
	static const struct {
		CUptiResult code;
		const char *name;
	} names[] = {
		{ CUPTI_SUCCESS, "CUPTI_SUCCESS" },
		{ CUPTI_ERROR_INVALID_PARAMETER, "CUPTI_ERROR_INVALID_PARAMETER" },
		{ CUPTI_ERROR_INVALID_DEVICE, "CUPTI_ERROR_INVALID_DEVICE" },
		{ CUPTI_ERROR_INVALID_OPERATION, "CUPTI_ERROR_INVALID_OPERATION" },
		{ CUPTI_ERROR_MAX_LIMIT_REACHED, "CUPTI_ERROR_MAX_LIMIT_REACHED" },
		{ CUPTI_ERROR_NOT_COMPATIBLE, "CUPTI_ERROR_NOT_COMPATIBLE" },
		{ CUPTI_ERROR_NOT_INITIALIZED, "CUPTI_ERROR_NOT_INITIALIZED" },
		{ CUPTI_ERROR_INVALID_KIND, "CUPTI_ERROR_INVALID_KIND" },
		{ CUPTI_ERROR_NOT_SUPPORTED, "CUPTI_ERROR_NOT_SUPPORTED" },
		{ CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES" },
		{ CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
		  "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED" },
		{ CUPTI_ERROR_UNKNOWN, "CUPTI_ERROR_UNKNOWN" },
	};
	size_t i;

	CALLED(GetResultString);
	if (!str)
		return CUPTI_ERROR_INVALID_PARAMETER;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (names[i].code == result) {
			*str = names[i].name;
			return CUPTI_SUCCESS;
		}
	}
	*str = "CUPTI_ERROR_UNKNOWN";
	return CUPTI_SUCCESS;
}

SIM_EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
						      CUpti_BuffersCallbackCompleteFunc complete)
{
	CUptiResult r;

	CALLED(RegisterCallbacks);
	if (!request || !complete)
		return CUPTI_ERROR_INVALID_PARAMETER;
	r = injected("cuptiActivityRegisterCallbacks", -1);
	if (r != CUPTI_SUCCESS)
		return r;
	pthread_mutex_lock(&sim.lock);
	sim.request = request;
	sim.complete = complete;
	pthread_mutex_unlock(&sim.lock);
	return CUPTI_SUCCESS;
}

SIM_EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc cb)
{
	CUptiResult r;

	CALLED(RegisterTimestampCallback);
	if (!cb)
		return CUPTI_ERROR_INVALID_PARAMETER;
	r = injected("cuptiActivityRegisterTimestampCallback", -1);
	if (r != CUPTI_SUCCESS)
		return r;
	atomic_fetch_add(&clock_registrations, 1);
	atomic_store(&clock_cb, cb);
	return CUPTI_SUCCESS;
}

SIM_EXPORT CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType type)
{
	CUptiResult r;

	CALLED(SetThreadIdType);
	r = injected("cuptiSetThreadIdType", -1);
	if (r != CUPTI_SUCCESS)
		return r;
	atomic_store(&tid_type, type);
	return CUPTI_SUCCESS;
}

SIM_EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
	CUptiResult r;

	CALLED(Enable);
	if (!record_size(kind))
		return CUPTI_ERROR_NOT_SUPPORTED;
	r = injected("cuptiActivityEnable", kind);
	if (r != CUPTI_SUCCESS)
		return r;
	if (!atomic_load(&clock_cb))
		atomic_fetch_add(&stats.enable_before_clock, 1);
	if (!sim.complete)
		atomic_fetch_add(&stats.enable_before_callbacks, 1);
	atomic_fetch_or(&kinds_on, 1ull << kind);
	return CUPTI_SUCCESS;
}

SIM_EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
	CALLED(Disable);
	if (!record_size(kind))
		return CUPTI_ERROR_NOT_SUPPORTED;
	atomic_fetch_and(&kinds_on, ~(1ull << kind));
	return CUPTI_SUCCESS;
}

/*
 * Detaches CUPTI as the real one does: the activity callbacks, the clock and
 * the thread id type are forgotten, a later call sets them up afresh. Kinds
 * still on at the call are counted (finalize_with_kinds_on): a client must
 * turn them off and flush first.
 */
SIM_EXPORT CUptiResult cuptiFinalize(void)
{
	CUptiResult r;

	CALLED(Finalize);
	r = injected("cuptiFinalize", -1);
	if (r != CUPTI_SUCCESS)
		return r;
	if (atomic_load(&kinds_on))
		atomic_fetch_add(&finalize_with_kinds_on, 1);
	atomic_store(&kinds_on, 0);
	pthread_mutex_lock(&sim.lock);
	sim.request = NULL;
	sim.complete = NULL;
	pthread_mutex_unlock(&sim.lock);
	atomic_store(&clock_cb, NULL);
	atomic_store(&tid_type, CUPTI_ACTIVITY_THREAD_ID_TYPE_DEFAULT);
	return CUPTI_SUCCESS;
}

static void flush_overhead(uint64_t start)
{
	CUpti_ActivityOverhead3 o = {
		.kind = CUPTI_ACTIVITY_KIND_OVERHEAD,
		.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH,
		.objectKind = CUPTI_ACTIVITY_OBJECT_THREAD,
		.objectId.pt = { (uint32_t)getpid(), sim_thread_id() },
		.start = start,
		.end = sim_now(),
	};

	write_record(&o, sizeof(o));
}

SIM_EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	bool forced = flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED;
	uint64_t start = sim_now();
	struct sim_buf *list, *b;
	CUptiResult r;

	CALLED(FlushAll);
	atomic_fetch_add(forced ? &stats.flush_forced : &stats.flush_default, 1);
	r = injected("cuptiActivityFlushAll", -1);
	if (r != CUPTI_SUCCESS)
		return r;
	pthread_mutex_lock(&sim.lock);
	if (!sim.complete) {
		pthread_mutex_unlock(&sim.lock);
		return CUPTI_ERROR_INVALID_OPERATION;
	}
	if (forced) {
		size_t off = 0;

		while (off < sim.late_len) {
			size_t n = record_size(((CUpti_Activity *)(sim.late + off))->kind);

			write_record(sim.late + off, n);
			off += n;
		}
		sim.late_len = 0;
		if (sim_kind_on(CUPTI_ACTIVITY_KIND_OVERHEAD))
			flush_overhead(start);
	}
	if (sim.cur && sim.cur->used)
		complete_cur();
	if (forced && sim.held.head) {
		b = list_take(&sim.held);
		/* Held buffers go first: they are the older ones. */
		while (b) {
			struct sim_buf *next = b->next;

			list_push(&sim.ready, b);
			b = next;
		}
	}
	list = list_take(&sim.ready);
	sim.in_flight++;
	pthread_mutex_unlock(&sim.lock);

	for (b = list; b;) {
		struct sim_buf *next = b->next;

		deliver(b);
		b = next;
	}

	pthread_mutex_lock(&sim.lock);
	sim.in_flight--;
	/* Blocking, as CUPTI: buffers the delivery thread holds are handed over too. */
	while (sim.in_flight || sim.ready.head)
		pthread_cond_wait(&sim.cond, &sim.lock);
	pthread_cond_broadcast(&sim.cond);
	pthread_mutex_unlock(&sim.lock);
	return CUPTI_SUCCESS;
}

SIM_EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid,
						  CUpti_Activity **record)
{
	size_t off, n;

	CALLED(GetNextRecord);
	if (!buffer || !record)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (!*record) {
		off = 0;
	} else {
		off = (size_t)((uint8_t *)*record - buffer);
		off += record_size((*record)->kind);
	}
	if (off >= valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	if (off + sizeof(CUpti_Activity) > valid)
		return CUPTI_ERROR_INVALID_KIND;
	n = record_size(((CUpti_Activity *)(buffer + off))->kind);
	if (!n || off + n > valid)
		return CUPTI_ERROR_INVALID_KIND;
	*record = (CUpti_Activity *)(buffer + off);
	return CUPTI_SUCCESS;
}

SIM_EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream,
							 size_t *dropped)
{
	(void)ctx;
	(void)stream;
	CALLED(GetNumDroppedRecords);
	if (!dropped)
		return CUPTI_ERROR_INVALID_PARAMETER;
	pthread_mutex_lock(&sim.lock);
	*dropped = sim.dropped;
	sim.dropped = 0;
	pthread_mutex_unlock(&sim.lock);
	return CUPTI_SUCCESS;
}

/* ---- configuration and exit --------------------------------------------- */

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *s = getenv(name);

	return s && *s ? strtoull(s, NULL, 0) : def;
}

static void parse_fails(const char *spec)
{
	char buf[512], *save = NULL, *tok;

	snprintf(buf, sizeof(buf), "%s", spec);
	for (tok = strtok_r(buf, ",", &save); tok && n_fails < MAX_FAILS;
	     tok = strtok_r(NULL, ",", &save)) {
		char *eq = strrchr(tok, '='), *at = strchr(tok, '@');

		if (!eq)
			continue;
		*eq = '\0';
		fails[n_fails].kind = -1;
		if (at) {
			*at = '\0';
			fails[n_fails].kind = atoi(at + 1);
		}
		snprintf(fails[n_fails].name, sizeof(fails[n_fails].name), "%s", tok);
		fails[n_fails].code = atoi(eq + 1);
		n_fails++;
	}
}

__attribute__((constructor)) static void sim_init(void)
{
	const char *s;

	sim_cfg.gpu_delay_ns = env_u64("CUPTI_SIM_GPU_DELAY_NS", sim_cfg.gpu_delay_ns);
	sim_cfg.gpu_dur_ns = env_u64("CUPTI_SIM_GPU_DUR_NS", sim_cfg.gpu_dur_ns);
	sim_cfg.skew_ns = env_u64("CUPTI_SIM_SKEW_NS", 0);
	sim_cfg.late = env_u64("CUPTI_SIM_LATE", 0);
	sim_cfg.reorder = env_u64("CUPTI_SIM_REORDER", 0);
	sim_cfg.hold = env_u64("CUPTI_SIM_HOLD", 0);
	sim_cfg.buffer_bytes = env_u64("CUPTI_SIM_BUFFER_BYTES", 0);
	sim_cfg.drop = env_u64("CUPTI_SIM_DROP", 0);
	sim_cfg.graph_nodes = env_u64("CUPTI_SIM_GRAPH_NODES", sim_cfg.graph_nodes);
	if (sim_cfg.graph_nodes > 8)
		sim_cfg.graph_nodes = 8;
	sim_cfg.version = env_u64("CUPTI_SIM_VERSION", sim_cfg.version);
	sim.drop_left = sim_cfg.drop;
	if (env_u64("CUPTI_SIM_OTHER_SUBSCRIBER", 0))
		parse_fails("cuptiActivityRegisterCallbacks=39");
	s = getenv("CUPTI_SIM_FAIL");
	if (s)
		parse_fails(s);
}

static void write_stats(const char *path)
{
	unsigned long long total = 0;
	char tmp[4096];
	FILE *f;
	int i;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	for (i = 0; i < F__COUNT; i++) {
		fprintf(f, "%s\t%llu\n", fn_names[i], atomic_load(&fn_calls[i]));
		total += atomic_load(&fn_calls[i]);
	}
	fprintf(f, "cupti_calls\t%llu\n", total);
#define X(name) fprintf(f, #name "\t%llu\n", atomic_load(&stats.name));
	SIM_STATS(X)
#undef X
	fprintf(f, "clock_registrations\t%u\n", atomic_load(&clock_registrations));
	fprintf(f, "thread_id_type\t%u\n", atomic_load(&tid_type));
	fprintf(f, "kinds_on_at_exit\t%llu\n", atomic_load(&kinds_on));
	fprintf(f, "finalize_with_kinds_on\t%llu\n", atomic_load(&finalize_with_kinds_on));
	fprintf(f, "set_up_at_exit\t%d\n", sim.complete != NULL || atomic_load(&clock_cb) != NULL);
	fprintf(f, "correlations\t%u\n", atomic_load(&correlation));
	if (fclose(f) == 0)
		rename(tmp, path);
}

__attribute__((destructor)) static void sim_fini(void)
{
	const char *path = getenv("CUPTI_SIM_STATS");

	if (path && *path)
		write_stats(path);
}
