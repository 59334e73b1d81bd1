// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The probes in one process: the objects it maps and what each holds (launch
 * APIs, the linker's hook, the step probe, the agent), its scans, exec and
 * the windows' changes. The links themselves are probeset_attach.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/libbpf.h>
#include "core/gpu/agent_wake.h"
#include "core/probes/bpfobj.h"
#include "core/probes/capture_api.h"
#include "core/probes/launch_files.h"
#include "core/probes/placement.h"
#include "core/probes/probeset_int.h"
#include "core/probes/uprobe_link.h"
#include "core/proc/elf_file.h"
#include "core/proc/handle_names.h"
#include "core/proc/objcache.h"
#include "core/proc/procmaps.h"
#include "core/proc/symbols.h"
#include "core/steps/step_find.h"
#include "core/steps/step_spec.h"
#include "cuda/launch_api.h"
#include "launch.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/vec.h"

struct probeset *probeset__new(const struct probe_env *env, pid_t pid,
			       const struct step_spec *step)
{
	struct probeset *ps = calloc(1, sizeof(*ps));

	if (!ps)
		return NULL;
	ps->objs = VEC_INIT(struct examined);
	ps->env = env;
	ps->step_spec = step;
	ps->pid = pid;
	ps->agent_wake_fd = -1;
	return ps;
}

/*
 * Objects examined before exec are known by path too: on overlay file
 * systems stat() and /proc/PID/maps may disagree on the device.
 */
static struct examined *find_examined(const struct probeset *ps, uint64_t dev, uint64_t ino,
				      const char *path)
{
	for (size_t i = 0; i < ps->objs.len; i++) {
		struct examined *e = OBJ(ps, i);

		if ((e->dev == dev && e->ino == ino) || (path && e->path && !strcmp(e->path, path)))
			return e;
	}
	return NULL;
}

/* Takes fd over, whatever happens. */
static struct examined *add_examined(struct probeset *ps, const struct map_entry *me,
				     const char *name, int fd)
{
	char *n = strdup(name), *mapped = strdup(me->path);
	struct examined *e = n && mapped ? vec__push(&ps->objs) : NULL;

	if (!e) {
		free(n);
		free(mapped);
		close(fd);
		return NULL;
	}
	e->dev = me->dev;
	e->ino = me->inode;
	e->where = *me;
	e->where.path = mapped;
	e->name = n;
	e->fd = fd;
	target_file_fd_path(fd, e->open_path, sizeof(e->open_path));
	return e;
}

static bool examined_launches(const struct examined *e)
{
	for (int api = 0; api < API__COUNT; api++)
		if (e->api_off[api])
			return true;
	return false;
}

/* Only what probes may attach to later keeps its descriptor: the rest are many. */
static void examined_settle(struct probeset *ps, struct examined *e)
{
	if (examined_launches(e) || (ps->agent && !strcmp(ps->agent, e->open_path)) || e->fd < 0)
		return;
	close(e->fd);
	e->fd = -1;
}

static uint32_t rr_flags_of(const struct probe_want *w)
{
	return (w->one_trap ? RR_ONE_TRAP : 0) | (w->one_trap_graphs ? RR_ONE_TRAP_GRAPHS : 0);
}

/*
 * One trap per launch (or replay) from now on: BPF is told first, so that a
 * runtime launch whose probe still fired is not recorded again at the
 * driver, and one whose probe is already gone is; then the runtime's links of
 * those APIs go, each group its own link, so that no other launch goes
 * unprobed meanwhile.
 */

static int go_one_trap(struct probeset *ps)
{
	int err;

	ps->rr.flags |= rr_flags_of(&ps->want);
	err = bpfobj__set_runtime_ranges(ps->env->bpf, ps->pid, &ps->rr);
	if (err)
		return err;
	for (size_t i = 0; i < ps->objs.len; i++) {
		struct examined *e = OBJ(ps, i);

		/* Only the groups left out go: the others' launches are never unprobed. */
		for (int g = 0; g < LG__COUNT; g++) {
			if (!group_out(&ps->want, g))
				continue;
			uprobe_link__destroy(e->entry[g]);
			e->entry[g] = NULL;
			uprobe_link__destroy(e->ret[g]);
			e->ret[g] = NULL;
		}
	}
	p_dbg("pid %d: runtime %s are recorded at the driver's probe: one trap each", ps->pid,
	      ps->want.one_trap && ps->want.one_trap_graphs ? "kernel launches and graph replays" :
	      ps->want.one_trap ? "kernel launches" : "graph replays");
	return 0;
}

int probeset__set(struct probeset *ps, const struct probe_want *w)
{
	int err = 0;

	/* Only one trap comes on: the driver's links stay, the runtime's are made again. */
	if (w->one_trap >= ps->want.one_trap && w->one_trap_graphs >= ps->want.one_trap_graphs &&
	    (w->one_trap != ps->want.one_trap || w->one_trap_graphs != ps->want.one_trap_graphs) &&
	    ps->want.launch && w->launch &&
	    w->latency == ps->want.latency && w->gen == ps->want.gen &&
	    w->agent == ps->want.agent && w->sync == ps->want.sync && w->events == ps->want.events) {
		ps->want = *w;
		return go_one_trap(ps);
	}

	/* A change of return probes or generation is a new set of links: the old ones go first. */
	if (!w->launch || w->latency != ps->want.latency || w->gen != ps->want.gen) {
		ps->probes_since = 0;
		for (size_t i = 0; i < ps->objs.len; i++)
			probeset_detach_launch(ps, OBJ(ps, i));
	}
	ps->want = *w;
	if (!w->launch)
		ps->want.latency = ps->want.agent = false;
	if (ps->rr.n && (rr_flags_of(w) & ~ps->rr.flags)) {
		ps->rr.flags |= rr_flags_of(w);
		err = bpfobj__set_runtime_ranges(ps->env->bpf, ps->pid, &ps->rr);
	}
	if (!err)
		err = probeset_switch_agent(ps, ps->want.agent);
	for (size_t i = 0; i < ps->objs.len && !err && w->launch; i++)
		err = probeset_attach_launch(ps, OBJ(ps, i));
	for (size_t i = 0; i < ps->objs.len && !err; i++)
		err = probeset_attach_events(ps, OBJ(ps, i));
	return err;
}

/*
 * The launch, handle and linker probes go on the first instruction the
 * kernel emulates, where only harmless ones come before it (placement.h):
 * the driver's entries begin with a rip-relative cmp, which is single-stepped.
 * A failure keeps the entries, said at debug level.
 */
static void place_probes(struct examined *e, const char **names, uint64_t *offs)
{
	int err = placement_adjust(e->fd, e->name, names, API__COUNT, e->api_off);

	if (!err)
		err = placement_adjust(e->fd, e->name, names + SYM_DL_DEBUG_STATE, 1,
				       offs + SYM_DL_DEBUG_STATE);
	if (!err)
		err = placement_adjust(e->fd, e->name, names + SYM_NAME_API(0), NAME__COUNT,
				       offs + SYM_NAME_API(0));
	if (!err)
		err = placement_adjust(e->fd, e->name, names + SYM_CAPTURE_API(0), CAP__COUNT,
				       offs + SYM_CAPTURE_API(0));
	if (err)
		p_dbg("%s: probes stay on function entries: %s", e->name, strerror(-err));
}

/*
 * The offsets of names in e, through the session's cache of object files
 * (objcache.h): a few reads of its headers and hash table while the process
 * waits, once per file.
 */
static int find_offsets(struct probeset *ps, const struct examined *e, const char **names,
			uint64_t *offs)
{
	struct obj_read how = {};
	const char *base = strrchr(e->name, '/');
	uint64_t t0 = clock_mono_ns(), took;
	int n;

	if (ps->env->objects)
		n = objcache__func_offsets(ps->env->objects, e->fd, names, NSYMS, offs, &how);
	else
		n = elf_func_offsets(e->open_path, names, NSYMS, offs);
	took = clock_mono_ns() - t0;
	base = base ? base + 1 : e->name;
	ps->scan_read += !how.cached;
	if (took >= ps->scan_slowest_ns) {
		ps->scan_slowest_ns = took;
		snprintf(ps->scan_slowest, sizeof(ps->scan_slowest), "%s", base);
	}
	if (how.cached)
		p_dbg("pid %d: %s: known from an earlier read of the file", ps->pid, base);
	else
		p_dbg("pid %d: %s: read in %.2f ms%s", ps->pid, base, took / 1e6,
		      how.walked ? ", .symtab walked (it may carry a static runtime)" : "");
	return n;
}

/* Whether e has something probed: what examine_one attached or found there. */
static bool examined_probed(const struct probeset *ps, const struct examined *e, bool libmap,
			    bool step, bool agent)
{
	for (int api = 0; api < API__COUNT; api++)
		if (e->api_off[api])
			return true;
	return e->name_entry || e->capture_entry || (!libmap && ps->libmap) || (!step && ps->step) ||
	       (!agent && ps->agent);
}

/* Examines one object file: launch APIs, the dynamic linker's hook, the step probe, the agent. */
static int examine_one(struct probeset *ps, struct examined *e)
{
	const char *names[NSYMS], *path = e->name;
	uint64_t offs[NSYMS] = {};
	int n, err = 0;

	launch_api_names(names);
	names[SYM_DL_DEBUG_STATE] = "_dl_debug_state";
	names[SYM_RUNTIME_MARK] = "cudaMalloc";
	names[SYM_DRIVER_MARK] = "cuInit";
	for (int i = 0; i < NAME__COUNT; i++)
		names[SYM_NAME_API(i)] = name_apis[i];
	for (int i = 0; i < CAP__COUNT; i++)
		names[SYM_CAPTURE_API(i)] = capture_apis[i];
	n = find_offsets(ps, e, names, offs);
	if (n < 0)
		return 0; /* not an ELF file */
	for (int api = 0; api < API__COUNT; api++) {
		if (!offs[launch_api_is_driver(api) ? SYM_DRIVER_MARK : SYM_RUNTIME_MARK])
			continue;
		e->api_off[api] = offs[api];
		if (offs[api]) {
			ps->has_launch_apis = true;
			e->runtime |= !launch_api_is_driver(api);
		}
	}
	place_probes(e, names, offs);
	if (ps->want.launch)
		err = probeset_attach_launch(ps, e);
	/* Without names, launches are still recorded: a failure here is said, not fatal. */
	if (!err && (e->api_off[API_cuLaunchKernel] || e->runtime) &&
	    (n = probeset_attach_names(ps, e, offs, offs[SYM_DRIVER_MARK], e->runtime))) {
		if (n == -ESRCH)
			err = n; /* the process is gone: the caller says so */
		else
			p_warn("pid %d: cannot probe the calls that make kernel handles in %s: %s; "
			       "launches by handle there are unnamed", ps->pid, path, strerror(-n));
	}
	/* Nor without captures: said, since their launches are then taken for executions. */
	if (!err && (e->api_off[API_cuLaunchKernel] || e->runtime) &&
	    (n = probeset_attach_captures(ps, e, offs, offs[SYM_DRIVER_MARK], e->runtime))) {
		if (n == -ESRCH)
			err = n;
		else
			p_warn("pid %d: cannot probe the stream capture calls in %s: %s; launches "
			       "made while a stream is captured there are counted as launches",
			       ps->pid, path, strerror(-n));
	}
	if (!err)
		err = probeset_attach_events(ps, e);
	if (!err && offs[SYM_DL_DEBUG_STATE])
		err = probeset_attach_libmap(ps, e->open_path, e->name, offs[SYM_DL_DEBUG_STATE]);
	if (!err && ps->libmap && !ps->libmap_ino) {
		ps->libmap_dev = e->dev;
		ps->libmap_ino = e->ino;
	}
	if (!err)
		err = probeset_attach_step(ps, e);
	if (!err)
		err = probeset_attach_agent(ps, e);
	return err;
}

/* The mapped file of me has launch probes: processes of this program will be probed on it ahead. */
static void remember(struct probeset *ps, const struct map_entry *me, const char *name)
{
	struct launch_file f = { .path = me->path, .dev = me->dev, .ino = me->inode,
				 .learned = true };
	char exe[PATH_MAX];
	int err;

	/*
	 * The program that ran when the scan read the maps, and still runs: a
	 * forked child's exec during the scan of its copy of its parent's
	 * program would credit the new program with the old one's files.
	 */
	err = launch_files__exe_of(ps->pid, &f.exe_dev, &f.exe_ino, exe, sizeof(exe));
	if (!err && (f.exe_dev != ps->scan_exe_dev || f.exe_ino != ps->scan_exe_ino ||
		     atomic_load(&ps->interrupted))) {
		p_dbg("pid %d: %s is not remembered for its program: the process ran another "
		      "program during the scan", ps->pid, name);
		return;
	}
	if (!err) {
		f.exe = exe;
		err = launch_files__add(ps->env->launch_files, &f);
	}
	if (err)
		p_dbg("pid %d: %s is not remembered for its program: %s", ps->pid, name,
		      strerror(-err));
}

/*
 * Examines the object of mapping me (the executable before exec: start 0),
 * read through its checked descriptor fd (taken over), named name.
 */
static int examine(struct probeset *ps, const struct map_entry *me, const char *name, int fd)
{
	struct examined *e = add_examined(ps, me, name, fd);
	bool libmap = ps->libmap, step = ps->step, agent = ps->agent;
	int err;

	if (!e)
		return -ENOMEM;
	err = examine_one(ps, e);
	/* A file mapped (me->start): one that later processes may be probed on before they map it. */
	if (!err && me->start && ps->env->launch_files && examined_launches(e))
		remember(ps, me, name);
	ps->scan_objs++;
	ps->scan_probed += examined_probed(ps, e, libmap, step, agent);
	examined_settle(ps, OBJ(ps, ps->objs.len - 1));
	return err;
}

/*
 * The target's object by the name this process knows it by (containers:
 * through /proc/PID/root): for messages and --step OBJECT, never opened.
 */
static void object_path(pid_t pid, const char *mapped, char *buf, size_t len)
{
	struct stat st;

	snprintf(buf, len, "/proc/%d/root%s", (int)pid, mapped);
	if (lstat(buf, &st))
		snprintf(buf, len, "%s", mapped);
}

static int interp_of(const char *exe, char *buf, size_t len)
{
	struct elf_file *ef = elf_file__open(exe);
	int err;

	if (!ef)
		return -errno;
	err = elf_file__interp(ef, buf, len);
	elf_file__close(ef);
	return err;
}

static int examine_file(struct probeset *ps, const char *file)
{
	char path[PATH_MAX];
	struct map_entry me = { .path = path };
	struct stat st;
	int fd, err;

	if (!realpath(file, path))
		return -errno;
	fd = target_file_open(path, true);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (find_examined(ps, st.st_dev, st.st_ino, path)) {
		close(fd);
		return 0;
	}
	me.dev = st.st_dev;
	me.inode = st.st_ino;
	err = examine(ps, &me, path, fd);
	if (!err) {
		OBJ(ps, ps->objs.len - 1)->path = strdup(path);
		if (!OBJ(ps, ps->objs.len - 1)->path)
			err = -ENOMEM;
	}
	return err;
}

/* A scan's counts start from nothing (probe_facts.scan_*). */
static void scan_begin(struct probeset *ps)
{
	ps->scan_objs = ps->scan_read = ps->scan_probed = 0;
	ps->scan_slowest_ns = 0;
	ps->scan_slowest[0] = '\0';
}

int probeset__prepare_exec(struct probeset *ps, const char *exe)
{
	char interp[PATH_MAX];
	int err;

	scan_begin(ps);
	err = examine_file(ps, exe);
	if (err)
		return err;
	/* Scripts (#!) run an interpreter whose loader is the system's. */
	if (interp_of(exe, interp, sizeof(interp)))
		snprintf(interp, sizeof(interp), "%s", "/lib64/ld-linux-x86-64.so.2");
	if (access(interp, R_OK))
		return 0; /* statically linked system: nothing is loaded later */
	return examine_file(ps, interp);
}

static int update_runtime_ranges(struct probeset *ps, const struct procmaps *m)
{
	struct runtime_ranges rr = {};

	for (size_t i = 0; i < m->n && rr.n < MAX_RUNTIME_RANGES; i++) {
		const struct map_entry *me = &m->v[i];
		struct examined *e;

		if (!me->exec || !me->path)
			continue;
		e = find_examined(ps, me->dev, me->inode, me->path);
		if (!e || !e->runtime)
			continue;
		rr.r[rr.n].lo = me->start;
		rr.r[rr.n++].hi = me->end;
	}
	if (!rr.n)
		return 0;
	rr.flags = rr_flags_of(&ps->want);
	ps->rr = rr;
	return bpfobj__set_runtime_ranges(ps->env->bpf, ps->pid, &rr);
}

/*
 * Test hook: CUPROBE_SCAN_TEST_PAUSE_MS=N waits N ms before each object a scan
 * examines, as the kernel's grace period for a first attach may: a forked
 * child's exec then comes during the scan of its copy of its parent's
 * program, whatever the machine's load (tests/e2e/test_holds.sh).
 */
static void test_pause(void)
{
	static int ms = -1;

	if (ms < 0) {
		const char *v = getenv("CUPROBE_SCAN_TEST_PAUSE_MS");

		ms = v ? atoi(v) : 0;
		ms = ms > 0 && ms <= 100 ? ms : 0;
	}
	if (ms)
		usleep((useconds_t)ms * 1000);
}

int probeset__scan(struct probeset *ps)
{
	struct procmaps m;
	char path[PATH_MAX + 32];
	int err;

	scan_begin(ps);
	/* Before the maps: the program they are of, or one that ran before them (remember). */
	if (launch_files__exe_of(ps->pid, &ps->scan_exe_dev, &ps->scan_exe_ino, NULL, 0))
		ps->scan_exe_dev = ps->scan_exe_ino = 0;
	err = procmaps__read_exec(ps->pid, &m);
	if (err)
		return err;
	for (size_t i = 0; i < m.n; i++) {
		const struct map_entry *me = &m.v[i];
		struct examined *e;
		int fd;

		/*
		 * A forked child that runs a new program (Python's subprocess) is
		 * probed anew after its exec: the old program's probes would only
		 * keep its exec hold waiting, the first of them for a kernel grace
		 * period.
		 */
		if (atomic_load_explicit(&ps->interrupted, memory_order_relaxed)) {
			p_dbg("pid %d: ran a new program: the scan of the old one stops", ps->pid);
			break;
		}
		if (!me->exec || !me->path || me->path[0] != '/')
			continue;
		e = find_examined(ps, me->dev, me->inode, me->path);
		/* Probed before it was mapped (probeset__preregister): mapped now. */
		if (e && !ps->has_launch_apis && examined_launches(e))
			ps->has_launch_apis = true;
		if (e)
			continue;
		test_pause();
		/* What cannot be opened safely (procmaps.h) is left alone, and said at debug level. */
		fd = procmaps__open(ps->pid, me);
		if (fd < 0) {
			p_dbg("pid %d: not probing %s: %s", ps->pid, me->path, strerror(-fd));
			continue;
		}
		object_path(ps->pid, me->path, path, sizeof(path));
		err = examine(ps, me, path, fd);
		/* A process that exits while it is probed (a short-lived child) is no fault. */
		if (err == -ESRCH) {
			p_dbg("pid %d: exited while %s was probed", ps->pid, me->path);
			break;
		}
		/* One bad object does not stop the others. */
		if (err)
			p_warn("pid %d: cannot probe %s: %s", ps->pid, me->path, strerror(-err));
	}
	err = update_runtime_ranges(ps, &m);
	/* Read while the process is held: the map the session names its launches by. */
	procmaps__free(&ps->maps);
	ps->maps = m;
	/* An agent found before its constructor ran: its eventfd may be there now. */
	if (ps->agent && ps->agent_wake_fd < 0)
		agent_wake_prepare(ps->pid, ps->agent, &ps->agent_wake_fd);
	return err;
}

/*
 * Links are per file and process: after exec they serve the new program
 * wherever it maps the same files, and one it does not map cannot fire. The
 * probeset stays unless what it found once per process would be the old
 * program's: the step probe, the agent, or a linker hook on another linker
 * than the one the new program runs (none at all is kept). Right after exec the program maps its
 * executable and its dynamic linker, if any, and nothing else: so one file
 * besides the hook's is the executable (the new program's linker is the
 * hooked one, or it has none: a static program), two are a new linker.
 */
int probeset__keeps_across_exec(struct probeset *ps)
{
	uint64_t dev = 0, ino = 0;
	struct procmaps m;
	int err, others = 0;

	atomic_store(&ps->interrupted, false);
	ps->prereg_next = 0;
	if (ps->step || ps->agent)
		return 0;
	/*
	 * No hook yet (a scan stopped by the exec before it reached the linker,
	 * a static program): none to be the wrong one. The scan after adds the
	 * new program's, and the links made stay: closing them would hold the
	 * process for tens of ms each.
	 */
	if (!ps->libmap)
		return 1;
	err = procmaps__read_exec(ps->pid, &m);
	if (err)
		return err;
	for (size_t i = 0; i < m.n; i++) {
		const struct map_entry *me = &m.v[i];

		if (!me->exec || !me->path || me->path[0] != '/' ||
		    (me->dev == ps->libmap_dev && me->inode == ps->libmap_ino) ||
		    (others && me->dev == dev && me->inode == ino))
			continue;
		others++;
		dev = me->dev;
		ino = me->inode;
	}
	procmaps__free(&m);
	return others <= 1;
}

/* The user a process runs as (its /proc folder's owner: the effective uid). */
static int proc_uid(pid_t pid, uid_t *uid)
{
	char path[32];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (stat(path, &st))
		return -errno;
	*uid = st.st_uid;
	return 0;
}

/*
 * Links registered on a file before the process maps it are put in by the
 * kernel when it does (uprobe_mmap), with no registration, so no grace
 * period, in the hold that follows. Only a file that is still the one
 * remembered (device and inode), at the path it was mapped at, seen through
 * the process's root; a symlink there is refused.
 */
int probeset__preregister(struct probeset *ps, bool (*yield)(void *), void *arg)
{
	const struct launch_files *lf = ps->env->launch_files;

	scan_begin(ps);
	if (!ps->prereg_next &&
	    (launch_files__exe_of(ps->pid, &ps->prereg_exe_dev, &ps->prereg_exe_ino, NULL, 0) ||
	     proc_uid(ps->pid, &ps->prereg_uid)))
		return 0;
	for (size_t i = ps->prereg_next; i < launch_files__count(lf); i++) {
		const struct launch_file *f = launch_files__at(lf, i);
		struct map_entry me = { .path = f->path, .dev = f->dev, .inode = f->ino };
		char path[PATH_MAX + 32];
		struct stat st;
		bool had;
		int fd, err;

		if (f->exe_dev != ps->prereg_exe_dev || f->exe_ino != ps->prereg_exe_ino ||
		    find_examined(ps, f->dev, f->ino, NULL))
			continue;
		/* A hold or an attach waits on this thread: it goes first, and this after it. */
		if (yield && yield(arg)) {
			ps->prereg_next = i;
			return 1;
		}
		/* Checked before it is opened for reading: what a refusal was is said at debug level. */
		fd = procmaps__open_in_root(ps->pid, &me);
		if (fd < 0)
			continue;
		object_path(ps->pid, f->path, path, sizeof(path));
		/*
		 * Only a file the process could have mapped as its own: root's or its
		 * user's. Another user's, remembered from another process of the same
		 * program, is not read for this one.
		 */
		if (fstat(fd, &st)) {
			close(fd);
			continue;
		}
		if (st.st_uid != 0 && st.st_uid != ps->prereg_uid) {
			p_dbg("pid %d: not probing %s ahead: the file is another user's (uid %u)",
			      ps->pid, path, (unsigned int)st.st_uid);
			close(fd);
			continue;
		}
		/* It has launch entry points once it is mapped (probeset__scan), not before. */
		had = ps->has_launch_apis;
		err = examine(ps, &me, path, fd);
		ps->has_launch_apis = had;
		if (err && err != -ESRCH && err != -ENOENT) {
			p_warn("pid %d: cannot probe %s before it is mapped: %s", ps->pid, path,
			       strerror(-err));
			continue;
		}
		if (!err)
			p_dbg("pid %d: %s probed before it is mapped", ps->pid, f->path);
	}
	ps->prereg_next = 0;
	return 0;
}

void probeset__interrupt(struct probeset *ps)
{
	atomic_store(&ps->interrupted, true);
}

void probeset__take_maps(struct probeset *ps, struct procmaps *out)
{
	*out = ps->maps;
	memset(&ps->maps, 0, sizeof(ps->maps));
}

/* Whether an object has the driver's launch APIs: without one, every CUDA call fails. */
static bool has_driver(const struct probeset *ps)
{
	for (size_t i = 0; i < ps->objs.len; i++)
		for (int api = 0; api < API__COUNT; api++)
			if (launch_api_is_driver(api) && OBJ(ps, i)->api_off[api])
				return true;
	return false;
}

static bool probeset_has_torch(const struct probeset *ps)
{
	for (size_t i = 0; i < ps->objs.len; i++)
		if (step_object_is(STEP_TORCH_LIB, OBJ(ps, i)->name))
			return true;
	return false;
}

void probeset__facts(const struct probeset *ps, struct probe_facts *f)
{
	memset(f, 0, sizeof(*f));
	f->has_launch_apis = ps->has_launch_apis;
	f->has_driver = has_driver(ps);
	f->step_found = ps->step != NULL;
	f->step_walk = ps->step_walk != 0;
	snprintf(f->step_why, sizeof(f->step_why), "%s", ps->step_why);
	if (ps->step_object)
		snprintf(f->step_object, sizeof(f->step_object), "%s", ps->step_object);
	f->agent_found = ps->agent != NULL;
	f->nobjs = ps->objs.len;
	f->torch_mapped = probeset_has_torch(ps);
	f->probes_on = ps->want.launch;
	f->probes_since = ps->probes_since;
	f->scan_objs = ps->scan_objs;
	f->scan_read = ps->scan_read;
	f->scan_probed = ps->scan_probed;
	f->scan_slowest_ns = ps->scan_slowest_ns;
	snprintf(f->scan_slowest, sizeof(f->scan_slowest), "%s", ps->scan_slowest);
}

int probeset__step_walk(struct probeset *ps)
{
	return probeset_attach_torch_step(ps);
}

void probeset__suggest_step(const struct probeset *ps, char *buf, size_t len)
{
	struct step_suggest sg;

	buf[0] = '\0';
	if (!ps->step_spec)
		return;
	step_spec__suggest_init(ps->step_spec, &sg);
	for (size_t i = 0; i < ps->objs.len; i++) {
		struct examined *e = OBJ(ps, i);
		char path[32];
		int fd;

		if (!step_spec__wants_object(ps->step_spec, e->name))
			continue;
		/* A descriptor let go is taken again the same checked way. */
		fd = e->fd >= 0 ? dup(e->fd) : procmaps__open(ps->pid, &e->where);
		if (fd < 0)
			continue;
		target_file_fd_path(fd, path, sizeof(path));
		step_spec__suggest(ps->step_spec, path, &sg);
		close(fd);
	}
	step_spec__suggest_str(&sg, buf, len);
}

static void free_all(struct probeset *ps, bool sync)
{
	/* Entries before returns, as on any detach. */
	for (size_t i = 0; i < ps->objs.len; i++) {
		for (int g = 0; g < LG__COUNT; g++)
			probeset_dispose_pair(ps->env, sync, &OBJ(ps, i)->entry[g], &OBJ(ps, i)->ret[g]);
		probeset_dispose_pair(ps->env, sync, &OBJ(ps, i)->name_entry, &OBJ(ps, i)->name_ret);
		probeset_dispose_pair(ps->env, sync, &OBJ(ps, i)->capture_entry,
				      &OBJ(ps, i)->capture_ret);
		probeset_dispose(ps->env, sync, &OBJ(ps, i)->event_entry);
		if (OBJ(ps, i)->fd >= 0)
			close(OBJ(ps, i)->fd);
		free(OBJ(ps, i)->name);
		free(OBJ(ps, i)->where.path);
		free(OBJ(ps, i)->path);
	}
	probeset_dispose(ps->env, sync, &ps->libmap);
	probeset_dispose_pair(ps->env, sync, &ps->step, &ps->step_exit);
	probeset_dispose(ps->env, sync, &ps->agent_enable);
	bpf_link__destroy(ps->agent_records);
	if (ps->agent_wake_fd >= 0)
		close(ps->agent_wake_fd);
	free(ps->step_object);
	free(ps->agent);
	procmaps__free(&ps->maps);
	vec__free(&ps->objs);
	free(ps);
}

void probeset__free(struct probeset *ps)
{
	if (ps)
		free_all(ps, true);
}

void probeset__release(struct probeset *ps)
{
	if (ps)
		free_all(ps, false);
}
