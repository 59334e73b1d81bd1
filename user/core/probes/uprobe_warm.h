/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Uprobe registration kept warm while holds come.
 *
 * Every uprobe registration takes the kernel's dup_mmap_sem (a per-CPU
 * rwsem) for writing. Once a grace period has passed with no writer, its
 * rcu_sync is idle, and the next writer waits a whole RCU grace period
 * (10-30 ms on a shared VM) before it registers anything. A hold that
 * attaches probes pays that wait while its process is stopped: it was most
 * of the first `import torch`'s longest holds.
 *
 * A write within about a grace period of the last keeps rcu_sync from going
 * idle. While holds come, a thread makes one every UPROBE_WARM_PERIOD_MS,
 * and goes on UPROBE_WARM_WINDOW_MS after the latest hold; and from a little
 * before a window's attach to a little after its detach. The write
 * registers nothing: a tracefs uprobe event on a memfd that no process maps
 * (`cuprobe/warm_PID_START_N`, START the session's start time) is kept registered by a perf event on the guardian
 * process, and a perf event on this thread is opened and closed; each of the
 * two adds to or takes from the uprobe's filter a process that maps nothing
 * of the file (uprobe_apply: the write, and no synchronize). A session that
 * ends leaves no event behind; one that was killed leaves its event, which
 * the next one removes (its pid gone, or now another process's). Where no
 * tracefs is mounted, the thread mounts one in a mount namespace of its own.
 */
#ifndef CORE_PROBES_UPROBE_WARM_H
#define CORE_PROBES_UPROBE_WARM_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define UPROBE_WARM_PERIOD_MS 10
#define UPROBE_WARM_WINDOW_MS 1000
/* A write that took this long waited for a grace period: the semaphore had gone idle. */
#define UPROBE_WARM_SLOW_NS 2000000ULL

struct uprobe_warm;

struct uprobe_warm_stats {
	uint64_t writes;	/* filter writes made */
	uint64_t slow;		/* of them, those that waited for a grace period */
	uint64_t active_ns;	/* how long it was kept warm */
	uint64_t stretches;	/* times it began after being idle */
	bool off;		/* it could not be set up, or CUPROBE_WARM=off */
	bool own_tracefs;	/* none was mounted: its thread mounted one of its own */
	char why[200];		/* off: why */
};

/*
 * The warmer, idle until the first hold; base: a process of cuprobe's that
 * lives as long as the session and has its own memory (the guardian). Set up
 * on its own thread at the first hold; NULL only without memory or a thread.
 */
struct uprobe_warm *uprobe_warm__new(pid_t base);
/* A hold came or is about to: keep registration warm for the window from now. */
void uprobe_warm__hold(struct uprobe_warm *w);
/* An attach or a detach is coming within ns (a window's): kept warm for ns from now. */
void uprobe_warm__keep(struct uprobe_warm *w, uint64_t ns);
void uprobe_warm__stats(struct uprobe_warm *w, struct uprobe_warm_stats *st);
/* Stops the thread, closes the events, removes the tracefs event. NULL is fine. */
void uprobe_warm__free(struct uprobe_warm *w);
/* Removes the events of cuprobe processes that are gone; how many, or -errno. */
int uprobe_warm__remove_stale(const char *tracefs);

#endif /* CORE_PROBES_UPROBE_WARM_H */
