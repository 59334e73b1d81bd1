/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Inside the probeset (probeset.h): the objects a process maps, as examined
 * (probeset.c: what each holds, the scans, exec), and their links
 * (probeset_attach.c: the uprobes on them). The prober's thread only.
 */
#ifndef CORE_PROBES_PROBESET_INT_H
#define CORE_PROBES_PROBESET_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "core/probes/capture_api.h"
#include "core/probes/probeset.h"
#include "core/proc/handle_names.h"
#include "core/proc/procmaps.h"
#include "cuda/launch_api.h"
#include "util/vec.h"

struct uprobe_link;
struct bpf_link;
struct step_spec;

/*
 * Names looked up in every object: the launch APIs, the linker's hook, and
 * what marks a real CUDA runtime (cudaMalloc) or driver (cuInit). A library
 * that only wraps launch functions (an interposer, forwarding to the real
 * ones) is not probed: the real entry it calls would count each launch twice.
 */
#define SYM_DL_DEBUG_STATE API__COUNT
#define SYM_RUNTIME_MARK (API__COUNT + 1)
#define SYM_DRIVER_MARK (API__COUNT + 2)
#define SYM_NAME_API(i) (API__COUNT + 3 + (i))
#define SYM_CAPTURE_API(i) (API__COUNT + 3 + NAME__COUNT + (i))
#define NSYMS (API__COUNT + 3 + NAME__COUNT + CAP__COUNT)

struct examined {
	uint64_t dev, ino;
	char *path;		/* set when examined before exec, by path */
	char *name;		/* the object's name: messages, --step OBJECT: */
	struct map_entry where;	/* the mapping it was found by (start 0: before exec) */
	int fd;			/* the checked file (procmaps.h), kept while probes may attach; -1 */
	char open_path[32];	/* /proc/self/fd/N of fd: what ELF reads and probes go through */
	bool runtime;		/* holds runtime launch APIs: its code is a runtime range */
	uint64_t api_off[API__COUNT];	/* file offsets of launch APIs, 0 when absent */
	struct uprobe_link *entry[LG__COUNT], *ret[LG__COUNT]; /* launch probes, by group */
	struct uprobe_link *name_entry, *name_ret;	/* handle probes, for the whole session */
	struct uprobe_link *capture_entry, *capture_ret; /* capture probes, the same */
	uint64_t event_off[CAP_EVENT_N];	/* the event calls', 0 when absent or not probed */
	struct uprobe_link *event_entry;	/* while captures are (probe_want.events) */
};

#define OBJ(ps, i) vec_at(&(ps)->objs, struct examined, i)

/* A launch API's group: one trap leaves a runtime's first two out, each alone. */
static inline enum launch_group group_of(unsigned int api)
{
	return launch_api_one_trap(api) ? LG_KERNEL : launch_api_graph_trap(api) ? LG_GRAPH : LG_REST;
}

static inline bool group_out(const struct probe_want *w, enum launch_group g)
{
	return (g == LG_KERNEL && w->one_trap) || (g == LG_GRAPH && w->one_trap_graphs);
}

struct probeset {
	const struct probe_env *env;
	const struct step_spec *step_spec;	/* NULL: no step probe */
	pid_t pid;
	struct vec objs;	/* struct examined: every object looked at, probed or not */
	bool has_launch_apis;
	struct probe_want want;	/* what is attached */
	struct runtime_ranges rr;	/* as last given to BPF, RR_ONE_TRAP included */
	uint64_t probes_since;
	struct uprobe_link *libmap;	/* the dynamic linker's hook, for the whole session */
	uint64_t libmap_dev, libmap_ino;	/* the file it is on */
	struct uprobe_link *step;	/* the step probe, once found */
	struct uprobe_link *step_exit;	/* a torch step's: the range exits (step is the entries) */
	char *step_object;	/* where it was found */
	size_t step_walk;	/* a torch step's object (index + 1) to walk off the hold; 0 */
	char step_why[512];	/* why the step's object had no step probe, when it had not */
	char *agent;		/* the agent library, once found (--cupti) */
	struct bpf_link *agent_records;	/* listens to the agent for the whole session */
	struct uprobe_link *agent_enable;	/* raises its switch while a window wants it */
	int agent_wake_fd;	/* the agent's eventfd, taken once (agent_wake.h); -1 */
	bool told_wake;		/* said once that the agent cannot be woken */
	struct procmaps maps;	/* the latest scan's, until probeset__take_maps */
	atomic_bool interrupted; /* probeset__interrupt: the scan's program is gone */
	uint64_t scan_exe_dev, scan_exe_ino;	/* the program the running scan began with */
	/* probeset__preregister: where it goes on from, for the program it began for. */
	size_t prereg_next;
	uint64_t prereg_exe_dev, prereg_exe_ino;
	uid_t prereg_uid;	/* the user the process runs as */
	/* The running scan's new objects (probe_facts.scan_*). */
	unsigned int scan_objs, scan_read, scan_probed;
	uint64_t scan_slowest_ns;
	char scan_slowest[128];
};

/* The links (probeset_attach.c). Each returns 0 or -errno unless void. */
/* Links closed here (sync) or handed to env->dispose, first before then; set NULL. */
void probeset_dispose_pair(const struct probe_env *env, bool sync, struct uprobe_link **first,
			   struct uprobe_link **then);
void probeset_dispose(const struct probe_env *env, bool sync, struct uprobe_link **l);
int probeset_attach_libmap(struct probeset *ps, const char *path, const char *name, uint64_t off);
int probeset_attach_launch(struct probeset *ps, struct examined *e);
int probeset_attach_names(struct probeset *ps, struct examined *e, const uint64_t *offs,
			  bool driver, bool runtime);
int probeset_attach_captures(struct probeset *ps, struct examined *e, const uint64_t *offs,
			     bool driver, bool runtime);
int probeset_attach_events(struct probeset *ps, struct examined *e);
void probeset_detach_launch(const struct probeset *ps, struct examined *e);
int probeset_switch_agent(struct probeset *ps, bool on);
int probeset_attach_agent(struct probeset *ps, const struct examined *e);
int probeset_attach_step(struct probeset *ps, const struct examined *e);
int probeset_attach_torch_step(struct probeset *ps);

#endif /* CORE_PROBES_PROBESET_INT_H */
