// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "core/gpu/agent_records.h"

#define ROUND8(x) (((size_t)(x) + 7u) & ~(size_t)7u)

/* The size a record of a known fixed type must have; 0 for the others. */
static size_t fixed_size(__u32 type)
{
	switch (type) {
	case AGENT_REC_API:
		return sizeof(struct agent_api);
	case AGENT_REC_KERNEL:
		return sizeof(struct agent_kernel);
	case AGENT_REC_MEMCPY:
		return sizeof(struct agent_memcpy);
	case AGENT_REC_MEMSET:
		return sizeof(struct agent_memset);
	case AGENT_REC_OVERHEAD:
		return sizeof(struct agent_overhead);
	case AGENT_REC_DROPPED:
		return sizeof(struct agent_dropped);
	case AGENT_REC_STARTED:
		return sizeof(struct agent_started);
	case AGENT_REC_FLUSHED:
		return sizeof(struct agent_flushed);
	default:
		return 0;
	}
}

static bool zero_padding(const unsigned char *p, size_t from, size_t to)
{
	for (; from < to; from++)
		if (p[from])
			return false;
	return true;
}

/* A variable record: a fixed head, then len bytes padded with zeros to 8. */
static bool valid_tail(const unsigned char *p, __u32 size, size_t head, __u32 len)
{
	return size == head + ROUND8(len) && zero_padding(p, head + len, size);
}

static bool valid_string(const unsigned char *p, __u32 size)
{
	struct agent_string s;

	if (size < sizeof(s))
		return false;
	memcpy(&s, p, sizeof(s));
	if (!s.id || s.total_len > CUPROBE_AGENT_STRING_MAX || s.offset > s.total_len ||
	    s.len > s.total_len - s.offset || (!s.len && s.total_len))
		return false;
	return valid_tail(p, size, sizeof(s), s.len);
}

static bool valid_error(const unsigned char *p, __u32 size)
{
	struct agent_error e;

	if (size < sizeof(e))
		return false;
	memcpy(&e, p, sizeof(e));
	if (e.len > CUPROBE_AGENT_ERROR_MAX || e.stage < AGENT_STAGE_VERSION ||
	    e.stage > AGENT_STAGE_RECORD)
		return false;
	return valid_tail(p, size, sizeof(e), e.len);
}

/* Enumerations and reserved fields of the fixed records. */
static bool valid_fields(const struct agent_record *r)
{
	switch (r->type) {
	case AGENT_REC_API:
		return r->api.domain == AGENT_API_DRIVER || r->api.domain == AGENT_API_RUNTIME;
	case AGENT_REC_DROPPED:
		return r->dropped.reason >= AGENT_DROP_CUPTI &&
		       r->dropped.reason <= AGENT_DROP_BAD_RECORD && !r->dropped.pad;
	case AGENT_REC_STARTED:
		return r->started.window != 0;
	case AGENT_REC_FLUSHED:
		return r->flushed.window != 0 && (r->flushed.reason == AGENT_FLUSH_DISABLE ||
						   r->flushed.reason == AGENT_FLUSH_EXIT);
	default:
		return true;
	}
}

/* Reads the record at p (size bytes, at most the rest of the chunk) into r. */
static int read_record(const unsigned char *p, __u32 type, __u32 size, struct agent_record *r)
{
	size_t fixed = fixed_size(type);

	memset(r, 0, sizeof(*r));
	r->type = type;
	r->size = size;
	if (fixed) {
		if (size != fixed)
			return -EINVAL;
		memcpy(&r->hdr, p, fixed);
		return valid_fields(r) ? 0 : -EINVAL;
	}
	if (type == AGENT_REC_STRING) {
		if (!valid_string(p, size))
			return -EINVAL;
		memcpy(&r->string, p, sizeof(r->string));
		r->bytes = (const char *)p + sizeof(r->string);
		r->bytes_len = r->string.len;
	} else if (type == AGENT_REC_ERROR) {
		if (!valid_error(p, size))
			return -EINVAL;
		memcpy(&r->error, p, sizeof(r->error));
		r->bytes = (const char *)p + sizeof(r->error);
		r->bytes_len = r->error.len;
	} else {
		memcpy(&r->hdr, p, sizeof(r->hdr));
	}
	return 0;
}

/* Walks the chunk; with cb NULL it only checks it. */
static int walk(const unsigned char *buf, size_t len, agent_records_cb cb, void *ctx)
{
	struct agent_record r;
	size_t off = 0;
	int err;

	while (off < len) {
		struct agent_rec_hdr h;

		if (len - off < sizeof(h))
			return -EINVAL;
		memcpy(&h, buf + off, sizeof(h));
		if (h.size < sizeof(h) || h.size % 8 || h.size > len - off)
			return -EINVAL;
		err = read_record(buf + off, h.type, h.size, &r);
		if (err)
			return err;
		if (cb) {
			err = cb(&r, ctx);
			if (err)
				return err;
		}
		off += h.size;
	}
	return 0;
}

int agent_records__decode(const void *buf, size_t len, agent_records_cb cb, void *ctx)
{
	int err;

	if ((!buf && len) || len > CUPROBE_AGENT_CHUNK)
		return -EINVAL;
	err = walk(buf, len, NULL, NULL);
	if (err || !cb)
		return err;
	return walk(buf, len, cb, ctx);
}

const char *agent_records__type_name(__u32 type)
{
	switch (type) {
	case AGENT_REC_API:
		return "api";
	case AGENT_REC_KERNEL:
		return "kernel";
	case AGENT_REC_MEMCPY:
		return "memcpy";
	case AGENT_REC_MEMSET:
		return "memset";
	case AGENT_REC_OVERHEAD:
		return "overhead";
	case AGENT_REC_DROPPED:
		return "dropped";
	case AGENT_REC_STRING:
		return "string";
	case AGENT_REC_ERROR:
		return "error";
	case AGENT_REC_STARTED:
		return "started";
	case AGENT_REC_FLUSHED:
		return "flushed";
	default:
		return "unknown";
	}
}
