// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Packs agent records into chunks and interns kernel names. One lock guards
 * the chunk, the counts and the string table: records come from CUPTI's
 * buffer-completion thread, the agent's poll thread and the exit handler.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "agent/emit.h"
#include "util/hashmap.h"

#define STRTAB_MAX (1u << 20) /* names beyond this many go out with name_id 0 */

#define ROUND8(x) (((x) + 7u) & ~7u)

/* An interned name: its bytes (up to CUPROBE_AGENT_STRING_MAX) and its string record's id. */
struct str_entry {
	const char *str;
	__u32 len;
	__u32 id;
	__u32 sent_gen; /* generation in which the string record went out */
	char bytes[];
};

struct emitter {
	pthread_mutex_t lock;
	emitter_sink_fn sink;
	void *ctx;
	__u8 chunk[CUPROBE_AGENT_CHUNK] __attribute__((aligned(8)));
	__u32 len;	  /* bytes in chunk */
	__u32 counted;	  /* records in chunk that the FLUSHED count includes */
	__u64 handed;	  /* counted records handed out since the last FLUSHED */
	__u64 unheard;	  /* counted records lost (no listener) since the last FLUSHED */
	__u64 unreported; /* lost records not yet in an AGENT_DROP_NO_LISTENER record */
	__u32 gen;	  /* bumped per window: strings are re-sent in each */
	struct hmap *tab; /* struct str_entry *, by its bytes */
	__u32 next_id;
};

static void *reserve(struct emitter *em, __u32 size, int counted);

static void fire(struct emitter *em)
{
	struct agent_dropped *d;
	bool heard;

	if (!em->len)
		return;
	heard = em->sink(em->chunk, em->len, em->ctx);
	if (heard) {
		em->handed += em->counted;
	} else {
		em->unheard += em->counted;
		em->unreported += em->counted;
	}
	em->len = 0;
	em->counted = 0;
	if (heard && em->unreported) {
		d = reserve(em, sizeof(*d), 1);
		d->type = AGENT_REC_DROPPED;
		d->size = sizeof(*d);
		d->count = em->unreported;
		d->reason = AGENT_DROP_NO_LISTENER;
		em->unreported = 0;
	}
}

/* Room for one record of size bytes (a multiple of 8, at most a chunk), zeroed. */
static void *reserve(struct emitter *em, __u32 size, int counted)
{
	void *p;

	if (em->len + size > CUPROBE_AGENT_CHUNK)
		fire(em);
	p = em->chunk + em->len;
	memset(p, 0, size);
	em->len += size;
	em->counted += counted;
	return p;
}

static void append(struct emitter *em, const void *rec, int counted)
{
	const struct agent_rec_hdr *h = rec;

	memcpy(reserve(em, h->size, counted), rec, h->size);
}

static size_t str_hash(long key, void *ctx)
{
	const struct str_entry *e = (const struct str_entry *)key;

	(void)ctx;
	return hash_mem(e->str, e->len);
}

static bool str_equal(long key1, long key2, void *ctx)
{
	const struct str_entry *x = (const struct str_entry *)key1;
	const struct str_entry *y = (const struct str_entry *)key2;

	(void)ctx;
	return x->len == y->len && !memcmp(x->str, y->str, x->len);
}

struct emitter *emitter__new(emitter_sink_fn sink, void *ctx)
{
	struct emitter *em = calloc(1, sizeof(*em));

	if (!em)
		return NULL;
	em->tab = hmap__new(str_hash, str_equal, NULL);
	if (!em->tab) {
		free(em);
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&em->lock, NULL);
	em->sink = sink;
	em->ctx = ctx;
	em->gen = 1;
	return em;
}

void emitter__free(struct emitter *em)
{
	const struct hmap_entry *e;
	size_t bkt;

	if (!em)
		return;
	hmap__for_each_entry(em->tab, e, bkt)
		free((struct str_entry *)e->value);
	hmap__free(em->tab);
	pthread_mutex_destroy(&em->lock);
	free(em);
}

/* The entry for name, added when new; NULL when the table is full. */
static struct str_entry *intern(struct emitter *em, const char *name)
{
	const struct str_entry key = { .str = name, .len = strnlen(name, CUPROBE_AGENT_STRING_MAX) };
	struct str_entry *e;
	long found;

	if (hmap__find(em->tab, (long)&key, &found))
		return (struct str_entry *)found;
	if (hmap__size(em->tab) >= STRTAB_MAX)
		return NULL;
	e = malloc(sizeof(*e) + key.len + 1);
	if (!e)
		return NULL;
	memcpy(e->bytes, name, key.len);
	e->bytes[key.len] = '\0';
	e->str = e->bytes;
	e->len = key.len;
	e->id = ++em->next_id;
	e->sent_gen = 0;
	if (hmap__add(em->tab, (long)e, (long)e)) {
		free(e);
		return NULL;
	}
	return e;
}

static void send_string(struct emitter *em, const struct str_entry *e)
{
	const __u32 max_piece = CUPROBE_AGENT_CHUNK - sizeof(struct agent_string);
	__u32 off = 0;

	do {
		__u32 n = e->len - off < max_piece ? e->len - off : max_piece;
		__u32 size = sizeof(struct agent_string) + ROUND8(n);
		struct agent_string *s = reserve(em, size, 1);

		s->type = AGENT_REC_STRING;
		s->size = size;
		s->id = e->id;
		s->total_len = e->len;
		s->offset = off;
		s->len = n;
		memcpy(s + 1, e->str + off, n);
		off += n;
	} while (off < e->len);
}

void emitter__new_window(struct emitter *em)
{
	pthread_mutex_lock(&em->lock);
	em->gen++;
	pthread_mutex_unlock(&em->lock);
}

void emitter__record(struct emitter *em, const void *rec)
{
	pthread_mutex_lock(&em->lock);
	append(em, rec, 1);
	pthread_mutex_unlock(&em->lock);
}

void emitter__kernel(struct emitter *em, struct agent_kernel *k, const char *name)
{
	struct str_entry *e = NULL;

	pthread_mutex_lock(&em->lock);
	if (name)
		e = intern(em, name);
	if (e && e->sent_gen != em->gen) {
		send_string(em, e);
		e->sent_gen = em->gen;
	}
	k->name_id = e ? e->id : 0;
	append(em, k, 1);
	pthread_mutex_unlock(&em->lock);
}

void emitter__dropped(struct emitter *em, __u32 reason, __u64 count)
{
	struct agent_dropped d = {
		.type = AGENT_REC_DROPPED,
		.size = sizeof(d),
		.count = count,
		.reason = reason,
	};

	emitter__record(em, &d);
}

void emitter__error(struct emitter *em, __u32 code, __u32 stage, __u32 window, const char *msg)
{
	__u32 len = strnlen(msg, CUPROBE_AGENT_ERROR_MAX);
	__u32 size = sizeof(struct agent_error) + ROUND8(len);
	struct agent_error *e;

	pthread_mutex_lock(&em->lock);
	e = reserve(em, size, 1);
	e->type = AGENT_REC_ERROR;
	e->size = size;
	e->code = code;
	e->stage = stage;
	e->window = window;
	e->len = len;
	memcpy(e + 1, msg, len);
	fire(em);
	pthread_mutex_unlock(&em->lock);
}

void emitter__started(struct emitter *em, __u64 ts_ns, __u32 window, __u32 cupti_version,
		      __u32 pid)
{
	struct agent_started s = {
		.type = AGENT_REC_STARTED,
		.size = sizeof(s),
		.ts_ns = ts_ns,
		.window = window,
		.cupti_version = cupti_version,
		.pid = pid,
		.abi = CUPROBE_AGENT_ABI,
	};

	pthread_mutex_lock(&em->lock);
	append(em, &s, 0);
	fire(em);
	pthread_mutex_unlock(&em->lock);
}

void emitter__flushed(struct emitter *em, __u64 ts_ns, __u32 window, __u32 reason)
{
	struct agent_flushed f = {
		.type = AGENT_REC_FLUSHED,
		.size = sizeof(f),
		.ts_ns = ts_ns,
		.window = window,
		.reason = reason,
	};

	pthread_mutex_lock(&em->lock);
	/* A heard chunk may queue the report of an unheard one: send it too. */
	while (em->len)
		fire(em);
	f.records = em->handed;
	f.no_listener = em->unheard;
	append(em, &f, 0);
	fire(em);
	em->handed = 0;
	em->unheard = 0;
	pthread_mutex_unlock(&em->lock);
}

void emitter__flush(struct emitter *em)
{
	pthread_mutex_lock(&em->lock);
	fire(em);
	pthread_mutex_unlock(&em->lock);
}
