// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "core/probes/uprobe_link.h"
#include "util/log.h"

struct uprobe_link {
	int fd;			/* the uprobe_multi link, or -1 */
	struct bpf_link **links; /* perf-event links otherwise */
	size_t n;
};

/* The link_create part of union bpf_attr for uprobe_multi (include/uapi/linux/bpf.h, 6.6). */
struct link_create_uprobe_multi {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	__u64 path;
	__u64 offsets;
	__u64 ref_ctr_offsets;
	__u64 cookies;
	__u32 cnt;
	__u32 multi_flags;
	__u32 pid;
};

static int link_create_uprobe_multi(int prog_fd, const struct uprobe_spec *s)
{
	struct link_create_uprobe_multi attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_fd = prog_fd;
	attr.attach_type = CUPROBE_TRACE_UPROBE_MULTI;
	attr.path = (uintptr_t)s->path;
	attr.offsets = (uintptr_t)s->offsets;
	attr.cookies = (uintptr_t)s->cookies;
	attr.ref_ctr_offsets = (uintptr_t)s->ref_ctr_offsets;
	attr.cnt = s->n;
	attr.multi_flags = s->retprobe ? CUPROBE_F_UPROBE_MULTI_RETURN : 0;
	attr.pid = s->pid;
	fd = syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}

bool attach_has_uprobe_multi(void)
{
	static int cached = -1;
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	LIBBPF_OPTS(bpf_prog_load_opts, opts,
		.expected_attach_type = (enum bpf_attach_type)CUPROBE_TRACE_UPROBE_MULTI);
	uint64_t off = 0;
	struct uprobe_spec s = { .path = "/", .pid = getpid(), .offsets = &off, .n = 1 };
	int prog, fd;

	if (cached >= 0)
		return cached;
	prog = bpf_prog_load(BPF_PROG_TYPE_KPROBE, NULL, "GPL", insns, 2, &opts);
	if (prog < 0) {
		cached = 0;
		return false;
	}
	/* A kernel that knows the link rejects "/" as a file (-EBADF); others say -EINVAL. */
	fd = link_create_uprobe_multi(prog, &s);
	cached = fd == -EBADF;
	if (fd >= 0)
		close(fd);
	close(prog);
	p_dbg("uprobe_multi links %s", cached ? "available" : "unavailable: one link per function");
	return cached;
}

static int attach_perf(struct bpf_program *prog, const struct uprobe_spec *s, struct uprobe_link *l)
{
	l->links = calloc(s->n, sizeof(*l->links));
	if (!l->links)
		return -ENOMEM;
	for (size_t i = 0; i < s->n; i++) {
		LIBBPF_OPTS(bpf_uprobe_opts, o, .retprobe = s->retprobe,
			    .bpf_cookie = s->cookies ? s->cookies[i] : 0,
			    .ref_ctr_offset = s->ref_ctr_offsets ? s->ref_ctr_offsets[i] : 0);

		l->links[i] = bpf_program__attach_uprobe_opts(prog, s->pid, s->path, s->offsets[i], &o);
		if (!l->links[i])
			return -errno;
		l->n++;
	}
	return 0;
}

int attach_uprobes(struct bpf_program *prog, bool multi, const struct uprobe_spec *s,
		   struct uprobe_link **out)
{
	struct uprobe_link *l = calloc(1, sizeof(*l));
	int err;

	if (!l)
		return -ENOMEM;
	l->fd = -1;
	if (multi) {
		err = link_create_uprobe_multi(bpf_program__fd(prog), s);
		if (err >= 0) {
			l->fd = err;
			err = 0;
		}
	} else {
		err = attach_perf(prog, s, l);
	}
	if (err) {
		uprobe_link__destroy(l);
		return err;
	}
	*out = l;
	return 0;
}

void uprobe_link__destroy(struct uprobe_link *l)
{
	if (!l)
		return;
	if (l->fd >= 0)
		close(l->fd);
	for (size_t i = 0; i < l->n; i++)
		bpf_link__destroy(l->links[i]);
	free(l->links);
	free(l);
}
