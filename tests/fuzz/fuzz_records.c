// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target for the agent record decoder (make fuzz, make fuzz-short).
 * Besides memory errors (ASan, UBSan) it checks what a reader relies on:
 * every record passed lies inside the input, the records tile the input
 * exactly, and a rejected chunk reaches the reader not at all.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/gpu/agent_records.h"

struct walk {
	const uint8_t *buf;
	size_t len;
	size_t covered;
	int calls;
	unsigned int sum;
};

static int check_record(const struct agent_record *r, void *ctx)
{
	struct walk *w = ctx;

	w->calls++;
	if (r->size < sizeof(struct agent_rec_hdr) || r->size % 8 || r->size > w->len - w->covered)
		abort();
	if (r->bytes) {
		const uint8_t *b = (const uint8_t *)r->bytes;

		if (b < w->buf + w->covered || b + r->bytes_len > w->buf + w->covered + r->size)
			abort();
		/* Read every byte the reader may read. */
		for (size_t i = 0; i < r->bytes_len; i++)
			w->sum += b[i];
	}
	w->covered += r->size;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct walk w = { .buf = data, .len = size };
	int err = agent_records__decode(data, size, check_record, &w);

	if (err == 0 && w.covered != size)
		abort();
	if (err && w.calls)
		abort();
	return 0;
}
