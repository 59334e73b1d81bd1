/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Decoder of the agent's record chunks (include/agent.h). It trusts nothing:
 * a chunk comes from another process's memory through BPF.
 */
#ifndef CORE_GPU_AGENT_RECORDS_H
#define CORE_GPU_AGENT_RECORDS_H

#include <stddef.h>

#include "agent.h"

/*
 * One decoded record: an aligned copy of its fixed part, and for STRING and
 * ERROR the bytes after it (a name piece or the message, not NUL-terminated,
 * pointing into the decoded buffer). A record of a type this decoder does not
 * know is passed with only type and size set.
 */
struct agent_record {
	__u32 type;
	__u32 size;
	union {
		AGENT_ANY_MEMBERS;
	};
	const char *bytes;
	__u32 bytes_len;
};

typedef int (*agent_records_cb)(const struct agent_record *rec, void *ctx);

/*
 * Checks every record of the chunk buf[0..len) first; only when all are well
 * formed calls cb for each, in order. Returns 0, -EINVAL for a malformed
 * chunk (cb not called at all), or the first non-zero value cb returned.
 */
int agent_records__decode(const void *buf, size_t len, agent_records_cb cb, void *ctx);

/* The name of a record type, "unknown" for others. */
const char *agent_records__type_name(__u32 type);

#endif /* CORE_GPU_AGENT_RECORDS_H */
