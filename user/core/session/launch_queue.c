// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "core/session/launch_queue.h"
#include "launch.h"

#define LQ_CHUNK 4096
#define LQ_SPARE 64

struct launch_queue_chunk {
	struct launch_queue_chunk *next;
	size_t n;
	struct launch_event ev[LQ_CHUNK];
};

/* At most 1/8 of the machine's memory, and never over 512 MiB. */
#define LQ_MAX_BYTES (512ull << 20)

void launch_queue__init(struct launch_queue *q)
{
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	unsigned long long bytes = LQ_MAX_BYTES;

	memset(q, 0, sizeof(*q));
	if (pages > 0 && psize > 0 && (unsigned long long)pages * psize / 8 < bytes)
		bytes = (unsigned long long)pages * psize / 8;
	q->cap = bytes / sizeof(struct launch_event);
}

void launch_queue__free(struct launch_queue *q)
{
	struct launch_queue_chunk *c = q->head, *next;

	for (; c; c = next) {
		next = c->next;
		free(c);
	}
	for (c = q->spare; c; c = next) {
		next = c->next;
		free(c);
	}
	memset(q, 0, sizeof(*q));
}

bool launch_queue__push(struct launch_queue *q, const struct launch_event *e)
{
	struct launch_queue_chunk *c = q->tail;

	if (q->len >= q->cap)
		return false;
	if (!c || c->n == LQ_CHUNK) {
		c = q->spare ? q->spare : malloc(sizeof(*c));
		if (!c)
			return false;
		if (c == q->spare) {
			q->spare = c->next;
			q->nspare--;
		}
		c->next = NULL;
		c->n = 0;
		if (q->tail)
			q->tail->next = c;
		else
			q->head = c;
		q->tail = c;
	}
	c->ev[c->n++] = *e;
	if (++q->len > q->peak)
		q->peak = q->len;
	return true;
}

size_t launch_queue__pop(struct launch_queue *q, size_t max,
	       void (*fn)(void *ctx, const struct launch_event *e), void *ctx)
{
	size_t done = 0;

	while (done < max && q->head) {
		struct launch_queue_chunk *c = q->head;

		while (done < max && q->head_at < c->n) {
			fn(ctx, &c->ev[q->head_at++]);
			q->len--;
			done++;
		}
		if (q->head_at < c->n || (c == q->tail && c->n < LQ_CHUNK))
			break;
		/* The chunk is spent: the next one, and this one kept for reuse. */
		q->head = c->next;
		if (!q->head)
			q->tail = NULL;
		q->head_at = 0;
		/* Spent chunks are kept for reuse, a few: no mmap and page faults per chunk. */
		if (q->nspare >= LQ_SPARE) {
			free(c);
		} else {
			c->next = q->spare;
			q->spare = c;
			q->nspare++;
		}
	}
	return done;
}
