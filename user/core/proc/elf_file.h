/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one ELF module: an object file's loadable segments, its function
 * symbols (.symtab and .dynsym, versions ranked), its USDT notes, and its
 * dynamic linker (PT_INTERP), through libelf. The symbol cache, the probes'
 * offsets and the step probe all read ELF files through it.
 */
#ifndef CORE_PROC_ELF_FILE_H
#define CORE_PROC_ELF_FILE_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elf_file;

/* A PT_LOAD segment: where file bytes land in memory. */
struct elf_load {
	uint64_t offset, vaddr, filesz, memsz;
};

/*
 * The most of one section that is read: files are read, not mapped, and come
 * from targets, whose headers may claim anything up to the file's size.
 */
#define ELF_SECTION_MAX (1ull << 30)

/*
 * A section's data, or NULL where it is larger than ELF_SECTION_MAX; with
 * strtab, also NULL where the string table it links to (sh_link) is.
 */
Elf_Data *elf_section_data(Elf *elf, Elf_Scn *scn, bool strtab);

/*
 * Opens the ELF file at path, or the one behind fd (taken over). NULL and
 * errno (ENOEXEC). The path is opened as procmaps.h's target_file_open does
 * (a regular file, never blocking); a file a target maps is opened with
 * procmaps__open and handed to elf_file__fdopen.
 */
struct elf_file *elf_file__open(const char *path);
struct elf_file *elf_file__fdopen(int fd);
void elf_file__close(struct elf_file *ef);

/* The loadable segments, in the file's order. */
const struct elf_load *elf_file__loads(const struct elf_file *ef, size_t *n);
/* The file offset of a virtual address (its bytes in the file). 0 or -ENOENT. */
int elf_file__offset(const struct elf_file *ef, uint64_t vaddr, uint64_t *off);
/* The segment that maps vaddr into memory (memsz), or the one holding file offset off. */
const struct elf_load *elf_load_by_vaddr(const struct elf_load *v, size_t n, uint64_t vaddr);
const struct elf_load *elf_load_by_offset(const struct elf_load *v, size_t n, uint64_t off);

/*
 * Every defined function symbol of .symtab and .dynsym. rank orders aliases:
 * GLOBAL over WEAK over LOCAL, a default version over a hidden one. fn
 * returns non-zero to stop, which elf_file__for_each_func returns.
 */
typedef int (*elf_func_fn)(const char *name, const GElf_Sym *sym, int rank, void *ctx);
int elf_file__for_each_func(struct elf_file *ef, elf_func_fn fn, void *ctx);

/* A USDT probe's note (SystemTap's .note.stapsdt). */
struct elf_usdt {
	uint64_t pc, base, sema;	/* as the note gives them */
	const char *provider, *name;
};

/* Every USDT note; fn returns non-zero to stop. */
typedef int (*elf_usdt_fn)(struct elf_file *ef, const struct elf_usdt *n, void *ctx);
int elf_file__for_each_usdt(struct elf_file *ef, elf_usdt_fn fn, void *ctx);
/*
 * Where a USDT note's probe and semaphore are in the file: the note's pc
 * (adjusted for prelinking) and its semaphore, as file offsets (sema 0: none).
 */
int elf_file__usdt_offsets(struct elf_file *ef, const struct elf_usdt *n, uint64_t *pc_off,
			   uint64_t *sema_off);

/* PT_INTERP, the dynamic linker the executable asks for. 0 or -ENOENT. */
int elf_file__interp(struct elf_file *ef, char *buf, size_t len);

/*
 * For each of names[0..n), the file offset of the defined function symbol
 * with that name in the ELF file at path (0 when absent). Returns how many
 * were found or -errno (not an ELF file: -ENOEXEC).
 */
int elf_func_offsets(const char *path, const char *const *names, size_t n, uint64_t *offsets);
/*
 * The sites of the USDT probe provider:name in the ELF file at path, up to
 * max: the probe's and its semaphore's file offsets (elf_file__usdt_offsets).
 * Returns how many were found or -errno (not an ELF file: -ENOEXEC).
 */
int elf_usdt_sites(const char *path, const char *provider, const char *name, uint64_t *offsets,
		   uint64_t *ref_ctr, size_t max);

/*
 * The lookups behind elf_func_offsets, for callers that choose which tables
 * to read. ranks[i] is the rank (elf_file__for_each_func) of the symbol that
 * gave offsets[i], -1 while none did: a name already found at a higher rank
 * keeps it. Both return how many of names have been found, or -errno.
 *
 * elf_file__dynsym_find looks each name up in .dynsym through the dynamic
 * section's hash table (DT_GNU_HASH, else DT_HASH): a few small reads per
 * name, however many symbols the file has. -ENOENT: the file has no such
 * table (not a 64-bit object with a dynamic section), walk .dynsym instead.
 */
int elf_file__dynsym_find(struct elf_file *ef, const char *const *names, size_t n,
			  uint64_t *offsets, int *ranks);
/* Walks every section of sh_type (SHT_SYMTAB or SHT_DYNSYM). */
int elf_file__table_find(struct elf_file *ef, unsigned int sh_type, const char *const *names,
			 size_t n, uint64_t *offsets, int *ranks);
/* Whether the file has a non-empty section of sh_type, or a section of that name. */
bool elf_file__has_table(struct elf_file *ef, unsigned int sh_type);
bool elf_file__has_section(struct elf_file *ef, const char *name);
/* Whether a DT_NEEDED entry begins with prefix: 1, 0, or -errno. */
int elf_file__needs(struct elf_file *ef, const char *prefix);

/* A defined data symbol (STT_OBJECT) by name. 0 or -ENOENT. */
int elf_file__object(struct elf_file *ef, const char *name, GElf_Sym *out);
/* len bytes of initialized data at a virtual address (a PROGBITS section's). 0 or -ENOENT. */
int elf_file__read(struct elf_file *ef, uint64_t vaddr, void *buf, size_t len);

#endif /* CORE_PROC_ELF_FILE_H */
