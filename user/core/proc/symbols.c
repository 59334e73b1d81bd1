// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Address symbolization for target processes.
 *
 * Three caches, from hot to cold:
 *  - per process, a hash table (util/hashmap) from address to finished name,
 *    so that a repeated address costs one lookup: no allocation, no syscall;
 *  - per process, its executable mappings (procmaps__read_exec), kept after
 *    the process exits;
 *  - per mapped file (device, inode), its function symbols sorted by
 *    address, read with libelf the first time an address in it is named.
 *
 * Names live in a string pool that is only freed by symbols__free, so the
 * pointers symbols__name hands out stay valid across refreshes. Nothing here
 * is thread-safe: one consumer thread owns a struct symbols.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "core/proc/elf_file.h"
#include "core/proc/procmaps.h"
#include "core/proc/symbols.h"
#include "util/hashmap.h"
#include "util/vec.h"

/* From libstdc++ (we link -lstdc++); its header is C++ only. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

#define SYM_POOL_CHUNK	 (64 * 1024)
#define SYM_DELETED	 " (deleted)"
/* In .gnu.version: a non-default version, foo@V rather than foo@@V. */

/* A PT_LOAD segment: how file offsets map to ELF virtual addresses. */
struct sym_entry {
	uint64_t addr;
	uint64_t size;
	uint32_t name_off; /* into sym_file.names */
	uint8_t rank;	   /* higher wins among aliases, see elf.h */
};

/* The function symbols of one ELF file, or why there are none. */
struct sym_file {
	uint64_t dev;
	uint64_t ino;
	int err;
	struct elf_load *loads;
	size_t nloads;
	struct sym_entry *syms;
	size_t nsyms;
	size_t syms_cap;
	char *names;
	size_t names_len;
	size_t names_cap;
};

/* An address named: the name, in the pool, and symbols__name's return value for it. */
struct sym_name {
	const char *name;
	int rc;
};

struct sym_proc {
	pid_t pid;
	struct procmaps maps;	/* executable mappings: what names code */
	struct procmaps all;	/* every mapping, read on the first address outside them */
	bool all_read;
	struct hmap *names; /* address -> index in named */
	struct vec named;      /* struct sym_name */
};

struct sym_chunk {
	struct sym_chunk *next;
	size_t used;
	size_t cap;
	char data[];
};

struct symbols {
	struct hmap *procs; /* pid -> struct sym_proc * */
	struct sym_proc *last; /* events come in runs from one process */
	struct hmap *files; /* struct sym_file *, by (dev, inode) */
	struct sym_chunk *pool;
};

/* ---- string pool ---- */

static char *sym_pool_alloc(struct symbols *s, size_t len)
{
	struct sym_chunk *c = s->pool;
	char *p;

	if (!c || c->cap - c->used < len) {
		size_t cap = len > SYM_POOL_CHUNK ? len : SYM_POOL_CHUNK;

		c = malloc(sizeof(*c) + cap);
		if (!c)
			return NULL;
		c->cap = cap;
		c->used = 0;
		/* Keep filling the current chunk when this one is an outsize string. */
		if (s->pool && cap > SYM_POOL_CHUNK) {
			c->next = s->pool->next;
			s->pool->next = c;
		} else {
			c->next = s->pool;
			s->pool = c;
		}
	}
	p = c->data + c->used;
	c->used += len;
	return p;
}

__attribute__((format(printf, 2, 3)))
static const char *sym_pool_printf(struct symbols *s, const char *fmt, ...)
{
	va_list ap;
	char *p;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (len < 0)
		return NULL;
	p = sym_pool_alloc(s, (size_t)len + 1);
	if (!p)
		return NULL;
	va_start(ap, fmt);
	vsnprintf(p, (size_t)len + 1, fmt, ap);
	va_end(ap);
	return p;
}

static void sym_pool_free(struct symbols *s)
{
	struct sym_chunk *c, *next;

	for (c = s->pool; c; c = next) {
		next = c->next;
		free(c);
	}
	s->pool = NULL;
}

/* ---- per-file symbol tables ---- */

static int sym_file_add(const char *name, const GElf_Sym *sym, int rank, void *ctx)
{
	struct sym_file *f = ctx;
	size_t len = strlen(name) + 1;
	struct sym_entry *e;

	if (f->nsyms == f->syms_cap) {
		size_t cap = f->syms_cap ? f->syms_cap * 2 : 256;

		e = realloc(f->syms, cap * sizeof(*e));
		if (!e)
			return -ENOMEM;
		f->syms = e;
		f->syms_cap = cap;
	}
	if (f->names_cap - f->names_len < len) {
		size_t cap = f->names_cap ? f->names_cap * 2 : 4096;
		char *p;

		while (cap - f->names_len < len)
			cap *= 2;
		if (cap > UINT32_MAX)
			return -E2BIG;
		p = realloc(f->names, cap);
		if (!p)
			return -ENOMEM;
		f->names = p;
		f->names_cap = cap;
	}
	e = &f->syms[f->nsyms++];
	e->addr = sym->st_value;
	e->size = sym->st_size;
	e->name_off = (uint32_t)f->names_len;
	e->rank = (uint8_t)rank;
	memcpy(f->names + f->names_len, name, len);
	f->names_len += len;
	return 0;
}

/* By address; among aliases, sized symbols first, then by rank. */
static int sym_entry_cmp(const void *a, const void *b)
{
	const struct sym_entry *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (!x->size != !y->size)
		return x->size ? -1 : 1;
	return (int)y->rank - (int)x->rank;
}

/* Sorts and keeps one symbol per address: .symtab repeats .dynsym. */
static void sym_file_sort(struct sym_file *f)
{
	size_t i, out = 0;

	if (!f->nsyms)
		return;
	qsort(f->syms, f->nsyms, sizeof(*f->syms), sym_entry_cmp);
	for (i = 1; i < f->nsyms; i++)
		if (f->syms[i].addr != f->syms[out].addr)
			f->syms[++out] = f->syms[i];
	f->nsyms = out + 1;
}

static bool sym_path_deleted(const char *path)
{
	size_t len = strlen(path), dlen = strlen(SYM_DELETED);

	return len > dlen && !strcmp(path + len - dlen, SYM_DELETED);
}

static int sym_file_load(struct sym_file *f, pid_t pid, const struct map_entry *m)
{
	const struct elf_load *loads;
	struct elf_file *ef;
	int fd, err;

	/* map_files, else a regular file of the mapping's inode, never blocking (procmaps.h). */
	fd = procmaps__open(pid, m);
	if (fd < 0)
		return fd;
	ef = elf_file__fdopen(fd);
	if (!ef)
		return -errno;
	loads = elf_file__loads(ef, &f->nloads);
	f->loads = malloc((f->nloads ? f->nloads : 1) * sizeof(*f->loads));
	err = f->loads ? 0 : -ENOMEM;
	if (!err) {
		memcpy(f->loads, loads, f->nloads * sizeof(*f->loads));
		err = elf_file__for_each_func(ef, sym_file_add, f);
	}
	if (!err)
		sym_file_sort(f);
	elf_file__close(ef);
	return err;
}

static void sym_file_free(struct sym_file *f)
{
	free(f->loads);
	free(f->syms);
	free(f->names);
	free(f);
}

/* Clears what a failed load left, so a failure is cached as "no symbols". */
static void sym_file_reset(struct sym_file *f)
{
	free(f->loads);
	free(f->syms);
	free(f->names);
	f->loads = NULL;
	f->syms = NULL;
	f->names = NULL;
	f->nloads = f->nsyms = f->syms_cap = 0;
	f->names_len = f->names_cap = 0;
}

static size_t sym_file_hash(long key, void *ctx)
{
	const struct sym_file *f = (const struct sym_file *)key;

	(void)ctx;
	return hash_combine(hash_u64(f->dev), (size_t)f->ino);
}

static bool sym_file_equal(long key1, long key2, void *ctx)
{
	const struct sym_file *x = (const struct sym_file *)key1;
	const struct sym_file *y = (const struct sym_file *)key2;

	(void)ctx;
	return x->dev == y->dev && x->ino == y->ino;
}

/* The symbols of the file behind m, loaded on first use. NULL: no memory. */
static struct sym_file *sym_file_get(struct symbols *s, pid_t pid, const struct map_entry *m)
{
	const struct sym_file key = { .dev = m->dev, .ino = m->inode };
	struct sym_file *f;
	long found;

	if (hmap__find(s->files, (long)&key, &found))
		return (struct sym_file *)found;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	f->dev = m->dev;
	f->ino = m->inode;
	f->err = sym_file_load(f, pid, m);
	if (f->err == -ENOMEM) {
		sym_file_free(f);
		return NULL;
	}
	if (f->err)
		sym_file_reset(f);
	if (hmap__add(s->files, (long)f, (long)f)) {
		sym_file_free(f);
		return NULL;
	}
	return f;
}

/* The symbol covering file offset off, and off's distance into it. */
static const struct sym_entry *sym_file_find(const struct sym_file *f, uint64_t off,
					     uint64_t *delta)
{
	const struct elf_load *l = elf_load_by_offset(f->loads, f->nloads, off);
	size_t lo = 0, hi = f->nsyms;
	const struct sym_entry *e;
	uint64_t vaddr;

	if (!l)
		return NULL;
	vaddr = off - l->offset + l->vaddr;
	/* The last symbol at or below vaddr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	e = &f->syms[lo - 1];
	/*
	 * A size says where the function ends. Without one, trust proximity,
	 * but not across segments: data after the last code symbol is not code.
	 */
	if (e->size ? vaddr - e->addr >= e->size : e->addr < l->vaddr)
		return NULL;
	*delta = vaddr - e->addr;
	return e;
}

/* ---- per-process name tables ---- */

/* The name given to addr in p before, or NULL. */
static const struct sym_name *sym_names_find(const struct sym_proc *p, uint64_t addr)
{
	long i;

	if (!hmap__find(p->names, (long)addr, &i))
		return NULL;
	return vec_at(&p->named, struct sym_name, i);
}

static int sym_names_put(struct sym_proc *p, uint64_t addr, const char *name, int rc)
{
	struct sym_name *n = vec__push(&p->named);

	if (!n)
		return -ENOMEM;
	n->name = name;
	n->rc = rc;
	if (hmap__add(p->names, (long)addr, (long)(p->named.len - 1))) {
		vec__truncate(&p->named, p->named.len - 1);
		return -ENOMEM;
	}
	return 0;
}

/* Forgets cached names; the strings stay in the pool for earlier callers. */
static void sym_names_clear(struct sym_proc *p)
{
	hmap__clear(p->names);
	vec__truncate(&p->named, 0);
}

/* ---- processes ---- */

static struct sym_proc *sym_proc_find(struct symbols *s, pid_t pid)
{
	long p;

	if (s->last && s->last->pid == pid)
		return s->last;
	if (!hmap__find(s->procs, pid, &p))
		return NULL;
	s->last = (struct sym_proc *)p;
	return s->last;
}

static void sym_proc_free(struct sym_proc *p)
{
	procmaps__free(&p->maps);
	procmaps__free(&p->all);
	hmap__free(p->names);
	vec__free(&p->named);
	free(p);
}

/* Takes ownership of maps. NULL: no memory (maps freed). */
static struct sym_proc *sym_proc_add(struct symbols *s, pid_t pid, struct procmaps *maps)
{
	struct sym_proc *p = calloc(1, sizeof(*p));

	if (!p) {
		procmaps__free(maps);
		return NULL;
	}
	p->pid = pid;
	p->maps = *maps;
	vec__init(&p->named, sizeof(struct sym_name));
	p->names = hmap__new(hmap_u64_hash, hmap_u64_equal, NULL);
	if (!p->names || hmap__add(s->procs, pid, (long)p)) {
		sym_proc_free(p);
		return NULL;
	}
	s->last = p;
	return p;
}

static bool sym_is_file(const struct map_entry *m)
{
	return m->path && m->path[0] == '/' && m->inode;
}

static bool sym_same_mapping(const struct map_entry *a, const struct map_entry *b)
{
	return a->start == b->start && a->end == b->end && a->offset == b->offset &&
	       a->dev == b->dev && a->inode == b->inode && !strcmp(a->path, b->path);
}

/*
 * Names depend only on file-backed mappings: an address outside them is
 * "0xaddr" whatever the heap or stack did, so their growth keeps the cache.
 */
static bool sym_same_files(const struct procmaps *a, const struct procmaps *b)
{
	size_t i = 0, j = 0;

	for (;;) {
		while (i < a->n && !sym_is_file(&a->v[i]))
			i++;
		while (j < b->n && !sym_is_file(&b->v[j]))
			j++;
		if (i == a->n || j == b->n)
			return i == a->n && j == b->n;
		if (!sym_same_mapping(&a->v[i], &b->v[j]))
			return false;
		i++;
		j++;
	}
}

/* ---- naming ---- */

char *symbols__demangle(const char *name)
{
	char *out;
	int status = -1;

	/*
	 * Only "_Z" names are mangled functions: given "i" or "f" the
	 * demangler would happily answer "int" or "float".
	 */
	if (!strncmp(name, "_Z", 2)) {
		out = __cxa_demangle(name, NULL, NULL, &status);
		if (out && !status)
			return out;
		free(out);
	}
	return strdup(name);
}

static const char *sym_name_symbol(struct symbols *s, const struct sym_file *f,
				   const struct sym_entry *e, uint64_t delta)
{
	const char *name;
	char *dem;

	dem = symbols__demangle(f->names + e->name_off);
	if (!dem)
		return NULL;
	if (delta)
		name = sym_pool_printf(s, "%s+0x%" PRIx64, dem, delta);
	else
		name = sym_pool_printf(s, "%s", dem);
	free(dem);
	return name;
}

static const char *sym_name_object(struct symbols *s, const struct map_entry *m,
				   uint64_t off)
{
	const char *base = strrchr(m->path, '/') + 1;
	int len = (int)strlen(base);

	if (sym_path_deleted(base))
		len -= (int)strlen(SYM_DELETED);
	return sym_pool_printf(s, "%.*s+0x%" PRIx64, len, base, off);
}

/* The mapping of addr among all of p's, read once per view (p->maps). */
static const struct map_entry *sym_all_find(struct sym_proc *p, uint64_t addr)
{
	if (!p->all_read) {
		p->all_read = true;
		if (procmaps__read(p->pid, &p->all))
			memset(&p->all, 0, sizeof(p->all));
	}
	return procmaps__find(&p->all, addr);
}

/* Names addr in p from scratch. Returns 0 or 1 as symbols__name, or -errno. */
static int sym_resolve(struct symbols *s, struct sym_proc *p, uint64_t addr, const char **out)
{
	const struct map_entry *m = procmaps__find(&p->maps, addr);
	const struct sym_entry *e = NULL;
	const struct sym_file *f;
	uint64_t off, delta = 0;

	/* Data, or a file mapped without exec: named by object, from the whole map. */
	if (!m || !sym_is_file(m)) {
		m = sym_all_find(p, addr);
		if (m && sym_is_file(m)) {
			*out = sym_name_object(s, m, addr - m->start + m->offset);
			return *out ? 1 : -ENOMEM;
		}
		*out = sym_pool_printf(s, "0x%" PRIx64, addr);
		return *out ? 1 : -ENOMEM;
	}
	off = addr - m->start + m->offset;
	f = sym_file_get(s, p->pid, m);
	if (!f)
		return -ENOMEM;
	e = sym_file_find(f, off, &delta);
	if (e) {
		*out = sym_name_symbol(s, f, e, delta);
		return *out ? 0 : -ENOMEM;
	}
	*out = sym_name_object(s, m, off);
	return *out ? 1 : -ENOMEM;
}

int symbols__name(struct symbols *s, pid_t pid, uint64_t addr, const char **out)
{
	struct sym_proc *p = sym_proc_find(s, pid);
	const struct sym_name *hit;
	struct procmaps maps;
	const char *name;
	int rc, err;

	hit = p ? sym_names_find(p, addr) : NULL;
	if (hit) {
		if (out)
			*out = hit->name;
		return hit->rc;
	}
	if (!p) {
		/* Never refreshed: read the maps once; a gone process names nothing. */
		if (procmaps__read_exec(pid, &maps))
			memset(&maps, 0, sizeof(maps));
		p = sym_proc_add(s, pid, &maps);
		if (!p)
			return -ENOMEM;
	}
	rc = sym_resolve(s, p, addr, &name);
	if (rc < 0)
		return rc;
	err = sym_names_put(p, addr, name, rc);
	if (err)
		return err;
	if (out)
		*out = name;
	return rc;
}

int symbols__set_maps(struct symbols *s, pid_t pid, struct procmaps *maps)
{
	struct sym_proc *p = sym_proc_find(s, pid);
	int err = 0;

	if (!p) {
		/* Taken over either way: added, or freed when there is no memory. */
		err = sym_proc_add(s, pid, maps) ? 0 : -ENOMEM;
		memset(maps, 0, sizeof(*maps));
		return err;
	}
	/* Names made from the whole map may be of mappings that changed: they go too. */
	if (p->all_read || !sym_same_files(&p->maps, maps))
		sym_names_clear(p);
	procmaps__free(&p->maps);
	procmaps__free(&p->all);
	p->all_read = false;
	p->maps = *maps;
	memset(maps, 0, sizeof(*maps));
	return 0;
}

int symbols__refresh(struct symbols *s, pid_t pid)
{
	struct procmaps maps;
	int err;

	err = procmaps__read_exec(pid, &maps);
	if (err)
		return err; /* keep the old view: late events still get names */
	return symbols__set_maps(s, pid, &maps);
}

struct symbols *symbols__new(void)
{
	struct symbols *s = calloc(1, sizeof(*s));

	if (!s)
		goto fail;
	s->procs = hmap__new(hmap_u64_hash, hmap_u64_equal, NULL);
	s->files = hmap__new(sym_file_hash, sym_file_equal, NULL);
	if (!s->procs || !s->files)
		goto fail;
	return s;
fail:
	symbols__free(s);
	errno = ENOMEM;
	return NULL;
}

void symbols__free(struct symbols *s)
{
	const struct hmap_entry *e;
	size_t bkt;

	if (!s)
		return;
	if (s->procs) {
		hmap__for_each_entry(s->procs, e, bkt)
			sym_proc_free((struct sym_proc *)e->value);
		hmap__free(s->procs);
	}
	if (s->files) {
		hmap__for_each_entry(s->files, e, bkt)
			sym_file_free((struct sym_file *)e->value);
		hmap__free(s->files);
	}
	sym_pool_free(s);
	free(s);
}

const struct procmaps *symbols__maps(struct symbols *s, pid_t pid)
{
	struct sym_proc *p = sym_proc_find(s, pid);
	struct procmaps maps;

	if (!p) {
		if (procmaps__read_exec(pid, &maps))
			memset(&maps, 0, sizeof(maps));
		p = sym_proc_add(s, pid, &maps);
	}
	return p ? &p->maps : NULL;
}
