// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The daemon's candidates: processes that may map CUDA and do not yet, looked
 * at again on a schedule until they do (then sampled: service_add_proc) or
 * the schedule ends. A process is considered when the daemon starts (the
 * /proc scan) and each time one runs a new program (the session's exec hook).
 */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include "core/proc/procmaps.h"
#include "daemon/service_int.h"
#include "util/clock.h"

/*
 * A process that ran a new program is looked at again this long after its
 * exec: the dynamic linker maps libcudart within milliseconds, a framework
 * that dlopens CUDA (PyTorch) does so when it first touches the GPU.
 */
static const double recheck_s[] = { 0.02, 0.2, 1, 5, 30, 120 };
#define NRECHECK (sizeof(recheck_s) / sizeof(recheck_s[0]))
/*
 * One in the middle of `import torch` (CUDA mapped, libtorch_cpu.so not yet) is
 * looked at this often instead, up to the last recheck: its ranks' steps are
 * counted from their first, which comes seconds later (after a rendezvous).
 */
#define IMPORT_RECHECK_NS (NS / 5)

static void consider(struct daemon *d, pid_t pid, bool from_exec)
{
	struct procinfo pi;
	struct cand *c;

	if (pid == d->self || service_find(d, pid) || procinfo__read(pid, &pi))
		return;
	if (d->conf.cgroup[0] && !procinfo__in_cgroup(pi.cgroup, d->conf.cgroup))
		return;
	if (procinfo__ready(&pi)) {
		service_add_proc(d, pid, &pi, from_exec);
		return;
	}
	if (!pi.exe[0] || d->ncands >= MAX_CANDIDATES)
		return;
	c = &d->cands[d->ncands++];
	*c = (struct cand){ .pid = pid, .start_ticks = pi.start_ticks, .since = clock_mono_ns(),
			    .stage = from_exec ? 1 : 2, .from_exec = from_exec };
	c->due = c->since + (uint64_t)(recheck_s[c->stage - 1] * NS);
}

void candidates__tick(struct daemon *d, uint64_t now)
{
	for (size_t i = 0; i < d->ncands;) {
		struct cand *c = &d->cands[i];
		int ready;

		if (now < c->due) {
			i++;
			continue;
		}
		ready = proc_start_ticks(c->pid) == c->start_ticks ? procinfo__cuda_ready(c->pid)
								   : -ESRCH;
		if (ready == PROCINFO_IMPORTING_TORCH &&
		    now + IMPORT_RECHECK_NS < c->since + (uint64_t)(recheck_s[NRECHECK - 1] * NS)) {
			c->due = now + IMPORT_RECHECK_NS;
			i++;
			continue;
		}
		if (ready == 0 && c->stage < NRECHECK) {
			c->due = c->since + (uint64_t)(recheck_s[c->stage++] * NS);
			i++;
			continue;
		}
		if (ready == 1)
			consider(d, c->pid, c->from_exec);
		/* consider() may have added one at the end: take the last now. */
		d->cands[i] = d->cands[--d->ncands];
	}
}

void candidates__scan(struct daemon *d)
{
	DIR *dir = opendir("/proc");
	struct dirent *de;

	if (!dir)
		return;
	while ((de = readdir(dir))) {
		char *end;
		long pid = strtol(de->d_name, &end, 10);

		if (!*end && pid > 0)
			consider(d, (pid_t)pid, false);
	}
	closedir(dir);
}

void candidates__exec(struct daemon *d, pid_t pid)
{
	consider(d, pid, true);
}
