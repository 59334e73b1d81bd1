// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/proc/elf_file.h"
#include "core/proc/procmaps.h"
#include "util/hashmap.h"

#define VERSYM_HIDDEN 0x8000
/* The note type of SystemTap's USDT probes (sys/sdt.h). */
#define NT_STAPSDT 3

struct elf_file {
	int fd;
	Elf *elf;
	struct elf_load *loads;
	size_t nloads;
	uint64_t stapsdt_base;	/* .stapsdt.base's address, 0 when absent */
};

static int read_loads(struct elf_file *ef)
{
	size_t phnum;
	GElf_Phdr ph;

	if (elf_getphdrnum(ef->elf, &phnum))
		return -ENOEXEC;
	ef->loads = calloc(phnum ? phnum : 1, sizeof(*ef->loads));
	if (!ef->loads)
		return -ENOMEM;
	for (size_t i = 0; i < phnum; i++) {
		if (!gelf_getphdr(ef->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		ef->loads[ef->nloads++] = (struct elf_load){ ph.p_offset, ph.p_vaddr, ph.p_filesz,
							     ph.p_memsz };
	}
	return 0;
}

static bool section_fits(Elf_Scn *scn)
{
	GElf_Shdr sh;

	return scn && gelf_getshdr(scn, &sh) &&
	       (sh.sh_type == SHT_NOBITS || sh.sh_size <= ELF_SECTION_MAX);
}

Elf_Data *elf_section_data(Elf *elf, Elf_Scn *scn, bool strtab)
{
	GElf_Shdr sh;

	if (!section_fits(scn) || !gelf_getshdr(scn, &sh))
		return NULL;
	if (strtab && !section_fits(elf_getscn(elf, sh.sh_link)))
		return NULL;
	return elf_getdata(scn, NULL);
}

static Elf_Scn *find_section(Elf *elf, const char *want, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx) || !section_fits(elf_getscn(elf, shstrndx)))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh->sh_name);
		if (name && !strcmp(name, want))
			return scn;
	}
	return NULL;
}

struct elf_file *elf_file__fdopen(int fd)
{
	struct elf_file *ef = calloc(1, sizeof(*ef));
	GElf_Shdr sh;
	int err = -ENOEXEC;

	if (!ef) {
		close(fd);
		return NULL;
	}
	ef->fd = fd;
	if (elf_version(EV_CURRENT) == EV_NONE)
		goto fail;
	/*
	 * Read, not mapped: a target that truncates its file under a mapping
	 * would make cuprobe's next touch of it a SIGBUS. libelf reads each
	 * section when it is asked for (elf_section_data bounds its size).
	 */
	ef->elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!ef->elf || elf_kind(ef->elf) != ELF_K_ELF)
		goto fail;
	err = read_loads(ef);
	if (err)
		goto fail;
	if (find_section(ef->elf, ".stapsdt.base", &sh))
		ef->stapsdt_base = sh.sh_addr;
	return ef;
fail:
	elf_file__close(ef);
	errno = -err;
	return NULL;
}

struct elf_file *elf_file__open(const char *path)
{
	int fd = target_file_open(path, true);

	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	return elf_file__fdopen(fd);
}

void elf_file__close(struct elf_file *ef)
{
	if (!ef)
		return;
	if (ef->elf)
		elf_end(ef->elf);
	close(ef->fd);
	free(ef->loads);
	free(ef);
}

const struct elf_load *elf_file__loads(const struct elf_file *ef, size_t *n)
{
	*n = ef->nloads;
	return ef->loads;
}

const struct elf_load *elf_load_by_vaddr(const struct elf_load *v, size_t n, uint64_t vaddr)
{
	for (size_t i = 0; i < n; i++)
		if (vaddr >= v[i].vaddr && vaddr - v[i].vaddr < v[i].memsz)
			return &v[i];
	return NULL;
}

const struct elf_load *elf_load_by_offset(const struct elf_load *v, size_t n, uint64_t off)
{
	for (size_t i = 0; i < n; i++)
		if (off >= v[i].offset && off - v[i].offset < v[i].filesz)
			return &v[i];
	return NULL;
}

int elf_file__offset(const struct elf_file *ef, uint64_t vaddr, uint64_t *off)
{
	for (size_t i = 0; i < ef->nloads; i++) {
		const struct elf_load *l = &ef->loads[i];

		if (vaddr >= l->vaddr && vaddr - l->vaddr < l->filesz) {
			*off = vaddr - l->vaddr + l->offset;
			return 0;
		}
	}
	return -ENOENT;
}

/*
 * Among symbols with one name or one address: GLOBAL over WEAK over LOCAL,
 * and the default version of a dynamic symbol over a hidden older one
 * (libc's memcpy@GLIBC_2.2.5 against memcpy@@GLIBC_2.14).
 */
static int rank_of(const GElf_Sym *sym, bool hidden)
{
	int bind = GELF_ST_BIND(sym->st_info);
	int r = bind == STB_GLOBAL ? 2 : bind == STB_WEAK ? 1 : 0;

	return r * 2 + !hidden;
}

static bool is_defined_func(const GElf_Sym *sym)
{
	int type = GELF_ST_TYPE(sym->st_info);

	if (type != STT_FUNC && type != STT_GNU_IFUNC)
		return false;
	return sym->st_shndx != SHN_UNDEF && sym->st_shndx != SHN_ABS;
}

static Elf_Data *find_versym(Elf *elf)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_GNU_versym)
			return elf_section_data(elf, scn, false);
	return NULL;
}

static int scan_table(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, elf_func_fn fn, void *ctx)
{
	Elf_Data *data = elf_section_data(elf, scn, true);
	Elf_Data *versym = sh->sh_type == SHT_DYNSYM ? find_versym(elf) : NULL;
	GElf_Versym ver;
	GElf_Sym sym;
	int err;

	if (!data || !sh->sh_entsize)
		return 0;
	for (size_t i = 1, n = sh->sh_size / sh->sh_entsize; i < n; i++) {
		const char *name;
		bool hidden;

		if (!gelf_getsym(data, (int)i, &sym) || !is_defined_func(&sym))
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		hidden = versym && gelf_getversym(versym, (int)i, &ver) && (ver & VERSYM_HIDDEN);
		err = fn(name, &sym, rank_of(&sym, hidden), ctx);
		if (err)
			return err;
	}
	return 0;
}

int elf_file__for_each_func(struct elf_file *ef, elf_func_fn fn, void *ctx)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	int err;

	while ((scn = elf_nextscn(ef->elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		err = scan_table(ef->elf, scn, &sh, fn, ctx);
		if (err)
			return err;
	}
	return 0;
}

/* One note's description: pc, base and semaphore, then provider and name, NUL-ended. */
static bool parse_usdt(const char *desc, size_t size, struct elf_usdt *n)
{
	size_t plen;

	if (size < 3 * 8 + 2)
		return false;
	memcpy(&n->pc, desc, 8);
	memcpy(&n->base, desc + 8, 8);
	memcpy(&n->sema, desc + 16, 8);
	n->provider = desc + 24;
	plen = strnlen(n->provider, size - 24);
	if (24 + plen + 1 >= size)
		return false;
	n->name = n->provider + plen + 1;
	return memchr(n->name, '\0', size - 24 - plen - 1) != NULL;
}

int elf_file__for_each_usdt(struct elf_file *ef, elf_usdt_fn fn, void *ctx)
{
	GElf_Shdr sh;
	Elf_Scn *scn = find_section(ef->elf, ".note.stapsdt", &sh);
	Elf_Data *data;
	GElf_Nhdr nh;
	size_t off = 0, name_off, desc_off;

	if (!scn || !(data = elf_section_data(ef->elf, scn, false)))
		return 0;
	while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		struct elf_usdt n;
		int ret;

		if (nh.n_type != NT_STAPSDT ||
		    !parse_usdt((const char *)data->d_buf + desc_off, nh.n_descsz, &n))
			continue;
		ret = fn(ef, &n, ctx);
		if (ret)
			return ret;
	}
	return 0;
}

int elf_file__usdt_offsets(struct elf_file *ef, const struct elf_usdt *n, uint64_t *pc_off,
			   uint64_t *sema_off)
{
	uint64_t pc = n->pc;
	GElf_Shdr sh;

	/* Prelinked objects: the note's base says how far the code moved. */
	if (ef->stapsdt_base && n->base)
		pc = pc - n->base + ef->stapsdt_base;
	if (elf_file__offset(ef, pc, pc_off))
		return -ENOENT;
	*sema_off = 0;
	/* Semaphores live in .probes, which may have no file bytes of its own to map. */
	if (n->sema && find_section(ef->elf, ".probes", &sh) && n->sema >= sh.sh_addr &&
	    n->sema < sh.sh_addr + sh.sh_size)
		*sema_off = n->sema - sh.sh_addr + sh.sh_offset;
	else if (n->sema)
		elf_file__offset(ef, n->sema, sema_off);
	return 0;
}

int elf_file__interp(struct elf_file *ef, char *buf, size_t len)
{
	size_t n;

	if (elf_getphdrnum(ef->elf, &n))
		return -ENOEXEC;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(ef->elf, i, &ph) || ph.p_type != PT_INTERP)
			continue;
		if (ph.p_filesz >= len || pread(ef->fd, buf, ph.p_filesz, ph.p_offset) !=
						  (ssize_t)ph.p_filesz)
			return -ENOENT;
		buf[ph.p_filesz] = '\0';
		return 0;
	}
	return -ENOENT;
}

/*
 * The names asked for, indexed by hash: a walk of a .symtab (NCCL's has 18,000
 * functions) then costs one hash and, mostly, no strcmp per symbol, not one
 * strcmp per name asked for (70), which took 3-18 ms while the process waited.
 * Open addressing, linear probing: every slot of a name's hash is visited, so
 * a name asked for twice is found for both.
 */
#define WANTED_SLOTS 256

struct wanted {
	struct elf_file *ef;
	const char *const *names;
	size_t n;
	uint64_t *offsets;
	int *ranks; /* -1: not found yet */
	size_t mask;	/* 0: no index, every name is compared */
	struct {
		size_t hash;
		int idx;	/* -1: empty */
	} slot[WANTED_SLOTS];
};

static void wanted_index(struct wanted *w)
{
	size_t size = 16;

	while (size < 2 * w->n)
		size *= 2;
	if (size > WANTED_SLOTS) {
		w->mask = 0;
		return;
	}
	w->mask = size - 1;
	for (size_t i = 0; i < size; i++)
		w->slot[i].idx = -1;
	for (size_t i = 0; i < w->n; i++) {
		size_t h = hash_str(w->names[i]), j = h & w->mask;

		while (w->slot[j].idx >= 0)
			j = (j + 1) & w->mask;
		w->slot[j].hash = h;
		w->slot[j].idx = (int)i;
	}
}

static void match_one(struct wanted *w, size_t i, const GElf_Sym *sym, int rank)
{
	const struct elf_load *l;

	if (rank <= w->ranks[i])
		return;
	l = elf_load_by_vaddr(w->ef->loads, w->ef->nloads, sym->st_value);
	if (!l)
		return;
	w->offsets[i] = sym->st_value - l->vaddr + l->offset;
	w->ranks[i] = rank;
}

static int match_wanted(const char *name, const GElf_Sym *sym, int rank, void *ctx)
{
	struct wanted *w = ctx;
	size_t h, j;

	if (!w->mask) {
		for (size_t i = 0; i < w->n; i++)
			if (!strcmp(name, w->names[i]))
				match_one(w, i, sym, rank);
		return 0;
	}
	h = hash_str(name);
	for (j = h & w->mask; w->slot[j].idx >= 0; j = (j + 1) & w->mask)
		if (w->slot[j].hash == h && !strcmp(name, w->names[w->slot[j].idx]))
			match_one(w, (size_t)w->slot[j].idx, sym, rank);
	return 0;
}

int elf_func_offsets(const char *path, const char *const *names, size_t n, uint64_t *offsets)
{
	struct wanted w = { .names = names, .n = n, .offsets = offsets };
	int err, found = 0;

	if (n)
		memset(offsets, 0, n * sizeof(*offsets));
	w.ef = elf_file__open(path);
	if (!w.ef)
		return -errno;
	w.ranks = malloc((n ? n : 1) * sizeof(*w.ranks));
	if (!w.ranks) {
		elf_file__close(w.ef);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++)
		w.ranks[i] = -1;
	wanted_index(&w);
	err = elf_file__for_each_func(w.ef, match_wanted, &w);
	for (size_t i = 0; i < n; i++)
		found += w.ranks[i] >= 0;
	free(w.ranks);
	elf_file__close(w.ef);
	return err ?: found;
}

struct usdt_find {
	const char *provider, *name;
	uint64_t *offsets, *ref_ctr;
	size_t n, max;
};

static int usdt_match(struct elf_file *ef, const struct elf_usdt *n, void *ctx)
{
	struct usdt_find *f = ctx;

	if (strcmp(n->provider, f->provider) || strcmp(n->name, f->name))
		return 0;
	if (f->n == f->max)
		return 1;
	if (!elf_file__usdt_offsets(ef, n, &f->offsets[f->n], &f->ref_ctr[f->n]))
		f->n++;
	return 0;
}

int elf_usdt_sites(const char *path, const char *provider, const char *name, uint64_t *offsets,
		   uint64_t *ref_ctr, size_t max)
{
	struct usdt_find f = { .provider = provider, .name = name, .offsets = offsets,
			       .ref_ctr = ref_ctr, .max = max };
	struct elf_file *ef = elf_file__open(path);

	if (!ef)
		return -errno;
	elf_file__for_each_usdt(ef, usdt_match, &f);
	elf_file__close(ef);
	return (int)f.n;
}

/* A defined object (data) symbol by name, from .dynsym first, then .symtab. */
int elf_file__object(struct elf_file *ef, const char *name, GElf_Sym *out)
{
	int types[] = { SHT_DYNSYM, SHT_SYMTAB };

	for (size_t t = 0; t < 2; t++) {
		Elf_Scn *scn = NULL;
		GElf_Shdr sh;

		while ((scn = elf_nextscn(ef->elf, scn))) {
			Elf_Data *data;
			size_t n;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != (GElf_Word)types[t] ||
			    !sh.sh_entsize || !(data = elf_section_data(ef->elf, scn, true)))
				continue;
			n = sh.sh_size / sh.sh_entsize;
			for (size_t i = 0; i < n; i++) {
				GElf_Sym sym;
				const char *s;

				if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
				    GELF_ST_TYPE(sym.st_info) != STT_OBJECT)
					continue;
				s = elf_strptr(ef->elf, sh.sh_link, sym.st_name);
				if (s && !strcmp(s, name)) {
					*out = sym;
					return 0;
				}
			}
		}
	}
	return -ENOENT;
}

int elf_file__read(struct elf_file *ef, uint64_t vaddr, void *buf, size_t len)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(ef->elf, scn))) {
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_ALLOC) ||
		    vaddr < sh.sh_addr || vaddr + len > sh.sh_addr + sh.sh_size)
			continue;
		/* len bytes, not the section: a file's sections are read, not mapped. */
		if (pread(ef->fd, buf, len, (off_t)(sh.sh_offset + (vaddr - sh.sh_addr))) !=
		    (ssize_t)len)
			return -ENOENT;
		return 0;
	}
	return -ENOENT;
}

/* ---- names through the dynamic section's hash table ---- */

/* A dynamic section is a few hundred bytes; a larger one is not read. */
#define DYNAMIC_MAX (1u << 20)

/* What the dynamic section says, as virtual addresses (0: absent). */
struct dyn_info {
	uint64_t gnu_hash, sysv_hash, symtab, strtab, strsz, syment, versym;
	uint64_t needed[64];	/* DT_NEEDED names, offsets into strtab */
	size_t nneeded;
};

/* len bytes at a virtual address, from the file bytes of the segment holding them. */
static int read_vaddr(const struct elf_file *ef, uint64_t vaddr, void *buf, size_t len)
{
	const struct elf_load *l = elf_load_by_vaddr(ef->loads, ef->nloads, vaddr);

	if (!l || vaddr - l->vaddr > l->filesz || len > l->filesz - (vaddr - l->vaddr))
		return -ENOENT;
	if (pread(ef->fd, buf, len, (off_t)(l->offset + (vaddr - l->vaddr))) != (ssize_t)len)
		return -EIO;
	return 0;
}

static void dyn_take(struct dyn_info *d, const Elf64_Dyn *e)
{
	switch (e->d_tag) {
	case DT_GNU_HASH: d->gnu_hash = e->d_un.d_ptr; break;
	case DT_HASH: d->sysv_hash = e->d_un.d_ptr; break;
	case DT_SYMTAB: d->symtab = e->d_un.d_ptr; break;
	case DT_STRTAB: d->strtab = e->d_un.d_ptr; break;
	case DT_STRSZ: d->strsz = e->d_un.d_val; break;
	case DT_SYMENT: d->syment = e->d_un.d_val; break;
	case DT_VERSYM: d->versym = e->d_un.d_ptr; break;
	case DT_NEEDED:
		if (d->nneeded < sizeof(d->needed) / sizeof(d->needed[0]))
			d->needed[d->nneeded++] = e->d_un.d_val;
		break;
	}
}

/* The dynamic section (PT_DYNAMIC) of a 64-bit object. -ENOENT: none. */
static int read_dynamic(struct elf_file *ef, struct dyn_info *d)
{
	size_t phnum, len;
	Elf64_Dyn *v;
	GElf_Phdr ph;

	memset(d, 0, sizeof(*d));
	if (gelf_getclass(ef->elf) != ELFCLASS64 || elf_getphdrnum(ef->elf, &phnum))
		return -ENOENT;
	for (size_t i = 0; i < phnum; i++) {
		if (!gelf_getphdr(ef->elf, (int)i, &ph) || ph.p_type != PT_DYNAMIC)
			continue;
		len = ph.p_filesz < DYNAMIC_MAX ? ph.p_filesz : DYNAMIC_MAX;
		v = malloc(len ? len : 1);
		if (!v)
			return -ENOMEM;
		if (pread(ef->fd, v, len, (off_t)ph.p_offset) != (ssize_t)len) {
			free(v);
			return -EIO;
		}
		for (size_t k = 0; k < len / sizeof(*v) && v[k].d_tag != DT_NULL; k++)
			dyn_take(d, &v[k]);
		free(v);
		if (!d->symtab || !d->strtab || d->syment != sizeof(Elf64_Sym))
			return -ENOENT;
		return 0;
	}
	return -ENOENT;
}

static uint32_t gnu_hash(const char *s)
{
	uint32_t h = 5381;

	for (; *s; s++)
		h = h * 33 + (unsigned char)*s;
	return h;
}

static uint32_t sysv_hash(const char *s)
{
	uint32_t h = 0, g;

	for (; *s; s++) {
		h = (h << 4) + (unsigned char)*s;
		g = h & 0xf0000000;
		if (g)
			h ^= g >> 24;
		h &= ~g;
	}
	return h;
}

struct dyn_lookup {
	struct elf_file *ef;
	const struct dyn_info *d;
	const char *const *names;
	size_t n;
	uint64_t *offsets;
	int *ranks;
	/* The GNU table's header and Bloom filter, read once for all names. */
	uint32_t gnu_hdr[4];
	uint64_t *bloom;	/* NULL: read a word at a time (a filter over BLOOM_MAX) */
};

/* Bloom filters read whole up to this size (a large library's is tens of KiB). */
#define BLOOM_MAX (1u << 20)

/* Symbol idx of .dynsym, when it is the defined function names[i]: ranked in. */
static void dyn_try(struct dyn_lookup *l, size_t i, uint64_t idx)
{
	const char *want = l->names[i];
	size_t len = strlen(want) + 1;
	const struct elf_load *seg;
	char name[256];
	Elf64_Sym sym;
	GElf_Sym gs;
	uint16_t ver = 0;
	int rank;

	if (len > sizeof(name) ||
	    read_vaddr(l->ef, l->d->symtab + idx * sizeof(sym), &sym, sizeof(sym)) ||
	    sym.st_name >= l->d->strsz || len > l->d->strsz - sym.st_name ||
	    read_vaddr(l->ef, l->d->strtab + sym.st_name, name, len) || memcmp(name, want, len))
		return;
	gs = (GElf_Sym){ .st_name = sym.st_name, .st_info = sym.st_info, .st_other = sym.st_other,
			 .st_shndx = sym.st_shndx, .st_value = sym.st_value, .st_size = sym.st_size };
	if (!is_defined_func(&gs))
		return;
	if (l->d->versym)
		read_vaddr(l->ef, l->d->versym + idx * 2, &ver, sizeof(ver));
	rank = rank_of(&gs, ver & VERSYM_HIDDEN);
	seg = elf_load_by_vaddr(l->ef->loads, l->ef->nloads, sym.st_value);
	if (rank <= l->ranks[i] || !seg)
		return;
	l->offsets[i] = sym.st_value - seg->vaddr + seg->offset;
	l->ranks[i] = rank;
}

/* The GNU table's header, and its Bloom filter where it is not too large. 1: no table to read. */
static int gnu_begin(struct dyn_lookup *l)
{
	uint32_t *hdr = l->gnu_hdr;
	uint64_t size;
	int err;

	err = read_vaddr(l->ef, l->d->gnu_hash, hdr, sizeof(l->gnu_hdr));
	if (err)
		return err;
	/* nbuckets, symoffset, bloom words, bloom shift */
	if (!hdr[0] || !hdr[2] || hdr[3] >= 64)
		return 1;
	size = (uint64_t)hdr[2] * 8;
	if (size > BLOOM_MAX)
		return 0;
	l->bloom = malloc(size);
	if (!l->bloom)
		return -ENOMEM;
	err = read_vaddr(l->ef, l->d->gnu_hash + 16, l->bloom, size);
	if (err) {
		free(l->bloom);
		l->bloom = NULL;
	}
	return err;
}

/* The GNU table: a Bloom filter, then one bucket's chain of equal-hash runs. */
static int gnu_find(struct dyn_lookup *l, size_t i)
{
	const uint32_t *hdr = l->gnu_hdr;
	uint32_t h = gnu_hash(l->names[i]), bucket, chain, w = h / 64 % hdr[2];
	uint64_t base = l->d->gnu_hash, word, mask, buckets, chains;
	int err;

	if (l->bloom) {
		word = l->bloom[w];
	} else {
		err = read_vaddr(l->ef, base + 16 + (uint64_t)w * 8, &word, 8);
		if (err)
			return err;
	}
	mask = 1ull << (h % 64) | 1ull << ((h >> hdr[3]) % 64);
	if ((word & mask) != mask)
		return 0;
	buckets = base + 16 + (uint64_t)hdr[2] * 8;
	chains = buckets + (uint64_t)hdr[0] * 4;
	err = read_vaddr(l->ef, buckets + (uint64_t)(h % hdr[0]) * 4, &bucket, 4);
	if (err || bucket < hdr[1])
		return err;
	/* A chain ends at a hash with its low bit set; a bad table ends at a failed read. */
	for (uint64_t idx = bucket; idx - bucket < (1u << 24); idx++) {
		if (read_vaddr(l->ef, chains + (idx - hdr[1]) * 4, &chain, 4))
			break;
		if ((chain | 1) == (h | 1))
			dyn_try(l, i, idx);
		if (chain & 1)
			break;
	}
	return 0;
}

/* The SysV table: nbucket, nchain, buckets, chains, indexed by symbol. */
static int sysv_find(struct dyn_lookup *l, size_t i)
{
	uint32_t hdr[2], idx, h = sysv_hash(l->names[i]);
	uint64_t base = l->d->sysv_hash;
	int err;

	err = read_vaddr(l->ef, base, hdr, sizeof(hdr));
	if (err || !hdr[0])
		return err;
	err = read_vaddr(l->ef, base + 8 + (uint64_t)(h % hdr[0]) * 4, &idx, 4);
	for (uint32_t steps = 0; !err && idx && idx < hdr[1] && steps < hdr[1]; steps++) {
		dyn_try(l, i, idx);
		err = read_vaddr(l->ef, base + 8 + ((uint64_t)hdr[0] + idx) * 4, &idx, 4);
	}
	return 0;
}

int elf_file__dynsym_find(struct elf_file *ef, const char *const *names, size_t n,
			  uint64_t *offsets, int *ranks)
{
	struct dyn_info d;
	struct dyn_lookup l = { .ef = ef, .d = &d, .names = names, .n = n, .offsets = offsets,
				.ranks = ranks };
	int err, found = 0;

	err = read_dynamic(ef, &d);
	if (err)
		return err;
	if (!d.gnu_hash && !d.sysv_hash)
		return -ENOENT;
	if (d.gnu_hash) {
		err = gnu_begin(&l);
		for (size_t i = 0; i < n && !err; i++)
			err = gnu_find(&l, i);
		free(l.bloom);
		err = err > 0 ? 0 : err;
	} else {
		for (size_t i = 0; i < n && !err; i++)
			err = sysv_find(&l, i);
	}
	for (size_t i = 0; i < n; i++)
		found += ranks[i] >= 0;
	return err ?: found;
}

/* One symbol table walked: names not found yet, or found at a lower rank, are ranked in. */
int elf_file__table_find(struct elf_file *ef, unsigned int sh_type, const char *const *names,
			 size_t n, uint64_t *offsets, int *ranks)
{
	struct wanted w = { .ef = ef, .names = names, .n = n, .offsets = offsets, .ranks = ranks };
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	int err = 0, found = 0;

	wanted_index(&w);

	while (!err && (scn = elf_nextscn(ef->elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == sh_type)
			err = scan_table(ef->elf, scn, &sh, match_wanted, &w);
	for (size_t i = 0; i < n; i++)
		found += ranks[i] >= 0;
	return err ?: found;
}

bool elf_file__has_table(struct elf_file *ef, unsigned int sh_type)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(ef->elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == sh_type && sh.sh_size)
			return true;
	return false;
}

bool elf_file__has_section(struct elf_file *ef, const char *name)
{
	GElf_Shdr sh;

	return find_section(ef->elf, name, &sh) != NULL;
}

int elf_file__needs(struct elf_file *ef, const char *prefix)
{
	size_t len = strlen(prefix);
	struct dyn_info d;
	char name[256];
	int err = read_dynamic(ef, &d);

	if (err)
		return err == -ENOENT ? 0 : err;
	if (len >= sizeof(name))
		return -EINVAL;
	for (size_t i = 0; i < d.nneeded; i++) {
		if (d.needed[i] >= d.strsz || len > d.strsz - d.needed[i] ||
		    read_vaddr(ef, d.strtab + d.needed[i], name, len))
			continue;
		if (!memcmp(name, prefix, len))
			return 1;
	}
	return 0;
}
