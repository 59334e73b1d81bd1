// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "core/proc/elf_file.h"
#include "core/proc/objcache.h"
#include "util/clock.h"
#include "util/hashmap.h"

/*
 * More files than a host's processes map between them: past it the cache
 * starts again, so a daemon that runs for months keeps a bounded one.
 */
#define OBJCACHE_MAX 8192

struct obj_entry {
	uint64_t dev, ino, size;
	int64_t mtime_ns;
	int found;		/* objcache__func_offsets's answer */
	bool walked;
	size_t n;
	uint64_t offsets[];
};

struct objcache {
	struct hmap *files;	/* struct obj_entry *, by its key */
	struct hmap *walks;	/* the same, for objcache__symtab_offsets */
	unsigned long read, reused;
};

static size_t entry_hash(long key, void *ctx)
{
	const struct obj_entry *e = (const struct obj_entry *)key;

	(void)ctx;
	return hash_combine(hash_combine(hash_u64(e->dev), hash_u64(e->ino)),
			    hash_combine(hash_u64(e->size), hash_u64((uint64_t)e->mtime_ns)));
}

static bool entry_equal(long a, long b, void *ctx)
{
	const struct obj_entry *x = (const struct obj_entry *)a, *y = (const struct obj_entry *)b;

	(void)ctx;
	return x->dev == y->dev && x->ino == y->ino && x->size == y->size &&
	       x->mtime_ns == y->mtime_ns;
}

struct objcache *objcache__new(void)
{
	struct objcache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->files = hmap__new(entry_hash, entry_equal, NULL);
	c->walks = hmap__new(entry_hash, entry_equal, NULL);
	if (!c->files || !c->walks) {
		hmap__free(c->files);
		hmap__free(c->walks);
		free(c);
		errno = ENOMEM;
		return NULL;
	}
	return c;
}

static void clear(struct hmap *files)
{
	const struct hmap_entry *e;
	size_t bkt;

	hmap__for_each_entry(files, e, bkt)
		free((void *)e->value);
	hmap__clear(files);
}

void objcache__free(struct objcache *c)
{
	if (!c)
		return;
	clear(c->files);
	clear(c->walks);
	hmap__free(c->files);
	hmap__free(c->walks);
	free(c);
}

/*
 * A static runtime is linked into an object only where nvcc or its user put
 * libcudart_static.a, and leaves three marks there, all read from headers:
 *  - a .symtab: its functions are local symbols, in no other table (without
 *    one, as in NVIDIA's stripped libraries, no walk could find them);
 *  - a .nv_fatbin section: nvcc's device link, which every object it links
 *    with -cudart static goes through, embeds one even when no source of the
 *    object has device code (checked with CUDA 13); NCCL and NVSHMEM have
 *    theirs;
 *  - no DT_NEEDED libcudart.so: an object that takes the shared runtime has
 *    no second one of its own (its calls would bind to the first).
 * An object without the three is decided by .dynsym alone. What this misses
 * is an object linked against libcudart_static.a by a plain host linker and
 * with no device code of its own (docs/internals.md).
 */
bool obj_may_hold_static_runtime(struct elf_file *ef)
{
	return elf_file__has_table(ef, SHT_SYMTAB) && elf_file__has_section(ef, ".nv_fatbin") &&
	       elf_file__needs(ef, "libcudart.so") == 0;
}

/*
 * .dynsym through its hash table (or, for launch APIs, the whole table where it
 * has none), then the whole .symtab: for local functions (local), or where a
 * static runtime may be.
 */
static int find_offsets(struct elf_file *ef, const char *const *names, size_t n,
			uint64_t *offsets, bool local, bool *walked)
{
	int *ranks = malloc((n ? n : 1) * sizeof(*ranks));
	int found;

	*walked = false;
	if (!ranks)
		return -ENOMEM;
	memset(offsets, 0, n * sizeof(*offsets));
	for (size_t i = 0; i < n; i++)
		ranks[i] = -1;
	found = elf_file__dynsym_find(ef, names, n, offsets, ranks);
	if (found == -ENOENT)
		found = local ? 0 : elf_file__table_find(ef, SHT_DYNSYM, names, n, offsets, ranks);
	if (found >= 0 && (size_t)found < n && (local || obj_may_hold_static_runtime(ef))) {
		*walked = true;
		found = elf_file__table_find(ef, SHT_SYMTAB, names, n, offsets, ranks);
	}
	free(ranks);
	return found;
}

int obj_func_offsets(struct elf_file *ef, const char *const *names, size_t n, uint64_t *offsets,
		     bool *walked)
{
	return find_offsets(ef, names, n, offsets, false, walked);
}

static struct obj_entry *read_entry(const struct stat *st, int fd, const char *const *names,
				    size_t n, bool walk)
{
	struct obj_entry *e = calloc(1, sizeof(*e) + n * sizeof(e->offsets[0]));
	struct elf_file *ef;
	int dfd;

	if (!e)
		return NULL;
	*e = (struct obj_entry){ .dev = st->st_dev, .ino = st->st_ino, .size = st->st_size,
				 .mtime_ns = st->st_mtim.tv_sec * 1000000000ll + st->st_mtim.tv_nsec,
				 .n = n };
	dfd = dup(fd);
	if (dfd < 0) {
		e->found = -errno;
		return e;
	}
	ef = elf_file__fdopen(dfd);
	if (!ef) {
		e->found = -errno;
		return e;
	}
	e->found = find_offsets(ef, names, n, e->offsets, walk, &e->walked);
	elf_file__close(ef);
	return e;
}

static int cached_offsets(struct objcache *c, struct hmap *files, bool walk, int fd,
			  const char *const *names, size_t n, uint64_t *offsets,
			  struct obj_read *how)
{
	struct obj_read dummy;
	struct obj_entry key, *e;
	struct stat st;
	bool keep = false;
	uint64_t t0;
	long found;

	how = how ?: &dummy;
	memset(how, 0, sizeof(*how));
	if (fstat(fd, &st))
		return -errno;
	key = (struct obj_entry){ .dev = st.st_dev, .ino = st.st_ino, .size = st.st_size,
				  .mtime_ns = st.st_mtim.tv_sec * 1000000000ll + st.st_mtim.tv_nsec };
	if (hmap__find(files, (long)&key, &found) && ((struct obj_entry *)found)->n == n) {
		e = (struct obj_entry *)found;
		c->reused++;
		how->cached = true;
	} else {
		t0 = clock_mono_ns();
		e = read_entry(&st, fd, names, n, walk);
		if (!e)
			return -ENOMEM;
		how->read_ns = clock_mono_ns() - t0;
		c->read++;
		if (hmap__size(files) >= OBJCACHE_MAX)
			clear(files);
		/* A transient failure (no memory, a failed read) is not kept: the next asks again. */
		keep = (e->found >= 0 || e->found == -ENOEXEC) && !hmap__add(files, (long)e, (long)e);
	}
	how->walked = e->walked;
	memcpy(offsets, e->offsets, n * sizeof(*offsets));
	found = e->found;
	if (!how->cached && !keep)
		free(e);
	return (int)found;
}

int objcache__func_offsets(struct objcache *c, int fd, const char *const *names, size_t n,
			   uint64_t *offsets, struct obj_read *how)
{
	return cached_offsets(c, c->files, false, fd, names, n, offsets, how);
}

int objcache__symtab_offsets(struct objcache *c, int fd, const char *const *names, size_t n,
			     uint64_t *offsets, struct obj_read *how)
{
	return cached_offsets(c, c->walks, true, fd, names, n, offsets, how);
}

void objcache__counts(const struct objcache *c, unsigned long *read, unsigned long *reused)
{
	*read = c->read;
	*reused = c->reused;
}
