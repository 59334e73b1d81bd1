// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Cycles whose trace could not be written (a full disk, a folder removed or
 * made read-only): each is lost whole (nothing half-written stays), its
 * launches counted, and the recording goes on, so that the profiled command
 * is never disturbed by cuprobe's own output. Each cause is said once, with
 * the cycle and what to do; the counts are said again at the end.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "core/session/session_int.h"
#include "core/session/session_lost.h"
#include "core/session/target.h"
#include "util/log.h"

/* Cycles whose trace could not be written (s->lost, this file's alone). */
struct session_lost {
	uint64_t cycles, launches;	/* lost */
	uint64_t written;		/* cycles whose trace was written */
	int told[8];			/* the causes (-errno) said already */
	size_t ntold;
};

int session_lost_new(struct session *s)
{
	s->lost = calloc(1, sizeof(*s->lost));
	return s->lost ? 0 : -ENOMEM;
}

void session_lost_free(struct session *s)
{
	free(s->lost);
	s->lost = NULL;
}

/* What to do about a cause, for the one message that says it. */
static const char *lost_fix(int err)
{
	switch (-err) {
	case ENOSPC:
		return "free space there (the next cycles are written once there is room), or "
		       "choose another folder with -o";
	case EDQUOT:
		return "free space or raise the quota there (the next cycles are written once "
		       "there is room), or choose another folder with -o";
	case ENOENT:
		return "its folder was removed while cuprobe wrote in it: leave the output folder "
		       "in place while recording";
	case ELOOP:
	case ENOTDIR:
		return "it is not a folder cuprobe can write in (a symlink or a file), and nothing "
		       "is written through it: remove it, or choose another folder with -o";
	case EPERM:
		return "it belongs to another user (or is immutable): cuprobe does not write in "
		       "it; remove it, or choose another folder with -o";
	case EROFS:
	case EACCES:
		return "make the output folder writable again (the next cycles are written once "
		       "it is), or choose another folder with -o";
	case EIO:
		return "the disk failed a write: check it (dmesg), or choose another folder with -o";
	default:
		return "choose another folder with -o";
	}
}

/* Whether err was said already; remembered when not (a few causes at most matter). */
static bool told_before(struct session_lost *l, int err)
{
	for (size_t i = 0; i < l->ntold; i++)
		if (l->told[i] == err)
			return true;
	if (l->ntold < sizeof(l->told) / sizeof(l->told[0]))
		l->told[l->ntold++] = err;
	return false;
}

void session_cycle_done(struct session *s, const struct target *t, const struct cycle_info *ci)
{
	struct session_lost *l = s->lost;

	if (ci->path)
		l->written++;
	if (!ci->err)
		return;
	l->cycles++;
	l->launches += ci->launches;
	if (told_before(l, ci->err)) {
		p_dbg("pid %d: cycle %u lost too: %lu launches, %s: %s", t->pid, ci->k,
		      (unsigned long)ci->launches, ci->failed_path ? ci->failed_path : "",
		      strerror(-ci->err));
		return;
	}
	p_warn("pid %d (%s): cycle %u is lost: its %lu launches could not be written to %s: %s; "
	       "%s. Recording goes on and the profiled processes are not disturbed; lost cycles "
	       "are counted at the end", t->pid, t->comm, ci->k, (unsigned long)ci->launches,
	       ci->failed_path ? ci->failed_path : "the output folder", strerror(-ci->err),
	       lost_fix(ci->err));
}

void session_lost_report(const struct session *s)
{
	const struct session_lost *l = s->lost;

	if (!l->cycles)
		return;
	p_warn("%lu cycle%s lost, with %lu launches: %s trace%s could not be written (said "
	       "above); %lu cycle%s written", (unsigned long)l->cycles, l->cycles == 1 ? "" : "s",
	       (unsigned long)l->launches, l->cycles == 1 ? "its" : "their",
	       l->cycles == 1 ? "" : "s", (unsigned long)l->written, l->written == 1 ? "" : "s");
}
