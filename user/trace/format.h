/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The trace file's format, named once for its writer (trace/writer.c) and its
 * reader (report/): Kineto's keys, the keys cuprobe adds, and the line layout
 * that lets cuprobe report read its own traces a line at a time.
 */
#ifndef TRACE_FORMAT_H
#define TRACE_FORMAT_H

/*
 * The version in the cuprobe object. 0.2.0: drops counts the launches of
 * that process lost in that cycle (0.1.0: the whole recording's, in every
 * file); nested_skipped, lost_steps and stale_link_hits are new.
 */
#define TRACE_VERSION "0.2.0"
/* The first version whose drops are per process and cycle. */
#define TRACE_VERSION_DROPS_PER_CYCLE "0.2.0"

/* tensorboard_trace_handler's file names: <worker>.<time_ns>.pt.trace.json */
#define TRACE_SUFFIX ".pt.trace.json"

/* ---- the top-level object (Kineto's keys, then cuprobe's) ---- */
#define TRACE_KEY_SCHEMA_VERSION "schemaVersion"
#define TRACE_KEY_DEVICE_PROPERTIES "deviceProperties"
#define TRACE_KEY_DISTRIBUTED_INFO "distributedInfo"
#define TRACE_KEY_BACKEND "backend"
#define TRACE_KEY_RANK "rank"
#define TRACE_KEY_WORLD_SIZE "world_size"
#define TRACE_KEY_DISPLAY_TIME_UNIT "displayTimeUnit"
#define TRACE_KEY_BASE_TIME "baseTimeNanoseconds"
#define TRACE_KEY_EVENTS "traceEvents"
#define TRACE_KEY_TRACE_NAME "traceName"
#define TRACE_KEY_CUPROBE "cuprobe"

/* ---- an event ---- */
#define TRACE_KEY_PH "ph"
#define TRACE_KEY_CAT "cat"
#define TRACE_KEY_NAME "name"
#define TRACE_KEY_PID "pid"
#define TRACE_KEY_TID "tid"
#define TRACE_KEY_TS "ts"
#define TRACE_KEY_DUR "dur"
#define TRACE_KEY_ID "id"
#define TRACE_KEY_BP "bp"
#define TRACE_KEY_ARGS "args"

/* Phases and categories. */
#define TRACE_PH_COMPLETE "X"
#define TRACE_PH_METADATA "M"
#define TRACE_PH_FLOW_START "s"
#define TRACE_PH_FLOW_END "f"
#define TRACE_BP_ENCLOSING "e"
#define TRACE_CAT_RUNTIME "cuda_runtime"
#define TRACE_CAT_DRIVER "cuda_driver"
#define TRACE_CAT_STEP "user_annotation"
#define TRACE_CAT_KERNEL "kernel"
#define TRACE_CAT_MEMCPY "gpu_memcpy"
#define TRACE_CAT_MEMSET "gpu_memset"
#define TRACE_CAT_FLOW "ac2g"
/*
 * A launch, copy or set made into a stream while it was captured: a node
 * added to a graph, not work run. Not a launch in any count (Kineto and HTA
 * take an unknown category for a CPU op).
 */
#define TRACE_CAT_CAPTURE "cuda_capture"
/* A step's span, as torch.profiler names it: ProfilerStep#<step>. */
#define TRACE_STEP_PREFIX "ProfilerStep#"

/* Metadata events' names and their args. */
#define TRACE_META_THREAD_NAME "thread_name"
#define TRACE_META_THREAD_SORT "thread_sort_index"
#define TRACE_META_PROCESS_NAME "process_name"
#define TRACE_META_PROCESS_LABELS "process_labels"
#define TRACE_META_PROCESS_SORT "process_sort_index"
#define TRACE_ARG_META_NAME "name"
#define TRACE_ARG_LABELS "labels"
#define TRACE_ARG_SORT_INDEX "sort_index"

/* ---- events' args: launches ---- */
#define TRACE_ARG_CBID "cbid"
#define TRACE_ARG_CORRELATION "correlation"
#define TRACE_ARG_KERNEL "kernel"
#define TRACE_ARG_GRID "grid"
#define TRACE_ARG_BLOCK "block"
#define TRACE_ARG_SHARED_MEMORY "shared memory"
#define TRACE_ARG_GRAPH "graph"
#define TRACE_ARG_BYTES "bytes"
#define TRACE_ARG_KIND "kind"
#define TRACE_ARG_VALUE "value"
/* Not "stream": HTA takes a stream arg to mean GPU work. */
#define TRACE_ARG_STREAM_HANDLE "stream handle"
#define TRACE_ARG_STEP "step"
/* A captured launch's capture: the session's id, from 1. */
#define TRACE_ARG_CAPTURE_ID "capture id"
/*
 * A graph launch's content: its id in the cuprobe object's graphs list, 0
 * when cuprobe does not know what the executable graph holds; its nodes and
 * kernels only when it does.
 */
#define TRACE_ARG_GRAPH_CONTENT "graph content"
#define TRACE_ARG_GRAPH_NODES "graph nodes"
#define TRACE_ARG_GRAPH_KERNELS "graph kernels"

/* Steps' args (and the cuprobe object's, for the probe keys). */
#define TRACE_ARG_PARTIAL "partial"
#define TRACE_KEY_PROBE_HITS "probe_hits"
#define TRACE_KEY_PROBE_COST_NS "probe_cost_ns"
#define TRACE_KEY_PROBE_COST_SHARE "probe_cost_share"

/* GPU work's args, as Kineto writes them. */
#define TRACE_ARG_DEVICE "device"
#define TRACE_ARG_CONTEXT "context"
#define TRACE_ARG_STREAM "stream"
#define TRACE_ARG_REGISTERS "registers per thread"
#define TRACE_ARG_GRAPH_ID "graph id"
#define TRACE_ARG_GRAPH_NODE_ID "graph node id"
#define TRACE_ARG_BANDWIDTH "memory bandwidth (GB/s)"

/* ---- the cuprobe object: one process in one cycle ---- */
#define TRACE_KEY_VERSION "version"
#define TRACE_KEY_COMMAND "command"
#define TRACE_KEY_CYCLE "cycle"
#define TRACE_KEY_PARTIAL "partial"
#define TRACE_KEY_START_NS "start_ns"
#define TRACE_KEY_END_NS "end_ns"
#define TRACE_KEY_DURATION_NS "duration_ns"
#define TRACE_KEY_LAUNCHES "launches"
#define TRACE_KEY_CAPTURED "captured"	/* launches, copies and sets made into a capture */
#define TRACE_KEY_UNNAMED_KERNELS "unnamed_kernels"
#define TRACE_KEY_LATE_LAUNCHES "late_launches"
#define TRACE_KEY_DROPS "drops"
#define TRACE_KEY_NESTED_SKIPPED "nested_skipped"
#define TRACE_KEY_STALE_LINK_HITS "stale_link_hits"
#define TRACE_KEY_LOST_STEPS "lost_steps"
#define TRACE_KEY_UNPROBED_NS "unprobed_ns"
#define TRACE_KEY_STEPS "steps"
#define TRACE_KEY_PROBE_NS_PER_HIT "probe_ns_per_hit"
#define TRACE_KEY_GPU "gpu"
#define TRACE_KEY_CUPTI_OVERHEAD_NS "cupti_overhead_ns"
#define TRACE_KEY_CUT "cut"
#define TRACE_KEY_HOLDS "holds"
/* false when the process had no CUDA driver (libcuda) loaded: its CUDA calls failed. Else absent. */
#define TRACE_KEY_DRIVER_LOADED "driver_loaded"
/* Graph replays: the launches of graphs, what those of known content ran, and the contents. */
#define TRACE_KEY_GRAPH_REPLAYS "graph_replays"
#define TRACE_KEY_GRAPH_UNKNOWN_REPLAYS "graph_unknown_replays"
#define TRACE_KEY_GRAPH_KERNELS "graph_kernels"
#define TRACE_KEY_GRAPH_GPU_KERNELS "graph_gpu_kernels"	/* --cupti: CUPTI's, joined */
#define TRACE_KEY_GRAPH_MISMATCHES "graph_mismatches"	/* --cupti: replays CUPTI disagrees on */
#define TRACE_KEY_GRAPHS "graphs"

/* A content in the graphs list; kernel, copy and set nodes grouped with a count. */
#define TRACE_GRAPH_ID "id"
#define TRACE_GRAPH_ORIGIN "origin"	/* "capture", "built", "updated" or "cloned" */
#define TRACE_GRAPH_NODES "nodes"
#define TRACE_GRAPH_KERNELS "kernels"
#define TRACE_GRAPH_COPIES "copies"
#define TRACE_GRAPH_SETS "sets"
#define TRACE_GRAPH_OTHER "other"
#define TRACE_GRAPH_KERNEL_NODES "kernel_nodes"
#define TRACE_GRAPH_COPY_NODES "copy_nodes"
#define TRACE_GRAPH_SET_NODES "set_nodes"
#define TRACE_GRAPH_NODE_KERNEL "kernel"
#define TRACE_GRAPH_NODE_COUNT "count"

/* The holds object inside it: the process stopped while new objects were probed. */
#define TRACE_HOLDS_COUNT "count"
#define TRACE_HOLDS_TOTAL_MS "total_ms"
#define TRACE_HOLDS_MAX_MS "max_ms"

/* The cut object inside it: the cycle reached a size bound and was ended there. */
#define TRACE_CUT_BOUND "bound"			/* "launches" or "bytes" */
#define TRACE_CUT_STEP "step"			/* the step it was cut in; -1 without steps */
#define TRACE_CUT_NS "at_ns"			/* when, Unix ns */
#define TRACE_CUT_LAUNCHES "launches_not_written"

/* The gpu object inside it (--cupti). */
#define TRACE_GPU_JOINED "joined_launches"
#define TRACE_GPU_WITHOUT_GPU "launches_without_gpu"
#define TRACE_GPU_WITHOUT_API "launches_without_api_record"
#define TRACE_GPU_WITHOUT_LAUNCH "gpu_without_launch"
#define TRACE_GPU_CLOCK_FAULTS "clock_faults"
#define TRACE_GPU_DROPPED "cupti_dropped"
#define TRACE_GPU_BAD_CHUNKS "malformed_chunks"
#define TRACE_GPU_MISSING "missing_at_timeout"
#define TRACE_GPU_RECORDS "gpu_records"

/*
 * ---- the line layout ----
 * Top-level keys one a line at TRACE_INDENT_TOP spaces, each element of
 * traceEvents on a line of its own at TRACE_INDENT_EVENT spaces, every
 * event on one line. A reader may rely on these lines; one that does not
 * match them is read as any JSON.
 */
#define TRACE_INDENT_TOP 1
#define TRACE_INDENT_EVENT 2
#define TRACE_LINE_EVENTS_OPEN " \"" TRACE_KEY_EVENTS "\": ["
#define TRACE_LINE_EVENT_PREFIX "  {"
#define TRACE_LINE_EVENTS_CLOSE " ]"
#define TRACE_LINE_EVENTS_CLOSE_MORE " ],"

_Static_assert(sizeof(TRACE_LINE_EVENT_PREFIX) - 2 == TRACE_INDENT_EVENT,
	       "an event line is its indent and the event's '{'");
_Static_assert(sizeof(TRACE_LINE_EVENTS_CLOSE) - 2 == TRACE_INDENT_TOP,
	       "traceEvents closes at the indent of the line it opened on");

/* ---- --stack: stacks as torch.profiler's with_stack writes them ---- */
/*
 * Each frame of the launches' stacks is a python_function span on the
 * launch's thread ("file.py(line): name" for Python frames, "function
 * (file:line)" for native ones), from the first launch that had it to the
 * end of the last consecutive one; "Python parent id" links a span to its
 * caller's, and a launch to its innermost frame's.
 */
#define TRACE_CAT_PYTHON "python_function"
#define TRACE_ARG_PY_ID "Python id"
#define TRACE_ARG_PY_PARENT "Python parent id"
#define TRACE_ARG_PY_THREAD "Python thread"
/* The stacks object inside the cuprobe object. */
#define TRACE_KEY_STACKS "stacks"
#define TRACE_STACKS_TAKEN "taken"
#define TRACE_STACKS_LOST "lost"
#define TRACE_STACKS_TRUNCATED "truncated"
#define TRACE_STACKS_UNSYMBOLIZED "unsymbolized_frames"
#define TRACE_STACKS_PYTHON "python"
#define TRACE_STACKS_PYTHON_LOST "python_lost"

#endif /* TRACE_FORMAT_H */
