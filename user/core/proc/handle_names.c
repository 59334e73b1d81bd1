// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Per process, two tables: kernel handle -> (name, module), and module or
 * library handle -> its label. Strings are interned for the whole session:
 * a launch held for the GPU join keeps pointing at its name even after its
 * handle is made again for another kernel (a module unloaded and another
 * loaded at the same address).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/proc/handle_names.h"
#include "core/proc/symbols.h"
#include "util/hashmap.h"

const char *const name_apis[NAME__COUNT] = {
	[NAME_cuModuleGetFunction] = "cuModuleGetFunction",
	[NAME_cuLibraryGetKernel] = "cuLibraryGetKernel",
	[NAME_cudaLibraryGetKernel] = "cudaLibraryGetKernel",
	[NAME_cuKernelGetFunction] = "cuKernelGetFunction",
	[NAME_cudaGetFuncBySymbol] = "cudaGetFuncBySymbol",
	[NAME_cudaGetKernel] = "cudaGetKernel",
	[NAME___cudaGetKernel] = "__cudaGetKernel",
	[NAME_cuModuleLoad] = "cuModuleLoad",
	[NAME_cuLibraryLoadFromFile] = "cuLibraryLoadFromFile",
	[NAME_cudaLibraryLoadFromFile] = "cudaLibraryLoadFromFile",
	[NAME_cuModuleLoadData] = "cuModuleLoadData",
	[NAME_cuModuleLoadDataEx] = "cuModuleLoadDataEx",
	[NAME_cuModuleLoadFatBinary] = "cuModuleLoadFatBinary",
	[NAME_cuLibraryLoadData] = "cuLibraryLoadData",
	[NAME_cudaLibraryLoadData] = "cudaLibraryLoadData",
};

struct hn_kernel {
	const char *name;
	const char *module;	/* NULL: its module's load was not seen */
	bool unnamed;
};

struct hn_proc {
	struct hmap *kernels;	/* handle -> struct hn_kernel * */
	struct hmap *modules;	/* module or library handle -> interned label */
};

struct handle_names {
	struct hmap *procs;	/* pid -> struct hn_proc * */
	struct hn_proc *last;	/* launches come in runs from one process */
	pid_t last_pid;
	struct hmap *strings;	/* interned strings, key and value the same */
};

struct handle_names *handle_names__new(void)
{
	struct handle_names *h = calloc(1, sizeof(*h));

	if (!h)
		return NULL;
	h->procs = hmap__new(hmap_u64_hash, hmap_u64_equal, NULL);
	h->strings = hmap__new(hmap_str_hash, hmap_str_equal, NULL);
	if (!h->procs || !h->strings) {
		handle_names__free(h);
		errno = ENOMEM;
		return NULL;
	}
	return h;
}

static void hn_proc_free(struct hn_proc *p)
{
	const struct hmap_entry *e;
	size_t bkt;

	if (!p)
		return;
	if (p->kernels) {
		hmap__for_each_entry(p->kernels, e, bkt)
			free((void *)e->value);
		hmap__free(p->kernels);
	}
	hmap__free(p->modules);
	free(p);
}

void handle_names__free(struct handle_names *h)
{
	const struct hmap_entry *e;
	size_t bkt;

	if (!h)
		return;
	if (h->procs) {
		hmap__for_each_entry(h->procs, e, bkt)
			hn_proc_free((struct hn_proc *)e->value);
		hmap__free(h->procs);
	}
	if (h->strings) {
		hmap__for_each_entry(h->strings, e, bkt)
			free((void *)e->key);
		hmap__free(h->strings);
	}
	free(h);
}

static const char *intern(struct handle_names *h, const char *s)
{
	long found;
	char *copy;

	if (hmap__find(h->strings, (long)s, &found))
		return (const char *)found;
	copy = strdup(s);
	if (!copy)
		return NULL;
	if (hmap__add(h->strings, (long)copy, (long)copy)) {
		free(copy);
		return NULL;
	}
	return copy;
}

static struct hn_proc *hn_proc_get(struct handle_names *h, pid_t pid, bool create)
{
	struct hn_proc *p;
	long found;

	if (h->last && h->last_pid == pid)
		return h->last;
	if (hmap__find(h->procs, pid, &found)) {
		h->last = (struct hn_proc *)found;
		h->last_pid = pid;
		return h->last;
	}
	if (!create)
		return NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->kernels = hmap__new(hmap_u64_hash, hmap_u64_equal, NULL);
	p->modules = hmap__new(hmap_u64_hash, hmap_u64_equal, NULL);
	if (!p->kernels || !p->modules || hmap__add(h->procs, pid, (long)p)) {
		hn_proc_free(p);
		return NULL;
	}
	return p;
}

static int put_kernel(struct hn_proc *p, uint64_t handle, const struct hn_kernel *k)
{
	struct hn_kernel *cur;
	long found;

	if (hmap__find(p->kernels, (long)handle, &found)) {
		*(struct hn_kernel *)found = *k;
		return 0;
	}
	cur = malloc(sizeof(*cur));
	if (!cur)
		return -ENOMEM;
	*cur = *k;
	if (hmap__add(p->kernels, (long)handle, (long)cur)) {
		free(cur);
		return -ENOMEM;
	}
	return 0;
}

static const char *module_of(const struct hn_proc *p, uint64_t module)
{
	long found;

	return hmap__find(p->modules, (long)module, &found) ? (const char *)found : NULL;
}

/* A kernel by name: demangled, as runtime launches are named. */
static int add_by_name(struct handle_names *h, struct hn_proc *p, const struct name_event *e)
{
	struct hn_kernel k = { .module = module_of(p, e->ref) };
	char *dem;

	if (!(e->flags & NAME_F_STR))
		return 0; /* the name was unreadable: the handle stays unnamed */
	dem = symbols__demangle(e->str);
	k.name = dem ? intern(h, dem) : NULL;
	free(dem);
	return k.name ? put_kernel(p, e->handle, &k) : -ENOMEM;
}

/* A kernel's host stub: the name a runtime launch of that stub gets. */
static int add_by_stub(struct handle_names *h, struct hn_proc *p, struct symbols *syms,
		       pid_t pid, const struct name_event *e)
{
	struct hn_kernel k = { 0 };
	const char *name;
	int rc;

	rc = symbols__name(syms, pid, e->ref, &name);
	if (rc < 0)
		return rc;
	k.name = intern(h, name);
	k.unnamed = rc != 0;
	return k.name ? put_kernel(p, e->handle, &k) : -ENOMEM;
}

static int add_module(struct handle_names *h, struct hn_proc *p, struct symbols *syms,
		      pid_t pid, const struct name_event *e)
{
	const char *label = NULL;
	char buf[64];

	if (e->api < NAME_FIRST_LOAD_DATA) {
		if (!(e->flags & NAME_F_STR))
			return 0;
		label = e->str;
	} else if (symbols__name(syms, pid, e->ref, &label) < 0 || !strncmp(label, "0x", 2)) {
		/* An image in no mapped file: made in memory (a JIT, Triton's cache read). */
		snprintf(buf, sizeof(buf), "memory 0x%" PRIx64, (uint64_t)e->ref);
		label = buf;
	}
	label = intern(h, label);
	if (!label)
		return -ENOMEM;
	return hmap__set(p->modules, (long)e->handle, (long)label, NULL, NULL);
}

int handle_names__add(struct handle_names *h, struct symbols *syms, const struct name_event *e)
{
	struct hn_proc *p = hn_proc_get(h, e->tgid, true);
	long found;

	if (!p)
		return -ENOMEM;
	switch (e->api) {
	case NAME_cuModuleGetFunction:
	case NAME_cuLibraryGetKernel:
	case NAME_cudaLibraryGetKernel:
		return add_by_name(h, p, e);
	case NAME_cuKernelGetFunction:
		/* The kernel's name under its function handle, if the kernel was seen made. */
		if (!hmap__find(p->kernels, (long)e->ref, &found))
			return 0;
		return put_kernel(p, e->handle, (const struct hn_kernel *)found);
	case NAME_cudaGetFuncBySymbol:
	case NAME_cudaGetKernel:
	case NAME___cudaGetKernel:
		return add_by_stub(h, p, syms, e->tgid, e);
	default:
		return e->api < NAME__COUNT ? add_module(h, p, syms, e->tgid, e) : 0;
	}
}

const char *handle_names__find(struct handle_names *h, pid_t pid, uint64_t handle,
			       const char **module, bool *unnamed)
{
	struct hn_proc *p = hn_proc_get(h, pid, false);
	const struct hn_kernel *k;
	long found;

	if (!p || !hmap__find(p->kernels, (long)handle, &found))
		return NULL;
	k = (const struct hn_kernel *)found;
	if (module)
		*module = k->module;
	if (unnamed)
		*unnamed = k->unnamed;
	return k->name;
}
