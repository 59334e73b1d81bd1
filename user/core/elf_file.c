// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "elf_file.h"
#include "procmaps.h"

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

struct wanted {
	struct elf_file *ef;
	const char *const *names;
	size_t n;
	uint64_t *offsets;
	int *ranks; /* -1: not found yet */
};

static int match_wanted(const char *name, const GElf_Sym *sym, int rank, void *ctx)
{
	struct wanted *w = ctx;
	const struct elf_load *l;

	for (size_t i = 0; i < w->n; i++) {
		if (rank <= w->ranks[i] || strcmp(name, w->names[i]))
			continue;
		l = elf_load_by_vaddr(w->ef->loads, w->ef->nloads, sym->st_value);
		if (!l)
			continue;
		w->offsets[i] = sym->st_value - l->vaddr + l->offset;
		w->ranks[i] = rank;
	}
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
	err = elf_file__for_each_func(w.ef, match_wanted, &w);
	for (size_t i = 0; i < n; i++)
		found += w.ranks[i] >= 0;
	free(w.ranks);
	elf_file__close(w.ef);
	return err ?: found;
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
