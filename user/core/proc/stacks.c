// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Naming launch stacks. Native frames through libdwfl (one Dwfl per
 * process, reported from /proc/PID/maps; debug info where the objects or
 * /usr/lib/debug have it), inlined frames from DWARF scopes; an address no
 * module or symbol covers falls back to the ELF symbol cache (symbols.h),
 * then to object+offset, and is counted. Python frames: stacks_py.c.
 * Merging follows py-spy: each native _PyEval_EvalFrameDefault frame stands
 * for the Python frames of its evaluation; Python frames left over (the
 * native walk stopped inside code built without frame pointers) go above
 * the native ones.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "core/proc/elf_file.h"
#include "core/proc/procmaps.h"
#include "core/proc/pyproc.h"
#include "core/proc/stacks.h"
#include "core/proc/stacks_int.h"
#include "core/proc/symbols.h"
#include "util/hashmap.h"
#include "util/vec.h"

struct dw_proc {
	pid_t pid;
	Dwfl *dwfl;	/* NULL: could not be reported (the process is gone) */
};

static size_t stack_hash(long key, void *ctx)
{
	const struct stack *k = (const void *)key;

	(void)ctx;
	return hash_combine(hash_combine(hash_u64((uint64_t)k->pid), hash_u64(k->ustack)),
			    hash_combine((size_t)k->pystack, k->flags));
}

static bool stack_equal(long a, long b, void *ctx)
{
	const struct stack *x = (const void *)a, *y = (const void *)b;

	(void)ctx;
	return x->pid == y->pid && x->ustack == y->ustack && x->pystack == y->pystack &&
	       x->flags == y->flags;
}

static size_t code_hash(long key, void *ctx)
{
	const struct py_code *k = (const void *)key;

	(void)ctx;
	return hash_combine(hash_u64((uint64_t)k->pid << 32 | k->id), hash_u64(k->addr));
}

static bool code_equal(long a, long b, void *ctx)
{
	const struct py_code *x = (const void *)a, *y = (const void *)b;

	(void)ctx;
	return x->pid == y->pid && x->id == y->id && x->addr == y->addr;
}

static size_t code_key_hash(long key, void *ctx)
{
	const struct py_code_key *k = (const void *)key;

	(void)ctx;
	return hash_combine(hash_u64((uint64_t)k->tgid << 32 | k->id), hash_u64(k->code));
}

static bool code_key_equal(long a, long b, void *ctx)
{
	(void)ctx;
	return !memcmp((const void *)a, (const void *)b, sizeof(struct py_code_key));
}

static void free_keys(struct hmap *h)
{
	const struct hmap_entry *e;
	size_t bkt;

	hmap__for_each_entry(h, e, bkt)
		free((void *)e->key);
	hmap__clear(h);
}

struct stacks *stacks__new(int fd, int py_fd, int code_fd, struct symbols *syms)
{
	struct stacks *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->fd = fd;
	s->py_fd = py_fd;
	s->code_fd = code_fd;
	s->syms = syms;
	s->dw = VEC_INIT(struct dw_proc);
	s->py = VEC_INIT(struct py_proc);
	s->strings = hmap__new(hmap_str_hash, hmap_str_equal, NULL);
	s->by_key = hmap__new(stack_hash, stack_equal, NULL);
	s->codes = hmap__new(code_hash, code_equal, NULL);
	s->live_u = hmap__new(hmap_u64_hash, hmap_u64_equal, NULL);
	s->live_py = hmap__new(hmap_u64_hash, hmap_u64_equal, NULL);
	s->live_codes = hmap__new(code_key_hash, code_key_equal, NULL);
	if (!s->by_key || !s->codes || !s->strings || !s->live_u || !s->live_py ||
	    !s->live_codes) {
		stacks__free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

void stacks__free(struct stacks *s)
{
	const struct hmap_entry *e;
	size_t bkt;

	if (!s)
		return;
	if (s->by_key) {
		hmap__for_each_entry(s->by_key, e, bkt) {
			struct stack *st = (void *)e->key;

			free(st->frames);
			free(st);
		}
		hmap__free(s->by_key);
	}
	if (s->codes) {
		hmap__for_each_entry(s->codes, e, bkt) {
			struct py_code *c = (void *)e->key;

			free(c->name);
			free(c->file);
			free(c->lines);
			free(c);
		}
		hmap__free(s->codes);
	}
	for (size_t i = 0; i < s->dw.len; i++)
		if (vec_at(&s->dw, struct dw_proc, i)->dwfl)
			dwfl_end(vec_at(&s->dw, struct dw_proc, i)->dwfl);
	if (s->strings) {
		hmap__for_each_entry(s->strings, e, bkt)
			free((char *)e->key);
		hmap__free(s->strings);
	}
	hmap__free(s->live_u);
	hmap__free(s->live_py);
	if (s->live_codes) {
		free_keys(s->live_codes);
		hmap__free(s->live_codes);
	}
	vec__free(&s->dw);
	vec__free(&s->py);
	free(s);
}

/* A frame's name, kept once until stacks__free. NULL when out of memory. */
const char *stacks_keep(struct stacks *s, const char *fmt, ...)
{
	char *str;
	va_list ap;
	long old;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&str, fmt, ap);
	va_end(ap);
	if (n < 0)
		return NULL;
	/* ';' separates frames in folded stacks. */
	for (char *p = str; *p; p++)
		if (*p == ';')
			*p = ':';
	if (hmap__find(s->strings, (long)str, &old)) {
		free(str);
		return (const char *)old;
	}
	if (hmap__add(s->strings, (long)str, (long)str)) {
		free(str);
		return NULL;
	}
	return str;
}

/* ---- native frames ---- */

static const char *base_name(const char *path)
{
	const char *b = path ? strrchr(path, '/') : NULL;

	return b ? b + 1 : path;
}

/*
 * Modules are reported from the symbol cache's copy of the process's maps,
 * not from /proc: launches are named after the ring is read, when a short
 * process may be gone. Debug info is looked for the standard way (the file,
 * .gnu_debuglink, /usr/lib/debug/.build-id).
 */

/*
 * Separate debug files by build ID under /usr/lib/debug, root's folder, and
 * only there: the standard search also tries the folder of the target's file
 * and the target's own .gnu_debuglink name (a path of its choosing, opened
 * with a plain open(): a FIFO there blocks), and debuginfod over the network.
 * A file's own DWARF is read without asking this.
 */
static int find_debuginfo_by_build_id(Dwfl_Module *mod, void **userdata, const char *modname,
				      Dwarf_Addr base, const char *file_name,
				      const char *debuglink_file, GElf_Word debuglink_crc,
				      char **debuginfo_file_name)
{
	const unsigned char *id;
	GElf_Addr vaddr;
	char path[PATH_MAX];
	int n, len, fd;

	(void)userdata, (void)modname, (void)base, (void)file_name, (void)debuglink_file,
		(void)debuglink_crc;
	n = dwfl_module_build_id(mod, &id, &vaddr);
	if (n < 2 || n > 64)
		return -1;
	len = snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%02x/", id[0]);
	for (int i = 1; i < n; i++)
		len += snprintf(path + len, sizeof(path) - (size_t)len, "%02x", id[i]);
	snprintf(path + len, sizeof(path) - (size_t)len, ".debug");
	fd = target_file_open(path, true);
	if (fd < 0)
		return -1;
	*debuginfo_file_name = strdup(path);
	return fd;
}

static const Dwfl_Callbacks file_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = find_debuginfo_by_build_id,
	.section_address = dwfl_offline_section_address,
};

/*
 * Reports each mapped ELF file once, at the bias its offset-0 mapping gives,
 * read through the descriptor procmaps__open checked (libdwfl keeps it).
 */
/*
 * The load address of the file mapped at m (an executable mapping, at any
 * offset): the one of its segments m maps tells it. false: none does.
 */
static bool load_base(const struct elf_load *loads, size_t n, const struct map_entry *m,
		      uint64_t *base)
{
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);

	for (size_t i = 0; i < n; i++) {
		const struct elf_load *l = &loads[i];

		if ((l->offset & ~(page - 1)) <= m->offset && m->offset < l->offset + l->filesz) {
			*base = m->start - l->vaddr - m->offset + l->offset;
			return true;
		}
	}
	return false;
}

/* Each file of the process's executable mappings, at its load address, once. */
static void report_maps(Dwfl *dwfl, pid_t pid, const struct procmaps *pm)
{
	uint64_t last_dev = 0, last_ino = 0, last_base = 0;

	for (size_t i = 0; i < pm->n; i++) {
		const struct map_entry *m = &pm->v[i];
		struct elf_file *ef;
		const struct elf_load *loads;
		char path[32];
		size_t n;
		uint64_t base;
		bool found;
		int fd;

		if (!m->exec || !m->path || m->path[0] != '/' || !m->inode)
			continue;
		fd = procmaps__open(pid, m);
		if (fd < 0)
			continue;
		ef = elf_file__fdopen(dup(fd));
		if (!ef) {
			close(fd);
			continue;
		}
		loads = elf_file__loads(ef, &n);
		found = load_base(loads, n, m, &base);
		elf_file__close(ef);
		if (!found || (m->dev == last_dev && m->inode == last_ino && base == last_base)) {
			close(fd);
			continue;
		}
		last_dev = m->dev;
		last_ino = m->inode;
		last_base = base;
		target_file_fd_path(fd, path, sizeof(path));
		/* libdwfl closes fd with the module, or not at all when there is none. */
		if (!dwfl_report_elf(dwfl, base_name(m->path), path, fd, base, false))
			close(fd);
	}
}

static struct dw_proc *dw_get(struct stacks *s, pid_t pid)
{
	const struct procmaps *pm;
	struct dw_proc *d;

	for (size_t i = 0; i < s->dw.len; i++)
		if (vec_at(&s->dw, struct dw_proc, i)->pid == pid)
			return vec_at(&s->dw, struct dw_proc, i);
	d = vec__push(&s->dw);
	if (!d)
		return NULL;
	d->pid = pid;
	d->dwfl = dwfl_begin(&file_callbacks);
	pm = symbols__maps(s->syms, pid);
	if (d->dwfl) {
		dwfl_report_begin(d->dwfl);
		if (pm)
			report_maps(d->dwfl, pid, pm);
		dwfl_report_end(d->dwfl, NULL, NULL);
	}
	return d;
}

void stacks__refresh(struct stacks *s, pid_t pid)
{
	for (size_t i = 0; i < s->dw.len; i++) {
		struct dw_proc *d = vec_at(&s->dw, struct dw_proc, i);

		if (d->pid != pid)
			continue;
		if (d->dwfl)
			dwfl_end(d->dwfl);
		*d = *vec_at(&s->dw, struct dw_proc, s->dw.len - 1);
		vec__truncate(&s->dw, s->dw.len - 1);
		return;
	}
}

/* One name: "fn (file:line)", with " [inlined]" for a frame inlined into its caller. */
static int push_name(struct stacks *s, struct vec *out, const char *fn, const char *file,
		     int line, bool inlined)
{
	const char **slot = vec__push(out);
	char *dem = symbols__demangle(fn);
	const char *name = dem ? dem : fn;

	if (!slot) {
		free(dem);
		return -ENOMEM;
	}
	if (file && line > 0)
		*slot = stacks_keep(s, "%s (%s:%d)%s", name, base_name(file), line,
			     inlined ? " [inlined]" : "");
	else
		*slot = stacks_keep(s, "%s%s", name, inlined ? " [inlined]" : "");
	free(dem);
	return *slot ? 0 : -ENOMEM;
}

static const char *call_file(Dwarf_Die *cu, Dwarf_Die *die)
{
	Dwarf_Attribute a;
	Dwarf_Files *files;
	Dwarf_Word idx;
	size_t n;

	if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &a), &idx) ||
	    dwarf_getsrcfiles(cu, &files, &n) || idx >= n)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));

	return n ? n : dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
}

/*
 * The frames at one return address (ip - 1; the leaf's ip is the probed
 * function's entry), innermost first: inlined functions, then the function
 * that holds them. *eval: it is CPython's evaluation loop.
 */
static int native_frames(struct stacks *s, struct stack *st, pid_t pid, uint64_t ip, bool leaf,
			 struct vec *out, bool *eval)
{
	uint64_t pc = leaf ? ip : ip - 1;
	struct dw_proc *d = dw_get(s, pid);
	Dwfl_Module *mod = d && d->dwfl ? dwfl_addrmodule(d->dwfl, pc) : NULL;
	const char *fn = NULL, *file = NULL, *name;
	Dwarf_Die *cu, *scopes = NULL;
	Dwfl_Line *line;
	Dwarf_Addr bias;
	GElf_Off off;
	GElf_Sym sym;
	int lineno = 0, n, err;

	if (mod)
		fn = dwfl_module_addrinfo(mod, pc, &off, &sym, NULL, NULL, NULL);
	if (!fn) {
		const char **slot = vec__push(out);
		int rc = symbols__name(s->syms, pid, ip, &name);

		if (!slot || rc < 0)
			return -ENOMEM;
		*slot = stacks_keep(s, "%s", name);
		st->unsymbolized += rc != 0;
		*eval = false;
		return *slot ? 0 : -ENOMEM;
	}
	*eval = !strncmp(fn, "_PyEval_EvalFrameDefault", 24);
	if ((line = dwfl_module_getsrc(mod, pc)))
		file = dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL);
	cu = dwfl_module_addrdie(mod, pc, &bias);
	n = cu ? dwarf_getscopes(cu, pc - bias, &scopes) : 0;
	/*
	 * dwarf_getscopes detours through an inlined function's abstract
	 * definition; the chain of concrete scopes around the innermost one is
	 * what names each inlined caller (as eu-addr2line -i does).
	 */
	if (n > 0 && dwarf_tag(&scopes[0]) == DW_TAG_inlined_subroutine) {
		Dwarf_Die inner = scopes[0];

		free(scopes);
		scopes = NULL;
		n = dwarf_getscopes_die(&inner, &scopes);
	} else {
		n = 0;
	}
	for (int i = 0; i < n; i++) {
		Dwarf_Attribute a;
		Dwarf_Word v;
		const char *iname;

		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram)
			break;
		if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
			continue;
		iname = die_name(&scopes[i]);
		err = push_name(s, out, iname ? iname : "??", file, lineno, true);
		if (err) {
			free(scopes);
			return err;
		}
		/* The next frame out is where this one was inlined. */
		file = call_file(cu, &scopes[i]);
		lineno = dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &a), &v) ? 0 :
											   (int)v;
	}
	free(scopes);
	return push_name(s, out, fn, file, lineno, false);
}

/* ---- one stack ---- */

size_t stack_merge(const struct merge_frame *native, size_t nn, const char *const *py,
		   uint64_t entry, size_t np, const char **out)
{
	size_t n = 0, next = 0;

	for (size_t i = 0; i < nn;) {
		size_t end = i + 1;

		while (end < nn && native[end].ip == native[i].ip)
			end++;
		if (native[i].eval && next < np) {
			/* This evaluation's Python frames, up to the one that began it. */
			while (next < np) {
				size_t k = next++;

				out[n++] = py[k];
				if (k < 64 && entry & 1ull << k)
					break;
			}
		} else {
			while (i < end)
				out[n++] = native[i++].name;
		}
		i = end;
	}
	/* What the native walk did not reach: above it all (the root side). */
	while (next < np)
		out[n++] = py[next++];
	return n;
}

/*
 * Frame-pointer unwinding through code built without frame pointers reads
 * whatever the register held: the walk is cut at the first return address
 * outside executable code (what follows it is noise, not frames).
 */
static uint32_t plausible(struct stacks *s, pid_t pid, const uint64_t *ips, uint32_t n)
{
	const struct procmaps *pm = symbols__maps(s->syms, pid);
	const struct map_entry *m;

	if (!pm || !pm->n)
		return n;
	for (uint32_t i = 0; i < n; i++) {
		m = procmaps__find(pm, ips[i]);
		if (!m || !m->exec)
			return i;
	}
	return n;
}

/*
 * A code object a new stack showed: its entry in BPF's py_codes (BPF's
 * again, if it was read once more after a sweep) goes at the next sweep.
 */
static void live_code(struct stacks *s, pid_t pid, uint64_t code, uint32_t id)
{
	struct py_code_key key = { .code = code, .tgid = (uint32_t)pid, .id = id }, *k;

	if (!id || hmap__find(s->live_codes, (long)&key, NULL) || !(k = malloc(sizeof(*k))))
		return;
	*k = key;
	if (hmap__add(s->live_codes, (long)k, (long)k))
		free(k);
}

static int build(struct stacks *s, struct stack *st)
{
	struct vec names = VEC_INIT(const char *), native = VEC_INIT(struct merge_frame);
	struct py_stack *raw = NULL;
	struct ustack *us = NULL;
	const char *py[PY_MAX_FRAMES];
	struct py_proc *p = NULL;
	uint64_t ips[STACK_MAX_DEPTH] = {};
	uint32_t nips = 0, np = 0;
	int err = 0;

	if (st->flags & LAUNCH_F_USTACK && s->fd >= 0 && (us = malloc(sizeof(*us))) &&
	    !bpf_map_lookup_elem(s->fd, &st->ustack, us)) {
		nips = us->n < STACK_MAX_DEPTH ? us->n : STACK_MAX_DEPTH;
		memcpy(ips, us->ip, nips * sizeof(ips[0]));
		st->truncated = us->truncated != 0;
	} else if (st->flags & LAUNCH_F_USTACK) {
		/* Swept before it was read: only another process's launch can have named it. */
		s->counts.lost++;
	}
	free(us);
	nips = plausible(s, st->pid, ips, nips);
	if (st->flags & LAUNCH_F_PYSTACK && (p = py_proc_of(s, st->pid)) &&
	    (raw = calloc(1, sizeof(*raw))) && !bpf_map_lookup_elem(s->py_fd, &st->pystack, raw)) {
		np = raw->n < PY_MAX_FRAMES ? raw->n : PY_MAX_FRAMES;
		st->truncated |= raw->truncated != 0;
		for (uint32_t i = 0; i < np; i++) {
			py[i] = py_frame_name(s, st, p, &raw->f[i], raw->id[i]);
			live_code(s, st->pid, raw->f[i].code, raw->id[i]);
		}
		st->python = np;
	}
	for (uint32_t i = 0; i < nips && !err; i++) {
		size_t before = names.len;
		bool eval = false;

		err = native_frames(s, st, st->pid, ips[i], i == 0, &names, &eval);
		for (size_t k = before; !err && k < names.len; k++) {
			struct merge_frame *m = vec__push(&native);

			if (!m) {
				err = -ENOMEM;
				break;
			}
			*m = (struct merge_frame){ .name = *vec_at(&names, const char *, k), .ip = i,
						   .eval = eval };
		}
	}
	st->frames = err ? NULL : calloc(native.len + np + 1, sizeof(*st->frames));
	if (st->frames) {
		const char **leaf_first = calloc(native.len + np + 1, sizeof(*leaf_first));

		if (leaf_first) {
			st->n = (uint32_t)stack_merge(native.data, native.len, py,
						      raw ? raw->entry : 0, np, leaf_first);
			for (uint32_t i = 0; i < st->n; i++)
				st->frames[i] = leaf_first[st->n - 1 - i] ?: "?";
			free(leaf_first);
		} else {
			err = -ENOMEM;
		}
	} else if (!err) {
		err = -ENOMEM;
	}
	free(raw);
	vec__free(&names);
	vec__free(&native);
	return err;
}

const struct stack *stacks__get(struct stacks *s, const struct launch_event *e)
{
	struct stack key = { .pid = (pid_t)e->tgid, .flags = e->flags & (LAUNCH_F_USTACK |
									  LAUNCH_F_PYSTACK) };
	struct stack *st;
	long v;

	/* A lost user stack keeps its Python frames, if any. */
	if (!(e->flags & (LAUNCH_F_USTACK | LAUNCH_F_PYSTACK)))
		return NULL;
	key.ustack = e->flags & LAUNCH_F_USTACK ? e->ustack : 0;
	key.pystack = e->flags & LAUNCH_F_PYSTACK ? e->pystack : 0;
	if (hmap__find(s->by_key, (long)&key, &v))
		return (const struct stack *)v;
	st = calloc(1, sizeof(*st));
	if (!st)
		return NULL;
	*st = key;
	if (build(s, st) || hmap__add(s->by_key, (long)st, (long)st)) {
		free(st->frames);
		free(st);
		return NULL;
	}
	s->counts.unique++;
	return st;
}

bool stacks__trace_stack(void *ctx, const struct launch_event *e, struct trace_stack *out)
{
	const struct stack *st = stacks__get(ctx, e);

	if (!st)
		return false;
	*out = (struct trace_stack){ .n = st->n, .frames = st->frames,
				     .truncated = st->truncated,
				     .unsymbolized = st->unsymbolized };
	return true;
}

void stacks__forget(struct stacks *s, pid_t pid)
{
	struct vec gone = VEC_INIT(struct stack *);
	const struct hmap_entry *e;
	size_t bkt;

	stacks__refresh(s, pid);
	for (size_t i = 0; i < s->py.len; i++) {
		if (vec_at(&s->py, struct py_proc, i)->pid != pid)
			continue;
		*vec_at(&s->py, struct py_proc, i) = *vec_at(&s->py, struct py_proc, s->py.len - 1);
		vec__truncate(&s->py, s->py.len - 1);
		break;
	}
	hmap__for_each_entry(s->by_key, e, bkt) {
		struct stack **slot;

		if (((struct stack *)e->key)->pid != pid || !(slot = vec__push(&gone)))
			continue;
		*slot = (struct stack *)e->key;
	}
	for (size_t i = 0; i < gone.len; i++) {
		struct stack *st = *vec_at(&gone, struct stack *, i);

		hmap__delete(s->by_key, (long)st, NULL, NULL);
		free(st->frames);
		free(st);
	}
	vec__free(&gone);
	gone = (struct vec)VEC_INIT(struct py_code *);
	hmap__for_each_entry(s->codes, e, bkt) {
		struct py_code **slot;

		if (((struct py_code *)e->key)->pid != pid || !(slot = vec__push(&gone)))
			continue;
		*slot = (struct py_code *)e->key;
	}
	for (size_t i = 0; i < gone.len; i++) {
		struct py_code *c = *vec_at(&gone, struct py_code *, i);

		hmap__delete(s->codes, (long)c, NULL, NULL);
		free(c->name);
		free(c->file);
		free(c->lines);
		free(c);
	}
	vec__free(&gone);
}

/*
 * BPF's maps keep one entry per unique stack, keyed by a hash of its frames.
 * Once half a map is stacks the loader has named, those entries go: a stack
 * that comes again is inserted again under the same key, which the loader
 * knows by then. So the maps never fill with stacks already named.
 */
static void sweep(struct hmap *live, int fd, size_t cap)
{
	const struct hmap_entry *e;
	size_t bkt;

	if (hmap__size(live) < cap / 2)
		return;
	hmap__for_each_entry(live, e, bkt) {
		uint64_t key = (uint64_t)e->key;

		bpf_map_delete_elem(fd, &key);
	}
	hmap__clear(live);
}

void stacks__count(struct stacks *s, const struct launch_event *e)
{
	s->counts.lost += (e->flags & LAUNCH_F_ULOST) != 0;
	s->counts.python_lost += (e->flags & LAUNCH_F_PYLOST) != 0;
	if (e->flags & LAUNCH_F_USTACK && !hmap__set(s->live_u, (long)e->ustack, 1, NULL, NULL))
		sweep(s->live_u, s->fd, STACK_MAP_ENTRIES);
	if (e->flags & LAUNCH_F_PYSTACK && !hmap__set(s->live_py, (long)e->pystack, 1, NULL, NULL))
		sweep(s->live_py, s->py_fd, PY_STACK_ENTRIES);
	if (hmap__size(s->live_codes) >= PY_CODE_ENTRIES / 2) {
		const struct hmap_entry *he;
		size_t bkt;

		hmap__for_each_entry(s->live_codes, he, bkt)
			bpf_map_delete_elem(s->code_fd, (void *)he->key);
		free_keys(s->live_codes);
	}
}

void stacks__counts(const struct stacks *s, struct stacks_counts *c)
{
	*c = s->counts;
}
