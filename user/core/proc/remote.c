// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include "core/proc/elf_file.h"
#include "core/proc/procmaps.h"
#include "core/proc/remote.h"

static int find_in(Elf *e, GElf_Word shtype, const char *name, uint64_t *value, int *type)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t strndx;

	while ((scn = elf_nextscn(e, scn))) {
		Elf_Data *d;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != shtype || !sh.sh_entsize)
			continue;
		d = elf_section_data(e, scn, true);
		if (!d)
			continue;
		strndx = sh.sh_link;
		n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym sym;
			const char *s;

			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    !sym.st_value)
				continue;
			s = elf_strptr(e, strndx, sym.st_name);
			if (s && !strcmp(s, name)) {
				*value = sym.st_value;
				*type = GELF_ST_TYPE(sym.st_info);
				return 0;
			}
		}
	}
	return -ENOENT;
}

int remote_elf_symbol(const char *path, const char *name, uint64_t *value, int *type)
{
	int fd, err;
	Elf *e;

	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	fd = target_file_open(path, true);
	if (fd < 0)
		return fd;
	/* Read, not mapped: see elf_file__fdopen. */
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		err = -ENOEXEC;
	} else {
		err = find_in(e, SHT_DYNSYM, name, value, type);
		if (err)
			err = find_in(e, SHT_SYMTAB, name, value, type);
	}
	if (e)
		elf_end(e);
	close(fd);
	return err;
}

int remote_symbol_addr(pid_t pid, const char *path, uint64_t value, uint64_t *addr)
{
	const struct elf_load *loads, *l;
	struct elf_file *ef;
	struct procmaps m;
	struct stat st;
	uint64_t off;
	size_t n;
	char copy[PATH_MAX];
	const char *base;
	ssize_t len;
	int fd, err;

	fd = target_file_open(path, true);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	ef = elf_file__fdopen(fd);
	if (!ef)
		return -errno;
	loads = elf_file__loads(ef, &n);
	l = elf_load_by_vaddr(loads, n, value);
	if (!l) {
		elf_file__close(ef);
		return -ENOENT;
	}
	/* A byte past filesz (.bss) lies in the segment's anonymous tail: address it by its page. */
	off = l->offset + (value - l->vaddr);
	elf_file__close(ef);
	/* The file's own name where path is a descriptor's (/proc/self/fd/N): for overlay. */
	len = readlink(path, copy, sizeof(copy) - 1);
	if (len > 0 && copy[0] == '/')
		copy[len] = '\0';
	else
		snprintf(copy, sizeof(copy), "%s", path);
	base = basename(copy);
	err = procmaps__read(pid, &m);
	if (err)
		return err;
	err = -ENOENT;
	for (size_t i = 0; i < m.n; i++) {
		const struct map_entry *me = &m.v[i];
		const char *mb;

		if (!me->path || me->inode != st.st_ino)
			continue;
		mb = strrchr(me->path, '/');
		if (me->dev != st.st_dev && strcmp(mb ? mb + 1 : me->path, base))
			continue;
		if (off < me->offset || off >= me->offset + (me->end - me->start))
			continue;
		*addr = me->start + (off - me->offset);
		err = 0;
		break;
	}
	procmaps__free(&m);
	return err;
}

int remote_read(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}
