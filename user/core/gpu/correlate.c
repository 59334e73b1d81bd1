// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "core/gpu/correlate.h"

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_launch(const void *pa, const void *pb)
{
	const struct corr_launch *a = pa, *b = pb;

	return cmp_u64(a->tid, b->tid) ?: cmp_u64(a->driver, b->driver) ?:
	       cmp_u64(a->cbid, b->cbid) ?: cmp_u64(a->ts, b->ts);
}

static int cmp_api(const void *pa, const void *pb)
{
	const struct corr_api *a = pa, *b = pb;

	return cmp_u64(a->tid, b->tid) ?: cmp_u64(a->driver, b->driver) ?:
	       cmp_u64(a->cbid, b->cbid) ?: cmp_u64(a->start, b->start);
}

static int cmp_corr(const void *pa, const void *pb)
{
	return cmp_u64(*(const uint32_t *)pa, *(const uint32_t *)pb);
}

/*
 * A runtime call's nested driver calls share its correlation id: those
 * driver records are part of the runtime launch, not launches of their own.
 * Marks them with driver = 2 so that no launch matches them.
 */
static int drop_nested(struct corr_api *api, size_t na, struct corr_stats *st)
{
	uint32_t *rt = malloc((na ? na : 1) * sizeof(*rt));
	size_t n = 0;

	if (!rt)
		return -ENOMEM;
	for (size_t i = 0; i < na; i++)
		if (!api[i].driver)
			rt[n++] = api[i].correlation;
	if (n)
		qsort(rt, n, sizeof(*rt), cmp_corr);
	for (size_t i = 0; i < na; i++) {
		if (api[i].driver == 1 && n &&
		    bsearch(&api[i].correlation, rt, n, sizeof(*rt), cmp_corr)) {
			api[i].driver = 2;
			st->nested++;
		}
	}
	free(rt);
	return 0;
}

static bool same_stream(const struct corr_launch *l, const struct corr_api *a)
{
	return l->tid == a->tid && l->driver == a->driver && l->cbid == a->cbid;
}

/* Signed order of a launch's (thread, API) against a record's. */
static int key_order(const struct corr_launch *l, const struct corr_api *a)
{
	return cmp_u64(l->tid, a->tid) ?: cmp_u64(l->driver, a->driver) ?: cmp_u64(l->cbid, a->cbid);
}

int correlate(struct corr_launch *launches, size_t nl, struct corr_api *api, size_t na,
	      uint64_t tolerance_ns, struct corr_stats *st)
{
	size_t j = 0, used = 0;
	int err;

	memset(st, 0, sizeof(*st));
	err = drop_nested(api, na, st);
	if (err)
		return err;
	if (nl)
		qsort(launches, nl, sizeof(*launches), cmp_launch);
	if (na)
		qsort(api, na, sizeof(*api), cmp_api);
	for (size_t i = 0; i < nl; i++) {
		struct corr_launch *l = &launches[i];

		l->correlation = 0;
		/* Records of earlier threads/APIs, or that ended before this launch: no launch of ours. */
		while (j < na && (key_order(l, &api[j]) > 0 ||
				  (same_stream(l, &api[j]) && api[j].end < l->ts))) {
			j++;
		}
		if (j < na && same_stream(l, &api[j]) && l->ts + tolerance_ns >= api[j].start) {
			l->correlation = api[j].correlation;
			st->matched++;
			used++;
			j++;
		} else {
			st->unmatched_launches++;
		}
	}
	st->unmatched_api = na - used - st->nested;
	return 0;
}
