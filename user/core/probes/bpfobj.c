// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "core/probes/uprobe_link.h"
#include "core/probes/bpfobj.h"
#include "core/probes/calibrate.h"
#include "cuprobe.skel.h"
#include "util/log.h"
#include "schedule.h"
#include "step.h"

struct bpfobj {
	struct cuprobe_bpf *skel;
	bool multi;
	struct launch_stage *stages; /* the stages map, mmap'ed: one per possible CPU */
	size_t nstages, stage_size, stages_len;
	/* Which process has each launch slot (0: free); the prober reads it too. */
	pthread_mutex_t slot_lock;
	pid_t slot_pid[CUPROBE_MAX_PROCS];
	size_t slot_next;	/* where the search for a free slot starts: slots are reused late */
	bool stack;
	/* The events ring now in events_rings, and one swapped out, still read (-1: none). */
	int events_fd, retiring_fd;
	uint64_t events_bytes;
	int next_fd;		/* made, not yet in the slot (-1: none) */
	uint64_t next_bytes;
};

static struct bpf_program *prog_of(const struct bpfobj *b, enum bpfobj_prog p)
{
	switch (p) {
	case PROG_LAUNCH:
		return b->skel->progs.launch_entry;
	case PROG_LAUNCH_RETURN:
		return b->skel->progs.launch_return;
	case PROG_STEP:
		return b->skel->progs.step_hit;
	case PROG_TORCH_ENTER:
		return b->skel->progs.torch_enter;
	case PROG_TORCH_EXIT:
		return b->skel->progs.torch_exit;
	case PROG_LIBMAP:
		return b->skel->progs.libmap;
	case PROG_AGENT_ENABLE:
		return b->skel->progs.agent_enable;
	case PROG_NAME_ENTRY:
		return b->skel->progs.name_entry;
	case PROG_NAME_RETURN:
		return b->skel->progs.name_return;
	case PROG_CAPTURE_ENTRY:
		return b->skel->progs.capture_entry;
	case PROG_CAPTURE_RETURN:
		return b->skel->progs.capture_return;
	}
	return NULL;
}

/* Programs attached with uprobe_multi links are loaded for that attach type. */
static void set_multi(struct cuprobe_bpf *skel)
{
	struct bpf_program *progs[] = { skel->progs.launch_entry, skel->progs.launch_return,
					skel->progs.libmap, skel->progs.agent_enable,
					skel->progs.name_entry,
					skel->progs.name_return, skel->progs.capture_entry,
					skel->progs.capture_return };

	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++)
		bpf_program__set_expected_attach_type(
			progs[i], (enum bpf_attach_type)CUPROBE_TRACE_UPROBE_MULTI);
}

struct bpfobj *bpfobj__load(const struct bpfobj_opts *o)
{
	struct bpfobj *b = calloc(1, sizeof(*b));
	struct cuprobe_bpf *skel;
	int err;

	if (!b)
		return NULL;
	b->events_fd = b->retiring_fd = b->next_fd = -1;
	pthread_mutex_init(&b->slot_lock, NULL);
	skel = b->skel = cuprobe_bpf__open();
	if (!skel) {
		err = -errno;
		p_err("cannot open the BPF programs: %s", strerror(-err));
		goto fail;
	}
	bpf_map__set_max_entries(skel->maps.events, o->ringbuf_bytes);
	err = libbpf_num_possible_cpus();
	if (err <= 0) {
		p_err("cannot count the possible CPUs: %s", strerror(err ? -err : EINVAL));
		goto fail;
	}
	b->nstages = (size_t)err;
	bpf_map__set_max_entries(skel->maps.stages, (__u32)b->nstages);
	/* A wakeup when a quarter of a small ring waits: it must come before the ring is full. */
	if (skel->rodata->wakeup_bytes > o->ringbuf_bytes / 4)
		skel->rodata->wakeup_bytes = o->ringbuf_bytes / 4;
	/* Without --stack its maps cost one entry each, and the verifier prunes the code. */
	b->stack = o->stack;
	skel->rodata->stack_on = o->stack;
	if (!o->stack) {
		bpf_map__set_max_entries(skel->maps.ustacks, 1);
		bpf_map__set_max_entries(skel->maps.py_stacks, 1);
		bpf_map__set_max_entries(skel->maps.py_procs, 1);
		bpf_map__set_max_entries(skel->maps.py_codes, 1);
	}
	skel->rodata->watch_exec = o->watch_exec;
	b->multi = attach_has_uprobe_multi();
	if (b->multi)
		set_multi(skel);
	bpf_program__set_autoload(skel->progs.launch_return, o->latency);
	bpf_program__set_autoload(skel->progs.step_hit, o->steps);
	bpf_program__set_autoload(skel->progs.torch_enter, o->steps);
	bpf_program__set_autoload(skel->progs.torch_exit, o->steps);
	bpf_program__set_autoload(skel->progs.agent_records, o->cupti);
	bpf_program__set_autoload(skel->progs.agent_enable, o->cupti);
	err = cuprobe_bpf__load(skel);
	if (err) {
		p_err("cannot load the BPF programs: %s; run with -v for the verifier's log%s",
		      strerror(-err),
		      o->stack ? " (--stack needs bpf_loop and task storage: Linux 5.17 or later; "
				 "record without --stack on older kernels)" : "");
		goto fail;
	}
	/* The first events ring into the slot BPF writes through. */
	b->events_fd = bpf_map__fd(skel->maps.events);
	b->events_bytes = bpf_map__max_entries(skel->maps.events);
	err = bpf_map__update_elem(skel->maps.events_rings, &(__u32){ 0 }, sizeof(__u32),
				   &b->events_fd, sizeof(int), BPF_ANY);
	if (err) {
		p_err("cannot put the events ring in its slot: %s", strerror(-err));
		goto fail;
	}
	/* Array elements are 8-byte aligned, back to back. */
	b->stage_size = (sizeof(struct launch_stage) + 7) & ~(size_t)7;
	b->stages_len = b->stage_size * b->nstages;
	b->stages = mmap(NULL, b->stages_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			 bpf_map__fd(skel->maps.stages), 0);
	if (b->stages == MAP_FAILED) {
		err = -errno;
		b->stages = NULL;
		p_err("cannot map the launch stages: %s", strerror(-err));
		goto fail;
	}
	return b;
fail:
	bpfobj__free(b);
	errno = -err;
	return NULL;
}

void bpfobj__free(struct bpfobj *b)
{
	if (!b)
		return;
	if (b->stages)
		munmap(b->stages, b->stages_len);
	bpfobj__events_retire(b);
	if (b->next_fd >= 0)
		close(b->next_fd);
	if (b->skel && b->events_fd >= 0 && b->events_fd != bpf_map__fd(b->skel->maps.events))
		close(b->events_fd);
	cuprobe_bpf__destroy(b->skel);
	pthread_mutex_destroy(&b->slot_lock);
	free(b);
}

uint64_t bpfobj__lost_exec(const struct bpfobj *b)
{
	return b->skel->bss->lost_exec;
}

int bpfobj__attach_proc(struct bpfobj *b)
{
	b->skel->links.proc_fork = bpf_program__attach(b->skel->progs.proc_fork);
	if (!b->skel->links.proc_fork)
		return -errno;
	b->skel->links.proc_exec = bpf_program__attach(b->skel->progs.proc_exec);
	if (!b->skel->links.proc_exec)
		return -errno;
	b->skel->links.proc_exit = bpf_program__attach(b->skel->progs.proc_exit);
	return b->skel->links.proc_exit ? 0 : -errno;
}

bool bpfobj__multi(const struct bpfobj *b)
{
	return b->multi;
}

int bpfobj__attach(struct bpfobj *b, enum bpfobj_prog prog, const struct uprobe_spec *s,
		   struct uprobe_link **out)
{
	/*
	 * The step probe is rare and holds semaphores: one perf-event link per site
	 * is fine. The linker's hook is in every process, on every hold's path: a
	 * perf-event uprobe there took 20-360 ms to make here, a uprobe_multi link
	 * a few.
	 */
	bool multi = b->multi && prog != PROG_STEP && prog != PROG_TORCH_ENTER &&
		     prog != PROG_TORCH_EXIT;

	return attach_uprobes(prog_of(b, prog), multi, s, out);
}

int bpfobj__attach_agent_records(struct bpfobj *b, pid_t pid, const char *path,
				 struct bpf_link **out)
{
	*out = bpf_program__attach_usdt(b->skel->progs.agent_records, pid, path, "cuprobe",
					"records", NULL);
	return *out ? 0 : -errno;
}

/* pid's slot index + 1, made when create and there is a free one; 0 for none. */
static __u32 slot_of(struct bpfobj *b, pid_t pid, bool create)
{
	__u32 slot = 0;

	pthread_mutex_lock(&b->slot_lock);
	for (size_t i = 0; i < CUPROBE_MAX_PROCS && !slot; i++)
		if (b->slot_pid[i] == pid)
			slot = (__u32)i + 1;
	for (size_t k = 0; k < CUPROBE_MAX_PROCS && !slot && create; k++) {
		size_t i = (b->slot_next + k) % CUPROBE_MAX_PROCS;

		if (!b->slot_pid[i]) {
			b->slot_pid[i] = pid;
			b->slot_next = i + 1;
			slot = (__u32)i + 1;
		}
	}
	pthread_mutex_unlock(&b->slot_lock);
	return slot;
}

static struct launch_slot *slot_at(struct bpfobj *b, __u32 slot)
{
	return slot ? &b->skel->bss->launch_slots[slot - 1] : NULL;
}

uint64_t bpfobj__reserve_slot(struct bpfobj *b, pid_t pid)
{
	return (uint64_t)slot_of(b, pid, true) << COOKIE_SLOT_SHIFT;
}

uint64_t bpfobj__slot_cookie(struct bpfobj *b, pid_t pid)
{
	return (uint64_t)slot_of(b, pid, false) << COOKIE_SLOT_SHIFT;
}

int bpfobj__add_proc(struct bpfobj *b, pid_t pid, const struct proc_conf *conf, uint64_t state)
{
	struct proc_state ps = { .state = state, .slot = slot_of(b, pid, true) };
	struct launch_slot *sl = slot_at(b, ps.slot);
	__u32 key = pid;
	int err;

	/* The slot's state before its owner: BPF trusts a slot only once tgid is pid. */
	if (sl) {
		__atomic_store_n(&sl->tgid, 0, __ATOMIC_SEQ_CST);
		sl->state = state;
		sl->launch_hits = 0;
		sl->captures_open = 0;
		__atomic_store_n(&sl->tgid, (__u32)pid, __ATOMIC_SEQ_CST);
	}

	err = bpf_map__update_elem(b->skel->maps.proc_conf, &key, sizeof(key), conf, sizeof(*conf),
				   BPF_ANY);
	if (!err)
		err = bpf_map__update_elem(b->skel->maps.proc_state, &key, sizeof(key), &ps,
					   sizeof(ps), BPF_ANY);
	return err;
}

int bpfobj__set_conf(struct bpfobj *b, pid_t pid, const struct proc_conf *conf)
{
	__u32 key = pid;

	return bpf_map__update_elem(b->skel->maps.proc_conf, &key, sizeof(key), conf,
				    sizeof(*conf), BPF_EXIST);
}

int bpfobj__proc_state(struct bpfobj *b, pid_t pid, struct proc_state *out)
{
	__u32 key = pid;
	struct launch_slot *sl;
	int err;

	err = bpf_map__lookup_elem(b->skel->maps.proc_state, &key, sizeof(key), out,
				   sizeof(*out), 0);
	if (err)
		return err;
	/* The hits that came by the slot are the process's too. */
	sl = out->slot <= CUPROBE_MAX_PROCS ? slot_at(b, out->slot) : NULL;
	if (sl && __atomic_load_n(&sl->tgid, __ATOMIC_ACQUIRE) == (__u32)pid)
		out->launch_hits += __atomic_load_n(&sl->launch_hits, __ATOMIC_RELAXED);
	return 0;
}

void bpfobj__remove_proc(struct bpfobj *b, pid_t pid)
{
	__u32 key = pid, slot = slot_of(b, pid, false);

	if (slot) {
		__atomic_store_n(&slot_at(b, slot)->tgid, 0, __ATOMIC_SEQ_CST);
		pthread_mutex_lock(&b->slot_lock);
		b->slot_pid[slot - 1] = 0;
		pthread_mutex_unlock(&b->slot_lock);
	}

	bpf_map__delete_elem(b->skel->maps.proc_state, &key, sizeof(key), 0);
	bpf_map__delete_elem(b->skel->maps.proc_conf, &key, sizeof(key), 0);
	bpf_map__delete_elem(b->skel->maps.runtime_ranges, &key, sizeof(key), 0);
	bpf_map__delete_elem(b->skel->maps.torch_prefixes, &key, sizeof(key), 0);
}

int bpfobj__set_torch_prefix(struct bpfobj *b, pid_t pid, const char *prefix,
			     unsigned int string_abi)
{
	struct torch_prefix p = { .string_abi = string_abi };
	__u32 key = pid;
	size_t n = strlen(prefix);

	p.len = (__u32)(n < sizeof(p.s) ? n : sizeof(p.s) - 1);
	memcpy(p.s, prefix, p.len);
	return bpf_map__update_elem(b->skel->maps.torch_prefixes, &key, sizeof(key), &p, sizeof(p),
				    BPF_ANY);
}

int bpfobj__set_runtime_ranges(struct bpfobj *b, pid_t pid, const struct runtime_ranges *rr)
{
	__u32 key = pid;

	return bpf_map__update_elem(b->skel->maps.runtime_ranges, &key, sizeof(key), rr,
				    sizeof(*rr), BPF_ANY);
}

int bpfobj__events_fd(const struct bpfobj *b)
{
	return b->events_fd;
}

uint64_t bpfobj__events_bytes(const struct bpfobj *b)
{
	return b->events_bytes;
}

uint64_t bpfobj__events_high(struct bpfobj *b)
{
	return __atomic_exchange_n(&b->skel->bss->events_high, 0, __ATOMIC_RELAXED);
}

uint64_t bpfobj__events_lost(const struct bpfobj *b)
{
	return __atomic_load_n(&b->skel->bss->events_lost, __ATOMIC_RELAXED);
}

int bpfobj__events_new(struct bpfobj *b, uint64_t bytes)
{
	int fd;

	if (b->retiring_fd >= 0 || b->next_fd >= 0)
		return -EBUSY;
	fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "events", 0, 0, (__u32)bytes, NULL);
	if (fd < 0)
		return -errno;
	b->next_fd = fd;
	b->next_bytes = bytes;
	return fd;
}

int bpfobj__events_put(const struct bpfobj *b)
{
	/*
	 * A map-in-map update returns once every BPF program that may have
	 * looked up the old ring has finished (the kernel waits an RCU grace
	 * period): from then on, nothing more is written to it.
	 */
	return bpf_map_update_elem(bpf_map__fd(b->skel->maps.events_rings), &(__u32){ 0 },
				   &b->next_fd, BPF_ANY) ? -errno : 0;
}

void bpfobj__events_commit(struct bpfobj *b, int err)
{
	if (b->next_fd < 0)
		return;
	if (err) {
		/* Never written: it goes as a retiring ring does (the reader may hold it). */
		b->retiring_fd = b->next_fd;
	} else {
		/* The high mark was the old ring's. */
		__atomic_store_n(&b->skel->bss->events_high, 0, __ATOMIC_RELAXED);
		b->retiring_fd = b->events_fd;
		b->events_fd = b->next_fd;
		b->events_bytes = b->next_bytes;
	}
	b->next_fd = -1;
}

int bpfobj__events_swap(struct bpfobj *b, uint64_t bytes, int (*ready)(void *ctx, int fd),
			void *ctx)
{
	int fd = bpfobj__events_new(b, bytes), err;

	if (fd < 0)
		return fd;
	/* Read before written: the reader takes the ring first. */
	err = ready ? ready(ctx, fd) : 0;
	if (err) {
		close(fd);
		b->next_fd = -1;
		return err;
	}
	err = bpfobj__events_put(b);
	bpfobj__events_commit(b, err);
	return err ?: fd;
}

int bpfobj__events_retiring_fd(const struct bpfobj *b)
{
	return b->retiring_fd;
}

void bpfobj__events_retire(struct bpfobj *b)
{
	/* The first ring is the skeleton's: it closes it. */
	if (b->retiring_fd >= 0 && b->skel && b->retiring_fd != bpf_map__fd(b->skel->maps.events))
		close(b->retiring_fd);
	b->retiring_fd = -1;
}

int bpfobj__ring_unread(int fd, uint64_t *bytes)
{
	long page = sysconf(_SC_PAGESIZE);
	void *cons, *prod;
	int err = 0;

	/* A BPF ring's first page holds the consumer's position, the second the producer's. */
	cons = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, 0);
	if (cons == MAP_FAILED)
		return -errno;
	prod = mmap(NULL, page, PROT_READ, MAP_SHARED, fd, page);
	if (prod == MAP_FAILED) {
		err = -errno;
	} else {
		*bytes = __atomic_load_n((unsigned long *)prod, __ATOMIC_ACQUIRE) -
			 __atomic_load_n((unsigned long *)cons, __ATOMIC_ACQUIRE);
		munmap(prod, page);
	}
	munmap(cons, page);
	return err;
}

int bpfobj__ctrl_fd(const struct bpfobj *b)
{
	return bpf_map__fd(b->skel->maps.ctrl);
}

int bpfobj__state_fd(const struct bpfobj *b)
{
	return bpf_map__fd(b->skel->maps.proc_state);
}

int bpfobj__conf_fd(const struct bpfobj *b)
{
	return bpf_map__fd(b->skel->maps.proc_conf);
}

void bpfobj__counters(const struct bpfobj *b, struct cuprobe_counters *out)
{
	/* .bss is mmap'ed: a copy of counters BPF keeps adding to. */
	memcpy(out, &b->skel->bss->counters, sizeof(*out));
}

uint64_t bpfobj__capture_full(const struct bpfobj *b)
{
	return __atomic_load_n(&b->skel->bss->capture_full, __ATOMIC_RELAXED);
}

uint64_t bpfobj__graph_lost(const struct bpfobj *b)
{
	return __atomic_load_n(&b->skel->bss->graph_lost, __ATOMIC_RELAXED);
}

uint64_t bpfobj__torch_too_deep(const struct bpfobj *b)
{
	return __atomic_load_n(&b->skel->bss->torch_too_deep, __ATOMIC_RELAXED);
}

void bpfobj__step_wakeups(const struct bpfobj *b, uint64_t *told, uint64_t *woke)
{
	*told = __atomic_load_n(&b->skel->bss->steps_told, __ATOMIC_RELAXED);
	*woke = __atomic_load_n(&b->skel->bss->steps_woke, __ATOMIC_RELAXED);
}

void bpfobj__name_counters(const struct bpfobj *b, uint64_t *lost, uint64_t *truncated)
{
	*lost = b->skel->bss->names_lost;
	*truncated = b->skel->bss->names_truncated;
}

int bpfobj__calibrate(struct bpfobj *b, bool latency, struct ring_buffer *drain, double *ns)
{
	struct calibrate_env env = {
		.entry = b->skel->progs.launch_entry,
		.ret = latency ? b->skel->progs.launch_return : NULL,
		.multi = b->multi,
		.drain = drain,
		.ring_bytes = b->events_bytes,
	};
	static const struct proc_conf none;
	pid_t self = getpid();
	int err;

	/* Its own state for the while: the hits take the path of a target's, by its slot. */
	if (!bpfobj__add_proc(b, self, &none, pack_state(0, 0, PHASE_RECORD)))
		env.slot = bpfobj__slot_cookie(b, self);
	err = calibrate_probe(&env, ns);
	bpfobj__remove_proc(b, self);
	return err;
}

/*
 * Takes what each CPU's stage holds, stage by stage: the stage is held
 * (busy) only while its launches are copied, never while fn runs. A stage
 * the probe holds at that moment is left for the next call.
 */
size_t bpfobj__drain_stages(struct bpfobj *b, bpfobj_launch_fn fn, void *ctx)
{
	struct launch_event copy[LAUNCH_BATCH_N];
	size_t skipped = 0;

	for (size_t i = 0; b->stages && i < b->nstages; i++) {
		struct launch_stage *sg = (void *)((char *)b->stages + i * b->stage_size);
		__u32 free_ = STAGE_FREE, n;

		if (!__atomic_load_n(&sg->b.n, __ATOMIC_RELAXED))
			continue;
		if (!__atomic_compare_exchange_n(&sg->busy, &free_, STAGE_LOADER, false,
						 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
			skipped++;
			continue;
		}
		n = sg->b.n < LAUNCH_BATCH_N ? sg->b.n : LAUNCH_BATCH_N;
		memcpy(copy, sg->b.ev, n * sizeof(copy[0]));
		sg->b.n = 0;
		__atomic_store_n(&sg->busy, STAGE_FREE, __ATOMIC_RELEASE);
		for (__u32 k = 0; k < n; k++)
			fn(ctx, &copy[k]);
	}
	return skipped;
}

size_t bpfobj__nstages(const struct bpfobj *b)
{
	return b->nstages;
}

struct launch_stage *bpfobj__stage(struct bpfobj *b, size_t cpu)
{
	return (void *)((char *)b->stages + cpu * b->stage_size);
}

int bpfobj__each_launch(const void *data, size_t size, bpfobj_launch_fn fn, void *ctx)
{
	const struct launch_batch *lb = data;
	__u32 type;

	if (size < sizeof(type))
		return -EINVAL;
	memcpy(&type, data, sizeof(type));
	if (type == REC_LAUNCH && size >= sizeof(struct launch_event)) {
		fn(ctx, data);
		return 1;
	}
	if (type != REC_LAUNCH_BATCH || size < offsetof(struct launch_batch, ev) ||
	    lb->n > LAUNCH_BATCH_N || size < offsetof(struct launch_batch, ev[lb->n]))
		return -EINVAL;
	for (__u32 k = 0; k < lb->n; k++)
		fn(ctx, &lb->ev[k]);
	return (int)lb->n;
}

int bpfobj__stacks_fd(const struct bpfobj *b)
{
	return b->stack ? bpf_map__fd(b->skel->maps.ustacks) : -1;
}

int bpfobj__py_stacks_fd(const struct bpfobj *b)
{
	return b->stack ? bpf_map__fd(b->skel->maps.py_stacks) : -1;
}

int bpfobj__py_codes_fd(const struct bpfobj *b)
{
	return b->stack ? bpf_map__fd(b->skel->maps.py_codes) : -1;
}

int bpfobj__set_py_proc(struct bpfobj *b, pid_t pid, const struct py_offsets *o)
{
	__u32 key = pid;

	if (!b->stack)
		return -ENOTSUP;
	return bpf_map_update_elem(bpf_map__fd(b->skel->maps.py_procs), &key, o, BPF_ANY) ? -errno
											   : 0;
}

void bpfobj__remove_py_proc(struct bpfobj *b, pid_t pid)
{
	__u32 key = pid;

	if (b->stack)
		bpf_map_delete_elem(bpf_map__fd(b->skel->maps.py_procs), &key);
}
