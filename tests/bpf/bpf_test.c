// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <bpf/libbpf.h>
#include "bpf_test.h"
#include "core/probes/uprobe_link.h"
#include "core/proc/symbols.h"

#define APPEND(arr, n, data, size)                                                                 \
	do {                                                                                       \
		if ((n) < BT_MAX_RECS && (size) == sizeof((arr)[0]))                               \
			memcpy(&(arr)[(n)++], (data), sizeof((arr)[0]));                           \
		else                                                                               \
			t->n_other++;                                                              \
	} while (0)

static void on_launch(void *ctx, const struct launch_event *e)
{
	struct bt *t = ctx;

	APPEND(t->launches, t->n_launches, e, sizeof(*e));
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct bt *t = ctx;
	__u32 type;

	if (size < sizeof(type)) {
		t->n_other++;
		return 0;
	}
	memcpy(&type, data, sizeof(type));
	switch (type) {
	case REC_LAUNCH:
		APPEND(t->launches, t->n_launches, data, size);
		break;
	case REC_LAUNCH_BATCH:
		t->n_batches++;
		if (bpfobj__each_launch(data, size, on_launch, t) < 0)
			t->n_other++;
		break;
	case REC_STEP:
		APPEND(t->steps, t->n_steps, data, size);
		break;
	case REC_THREAD:
		APPEND(t->threads, t->n_threads, data, size);
		break;
	case REC_LIBMAP:
	case REC_EXEC:
		APPEND(t->libmaps, t->n_libmaps, data, size);
		break;
	case REC_FORK:
		APPEND(t->forks, t->n_forks, data, size);
		break;
	case REC_NAME:
		APPEND(t->names, t->n_names, data, size);
		break;
	default:
		t->n_other++;
	}
	return 0;
}

static struct bt *new_with(const struct bpfobj_opts *o)
{
	struct bt *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->obj = bpfobj__load(o);
	if (t->obj)
		t->events = ring_buffer__new(bpfobj__events_fd(t->obj), on_record, t, NULL);
	if (t->events)
		t->ctrl = ring_buffer__new(bpfobj__ctrl_fd(t->obj), on_record, t, NULL);
	if (!t->ctrl) {
		bt__free(t);
		return NULL;
	}
	return t;
}

struct bt *bt__new(uint64_t ring_bytes)
{
	struct bpfobj_opts o = { .ringbuf_bytes = ring_bytes, .latency = true, .steps = true };

	return new_with(&o);
}

void bt__free(struct bt *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n_links; i++)
		uprobe_link__destroy(t->links[i]);
	ring_buffer__free(t->ctrl);
	ring_buffer__free(t->events);
	bpfobj__free(t->obj);
	free(t);
}

int bt__attach(struct bt *t, enum bpfobj_prog prog, pid_t pid, const char *const *names,
	       const uint64_t *cookies, size_t n)
{
	uint64_t offsets[32], with_slot[32];
	char exe[PATH_MAX];
	struct uprobe_spec s = {
		.path = exe, .pid = pid, .offsets = offsets, .cookies = with_slot, .n = n,
		.retprobe = prog == PROG_LAUNCH_RETURN || prog == PROG_NAME_RETURN,
	};
	int found;

	if (n > 32 || t->n_links == BT_MAX_LINKS)
		return -E2BIG;
	/* Launch probes come with the process's slot, as the loader attaches them. */
	for (size_t i = 0; i < n; i++)
		with_slot[i] = cookies[i] | (prog == PROG_LAUNCH && !t->no_slots
						 ? bpfobj__reserve_slot(t->obj, pid) : 0);
	if (!realpath("/proc/self/exe", exe))
		return -errno;
	found = elf_func_offsets(exe, names, n, offsets);
	if (found < 0)
		return found;
	if ((size_t)found != n)
		return -ENOENT;
	return bpfobj__attach(t->obj, prog, &s, &t->links[t->n_links++]);
}

void bt__drain(struct bt *t)
{
	ring_buffer__consume(t->events);
	bpfobj__drain_stages(t->obj, on_launch, t);
	ring_buffer__consume(t->ctrl);
}

int bt__add_self(struct bt *t, const struct proc_conf *conf, uint64_t state)
{
	static const struct proc_conf none;

	return bpfobj__add_proc(t->obj, getpid(), conf ? conf : &none, state);
}

struct proc_state bt__state(struct bt *t, pid_t pid)
{
	struct proc_state ps = {};

	bpfobj__proc_state(t->obj, pid, &ps);
	return ps;
}

pid_t bt__gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

size_t bt__hold_stages(struct bt *t, __u32 busy)
{
	size_t i;

	for (i = 0; i < bpfobj__nstages(t->obj); i++)
		__atomic_store_n(&bpfobj__stage(t->obj, i)->busy, busy, __ATOMIC_SEQ_CST);
	return i;
}

struct bt *bt__new_stack(uint64_t ring_bytes)
{
	struct bpfobj_opts o = { .ringbuf_bytes = ring_bytes, .stack = true };

	return new_with(&o);
}
