// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Linear probing over a power-of-two array, at most half full. Each slot
 * keeps its key's hash, so that growing needs no callback and a probe calls
 * equal_fn only when the hashes agree. Deletion shifts the rest of the probe
 * run back, so that no tombstones build up.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "util/hashmap.h"

#define HASHMAP_MIN_CAP 16
/* Set in every used slot's tag: a tag of 0 marks a free slot. */
#define TAG_USED ((size_t)1 << (sizeof(size_t) * 8 - 1))

struct hashmap_slot {
	struct hmap_entry e;
	size_t tag; /* hash | TAG_USED, or 0 */
};

struct hmap {
	hmap_hash_fn hash_fn;
	hmap_equal_fn equal_fn;
	void *ctx;
	struct hashmap_slot *slots;
	size_t cap; /* 0 or a power of two */
	size_t size;
};

struct hmap *hmap__new(hmap_hash_fn hash_fn, hmap_equal_fn equal_fn, void *ctx)
{
	struct hmap *map = calloc(1, sizeof(*map));

	if (!map) {
		errno = ENOMEM;
		return NULL;
	}
	map->hash_fn = hash_fn;
	map->equal_fn = equal_fn;
	map->ctx = ctx;
	return map;
}

void hmap__free(struct hmap *map)
{
	if (!map)
		return;
	free(map->slots);
	free(map);
}

size_t hmap__size(const struct hmap *map)
{
	return map->size;
}

static size_t tag_of(const struct hmap *map, long key)
{
	return map->hash_fn(key, map->ctx) | TAG_USED;
}

/* The slot holding key, or the free slot where it would go. */
static struct hashmap_slot *probe(const struct hmap *map, long key, size_t tag)
{
	size_t mask = map->cap - 1, i = tag & mask;

	for (;; i = (i + 1) & mask) {
		struct hashmap_slot *s = &map->slots[i];

		if (!s->tag)
			return s;
		if (s->tag == tag && map->equal_fn(s->e.key, key, map->ctx))
			return s;
	}
}

static int grow(struct hmap *map)
{
	size_t cap = map->cap ? map->cap * 2 : HASHMAP_MIN_CAP, mask = cap - 1;
	struct hashmap_slot *slots;

	if (cap < map->cap)
		return -ENOMEM;
	slots = calloc(cap, sizeof(*slots));
	if (!slots)
		return -ENOMEM;
	for (size_t i = 0; i < map->cap; i++) {
		const struct hashmap_slot *s = &map->slots[i];
		size_t j = s->tag & mask;

		if (!s->tag)
			continue;
		while (slots[j].tag)
			j = (j + 1) & mask;
		slots[j] = *s;
	}
	free(map->slots);
	map->slots = slots;
	map->cap = cap;
	return 0;
}

/* The slot for key, made free or found; NULL when out of memory. */
static struct hashmap_slot *slot_for_insert(struct hmap *map, long key, size_t tag)
{
	if ((map->size + 1) * 2 > map->cap && grow(map))
		return NULL;
	return probe(map, key, tag);
}

int hmap__add(struct hmap *map, long key, long value)
{
	size_t tag = tag_of(map, key);
	struct hashmap_slot *s = slot_for_insert(map, key, tag);

	if (!s)
		return -ENOMEM;
	if (s->tag)
		return -EEXIST;
	s->e.key = key;
	s->e.value = value;
	s->tag = tag;
	map->size++;
	return 0;
}

int hmap__set(struct hmap *map, long key, long value, long *old_key, long *old_value)
{
	size_t tag = tag_of(map, key);
	struct hashmap_slot *s = slot_for_insert(map, key, tag);

	if (!s)
		return -ENOMEM;
	if (old_key)
		*old_key = s->tag ? s->e.key : 0;
	if (old_value)
		*old_value = s->tag ? s->e.value : 0;
	if (!s->tag)
		map->size++;
	s->e.key = key;
	s->e.value = value;
	s->tag = tag;
	return 0;
}

bool hmap__find(const struct hmap *map, long key, long *value)
{
	const struct hashmap_slot *s;

	if (!map->size)
		return false;
	s = probe(map, key, tag_of(map, key));
	if (!s->tag)
		return false;
	if (value)
		*value = s->e.value;
	return true;
}

/* Whether the entry at home h may move back to hole i, with j its slot now. */
static bool may_fill(size_t h, size_t i, size_t j)
{
	/* The hole lies cyclically in [h, j): the entry's run passes through it. */
	return i <= j ? (h <= i || h > j) : (h <= i && h > j);
}

bool hmap__delete(struct hmap *map, long key, long *old_key, long *old_value)
{
	size_t mask = map->cap - 1, i, j;
	struct hashmap_slot *s;

	if (!map->size)
		return false;
	s = probe(map, key, tag_of(map, key));
	if (!s->tag)
		return false;
	if (old_key)
		*old_key = s->e.key;
	if (old_value)
		*old_value = s->e.value;
	i = (size_t)(s - map->slots);
	for (j = (i + 1) & mask; map->slots[j].tag; j = (j + 1) & mask) {
		if (may_fill(map->slots[j].tag & mask, i, j)) {
			map->slots[i] = map->slots[j];
			i = j;
		}
	}
	memset(&map->slots[i], 0, sizeof(map->slots[i]));
	map->size--;
	return true;
}

void hmap__clear(struct hmap *map)
{
	if (map->cap)
		memset(map->slots, 0, map->cap * sizeof(*map->slots));
	map->size = 0;
}

const struct hmap_entry *hmap__iter(const struct hmap *map, size_t *bkt)
{
	for (; *bkt < map->cap; (*bkt)++)
		if (map->slots[*bkt].tag)
			return &map->slots[*bkt].e;
	return NULL;
}

size_t hmap_str_hash(long key, void *ctx)
{
	(void)ctx;
	return hash_str((const char *)key);
}

bool hmap_str_equal(long key1, long key2, void *ctx)
{
	(void)ctx;
	return !strcmp((const char *)key1, (const char *)key2);
}

size_t hmap_u64_hash(long key, void *ctx)
{
	(void)ctx;
	return hash_u64((uint64_t)key);
}

bool hmap_u64_equal(long key1, long key2, void *ctx)
{
	(void)ctx;
	return key1 == key2;
}
