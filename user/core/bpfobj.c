// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "attach.h"
#include "bpfobj.h"
#include "calibrate.h"
#include "cuprobe.skel.h"
#include "log.h"

struct bpfobj {
	struct cuprobe_bpf *skel;
	bool multi;
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
	case PROG_LIBMAP:
		return b->skel->progs.libmap;
	case PROG_AGENT_ENABLE:
		return b->skel->progs.agent_enable;
	}
	return NULL;
}

/* Programs attached with uprobe_multi links are loaded for that attach type. */
static void set_multi(struct cuprobe_bpf *skel)
{
	struct bpf_program *progs[] = { skel->progs.launch_entry, skel->progs.launch_return,
					skel->progs.agent_enable };

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
	skel = b->skel = cuprobe_bpf__open();
	if (!skel) {
		err = -errno;
		p_err("cannot open the BPF programs: %s", strerror(-err));
		goto fail;
	}
	bpf_map__set_max_entries(skel->maps.events, o->ringbuf_bytes);
	/* A wakeup when a quarter of a small ring waits: it must come before the ring is full. */
	if (skel->rodata->wakeup_bytes > o->ringbuf_bytes / 4)
		skel->rodata->wakeup_bytes = o->ringbuf_bytes / 4;
	skel->rodata->watch_exec = o->watch_exec;
	b->multi = attach_has_uprobe_multi();
	if (b->multi)
		set_multi(skel);
	bpf_program__set_autoload(skel->progs.launch_return, o->latency);
	bpf_program__set_autoload(skel->progs.step_hit, o->steps);
	bpf_program__set_autoload(skel->progs.agent_records, o->cupti);
	bpf_program__set_autoload(skel->progs.agent_enable, o->cupti);
	err = cuprobe_bpf__load(skel);
	if (err) {
		p_err("cannot load the BPF programs: %s; run with -v for the verifier's log",
		      strerror(-err));
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
	cuprobe_bpf__destroy(b->skel);
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
	/* The step probe is rare and holds semaphores: one perf-event link per site is fine. */
	bool multi = b->multi && prog != PROG_STEP && prog != PROG_LIBMAP;

	return attach_uprobes(prog_of(b, prog), multi, s, out);
}

int bpfobj__attach_agent_records(struct bpfobj *b, pid_t pid, const char *path,
				 struct bpf_link **out)
{
	*out = bpf_program__attach_usdt(b->skel->progs.agent_records, pid, path, "cuprobe",
					"records", NULL);
	return *out ? 0 : -errno;
}

int bpfobj__add_proc(struct bpfobj *b, pid_t pid, const struct proc_conf *conf, uint64_t state)
{
	struct proc_state ps = { .state = state };
	__u32 key = pid;
	int err;

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

int bpfobj__proc_state(const struct bpfobj *b, pid_t pid, struct proc_state *out)
{
	__u32 key = pid;

	return bpf_map__lookup_elem(b->skel->maps.proc_state, &key, sizeof(key), out,
				    sizeof(*out), 0);
}

void bpfobj__remove_proc(struct bpfobj *b, pid_t pid)
{
	__u32 key = pid;

	bpf_map__delete_elem(b->skel->maps.proc_state, &key, sizeof(key), 0);
	bpf_map__delete_elem(b->skel->maps.proc_conf, &key, sizeof(key), 0);
	bpf_map__delete_elem(b->skel->maps.runtime_ranges, &key, sizeof(key), 0);
}

int bpfobj__set_runtime_ranges(struct bpfobj *b, pid_t pid, const struct runtime_ranges *rr)
{
	__u32 key = pid;

	return bpf_map__update_elem(b->skel->maps.runtime_ranges, &key, sizeof(key), rr,
				    sizeof(*rr), BPF_ANY);
}

int bpfobj__events_fd(const struct bpfobj *b)
{
	return bpf_map__fd(b->skel->maps.events);
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

int bpfobj__calibrate(struct bpfobj *b, bool latency, struct ring_buffer *drain, double *ns)
{
	struct calibrate_env env = {
		.entry = b->skel->progs.launch_entry,
		.ret = latency ? b->skel->progs.launch_return : NULL,
		.multi = b->multi,
		.drain = drain,
		.ring_bytes = bpf_map__max_entries(b->skel->maps.events),
	};

	return calibrate_probe(&env, ns);
}
