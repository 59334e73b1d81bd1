// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/schedule/schedule_parse.h"
#include "schedule.h"
#include "util/parse.h"

static const char *const keys[] = {
	"skip_first", "skip_first_wait", "wait", "warmup", "active", "repeat",
};

static __u32 *field(struct schedule *s, size_t i)
{
	__u32 *f[] = { &s->skip_first, &s->skip_first_wait, &s->wait,
		       &s->warmup,     &s->active,	    &s->repeat };

	return f[i];
}

static int set_one(struct schedule *s, const char *item, unsigned int *seen, char *err,
		   size_t errlen)
{
	const char *eq = strchr(item, '=');
	uint64_t v;

	if (!eq) {
		snprintf(err, errlen, "'%s' is not KEY=N", item);
		return -EINVAL;
	}
	/* The one grammar for a count (util/parse.h): plain digits. */
	if (parse_count(eq + 1, 0, UINT_MAX / 4, &v)) {
		snprintf(err, errlen, "'%s': the value must be a whole number >= 0", item);
		return -EINVAL;
	}
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (strlen(keys[i]) == (size_t)(eq - item) && !strncmp(keys[i], item, eq - item)) {
			if (*seen & 1u << i) {
				snprintf(err, errlen, "%s is given twice: give each key once", keys[i]);
				return -EINVAL;
			}
			*field(s, i) = v;
			*seen |= 1u << i;
			return 0;
		}
	}
	snprintf(err, errlen, "unknown key '%.*s' (keys: skip_first, skip_first_wait, wait, "
		 "warmup, active, repeat)", (int)(eq - item), item);
	return -EINVAL;
}

int schedule_parse(const char *spec, struct schedule *s, char *err, size_t errlen)
{
	/* wait, warmup and active have no default in torch.profiler.schedule. */
	const unsigned int required = 1u << 2 | 1u << 3 | 1u << 4;
	char *copy = strdup(spec), *save = NULL, *item;
	unsigned int seen = 0;
	int ret = 0;

	if (!copy)
		return -ENOMEM;
	memset(s, 0, sizeof(*s));
	for (item = strtok_r(copy, ",", &save); item && !ret; item = strtok_r(NULL, ",", &save))
		ret = set_one(s, item, &seen, err, errlen);
	free(copy);
	if (ret)
		return ret;
	if ((seen & required) != required) {
		snprintf(err, errlen, "wait, warmup and active are required, as in "
			 "torch.profiler.schedule");
		return -EINVAL;
	}
	if (s->active == 0) {
		snprintf(err, errlen, "active must be > 0, as in torch.profiler.schedule");
		return -EINVAL;
	}
	if (s->skip_first_wait > 1) {
		snprintf(err, errlen, "skip_first_wait is 0 or 1");
		return -EINVAL;
	}
	return 0;
}

const char *schedule_phase_name(__u32 phase)
{
	switch (phase) {
	case PHASE_WARMUP: return "WARMUP";
	case PHASE_RECORD: return "RECORD";
	case PHASE_RECORD_AND_SAVE: return "RECORD_AND_SAVE";
	default: return "NONE";
	}
}
