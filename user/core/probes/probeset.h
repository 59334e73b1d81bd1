/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Where cuprobe's uprobes are in one process: the objects it maps, which of
 * them carry launch APIs, the dynamic linker's hook, the step probe, the
 * agent, and the links attached to them. A probeset belongs to the prober
 * thread: the session creates it, hands it over in jobs, and learns about it
 * only from the facts each job returns.
 */
#ifndef CORE_PROBES_PROBESET_H
#define CORE_PROBES_PROBESET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct bpfobj;
struct objcache;
struct launch_files;
struct probeset;
struct step_spec;
struct uprobe_link;

/* The same for every process of a session, and never changed once set. */
struct probe_env {
	struct bpfobj *bpf;
	bool cupti;			/* look for the agent */
	bool names;			/* probe the calls that make kernel handles (some
					 * window probes launches) */
	bool captures;			/* probe the stream capture calls (capture.h): the
					 * same */
	/*
	 * Detaching a uprobe takes tens of ms (the kernel waits for a grace
	 * period): detached links are handed to dispose (other threads close
	 * them), so that the next attach need not wait. A link stops mattering
	 * at once: BPF filters by phase. first is closed before then (an entry
	 * before its return; either may be NULL); pairs close side by side,
	 * and the kernel's waits of concurrent closes overlap.
	 */
	void (*dispose)(struct uprobe_link *first, struct uprobe_link *then, void *arg);
	void *dispose_arg;
	/*
	 * What each object file holds, read once for every process (objcache.h):
	 * the pointer is fixed, the cache is the prober thread's. NULL: every
	 * object is read in full, each time.
	 */
	struct objcache *objects;
	/* The files with launch probes mapped so far (launch_files.h), the prober's; or NULL. */
	struct launch_files *launch_files;
};

/* What a window attaches. */
struct probe_want {
	bool launch;	/* launch entry probes */
	bool latency;	/* and return probes completing them */
	bool agent;	/* and the agent's switch (CUPTI on) */
	uint8_t gen;	/* the links' generation (COOKIE_GEN_SHIFT): a new one is a new set */
	bool sync;	/* links are closed here, not handed to dispose: no step state
			 * tells an old window's links from a new one's */
	bool one_trap;	/* the runtime's kernel launch probes left out (launch_api_one_trap):
			 * the driver's record those launches; set once, never cleared */
	bool one_trap_graphs; /* the same for cudaGraphLaunch(_ptsz): cuGraphLaunch records */
	bool events;	/* the event calls' probes (capture_api_is_event): while captures are */
};

/* What the owner learns after each job: copies, never pointers into the probeset. */
struct probe_facts {
	bool has_launch_apis;	/* some object has launch APIs */
	bool has_driver;	/* some object has the driver's (libcuda): CUDA calls can work */
	bool step_found;
	char step_object[256];	/* where the step probe is, when found */
	bool step_walk;		/* the step's object is found, its probes wait for a walk
				 * of its .symtab (probeset__step_walk) */
	char step_why[512];	/* why a step's object had no step probe; "" */
	bool torch_mapped;	/* some object is PyTorch's libtorch_cpu.so */
	bool agent_found;
	size_t nobjs;		/* objects looked at */
	bool probes_on;		/* launch probes attached */
	uint64_t probes_since;	/* CLOCK_MONOTONIC of the latest launch probe attach; 0 when off */
	/*
	 * The latest scan's (probeset__scan, probeset__prepare_exec): the objects
	 * new to it, how many of them were read from their file (not the cache)
	 * and how many have something probed, and the one that took longest to
	 * look at (its basename), with how long.
	 */
	unsigned int scan_objs, scan_read, scan_probed;
	uint64_t scan_slowest_ns;
	char scan_slowest[128];
	int err;		/* the job's, -errno */
};

/* step: where the process's step probe is; NULL for none. */
struct probeset *probeset__new(const struct probe_env *env, pid_t pid,
			       const struct step_spec *step);
/* Detaches everything and frees. */
void probeset__free(struct probeset *ps);
/*
 * The same, its links handed to env->dispose to be closed on another thread
 * (tens to hundreds of ms each): for a process whose links no longer matter
 * (it exited, or cuprobe lets it go), so that the prober's next job, another
 * process's hold, does not wait for them.
 */
void probeset__release(struct probeset *ps);

/*
 * Before exec: probes the executable that will run (a statically linked
 * runtime) and its dynamic linker, so that nothing after exec is missed.
 */
int probeset__prepare_exec(struct probeset *ps, const char *exe);
/*
 * Looks at objects mapped since the last scan: launch APIs (probed when
 * probes are on), the dynamic linker's hook, the step probe, the agent.
 */
int probeset__scan(struct probeset *ps);
/*
 * Probes the files of env->launch_files that processes of this process's
 * program had launch probes in, and this one has not mapped (yet), where it
 * sees the same file at the same path. Between files it asks yield (with
 * arg) whether other work waits: then it stops and returns 1, and the next
 * call goes on where it stopped. 0 when done.
 */
int probeset__preregister(struct probeset *ps, bool (*yield)(void *), void *arg);
/*
 * From any thread: the process ran a new program, so a scan of the old one
 * running or queued stops before its next object (what it attached stays).
 * Until the next probeset__keeps_across_exec.
 */
void probeset__interrupt(struct probeset *ps);
/*
 * After the process ran a new program: 1 when this probeset serves it as it
 * is (its links are on files, for this process; a scan adds what is new),
 * 0 when it must be made anew, or -errno.
 */
int probeset__keeps_across_exec(struct probeset *ps);
/* Attaches or detaches launch probes, return probes and the agent's switch. */
int probeset__set(struct probeset *ps, const struct probe_want *w);
void probeset__facts(const struct probeset *ps, struct probe_facts *f);
/*
 * The /proc/PID/maps the latest scan read (while the process was held),
 * handed over to *out (procmaps__free); empty when there is none.
 */
struct procmaps;
void probeset__take_maps(struct probeset *ps, struct procmaps *out);
/*
 * The walk the step's object waits for (probe_facts.step_walk), then its
 * probes: after the hold of the scan that found it, never inside one.
 */
int probeset__step_walk(struct probeset *ps);
/* The few names close to the step spec in the objects looked at, each once (step_spec.h). */
void probeset__suggest_step(const struct probeset *ps, char *buf, size_t len);

#endif /* CORE_PROBES_PROBESET_H */
