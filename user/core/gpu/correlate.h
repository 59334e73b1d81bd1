/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The join of uprobe launches to CUPTI API records. A launch (thread, API,
 * entry time) belongs to the API record of the same thread and API that the
 * call made: CUPTI stamps the record's start just after the entry the uprobe
 * saw, so the first record of that thread and API that has not ended before
 * the launch is its record, in per-thread order. That record's correlation id
 * then names the launch's GPU work.
 */
#ifndef CORE_GPU_CORRELATE_H
#define CORE_GPU_CORRELATE_H

#include <stddef.h>
#include <stdint.h>

struct corr_launch {
	uint32_t tid;
	uint32_t cbid;		/* CUPTI callback id of the API */
	uint32_t driver;	/* 1: driver API, 0: runtime */
	uint64_t ts;		/* entry time, CLOCK_MONOTONIC */
	uint32_t correlation;	/* out: CUPTI's id, 0 when unmatched */
	size_t idx;		/* the caller's: rides through the sort */
};

struct corr_api {
	uint32_t tid;
	uint32_t cbid;
	uint32_t driver;
	uint32_t correlation;
	uint64_t start, end;
};

struct corr_stats {
	uint64_t matched;
	uint64_t unmatched_launches;	/* no API record for them */
	uint64_t unmatched_api;		/* API records no probed launch made */
	uint64_t nested;		/* driver records inside a runtime call: not launches */
};

/*
 * Fills launches[i].correlation. Sorts both arrays in place (by thread, API,
 * time). tolerance_ns: how far before a record's start its launch may be
 * seen (the uprobe fires at entry, CUPTI stamps a little later). 0 or -ENOMEM.
 */
int correlate(struct corr_launch *launches, size_t nl, struct corr_api *api, size_t na,
	      uint64_t tolerance_ns, struct corr_stats *st);

#endif /* CORE_GPU_CORRELATE_H */
