// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The probeset's links: launch, handle, capture, event, linker, step and agent probes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/gpu/agent_wake.h"
#include "core/probes/bpfobj.h"
#include "core/probes/placement.h"
#include "core/probes/probeset_int.h"
#include "core/probes/uprobe_link.h"
#include "core/proc/elf_file.h"
#include "core/proc/objcache.h"
#include "core/proc/procmaps.h"
#include "core/steps/step_find.h"
#include "core/steps/step_source.h"
#include "core/steps/step_spec.h"
#include "core/steps/step_torch.h"
#include "launch.h"
#include "util/clock.h"
#include "util/log.h"

void probeset_dispose_pair(const struct probe_env *env, bool sync, struct uprobe_link **first,
			   struct uprobe_link **then)
{
	if ((*first || *then) && env->dispose && !sync) {
		env->dispose(*first, *then, env->dispose_arg);
	} else {
		uprobe_link__destroy(*first);
		uprobe_link__destroy(*then);
	}
	*first = *then = NULL;
}

void probeset_dispose(const struct probe_env *env, bool sync, struct uprobe_link **l)
{
	struct uprobe_link *none = NULL;

	probeset_dispose_pair(env, sync, l, &none);
}

/*
 * _r_debug's address less _dl_debug_state's, in the linker at path (off: the
 * hook's file offset): libmap.bpf.c reads r_state there, and holds only when
 * the linker is done mapping. 0 when either is missing: every call holds.
 */
static uint64_t r_debug_delta(const char *path, uint64_t off)
{
	struct elf_file *ef = elf_file__open(path);
	const struct elf_load *loads, *l;
	uint64_t delta = 0;
	GElf_Sym rd;
	size_t n;

	if (!ef)
		return 0;
	loads = elf_file__loads(ef, &n);
	l = elf_load_by_offset(loads, n, off);
	if (l && !elf_file__object(ef, "_r_debug", &rd) && rd.st_size >= 32)
		delta = rd.st_value - (off - l->offset + l->vaddr);
	elf_file__close(ef);
	return delta;
}

int probeset_attach_libmap(struct probeset *ps, const char *path, const char *name, uint64_t off)
{
	uint64_t cookie;
	struct uprobe_spec s = { .path = path, .pid = ps->pid, .offsets = &off, .n = 1,
				 .cookies = &cookie };
	int err;

	if (ps->libmap)
		return 0;
	cookie = r_debug_delta(path, off);
	err = bpfobj__attach(ps->env->bpf, PROG_LIBMAP, &s, &ps->libmap);
	if (err)
		return err;
	p_dbg("pid %d: watching the dynamic linker (%s) for new libraries", ps->pid, name);
	return 0;
}

/*
 * The return probes go in before the entries that wait for them, and come
 * out after them (dispose closes in order): an entry marked for latency
 * always finds its return probe there.
 */
int probeset_attach_launch(struct probeset *ps, struct examined *e)
{
	uint64_t slot = bpfobj__slot_cookie(ps->env->bpf, ps->pid);
	size_t n = 0;

	for (int g = 0; g < LG__COUNT; g++) {
		uint64_t o[API__COUNT], cookies[API__COUNT];
		struct uprobe_spec s = { .path = e->open_path, .pid = ps->pid, .offsets = o,
					 .cookies = cookies };
		int err = 0;

		if (e->entry[g] || group_out(&ps->want, g))
			continue;
		for (int api = 0; api < API__COUNT; api++) {
			if (!e->api_off[api] || group_of(api) != (enum launch_group)g)
				continue;
			o[s.n] = e->api_off[api];
			cookies[s.n++] = api | (ps->want.latency ? COOKIE_LATENCY : 0) |
					 (uint64_t)ps->want.gen << COOKIE_GEN_SHIFT | slot;
		}
		if (!s.n)
			continue;
		if (ps->want.latency) {
			s.retprobe = true;
			err = bpfobj__attach(ps->env->bpf, PROG_LAUNCH_RETURN, &s, &e->ret[g]);
			s.retprobe = false;
		}
		if (!err)
			err = bpfobj__attach(ps->env->bpf, PROG_LAUNCH, &s, &e->entry[g]);
		if (err) {
			uprobe_link__destroy(e->ret[g]);
			e->ret[g] = NULL;
			return err;
		}
		n += s.n;
	}
	if (!n)
		return 0;
	p_dbg("pid %d: %zu launch probes on %s%s", ps->pid, n, e->name,
	      ps->want.latency ? ", with return probes" : "");
	ps->probes_since = clock_mono_ns();
	return 0;
}

/*
 * The calls that make kernel handles (names.h), in a driver or runtime whose
 * launches are probed: on for the whole session, since a handle is made once,
 * usually long before the window that launches it. Returns before entries, as
 * for launches.
 */
int probeset_attach_names(struct probeset *ps, struct examined *e, const uint64_t *offs,
			  bool driver, bool runtime)
{
	uint64_t o[NAME__COUNT], cookies[NAME__COUNT];
	struct uprobe_spec s = { .path = e->open_path, .pid = ps->pid, .offsets = o,
				 .cookies = cookies };
	int err;

	if (!ps->env->names)
		return 0;
	for (int api = 0; api < NAME__COUNT; api++) {
		if (!offs[SYM_NAME_API(api)] || (name_api_is_driver(api) ? !driver : !runtime))
			continue;
		o[s.n] = offs[SYM_NAME_API(api)];
		cookies[s.n++] = api;
	}
	if (!s.n)
		return 0;
	s.retprobe = true;
	err = bpfobj__attach(ps->env->bpf, PROG_NAME_RETURN, &s, &e->name_ret);
	s.retprobe = false;
	if (!err)
		err = bpfobj__attach(ps->env->bpf, PROG_NAME_ENTRY, &s, &e->name_entry);
	if (err) {
		uprobe_link__destroy(e->name_ret);
		e->name_ret = NULL;
		return err;
	}
	p_dbg("pid %d: %zu handle probes on %s", ps->pid, s.n, e->name);
	return 0;
}

/*
 * The stream capture calls (capture.h), in a driver or runtime whose launches
 * are probed: on for the whole session, since a capture may begin before the
 * window that records its launches. The begins' returns go in first.
 */
int probeset_attach_captures(struct probeset *ps, struct examined *e, const uint64_t *offs,
			     bool driver, bool runtime)
{
	uint64_t o[CAP__COUNT], cookies[CAP__COUNT];
	struct uprobe_spec s = { .path = e->open_path, .pid = ps->pid, .offsets = o,
				 .cookies = cookies };
	size_t nret = 0;
	int err = 0;

	if (!ps->env->captures)
		return 0;
	/* The begins first: they are the return probe's offsets, o[0..nret). */
	for (int pass = 0; pass < 2; pass++) {
		for (int api = 0; api < CAP__COUNT; api++) {
			if (!offs[SYM_CAPTURE_API(api)] || capture_api_has_return(api) == pass ||
			    (capture_api_is_driver(api) ? !driver : !runtime))
				continue;
			/* Kept for later: attach_events. */
			if (capture_api_is_event(api)) {
				e->event_off[api - CAP_FIRST_RECORD] = offs[SYM_CAPTURE_API(api)];
				continue;
			}
			o[s.n] = offs[SYM_CAPTURE_API(api)];
			cookies[s.n++] = api;
		}
		if (!pass)
			nret = s.n;
	}
	if (!s.n)
		return 0;
	if (nret) {
		struct uprobe_spec r = s;

		r.n = nret;
		r.retprobe = true;
		err = bpfobj__attach(ps->env->bpf, PROG_CAPTURE_RETURN, &r, &e->capture_ret);
	}
	if (!err)
		err = bpfobj__attach(ps->env->bpf, PROG_CAPTURE_ENTRY, &s, &e->capture_entry);
	if (err) {
		uprobe_link__destroy(e->capture_ret);
		e->capture_ret = NULL;
		return err;
	}
	p_dbg("pid %d: %zu capture probes on %s", ps->pid, s.n, e->name);
	return 0;
}

/* The event calls' probes, while captures are (want.events); off, they go. */
int probeset_attach_events(struct probeset *ps, struct examined *e)
{
	uint64_t o[CAP_EVENT_N], cookies[CAP_EVENT_N];
	struct uprobe_spec s = { .path = e->open_path, .pid = ps->pid, .offsets = o,
				 .cookies = cookies };
	int err;

	if (!ps->want.events) {
		probeset_dispose(ps->env, ps->want.sync, &e->event_entry);
		return 0;
	}
	if (e->event_entry)
		return 0;
	for (int i = 0; i < CAP_EVENT_N; i++) {
		if (!e->event_off[i])
			continue;
		o[s.n] = e->event_off[i];
		cookies[s.n++] = CAP_FIRST_RECORD + i;
	}
	if (!s.n)
		return 0;
	err = bpfobj__attach(ps->env->bpf, PROG_CAPTURE_ENTRY, &s, &e->event_entry);
	if (!err)
		p_dbg("pid %d: %zu event probes on %s, while captures are", ps->pid, s.n, e->name);
	return err;
}

void probeset_detach_launch(const struct probeset *ps, struct examined *e)
{
	for (int g = 0; g < LG__COUNT; g++)
		probeset_dispose_pair(ps->env, ps->want.sync, &e->entry[g], &e->ret[g]);
}

/* The agent's USDT probes (agent.h): cuprobe:records and cuprobe:enable. */
#define AGENT_USDT_SITES 16

struct agent_sites {
	uint64_t offsets[AGENT_USDT_SITES];
	uint64_t ref_ctr[AGENT_USDT_SITES];
	size_t n;
};

/* The agent's USDT probe cuprobe:name in the file at path: 1 when found, 0 when not, or -errno. */
static int agent_usdt(const char *path, const char *name, struct agent_sites *out)
{
	int n = elf_usdt_sites(path, "cuprobe", name, out->offsets, out->ref_ctr,
			       AGENT_USDT_SITES);

	out->n = n > 0 ? (size_t)n : 0;
	if (n < 0)
		return n == -ENOEXEC ? 0 : n;
	return n > 0;
}

/* The agent's switch follows the window: CUPTI runs from warmup to the window's end. */
int probeset_switch_agent(struct probeset *ps, bool on)
{
	struct agent_sites sites;
	struct uprobe_spec s = { .path = ps->agent, .pid = ps->pid, .offsets = sites.offsets,
				 .ref_ctr_offsets = sites.ref_ctr };
	int found, err;

	if (!on || !ps->agent) {
		probeset_dispose(ps->env, false, &ps->agent_enable);
		return 0;
	}
	if (ps->agent_enable)
		return 0;
	found = agent_usdt(ps->agent, "enable", &sites);
	if (found <= 0)
		return found ?: -ENOENT;
	s.n = sites.n;
	err = bpfobj__attach(ps->env->bpf, PROG_AGENT_ENABLE, &s, &ps->agent_enable);
	p_dbg("pid %d: agent switched on: %s", ps->pid, err ? strerror(-err) : "ok");
	if (!err) {
		/* The dormant agent sleeps until woken; one that has not started yet
		 * (-EAGAIN) reads the semaphore when it does. */
		int w = agent_wake(ps->pid, ps->agent, &ps->agent_wake_fd);

		if (w && w != -EAGAIN && !ps->told_wake) {
			p_warn("pid %d: cannot wake the agent (%s): its windows will not start, "
			       "launches are recorded", ps->pid,
			       w == -ESRCH ? "it came through fork(), and only the parent's runs"
					   : strerror(-w));
			ps->told_wake = true;
		}
	}
	return err;
}

/* The agent library: it has the cuprobe:records USDT probe. Listen to it from now on. */
int probeset_attach_agent(struct probeset *ps, const struct examined *e)
{
	const char *path = e->open_path;
	struct agent_sites sites;
	int err;

	if (!ps->env->cupti || ps->agent || agent_usdt(path, "records", &sites) <= 0)
		return 0;
	err = bpfobj__attach_agent_records(ps->env->bpf, ps->pid, path, &ps->agent_records);
	if (err)
		return err;
	ps->agent = strdup(path);
	if (!ps->agent)
		return -ENOMEM;
	p_dbg("pid %d: agent in %s", ps->pid, e->name);
	/* Its eventfd is taken now, so that a window's wake is one write (-EAGAIN:
	 * the agent has not started yet; taken at the first window then). */
	agent_wake_prepare(ps->pid, ps->agent, &ps->agent_wake_fd);
	return probeset_switch_agent(ps, ps->want.agent);
}


int probeset_attach_step(struct probeset *ps, const struct examined *e)
{
	const struct step_spec *step = ps->step_spec;
	const char *path = e->name;
	struct step_sites sites;
	struct uprobe_spec s = { .path = e->open_path, .pid = ps->pid, .offsets = sites.offsets };
	int found, err;

	if (!step || ps->step || !step_spec__wants_object(step, path))
		return 0;
	/* Its exit is in .symtab, too long a walk for a hold: after it (probeset__step_walk). */
	if (step_source(step)->walked) {
		if (!ps->step_walk)
			ps->step_walk = (size_t)(e - OBJ(ps, 0)) + 1;
		return 0;
	}
	found = step_spec__find(step, e->open_path, &sites);
	if (found <= 0)
		return found;
	/* A function, not a USDT site (a nop the kernel emulates, with its semaphore). */
	if (!step_source(step)->notes)
		placement_adjust(e->fd, e->name, (const char *const[]){ step->symbol }, 1,
				 sites.offsets);
	s.n = sites.n;
	s.ref_ctr_offsets = sites.ref_ctr;
	err = bpfobj__attach(ps->env->bpf, PROG_STEP, &s, &ps->step);
	if (err)
		return err;
	ps->step_object = strdup(path);
	p_dbg("pid %d: step probe %s in %s (%zu sites)", ps->pid, step_spec__str(step), path,
	      sites.n);
	return 0;
}

/* Where each of step_torch_syms is in the file behind fd: how many are, or -errno. */
static int torch_offsets(struct probeset *ps, int fd, const char *path, uint64_t *found)
{
	if (ps->env->objects)
		return objcache__symtab_offsets(ps->env->objects, fd, step_torch_syms,
						STEP_TORCH_SYMS, found, NULL);
	return elf_func_offsets(path, step_torch_syms, STEP_TORCH_SYMS, found);
}

/* Exits before entries: an entry never pushes a range whose exit nothing would pop. */
static int attach_torch_links(struct probeset *ps, const char *path, uint64_t *offs)
{
	struct uprobe_spec s = { .path = path, .pid = ps->pid, .offsets = &offs[1], .n = 1 };
	int err = bpfobj__attach(ps->env->bpf, PROG_TORCH_EXIT, &s, &ps->step_exit);

	s.offsets = &offs[0];
	if (!err)
		err = bpfobj__attach(ps->env->bpf, PROG_TORCH_ENTER, &s, &ps->step);
	if (err)
		probeset_dispose_pair(ps->env, true, &ps->step, &ps->step_exit);
	return err;
}

/*
 * --step torch: the walk of the object's .symtab for the range exit, once
 * per file (objcache), off the process's hold; then the exit and entry
 * probes. An object without them says why in step_why.
 */
int probeset_attach_torch_step(struct probeset *ps)
{
	uint64_t found[STEP_TORCH_SYMS] = {}, offs[2], t0 = clock_mono_ns();
	const struct step_torch_form *form;
	char path[32], version[64];
	const char *names[2];
	struct examined *e;
	int fd, n, err;

	if (!ps->step_walk || ps->step)
		return 0;
	e = OBJ(ps, ps->step_walk - 1);
	ps->step_walk = 0;
	fd = e->fd >= 0 ? dup(e->fd) : procmaps__open(ps->pid, &e->where);
	if (fd < 0)
		return e->fd >= 0 ? -errno : fd;
	target_file_fd_path(fd, path, sizeof(path));
	n = torch_offsets(ps, fd, path, found);
	form = step_torch_pick(found, offs, names);
	p_dbg("pid %d: %s: record_function's entry and exit looked up in %.2f ms", ps->pid,
	      e->name, (clock_mono_ns() - t0) / 1e6);
	if (n >= 0 && (!offs[0] || !offs[1])) {
		step_torch_version(e->name, version, sizeof(version));
		snprintf(ps->step_why, sizeof(ps->step_why),
			 "%s (torch %s) has no %s%s%s: this torch is not supported by --step torch "
			 "(%s tested)", e->name, version,
			 offs[0] ? "" : "record_function_enter_new (with a C++11 or pre-C++11 "
					"std::string)",
			 !offs[0] && !offs[1] ? " nor " : "",
			 offs[1] ? "" : "record_function_exit_new in its .symtab",
			 STEP_TORCH_TESTED);
		close(fd);
		return 0;
	}
	/* The exit's program reads nothing of the call: its probe may go past the mov
	 * the kernel would single-step, to the tail jmp it emulates. */
	err = n < 0 ? n : placement_adjust_for(fd, e->name, names, (const bool[]){ false, true },
					       2, offs);
	if (!err)
		err = bpfobj__set_torch_prefix(ps->env->bpf, ps->pid, ps->step_spec->symbol,
					       form->string_abi);
	if (!err)
		err = attach_torch_links(ps, path, offs);
	close(fd);
	if (err)
		return err;
	ps->step_object = strdup(e->name);
	p_dbg("pid %d: step probe %s in %s (range entry and exit, %s)", ps->pid,
	      step_spec__str(ps->step_spec), e->name, form->what);
	return 0;
}
