// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Kernel names as CUPTI gives them: the mangled symbol of the kernel's host
 * stub. dladdr finds exported ones; executables and local symbols (static
 * kernels, templates in a library) are only in .symtab, which is read from
 * the object's file. A pointer no symbol covers gets a made-up name.
 */
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim.h"

struct sym {
	uintptr_t addr;
	const char *name;
	int global;
};

struct elf_obj {
	struct elf_obj *next;
	char *path;
	uintptr_t bias;
	struct sym *syms;
	size_t n;
};

#define NAME_SLOTS 4096

static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;
static struct elf_obj *objs;
static struct {
	const void *func;
	const char *name;
} by_func[NAME_SLOTS];
static const char *interned[NAME_SLOTS];

static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return y->global - x->global; /* global symbols first */
}

/* Function symbols of .symtab; the file stays mapped, names point into it. */
static int read_symtab(struct elf_obj *o)
{
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
	struct stat st;
	uint8_t *map;
	size_t i;
	int fd;

	fd = open(o->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || (size_t)st.st_size < sizeof(*eh)) {
		close(fd);
		return -1;
	}
	map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return -1;
	eh = (const Elf64_Ehdr *)map;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > (uint64_t)st.st_size)
		return -1;
	sh = (const Elf64_Shdr *)(map + eh->e_shoff);
	for (i = 0; i < eh->e_shnum; i++) {
		const Elf64_Shdr *ss = &sh[i], *strs;
		const Elf64_Sym *syms;
		size_t n, j;

		if (ss->sh_type != SHT_SYMTAB || ss->sh_link >= eh->e_shnum)
			continue;
		strs = &sh[ss->sh_link];
		if (ss->sh_offset + ss->sh_size > (uint64_t)st.st_size ||
		    strs->sh_offset + strs->sh_size > (uint64_t)st.st_size || !strs->sh_size)
			return -1;
		syms = (const Elf64_Sym *)(map + ss->sh_offset);
		n = ss->sh_size / sizeof(Elf64_Sym);
		o->syms = calloc(n, sizeof(*o->syms));
		if (!o->syms)
			return -1;
		for (j = 0; j < n; j++) {
			if (ELF64_ST_TYPE(syms[j].st_info) != STT_FUNC || !syms[j].st_value ||
			    syms[j].st_name >= strs->sh_size)
				continue;
			o->syms[o->n].addr = syms[j].st_value;
			o->syms[o->n].name = (const char *)map + strs->sh_offset + syms[j].st_name;
			o->syms[o->n].global = ELF64_ST_BIND(syms[j].st_info) != STB_LOCAL;
			o->n++;
		}
		/* The last byte of a string table is a NUL: names end inside the map. */
		if (map[strs->sh_offset + strs->sh_size - 1])
			o->n = 0;
		qsort(o->syms, o->n, sizeof(*o->syms), cmp_sym);
		return 0;
	}
	return 0;
}

static struct elf_obj *find_obj(const char *path, uintptr_t bias)
{
	struct elf_obj *o;

	for (o = objs; o; o = o->next)
		if (o->bias == bias && !strcmp(o->path, path))
			return o;
	o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->path = strdup(path);
	o->bias = bias;
	if (o->path)
		read_symtab(o);
	o->next = objs;
	objs = o;
	return o;
}

static const char *symtab_name(const void *func)
{
	struct link_map *lm = NULL;
	struct elf_obj *o;
	uintptr_t want;
	size_t lo, hi;
	Dl_info info;

	if (!dladdr1(func, &info, (void **)&lm, RTLD_DL_LINKMAP) || !lm)
		return NULL;
	if (info.dli_sname && info.dli_saddr == func)
		return info.dli_sname;
	o = find_obj(lm->l_name && *lm->l_name ? lm->l_name : "/proc/self/exe", lm->l_addr);
	if (!o)
		return NULL;
	want = (uintptr_t)func - lm->l_addr;
	lo = 0;
	hi = o->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (o->syms[mid].addr < want)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < o->n && o->syms[lo].addr == want ? o->syms[lo].name : NULL;
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
	return h;
}

/* names_lock held. */
static const char *intern_locked(const char *s)
{
	size_t i, n;

	for (i = hash_str(s) % NAME_SLOTS, n = 0; n < NAME_SLOTS; i = (i + 1) % NAME_SLOTS, n++) {
		if (!interned[i]) {
			interned[i] = strdup(s);
			return interned[i];
		}
		if (!strcmp(interned[i], s))
			return interned[i];
	}
	return "sim_too_many_names";
}

const char *sim_intern_name(const char *s)
{
	const char *p;

	pthread_mutex_lock(&names_lock);
	p = intern_locked(s);
	pthread_mutex_unlock(&names_lock);
	return p;
}

const char *sim_kernel_name(const void *func)
{
	size_t i = ((uintptr_t)func >> 4) % NAME_SLOTS, n;
	const char *name = NULL;
	char buf[64];

	pthread_mutex_lock(&names_lock);
	for (n = 0; n < NAME_SLOTS && by_func[i].func; i = (i + 1) % NAME_SLOTS, n++) {
		if (by_func[i].func == func) {
			name = by_func[i].name;
			break;
		}
	}
	if (!name) {
		name = symtab_name(func);
		if (!name) {
			snprintf(buf, sizeof(buf), "sim_kernel_%p", func);
			name = intern_locked(buf);
		}
		if (n < NAME_SLOTS && !by_func[i].func) {
			by_func[i].func = func;
			by_func[i].name = name;
		}
	}
	pthread_mutex_unlock(&names_lock);
	return name;
}
