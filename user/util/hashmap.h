/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * One hash table, in the shape of libbpf's tools/lib/bpf/hashmap.h: keys and
 * values are longs (a number, or a pointer cast to one), hashed and compared
 * by the caller's callbacks, which get the ctx given to hmap__new. The map
 * owns neither keys nor values. It grows by rehashing, and keeps its entries
 * in one array (open addressing), so a lookup touches no other memory than
 * the key's own.
 */
#ifndef UTIL_HASHMAP_H
#define UTIL_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef size_t (*hmap_hash_fn)(long key, void *ctx);
typedef bool (*hmap_equal_fn)(long key1, long key2, void *ctx);

struct hmap;

struct hmap_entry {
	long key;
	long value;
};

/* NULL and errno ENOMEM when out of memory. */
struct hmap *hmap__new(hmap_hash_fn hash_fn, hmap_equal_fn equal_fn, void *ctx);
/* Frees the table, not the keys and values it holds. */
void hmap__free(struct hmap *map);
size_t hmap__size(const struct hmap *map);
/* Adds a key that is not there yet: 0, -EEXIST or -ENOMEM. */
int hmap__add(struct hmap *map, long key, long value);
/*
 * Adds key, or replaces its key and value. The replaced ones go to old_key
 * and old_value when given (0 when key was new). 0 or -ENOMEM.
 */
int hmap__set(struct hmap *map, long key, long value, long *old_key, long *old_value);
/* Whether key is there; its value goes to value when given. */
bool hmap__find(const struct hmap *map, long key, long *value);
/* Removes key; whether it was there. Its key and value go to old_key, old_value. */
bool hmap__delete(struct hmap *map, long key, long *old_key, long *old_value);
/* Removes every entry, keeping the table's memory. */
void hmap__clear(struct hmap *map);
/*
 * The first entry at position *bkt or after, with *bkt moved to it; NULL at
 * the end. An add, set or delete during a walk may move entries: walk again.
 */
const struct hmap_entry *hmap__iter(const struct hmap *map, size_t *bkt);

#define hmap__for_each_entry(map, cur, bkt)                                                     \
	for ((bkt) = 0; ((cur) = hmap__iter((map), &(bkt))); (bkt)++)

/* Hashes to build callbacks with: FNV-1a for bytes, splitmix64's finaliser for numbers. */
static inline size_t hash_u64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return (size_t)(x ^ (x >> 31));
}

static inline size_t hash_mem(const void *p, size_t len)
{
	const unsigned char *s = p;
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < len; i++)
		h = (h ^ s[i]) * 0x100000001b3ULL;
	return (size_t)h;
}

static inline size_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return (size_t)h;
}

static inline size_t hash_combine(size_t h, size_t more)
{
	return hash_u64((uint64_t)h ^ (uint64_t)hash_u64(more));
}

/* Callbacks for keys that are NUL-terminated strings (const char *). */
size_t hmap_str_hash(long key, void *ctx);
bool hmap_str_equal(long key1, long key2, void *ctx);
/* Callbacks for keys that are numbers (a u64, a pid) stored in the long itself. */
size_t hmap_u64_hash(long key, void *ctx);
bool hmap_u64_equal(long key1, long key2, void *ctx);

#endif /* UTIL_HASHMAP_H */
