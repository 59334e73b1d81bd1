/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * cuprobe report's data model: what the traces say, counted per kernel, per
 * API and per thread, with the steps, cycles and GPU work. The readers
 * (report/read.c) fill a report per file, which is then merged into the
 * whole (report__merge); report__finish sorts it and computes its
 * statistics, and the writers (text, json, csv) only read it.
 */
#ifndef REPORT_MODEL_H
#define REPORT_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "util/hashmap.h"
#include "util/vec.h"

/* A row of counts keyed by a name, by integers, or both; the row owns its strings. */
struct count_row {
	const char *name; /* NULL for keys made of integers only */
	int64_t a, b, c;  /* the integer part of the key: (pid, tid), (dev, ino), ... */
	char *label;	  /* a name that is not part of the key (a thread's name) */
	uint64_t count;
	char name_buf[];
};

/* Rows by key; the map is made when the first row comes. */
struct count_table {
	struct hmap *map; /* key and value: struct count_row * */
};

/* The row of a key, added with a count of 0 when new; NULL when out of memory. */
struct count_row *count_table__get(struct count_table *t, const char *name, int64_t a, int64_t b,
				   int64_t c);
/* Counts one more of a key. 0 or -ENOMEM. */
int count_table__add(struct count_table *t, const char *name, int64_t a, int64_t b, int64_t c);
/* Counts n more of a key (held at UINT64_MAX). 0 or -ENOMEM. */
int count_table__add_n(struct count_table *t, const char *name, int64_t a, int64_t b, int64_t c,
		       uint64_t n);
/* The count of a key, without adding it. */
uint64_t count_table__count(const struct count_table *t, const char *name, int64_t a, int64_t b,
			    int64_t c);
size_t count_table__size(const struct count_table *t);
/* The row at *bkt or after, for walking the table; NULL at the end. */
struct count_row *count_table__iter(const struct count_table *t, size_t *bkt);
/* Adds src's rows to dst: counts add up, or the larger is kept when max. */
int count_table__merge(struct count_table *dst, const struct count_table *src, bool max);
void count_table__free(struct count_table *t);

/*
 * What cuprobe itself cost in a step, a cycle or the whole report, from the
 * keys cuprobe record writes. Any part may be unknown (older traces, partial
 * steps, torch.profiler's traces): sums add only the parts that are known.
 */
struct overhead {
	uint64_t hits;	       /* launch probe hits */
	uint64_t cost_ns;      /* hits x the per-hit cost measured when recording */
	uint64_t cost_wall_ns; /* wall time of the parts whose cost is known */
	uint64_t cupti_ns;     /* CUPTI's own overhead */
	double per_hit_min, per_hit_max; /* ns per hit, over the traces that measured it */
	bool has_hits, has_cost, has_per_hit, has_cupti;
};

void overhead__add(struct overhead *sum, const struct overhead *o);
/* The cost as a fraction of the wall time it fell in; false when either is unknown. */
bool overhead__share(const struct overhead *o, double *share);

/* One step of one process: a ProfilerStep span, and the launches made in it. */
struct step_row {
	int64_t pid, step;
	uint64_t wall_ns;
	uint64_t launches;
	uint64_t gpu_busy_ns; /* union of its GPU work's intervals, summed over devices */
	struct overhead ovh;
	bool partial; /* cut short by the end of the recording */
	bool has_gpu; /* its span is in a trace with a cuprobe.gpu object: busy time known */
	/*
	 * Its parts, from the record_function ranges in it (its file has some): the
	 * DataLoader's (enumerate(DataLoader)#...) and the optimizer's (Optimizer.*).
	 */
	bool has_parts;
	uint64_t data_ns, optimizer_ns;
	int64_t start_ns; /* its span's ts, in its file's time: for the parts */
};

/* What a step's parts are made of (step_row.data_ns, optimizer_ns). */
enum range_part { PART_DATA, PART_OPTIMIZER, PART_NONE };

/* A record_function range of one file, of a part, until its steps take it (report__merge). */
struct part_span {
	int64_t pid;
	int64_t start_ns, end_ns;
	enum range_part part;
};

/*
 * The record_function ranges of one name (user_annotation spans other than
 * ProfilerStep#): torch.profiler's, and cuprobe's with --step torch.
 */
struct annotation_stat {
	const char *name; /* owned by report.annotation_calls */
	uint64_t calls, total_ns;
};

/* Step wall time over the complete steps of one process. */
struct step_stat {
	int64_t pid;
	uint64_t steps;
	double mean_ns;
	uint64_t p50_ns, p99_ns, max_ns;
};

/* One trace written by cuprobe record: one process in one cycle. */
struct cycle_row {
	int64_t cycle, pid;
	char *command; /* NULL when the trace has none */
	int64_t first_step, last_step;
	bool has_steps; /* recorded with --step */
	bool partial;
	uint64_t launches, duration_ns, late_launches;
	struct overhead ovh;
	size_t seq; /* order read: keeps rows of equal (cycle, pid) apart */
};

/* One GPU event: its duration, and its delay when it was joined to its launch. */
struct gpu_sample {
	const char *name; /* owned by report.gpu_names */
	uint64_t dur_ns;
	int64_t delay_ns; /* GPU start - launch; negative on a clock fault */
	bool joined;
};

/* A GPU event whose launch was made in a step, for that step's busy time. */
struct gpu_interval {
	int64_t pid, step, device;
	int64_t start_ns, end_ns;
};

/* GPU time and launch-to-start delay of the GPU events of one name. */
struct gpu_kernel_stat {
	const char *name; /* owned by report.gpu_names */
	uint64_t count, total_ns, p50_ns, p99_ns;
	double mean_ns;
	uint64_t delays; /* events joined to their launch; 0: delays unknown */
	double delay_mean_ns;
	int64_t delay_p50_ns, delay_p99_ns;
};

/*
 * The join counts of cuprobe.gpu, in the order the text header says them;
 * the records come last, since the header gives them first on their own.
 */
enum gpu_count {
	GPU_JOINED,
	GPU_WITHOUT_GPU,
	GPU_WITHOUT_API,
	GPU_WITHOUT_LAUNCH,
	GPU_CLOCK_FAULTS,
	GPU_DROPPED,
	GPU_MISSING,
	GPU_RECORDS,
	GPU__COUNT
};

/* Their keys in the trace's cuprobe.gpu, which the JSON report's gpu object repeats. */
extern const char *const gpu_count_keys[GPU__COUNT];

/*
 * What graph replays ran: the graph launches that name their content
 * (report/graphs.h). Older traces' graph launches name none and count here
 * not at all.
 */
struct graph_counts {
	uint64_t replays;		  /* graph launches naming a content, known or not */
	uint64_t unknown;		  /* of them, of content 0 or one the trace does not list */
	uint64_t unknown_no_driver;	  /* of those, by processes with no CUDA driver loaded */
	uint64_t kernels, copies, sets;	  /* what the replays of known content ran */
	uint64_t gpu_kernels, mismatches; /* cuprobe.graph_gpu_kernels, graph_mismatches */
	bool has_cupti;			  /* some trace has those two (--cupti) */
};

/*
 * The sections of the report. Adding one takes an id here, a line in
 * section_descs, code that fills its table, and nothing in the writers.
 */
enum section_id { SEC_KERNEL, SEC_API, SEC_THREAD, SEC__COUNT };

struct section_desc {
	const char *id;		/* CSV `section` column */
	const char *json_key;	/* JSON array holding the rows */
	const char *count_key;	/* JSON name of the count */
	const char *rate_key;	/* JSON name of the count per second */
	const char *title;	/* text heading */
	const char *count_head; /* text column headings */
	const char *rate_head;
	const char *name_head;
	bool by_thread; /* keyed by (pid, tid) and labelled with the thread's name */
};

extern const struct section_desc section_descs[SEC__COUNT];

struct report {
	struct count_table sections[SEC__COUNT];
	struct count_table pids;	    /* distinct processes */
	struct count_table files;	    /* (dev, ino) of the files read, so each counts once */
	struct count_table step_launches;   /* launches per (pid, args.step) */
	struct count_table recording_drops; /* drops of traces before 0.2.0, see read.c */
	struct count_table gpu_names;	    /* GPU events per name; owns the names */
	struct count_table graph_kernels;   /* of the Kernels rows' counts, what replays ran */
	struct count_table graph_contents;  /* distinct contents replayed, per process */
	struct count_table annotation_calls; /* annotation spans per name */
	struct count_table annotation_ns;    /* and their time, in the count */
	struct graph_counts graphs;
	uint64_t trace_files;
	uint64_t launches;
	uint64_t wall_ns;
	uint64_t drops;
	uint64_t late_launches;
	uint64_t lost_steps;	 /* step boundaries lost while recording */
	uint64_t unprobed_ns;	 /* windows recorded before their launch probes were in */
	bool no_driver;		 /* one file's: its process had no CUDA driver (cuprobe.driver_loaded) */
	uint64_t nested_skipped; /* probe hits skipped as nested calls */
	uint64_t unnamed_kernels; /* kernel launches no symbol or handle record named */
	uint64_t captured;	 /* made into captured streams: graph nodes, in no launch count */
	uint64_t malformed;	 /* events not used: a field missing or mistyped */
	struct overhead ovh;	 /* over all cycles */
	struct vec steps;	 /* struct step_row, sorted and merged by report__finish */
	struct vec stats;	 /* struct step_stat, made by report__finish */
	struct vec cycles;	 /* struct cycle_row */
	uint64_t gpu_counts[GPU__COUNT]; /* summed over the traces' cuprobe.gpu */
	bool has_gpu_counts;		 /* some trace has a cuprobe.gpu object */
	struct vec gpu_samples;		 /* struct gpu_sample */
	struct vec gpu_intervals;	 /* struct gpu_interval */
	struct vec gpu_kernels;		 /* struct gpu_kernel_stat, made by report__finish */
	struct vec annotations;		 /* struct annotation_stat, made by report__finish */
	struct vec part_spans;		 /* struct part_span: one file's, emptied by report__merge */
	char *scratch; /* kernel keys composed from several fields */
	size_t scratch_cap;
};

void report__init(struct report *r);
void report__free(struct report *r);
/* Formats into the report's scratch buffer; NULL when out of memory. */
const char *report__scratch(struct report *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Adds f, the report of one file, to r. 0 or -ENOMEM. */
int report__merge(struct report *r, struct report *f);
/* Puts steps and cycles in report order and computes the step and GPU stats (stats.c). */
int report__finish(struct report *r);

/* A section's rows with a count, in print order (most first). */
struct section_rows {
	const struct section_desc *desc;
	const struct count_row **rows;
	size_t n;
};

int report__sort_section(const struct report *r, enum section_id id, struct section_rows *out);

/* For the writers: shares and rates; false when the time is unknown (zero). */
double report__share_pct(const struct report *r, uint64_t count);
/*
 * A section row's share: of the Kernels table's own total for kernels
 * (launches and the kernels graph replays ran), of launches for the others.
 */
double report__row_share_pct(const struct report *r, const struct section_desc *d,
			     uint64_t count);
bool report__rate(uint64_t count, uint64_t ns, double *rate);
bool report__per_second(const struct report *r, uint64_t count, double *rate);
/* A section row's name: the key, or a thread's label (NULL when it has none). */
const char *report__row_name(const struct section_desc *d, const struct count_row *row);
/*
 * Whether section d has a "from graphs" count: the Kernels table of traces
 * with graph replays. Traces without them give the report they always gave.
 */
bool report__graph_column(const struct report *r, const struct section_desc *d);
/* Of a Kernels row's count, the launches that graph replays ran. */
uint64_t report__from_graphs(const struct report *r, const struct count_row *row);

#endif /* REPORT_MODEL_H */
