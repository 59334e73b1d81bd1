// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "attach.h"
#include "clock.h"
#include "cuprobe.h"
#include "schedule.h"
#include "launch.skel.h"
#include "launch.h"
#include "log.h"
#include "procmaps.h"
#include "step.h"
#include "symbols.h"
#include "target.h"

/*
 * Names looked up in every object: the launch APIs, the linker's hook, and
 * what marks a real CUDA runtime (cudaMalloc) or driver (cuInit). A library
 * that only wraps launch functions (an interposer, forwarding to the real
 * ones) is not probed: the real entry it calls would count each launch twice.
 */
#define SYM_DL_DEBUG_STATE API__COUNT
#define SYM_RUNTIME_MARK (API__COUNT + 1)
#define SYM_DRIVER_MARK (API__COUNT + 2)
#define NSYMS (API__COUNT + 3)

struct examined {
	uint64_t dev, ino;
	char *path;		/* set when examined before exec, by path */
	char *open_path;	/* the path probes attach through */
	bool runtime;		/* holds runtime launch APIs: its code is a runtime range */
	uint64_t api_off[API__COUNT];	/* file offsets of launch APIs, 0 when absent */
	struct uprobe_link *entry, *ret;
};

static void read_identity_env(struct target *t)
{
	char path[64], buf[1 << 16];
	ssize_t n;
	int fd;

	t->rank = t->world_size = -1;
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)t->pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return;
	buf[n] = '\0';
	for (char *p = buf; p < buf + n; p += strlen(p) + 1) {
		if (!strncmp(p, "RANK=", 5))
			t->rank = atoi(p + 5);
		else if (!strncmp(p, "WORLD_SIZE=", 11))
			t->world_size = atoi(p + 11);
	}
}

void target__refresh_identity(struct target *t)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)t->pid);
	f = fopen(path, "re");
	if (f) {
		if (fgets(t->comm, sizeof(t->comm), f))
			t->comm[strcspn(t->comm, "\n")] = '\0';
		fclose(f);
	}
	read_identity_env(t);
}

int target__init(struct target *t, pid_t pid, bool child)
{
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->child = child;
	t->pidfd = syscall(SYS_pidfd_open, pid, 0);
	if (t->pidfd < 0)
		return -errno;
	target__refresh_identity(t);
	return 0;
}

/*
 * Objects examined before exec are known by path too: on overlay file
 * systems stat() and /proc/PID/maps may disagree on the device.
 */
static struct examined *find_examined(struct target *t, uint64_t dev, uint64_t ino,
				      const char *path)
{
	for (size_t i = 0; i < t->nobjs; i++) {
		struct examined *e = &t->objs[i];

		if ((e->dev == dev && e->ino == ino) || (path && e->path && !strcmp(e->path, path)))
			return e;
	}
	return NULL;
}

static struct examined *add_examined(struct target *t, uint64_t dev, uint64_t ino, const char *path)
{
	struct examined *v = realloc(t->objs, (t->nobjs + 1) * sizeof(*v)), *e;

	if (!v)
		return NULL;
	t->objs = v;
	e = &v[t->nobjs];
	memset(e, 0, sizeof(*e));
	e->dev = dev;
	e->ino = ino;
	e->open_path = strdup(path);
	if (!e->open_path)
		return NULL;
	t->nobjs++;
	return e;
}

static int attach_libmap(struct target *t, const struct probe_ctx *ctx, const char *path,
			 uint64_t off)
{
	if (t->libmap)
		return 0;
	t->libmap = bpf_program__attach_uprobe(ctx->skel->progs.libmap, false, t->pid, path, off);
	if (!t->libmap)
		return -errno;
	p_dbg("pid %d: watching the dynamic linker (%s) for new libraries", t->pid, path);
	return 0;
}

static int attach_launch(struct target *t, const struct probe_ctx *ctx, struct examined *e)
{
	uint64_t o[API__COUNT], cookies[API__COUNT];
	struct uprobe_spec s = { .path = e->open_path, .pid = t->pid, .offsets = o, .cookies = cookies };
	int err;

	if (e->entry)
		return 0;
	for (int api = 0; api < API__COUNT; api++) {
		if (!e->api_off[api])
			continue;
		o[s.n] = e->api_off[api];
		cookies[s.n++] = api;
	}
	if (!s.n)
		return 0;
	err = attach_uprobes(ctx->skel->progs.launch_entry, ctx->multi, &s, &e->entry);
	if (!err && ctx->latency) {
		s.retprobe = true;
		err = attach_uprobes(ctx->skel->progs.launch_return, ctx->multi, &s, &e->ret);
	}
	if (err) {
		uprobe_link__destroy(e->entry);
		e->entry = NULL;
		return err;
	}
	p_dbg("pid %d: %zu launch probes on %s", t->pid, s.n, e->open_path);
	__atomic_store_n(&t->probes_since, clock_mono_ns(), __ATOMIC_RELEASE);
	return 0;
}

static void dispose(const struct probe_ctx *ctx, struct uprobe_link **l)
{
	if (*l && ctx->dispose)
		ctx->dispose(*l, ctx->dispose_arg);
	else
		uprobe_link__destroy(*l);
	*l = NULL;
}

static void detach_launch(const struct probe_ctx *ctx, struct examined *e)
{
	dispose(ctx, &e->entry);
	dispose(ctx, &e->ret);
}

/* The agent's switch follows the launch probes: CUPTI runs from warmup to the window's end. */
static int switch_agent(struct target *t, const struct probe_ctx *ctx, bool on)
{
	static const struct step_spec enable = {
		.kind = STEP_USDT, .object = "", .provider = "cuprobe", .symbol = "enable",
	};
	struct step_sites sites;
	struct uprobe_spec s = { .path = t->agent, .pid = t->pid, .offsets = sites.offsets,
				 .ref_ctr_offsets = sites.ref_ctr };
	int found, err;

	if (!on || !t->agent) {
		dispose(ctx, &t->agent_enable);
		return 0;
	}
	if (t->agent_enable)
		return 0;
	found = step_spec__find(&enable, t->agent, &sites);
	if (found <= 0)
		return found ?: -ENOENT;
	s.n = sites.n;
	err = attach_uprobes(ctx->skel->progs.agent_enable, ctx->multi, &s, &t->agent_enable);
	p_dbg("pid %d: agent switched on: %s", t->pid, err ? strerror(-err) : "ok");
	return err;
}

/* The agent library: it has the cuprobe:records USDT probe. Listen to it from now on. */
static int attach_agent(struct target *t, const struct probe_ctx *ctx, const char *path)
{
	static const struct step_spec records = {
		.kind = STEP_USDT, .object = "", .provider = "cuprobe", .symbol = "records",
	};
	struct step_sites sites;

	if (!ctx->cupti || t->agent || step_spec__find(&records, path, &sites) <= 0)
		return 0;
	t->agent_records = bpf_program__attach_usdt(ctx->skel->progs.agent_records, t->pid, path,
						    "cuprobe", "records", NULL);
	if (!t->agent_records)
		return -errno;
	t->agent = strdup(path);
	if (!t->agent)
		return -ENOMEM;
	p_dbg("pid %d: agent in %s", t->pid, path);
	return t->probes_on ? switch_agent(t, ctx, true) : 0;
}

int target__set_probes(struct target *t, const struct probe_ctx *ctx, bool on)
{
	int err;

	t->probes_on = on;
	if (!on)
		__atomic_store_n(&t->probes_since, 0, __ATOMIC_RELEASE);
	err = switch_agent(t, ctx, on);
	for (size_t i = 0; i < t->nobjs && !err; i++) {
		if (on)
			err = attach_launch(t, ctx, &t->objs[i]);
		else
			detach_launch(ctx, &t->objs[i]);
	}
	return err;
}

static int attach_step(struct target *t, const struct probe_ctx *ctx, const char *path)
{
	struct step_sites sites;
	struct uprobe_spec s = { .path = path, .pid = t->pid, .offsets = sites.offsets };
	int found, err;

	if (!ctx->step || t->step || !step_spec__wants_object(ctx->step, path))
		return 0;
	found = step_spec__find(ctx->step, path, &sites);
	if (found <= 0)
		return found;
	s.n = sites.n;
	s.ref_ctr_offsets = sites.ref_ctr;
	/* The step probe is rare and holds semaphores: one perf-event link per site is fine. */
	err = attach_uprobes(ctx->skel->progs.step_hit, false, &s, &t->step);
	if (err)
		return err;
	t->step_object = strdup(path);
	p_dbg("pid %d: step probe %s in %s (%zu sites)", t->pid, step_spec__str(ctx->step), path,
	      sites.n);
	return 0;
}

/* Examines one object file for t: launch APIs, the dynamic linker's hook, the step probe. */
static int examine(struct target *t, const struct probe_ctx *ctx, const char *path, uint64_t dev,
		   uint64_t ino)
{
	const char *names[NSYMS];
	uint64_t offs[NSYMS] = {};
	struct examined *e;
	int n, err = 0;

	e = add_examined(t, dev, ino, path);
	if (!e)
		return -ENOMEM;
	launch_api_names(names);
	names[SYM_DL_DEBUG_STATE] = "_dl_debug_state";
	names[SYM_RUNTIME_MARK] = "cudaMalloc";
	names[SYM_DRIVER_MARK] = "cuInit";
	n = elf_func_offsets(path, names, NSYMS, offs);
	if (n < 0)
		return 0; /* not an ELF file */
	for (int api = 0; api < API__COUNT; api++) {
		if (!offs[launch_api_is_driver(api) ? SYM_DRIVER_MARK : SYM_RUNTIME_MARK])
			continue;
		e->api_off[api] = offs[api];
		if (offs[api]) {
			t->has_launch_apis = true;
			e->runtime |= !launch_api_is_driver(api);
		}
	}
	if (t->probes_on)
		err = attach_launch(t, ctx, e);
	if (!err && offs[SYM_DL_DEBUG_STATE])
		err = attach_libmap(t, ctx, path, offs[SYM_DL_DEBUG_STATE]);
	if (!err)
		err = attach_step(t, ctx, path);
	if (!err)
		err = attach_agent(t, ctx, path);
	return err;
}

/* A path this process can open for the target's object (containers: through /proc/PID/root). */
static void object_path(pid_t pid, const char *mapped, char *buf, size_t len)
{
	snprintf(buf, len, "/proc/%d/root%s", (int)pid, mapped);
	if (access(buf, R_OK))
		snprintf(buf, len, "%s", mapped);
}

static int interp_of(const char *exe, char *buf, size_t len)
{
	int fd = open(exe, O_RDONLY | O_CLOEXEC), err = -ENOENT;
	Elf *elf;
	size_t n;

	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && !elf_getphdrnum(elf, &n)) {
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;
			ssize_t r;

			if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_INTERP || ph.p_filesz >= len)
				continue;
			r = pread(fd, buf, ph.p_filesz, ph.p_offset);
			if (r == (ssize_t)ph.p_filesz) {
				buf[r] = '\0';
				err = 0;
			}
			break;
		}
	}
	elf_end(elf);
	close(fd);
	return err;
}

static int examine_file(struct target *t, const struct probe_ctx *ctx, const char *file)
{
	char path[PATH_MAX];
	struct stat st;
	int err;

	if (!realpath(file, path) || stat(path, &st))
		return -errno;
	if (find_examined(t, st.st_dev, st.st_ino, path))
		return 0;
	err = examine(t, ctx, path, st.st_dev, st.st_ino);
	if (!err) {
		t->objs[t->nobjs - 1].path = strdup(path);
		if (!t->objs[t->nobjs - 1].path)
			err = -ENOMEM;
	}
	return err;
}

int target__prepare_exec(struct target *t, const struct probe_ctx *ctx, const char *exe)
{
	char interp[PATH_MAX];
	int err;

	err = examine_file(t, ctx, exe);
	if (err)
		return err;
	/* Scripts (#!) run an interpreter whose loader is the system's. */
	if (interp_of(exe, interp, sizeof(interp)))
		snprintf(interp, sizeof(interp), "%s", "/lib64/ld-linux-x86-64.so.2");
	if (access(interp, R_OK))
		return 0; /* statically linked system: nothing is loaded later */
	return examine_file(t, ctx, interp);
}

static int update_runtime_ranges(struct target *t, const struct probe_ctx *ctx,
				 const struct procmaps *m)
{
	struct runtime_ranges rr = {};
	__u32 key = t->pid;

	for (size_t i = 0; i < m->n && rr.n < MAX_RUNTIME_RANGES; i++) {
		const struct map_entry *me = &m->v[i];
		struct examined *e;

		if (!me->exec || !me->path)
			continue;
		e = find_examined(t, me->dev, me->inode, me->path);
		if (!e || !e->runtime)
			continue;
		rr.r[rr.n].lo = me->start;
		rr.r[rr.n++].hi = me->end;
	}
	if (!rr.n)
		return 0;
	return bpf_map__update_elem(ctx->skel->maps.runtime_ranges, &key, sizeof(key), &rr,
				    sizeof(rr), BPF_ANY);
}

int target__scan(struct target *t, const struct probe_ctx *ctx)
{
	struct procmaps m;
	char path[PATH_MAX + 32];
	int err;

	err = procmaps__read(t->pid, &m);
	if (err)
		return err;
	for (size_t i = 0; i < m.n && !err; i++) {
		const struct map_entry *me = &m.v[i];

		if (!me->exec || !me->path || me->path[0] != '/' ||
		    find_examined(t, me->dev, me->inode, me->path))
			continue;
		object_path(t->pid, me->path, path, sizeof(path));
		err = examine(t, ctx, path, me->dev, me->inode);
		if (err)
			p_warn("pid %d: cannot probe %s: %s", t->pid, me->path, strerror(-err));
		err = 0; /* one bad object does not stop the others */
	}
	if (!err)
		err = update_runtime_ranges(t, ctx, &m);
	procmaps__free(&m);
	return err;
}

void target__suggest_step(struct target *t, const struct probe_ctx *ctx, char *buf, size_t len)
{
	for (size_t i = 0; i < t->nobjs; i++)
		if (step_spec__wants_object(ctx->step, t->objs[i].open_path))
			step_spec__suggest(ctx->step, t->objs[i].open_path, buf, len);
}

void target__detach(struct target *t)
{
	for (size_t i = 0; i < t->nobjs; i++) {
		uprobe_link__destroy(t->objs[i].entry);
		uprobe_link__destroy(t->objs[i].ret);
		t->objs[i].entry = t->objs[i].ret = NULL;
	}
	bpf_link__destroy(t->libmap);
	t->libmap = NULL;
	uprobe_link__destroy(t->step);
	t->step = NULL;
	uprobe_link__destroy(t->agent_enable);
	bpf_link__destroy(t->agent_records);
	t->agent_enable = NULL;
	t->agent_records = NULL;
}

void target__free(struct target *t)
{
	target__detach(t);
	for (size_t i = 0; i < t->nobjs; i++) {
		free(t->objs[i].open_path);
		free(t->objs[i].path);
	}
	free(t->step_object);
	free(t->agent);
	t->step_object = t->agent = NULL;
	free(t->objs);
	t->objs = NULL;
	t->nobjs = 0;
	if (t->pidfd >= 0)
		close(t->pidfd);
	t->pidfd = -1;
}
