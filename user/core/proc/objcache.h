/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What an object file holds for cuprobe's probes, read once per file for the
 * whole session: every process that maps the same file (device, inode, size
 * and modification time) is answered from the first one's read. It belongs
 * to the prober thread, like the probesets that ask it (probeset.h).
 *
 * A file is read in the few reads that decide it, since a process waits
 * while it is (the library-map hold, safety.md): the names are looked up in
 * .dynsym through its hash table, and .symtab is walked only in an object
 * that may carry a static CUDA runtime, whose launch functions are local
 * symbols there (see objcache.c for the rule, docs/internals.md for why).
 */
#ifndef CORE_PROC_OBJCACHE_H
#define CORE_PROC_OBJCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct objcache;
struct elf_file;

/* How an answer came. */
struct obj_read {
	bool cached;		/* from the cache: nothing was read */
	bool walked;		/* .symtab was walked (a static runtime may be there) */
	uint64_t read_ns;	/* how long the read took; 0 when cached */
};

/* NULL and errno when out of memory. */
struct objcache *objcache__new(void);
void objcache__free(struct objcache *c);

/*
 * For each of names[0..n), the file offset of the defined function of that
 * name in the object file behind fd (0 when absent), as elf_func_offsets
 * gives them. names is the same list on every call. fd stays the caller's.
 * Returns how many were found, or -errno (-ENOEXEC: not an ELF file, which
 * is cached too). how may be NULL.
 */
int objcache__func_offsets(struct objcache *c, int fd, const char *const *names, size_t n,
			   uint64_t *offsets, struct obj_read *how);

/*
 * The same for a second list of names, local functions among them: .dynsym
 * through its hash table, then the whole .symtab, however large (libtorch's
 * is 470 k symbols: hundreds of ms). Not for a hold: once per file, cached
 * apart from the first list.
 */
int objcache__symtab_offsets(struct objcache *c, int fd, const char *const *names, size_t n,
			     uint64_t *offsets, struct obj_read *how);

/*
 * The rule itself, for one open file: .dynsym through its hash table, then
 * .symtab where a static runtime may be. Returns as above.
 */
int obj_func_offsets(struct elf_file *ef, const char *const *names, size_t n, uint64_t *offsets,
		     bool *walked);
/* Whether the object may carry a static CUDA runtime (its .symtab is then walked). */
bool obj_may_hold_static_runtime(struct elf_file *ef);

/* Files read, and answers given from the cache, since the session began. */
void objcache__counts(const struct objcache *c, unsigned long *read, unsigned long *reused);

#endif /* CORE_PROC_OBJCACHE_H */
