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
#include "step.h"
#include "symbols.h"

#define NT_STAPSDT 3

static char *dup_n(const char *p, size_t n)
{
	return n ? strndup(p, n) : NULL;
}

int step_spec__parse(const char *spec, struct step_spec *s, char *err, size_t errlen)
{
	const char *a = strchr(spec, ':');

	memset(s, 0, sizeof(*s));
	if (!strncmp(spec, "usdt:", 5)) {
		const char *obj = spec + 5, *prov = strchr(obj, ':'), *name;

		name = prov ? strchr(prov + 1, ':') : NULL;
		if (!prov || !name || prov == obj || name == prov + 1 || !name[1] ||
		    strchr(name + 1, ':')) {
			snprintf(err, errlen, "'%s' is not usdt:OBJECT:PROVIDER:NAME", spec);
			return -EINVAL;
		}
		s->kind = STEP_USDT;
		s->object = dup_n(obj, prov - obj);
		s->provider = dup_n(prov + 1, name - prov - 1);
		s->symbol = strdup(name + 1);
	} else if (a) {
		if (a == spec || !a[1] || strchr(a + 1, ':')) {
			snprintf(err, errlen, "'%s' is not SYMBOL or OBJECT:SYMBOL", spec);
			return -EINVAL;
		}
		s->kind = STEP_OBJECT_SYMBOL;
		s->object = dup_n(spec, a - spec);
		s->symbol = strdup(a + 1);
	} else {
		if (!*spec) {
			snprintf(err, errlen, "the step symbol is empty");
			return -EINVAL;
		}
		s->kind = STEP_SYMBOL;
		s->symbol = strdup(spec);
	}
	if (!s->symbol || (s->kind != STEP_SYMBOL && !s->object) ||
	    (s->kind == STEP_USDT && !s->provider)) {
		step_spec__free(s);
		return -ENOMEM;
	}
	return 0;
}

void step_spec__free(struct step_spec *s)
{
	free(s->object);
	free(s->symbol);
	free(s->provider);
	memset(s, 0, sizeof(*s));
}

const char *step_spec__str(const struct step_spec *s)
{
	static char buf[PATH_MAX + 256];

	if (s->kind == STEP_USDT)
		snprintf(buf, sizeof(buf), "usdt:%s:%s:%s", s->object, s->provider, s->symbol);
	else if (s->kind == STEP_OBJECT_SYMBOL)
		snprintf(buf, sizeof(buf), "%s:%s", s->object, s->symbol);
	else
		snprintf(buf, sizeof(buf), "%s", s->symbol);
	return buf;
}

bool step_spec__wants_object(const struct step_spec *s, const char *path)
{
	char want[PATH_MAX], have[PATH_MAX];
	const char *base = strrchr(path, '/');
	size_t n;

	if (s->kind == STEP_SYMBOL)
		return true;
	if (strchr(s->object, '/'))
		return realpath(s->object, want) && realpath(path, have) && !strcmp(want, have);
	/* A library name: "libcudart" matches libcudart.so.13, "libtrain.so" itself. */
	base = base ? base + 1 : path;
	n = strlen(s->object);
	return !strncmp(base, s->object, n) && (base[n] == '\0' || base[n] == '.');
}

/* The file offset of a virtual address, through the PT_LOAD segment that maps it. */
static int vaddr_to_offset(Elf *elf, uint64_t vaddr, uint64_t *off)
{
	size_t n;

	if (elf_getphdrnum(elf, &n))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz) {
			*off = vaddr - ph.p_vaddr + ph.p_offset;
			return 0;
		}
	}
	return -ENOENT;
}

static Elf_Scn *find_section(Elf *elf, const char *want, GElf_Shdr *sh)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
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

/* One USDT note: calls fn for it; fn returns non-zero to stop. */
struct usdt_note {
	uint64_t pc, base, sema;
	const char *provider, *name;
};

typedef int (*usdt_fn)(Elf *elf, const struct usdt_note *n, void *ctx);

static int for_each_usdt(Elf *elf, usdt_fn fn, void *ctx)
{
	GElf_Shdr sh;
	Elf_Scn *scn = find_section(elf, ".note.stapsdt", &sh);
	Elf_Data *data;
	GElf_Nhdr nh;
	size_t off = 0, name_off, desc_off;

	if (!scn || !(data = elf_getdata(scn, NULL)))
		return 0;
	while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const char *desc = (const char *)data->d_buf + desc_off;
		struct usdt_note n;
		size_t plen;
		int ret;

		if (nh.n_type != NT_STAPSDT || nh.n_descsz < 3 * 8 + 2)
			continue;
		memcpy(&n.pc, desc, 8);
		memcpy(&n.base, desc + 8, 8);
		memcpy(&n.sema, desc + 16, 8);
		n.provider = desc + 24;
		plen = strnlen(n.provider, nh.n_descsz - 24);
		if (24 + plen + 1 >= nh.n_descsz)
			continue;
		n.name = n.provider + plen + 1;
		if (!memchr(n.name, '\0', nh.n_descsz - 24 - plen - 1))
			continue;
		ret = fn(elf, &n, ctx);
		if (ret)
			return ret;
	}
	return 0;
}

struct usdt_find {
	const struct step_spec *spec;
	struct step_sites *out;
	uint64_t base_addr;	/* .stapsdt.base's address, 0 when absent */
};

static int usdt_match(Elf *elf, const struct usdt_note *n, void *ctx)
{
	struct usdt_find *f = ctx;
	struct step_sites *out = f->out;
	uint64_t pc = n->pc;
	GElf_Shdr sh;

	if (strcmp(n->provider, f->spec->provider) || strcmp(n->name, f->spec->symbol))
		return 0;
	if (out->n == STEP_MAX_SITES)
		return 1;
	/* Prelinked objects: the note's base says how far the code moved. */
	if (f->base_addr && n->base)
		pc = pc - n->base + f->base_addr;
	if (vaddr_to_offset(elf, pc, &out->offsets[out->n]))
		return 0;
	out->ref_ctr[out->n] = 0;
	if (n->sema && find_section(elf, ".probes", &sh) && n->sema >= sh.sh_addr &&
	    n->sema < sh.sh_addr + sh.sh_size)
		out->ref_ctr[out->n] = n->sema - sh.sh_addr + sh.sh_offset;
	else if (n->sema)
		vaddr_to_offset(elf, n->sema, &out->ref_ctr[out->n]);
	out->n++;
	return 0;
}

static Elf *open_elf(const char *path, int *fd)
{
	Elf *elf;

	elf_version(EV_CURRENT);
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	if (*fd < 0)
		return NULL;
	elf = elf_begin(*fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		close(*fd);
		errno = ENOEXEC;
		return NULL;
	}
	return elf;
}

int step_spec__find(const struct step_spec *s, const char *path, struct step_sites *out)
{
	struct usdt_find f = { .spec = s, .out = out };
	GElf_Shdr sh;
	Elf *elf;
	int fd, n;

	memset(out, 0, sizeof(*out));
	if (s->kind != STEP_USDT) {
		const char *name = s->symbol;

		n = elf_func_offsets(path, &name, 1, out->offsets);
		if (n < 0)
			return n == -ENOEXEC ? 0 : n;
		out->n = n > 0;
		return n > 0;
	}
	elf = open_elf(path, &fd);
	if (!elf)
		return errno == ENOEXEC ? 0 : -errno;
	if (find_section(elf, ".stapsdt.base", &sh))
		f.base_addr = sh.sh_addr;
	for_each_usdt(elf, usdt_match, &f);
	elf_end(elf);
	close(fd);
	return out->n > 0;
}

/* Suggestions: the names at the smallest edit distance from the wanted one. */
struct suggest {
	const char *want;
	char best[3][128];
	unsigned int dist[3];
};

static unsigned int edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	unsigned int row[129], prev;

	if (la > 128 || lb > 128)
		return UINT_MAX;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		prev = row[0];
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned int cur = row[j], sub = prev + (a[i - 1] != b[j - 1]);
			unsigned int del = row[j] + 1, ins = row[j - 1] + 1;

			row[j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
			prev = cur;
		}
	}
	return row[lb];
}

static void consider(struct suggest *sg, const char *name)
{
	unsigned int d = edit_distance(sg->want, name);
	int slot = -1;

	for (int i = 0; i < 3; i++) {
		if (!strcmp(sg->best[i], name))
			return;
		if (d < sg->dist[i] && (slot < 0 || sg->dist[i] > sg->dist[slot]))
			slot = i;
	}
	if (slot < 0)
		return;
	sg->dist[slot] = d;
	snprintf(sg->best[slot], sizeof(sg->best[slot]), "%s", name);
}

static int usdt_consider(Elf *elf, const struct usdt_note *n, void *ctx)
{
	char full[256];

	(void)elf;
	snprintf(full, sizeof(full), "%s:%s", n->provider, n->name);
	consider(ctx, full);
	return 0;
}

static void consider_symbols(Elf *elf, struct suggest *sg)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM) ||
		    !sh.sh_entsize || !(data = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;

			if (!gelf_getsym(data, i, &sym) || GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
			    !sym.st_value)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (name && *name)
				consider(sg, name);
		}
	}
}

void step_spec__suggest(const struct step_spec *s, const char *path, char *buf, size_t len)
{
	struct suggest sg = { .dist = { UINT_MAX, UINT_MAX, UINT_MAX } };
	char want[256];
	Elf *elf;
	int fd;

	if (s->kind == STEP_USDT)
		snprintf(want, sizeof(want), "%s:%s", s->provider, s->symbol);
	else
		snprintf(want, sizeof(want), "%s", s->symbol);
	sg.want = want;
	elf = open_elf(path, &fd);
	if (!elf)
		return;
	if (s->kind == STEP_USDT)
		for_each_usdt(elf, usdt_consider, &sg);
	else
		consider_symbols(elf, &sg);
	elf_end(elf);
	close(fd);
	for (int i = 0; i < 3; i++) {
		size_t used = strlen(buf);

		/* Only names that are plausibly a typo of the wanted one. */
		if (!sg.best[i][0] || sg.dist[i] > strlen(want) / 2 + 2)
			continue;
		snprintf(buf + used, len - used, "%s%s", used ? ", " : "", sg.best[i]);
	}
}
