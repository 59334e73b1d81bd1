// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A stand-in libcuda.so.1 for the kernel-name tests (the `names` workload):
 * the calls that load modules and libraries and hand out kernel handles, and
 * the two launch calls, with cuda.h's signatures. The toolkit's stub answers
 * every call with CUDA_ERROR_STUB_LIBRARY and writes no handle, so a
 * profiler's return probes would never see one; this library succeeds and
 * writes a fresh handle through the first argument, as the driver does.
 *
 * What a real driver does differently: it parses the image or file, fails
 * for a name the module lacks (as here only for names starting "missing"),
 * returns the same CUfunction each time a module is asked for the same name,
 * and is mostly called by the runtime and libraries through pointers from
 * cuGetProcAddress (here those are the exported functions themselves).
 *
 * For the `graphs` workload it has CUDA graphs (create, the kernel, copy,
 * set, child graph and empty nodes, clone, instantiate, update, set a kernel
 * node's parameters in a graph or an exec, launch, destroy), which the
 * stand-in runtime's graph calls forward to, and what that runtime's stream
 * capture adds nodes with (fakecuda.h).
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include "fakecuda.h"

#define EXPORT __attribute__((visibility("default")))

/* What the handles point to: never read by the caller, only distinct. */
struct fake_object {
	char what[16];
	const void *from;
};

static void *fake_new(const char *what, const void *from)
{
	struct fake_object *o = calloc(1, sizeof(*o));

	if (o) {
		strncpy(o->what, what, sizeof(o->what) - 1);
		o->from = from;
	}
	return o;
}

/* cuprobe recognises a driver by cuInit, as every real one has it. */
EXPORT CUresult cuInit(unsigned int flags)
{
	(void)flags;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuModuleLoad(CUmodule *module, const char *fname)
{
	*module = fake_new("module", fname);
	return *module ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
	*module = fake_new("module", image);
	return *module ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int numOptions,
				   CUjit_option *options, void **optionValues)
{
	(void)numOptions, (void)options, (void)optionValues;
	return cuModuleLoadData(module, image);
}

EXPORT CUresult cuModuleLoadFatBinary(CUmodule *module, const void *fatCubin)
{
	return cuModuleLoadData(module, fatCubin);
}

/*
 * A name the module does not have fails, as in the driver. The handle slot
 * is scribbled on all the same: a profiler must look at the result first.
 */
static CUresult get_by_name(void **out, const void *from, const char *name)
{
	if (!strncmp(name, "missing", 7)) {
		*out = (void *)(uintptr_t)0xbad0000;
		return CUDA_ERROR_NOT_FOUND;
	}
	*out = fake_new("kernel", from);
	return *out ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
	return get_by_name((void **)hfunc, hmod, name);
}

EXPORT CUresult cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions,
				  void **jitOptionsValues, unsigned int numJitOptions,
				  CUlibraryOption *libraryOptions, void **libraryOptionValues,
				  unsigned int numLibraryOptions)
{
	(void)jitOptions, (void)jitOptionsValues, (void)numJitOptions;
	(void)libraryOptions, (void)libraryOptionValues, (void)numLibraryOptions;
	*library = fake_new("library", code);
	return *library ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult cuLibraryLoadFromFile(CUlibrary *library, const char *fileName,
				      CUjit_option *jitOptions, void **jitOptionsValues,
				      unsigned int numJitOptions, CUlibraryOption *libraryOptions,
				      void **libraryOptionValues, unsigned int numLibraryOptions)
{
	return cuLibraryLoadData(library, fileName, jitOptions, jitOptionsValues, numJitOptions,
				 libraryOptions, libraryOptionValues, numLibraryOptions);
}

EXPORT CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
	return get_by_name((void **)pKernel, library, name);
}

EXPORT CUresult cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
	*pFunc = fake_new("function", kernel);
	return *pFunc ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

/*
 * cuprobe places a probe on a real driver's launch exports where the kernel
 * emulates the instruction (DESIGN.md). A leaf's first instruction here would
 * be a compare, which it single-steps at several times the cost: clobbering
 * a callee-saved register gives these a leading push, so that a launch probe
 * costs here what it costs there (bench.py's graph_replay_vs_launch compares
 * against it).
 */
#if defined(__x86_64__)
#define EMULATED_ENTRY() asm volatile("" ::: "memory", "rbx")
#elif defined(__aarch64__)
#define EMULATED_ENTRY() asm volatile("" ::: "memory", "x19")
#else
#define EMULATED_ENTRY() asm volatile("" ::: "memory")
#endif

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, unsigned int gridDimY,
			       unsigned int gridDimZ, unsigned int blockDimX, unsigned int blockDimY,
			       unsigned int blockDimZ, unsigned int sharedMemBytes, CUstream hStream,
			       void **kernelParams, void **extra)
{
	(void)gridDimX, (void)gridDimY, (void)gridDimZ, (void)blockDimX, (void)blockDimY;
	(void)blockDimZ, (void)sharedMemBytes, (void)hStream, (void)kernelParams, (void)extra;
	EMULATED_ENTRY();
	return f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *config, CUfunction f, void **kernelParams,
				 void **extra)
{
	(void)config, (void)kernelParams, (void)extra;
	EMULATED_ENTRY();
	return f ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

/* The driver's own lookup: here, the exported functions themselves. */
EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion,
				 cuuint64_t flags, CUdriverProcAddressQueryResult *symbolStatus)
{
	static const struct {
		const char *name;
		void *fn;
	} table[] = {
		{ "cuModuleGetFunction", (void *)cuModuleGetFunction },
		{ "cuLibraryGetKernel", (void *)cuLibraryGetKernel },
		{ "cuKernelGetFunction", (void *)cuKernelGetFunction },
		{ "cuLaunchKernel", (void *)cuLaunchKernel },
	};

	(void)cudaVersion, (void)flags;
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (!strcmp(symbol, table[i].name)) {
			*pfn = table[i].fn;
			if (symbolStatus)
				*symbolStatus = CU_GET_PROC_ADDRESS_SUCCESS;
			return CUDA_SUCCESS;
		}
	}
	*pfn = NULL;
	if (symbolStatus)
		*symbolStatus = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	return CUDA_ERROR_NOT_FOUND;
}

/* ---- graphs ----------------------------------------------------------------- */

/*
 * A graph is a list of nodes (edges are not kept: nothing here orders work);
 * an executable graph holds its own copy of the graph it was made from, as the
 * driver's does, so that changing or destroying the graph leaves it alone.
 * Launching one "runs" its nodes, which is nothing.
 *
 * Handles are heap blocks. The block of a destroyed graph or executable graph
 * goes on a free list, and the next one made gets the last block freed: the
 * driver's allocator reuses memory the same way, and a profiler that keys what
 * it learnt by handle must notice that the handle now means something else.
 * Copies that are never handed out (a child graph node's graph, an exec's) are
 * allocated apart, so that the handles' reuse follows only the public calls.
 */
enum node_type { NODE_KERNEL, NODE_COPY, NODE_SET, NODE_EMPTY, NODE_CHILD };

struct fake_graph;

struct fake_node {
	enum node_type type;
	struct fake_graph *graph; /* the graph it is in */
	size_t index;		  /* its place there: an exec's copy has it at the same place */
	CUDA_KERNEL_NODE_PARAMS kernel;
	size_t bytes;
	int kind;		  /* copies: cudaMemcpyKind's number */
	unsigned int value;	  /* sets */
	struct fake_graph *child; /* child graph nodes: their own copy of the child */
};

struct fake_graph {
	char what[16]; /* "graph" while it lives, "free graph" on the free list */
	struct fake_node **nodes;
	size_t n, cap;
	bool handle; /* handed out, so its block goes to the free list */
	struct fake_graph *next_free;
};

struct fake_exec {
	char what[16]; /* "exec" while it lives, "free exec" on the free list */
	struct fake_graph *graph;
	struct fake_exec *next_free;
};

static pthread_mutex_t graph_mu = PTHREAD_MUTEX_INITIALIZER;
static struct fake_graph *free_graphs;
static struct fake_exec *free_execs;

static struct fake_graph *graph_alloc(bool handle)
{
	struct fake_graph *g = NULL;

	if (handle) {
		pthread_mutex_lock(&graph_mu);
		g = free_graphs;
		if (g)
			free_graphs = g->next_free;
		pthread_mutex_unlock(&graph_mu);
	}
	if (!g)
		g = malloc(sizeof(*g));
	if (g) {
		memset(g, 0, sizeof(*g));
		strcpy(g->what, "graph");
		g->handle = handle;
	}
	return g;
}

static void graph_free(struct fake_graph *g)
{
	for (size_t i = 0; i < g->n; i++) {
		if (g->nodes[i]->child)
			graph_free(g->nodes[i]->child);
		free(g->nodes[i]);
	}
	free(g->nodes);
	if (!g->handle) {
		free(g);
		return;
	}
	memset(g, 0, sizeof(*g));
	strcpy(g->what, "free graph");
	pthread_mutex_lock(&graph_mu);
	g->next_free = free_graphs;
	free_graphs = g;
	pthread_mutex_unlock(&graph_mu);
}

static struct fake_graph *graph_of(CUgraph h)
{
	struct fake_graph *g = (struct fake_graph *)h;

	return g && !strcmp(g->what, "graph") ? g : NULL;
}

static struct fake_exec *exec_of(CUgraphExec h)
{
	struct fake_exec *e = (struct fake_exec *)h;

	return e && !strcmp(e->what, "exec") ? e : NULL;
}

static struct fake_node *node_of(CUgraphNode h)
{
	struct fake_node *n = (struct fake_node *)h;

	if (!n || !graph_of((CUgraph)n->graph) || n->index >= n->graph->n ||
	    n->graph->nodes[n->index] != n)
		return NULL;
	return n;
}

static struct fake_graph *graph_copy(const struct fake_graph *from, bool handle);

/* Appends a copy of proto (and of its child graph) to g; *out names it when asked. */
static CUresult graph_add(struct fake_graph *g, const struct fake_node *proto, CUgraphNode *out)
{
	struct fake_node *n;

	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 8;
		struct fake_node **nodes = realloc(g->nodes, cap * sizeof(*nodes));

		if (!nodes)
			return CUDA_ERROR_OUT_OF_MEMORY;
		g->nodes = nodes;
		g->cap = cap;
	}
	n = malloc(sizeof(*n));
	if (!n)
		return CUDA_ERROR_OUT_OF_MEMORY;
	*n = *proto;
	n->graph = g;
	n->index = g->n;
	if (proto->child && !(n->child = graph_copy(proto->child, false))) {
		free(n);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	g->nodes[g->n++] = n;
	if (out)
		*out = (CUgraphNode)n;
	return CUDA_SUCCESS;
}

static struct fake_graph *graph_copy(const struct fake_graph *from, bool handle)
{
	struct fake_graph *g = graph_alloc(handle);

	for (size_t i = 0; g && i < from->n; i++) {
		if (graph_add(g, from->nodes[i], NULL) != CUDA_SUCCESS) {
			graph_free(g);
			g = NULL;
		}
	}
	return g;
}

/* What cuGraphExecUpdate asks: the same nodes, of the same types, in the same places. */
static bool same_shape(const struct fake_graph *a, const struct fake_graph *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++) {
		if (a->nodes[i]->type != b->nodes[i]->type)
			return false;
		if (a->nodes[i]->child && !same_shape(a->nodes[i]->child, b->nodes[i]->child))
			return false;
	}
	return true;
}

/* Adds a node to the graph behind handle h, after deps (which must be its nodes). */
static CUresult add_node(CUgraphNode *out, CUgraph h, const CUgraphNode *deps, size_t ndeps,
			 const struct fake_node *proto)
{
	struct fake_graph *g = graph_of(h);

	if (!g || !out || (ndeps && !deps))
		return CUDA_ERROR_INVALID_VALUE;
	for (size_t i = 0; i < ndeps; i++) {
		struct fake_node *d = node_of(deps[i]);

		if (!d || d->graph != g)
			return CUDA_ERROR_INVALID_VALUE;
	}
	return graph_add(g, proto, out);
}

EXPORT CUresult cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
	if (flags)
		return CUDA_ERROR_INVALID_VALUE;
	*phGraph = (CUgraph)graph_alloc(true);
	return *phGraph ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult cuGraphAddKernelNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph,
					const CUgraphNode *dependencies, size_t numDependencies,
					const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
	struct fake_node proto = { .type = NODE_KERNEL };

	if (!nodeParams || (!nodeParams->func && !nodeParams->kern))
		return CUDA_ERROR_INVALID_VALUE;
	proto.kernel = *nodeParams;
	return add_node(phGraphNode, hGraph, dependencies, numDependencies, &proto);
}

/* The cudaMemcpyKind a copy between these memory types is (4: cudaMemcpyDefault). */
static int copy_kind(CUmemorytype src, CUmemorytype dst)
{
	if (src == CU_MEMORYTYPE_UNIFIED || dst == CU_MEMORYTYPE_UNIFIED)
		return 4;
	if (src == CU_MEMORYTYPE_HOST)
		return dst == CU_MEMORYTYPE_HOST ? 0 : 1;
	return dst == CU_MEMORYTYPE_HOST ? 2 : 3;
}

EXPORT CUresult cuGraphAddMemcpyNode(CUgraphNode *phGraphNode, CUgraph hGraph,
				     const CUgraphNode *dependencies, size_t numDependencies,
				     const CUDA_MEMCPY3D *copyParams, CUcontext ctx)
{
	struct fake_node proto = { .type = NODE_COPY };

	(void)ctx;
	if (!copyParams)
		return CUDA_ERROR_INVALID_VALUE;
	proto.bytes = copyParams->WidthInBytes * (copyParams->Height ? copyParams->Height : 1) *
		      (copyParams->Depth ? copyParams->Depth : 1);
	proto.kind = copy_kind(copyParams->srcMemoryType, copyParams->dstMemoryType);
	return add_node(phGraphNode, hGraph, dependencies, numDependencies, &proto);
}

EXPORT CUresult cuGraphAddMemsetNode(CUgraphNode *phGraphNode, CUgraph hGraph,
				     const CUgraphNode *dependencies, size_t numDependencies,
				     const CUDA_MEMSET_NODE_PARAMS *memsetParams, CUcontext ctx)
{
	struct fake_node proto = { .type = NODE_SET };

	(void)ctx;
	if (!memsetParams || (memsetParams->elementSize != 1 && memsetParams->elementSize != 2 &&
			      memsetParams->elementSize != 4))
		return CUDA_ERROR_INVALID_VALUE;
	proto.bytes = memsetParams->width * memsetParams->elementSize *
		      (memsetParams->height ? memsetParams->height : 1);
	proto.value = memsetParams->value;
	return add_node(phGraphNode, hGraph, dependencies, numDependencies, &proto);
}

/* The node embeds a copy of childGraph, made now (later changes to it do not show). */
EXPORT CUresult cuGraphAddChildGraphNode(CUgraphNode *phGraphNode, CUgraph hGraph,
					 const CUgraphNode *dependencies, size_t numDependencies,
					 CUgraph childGraph)
{
	struct fake_node proto = { .type = NODE_CHILD };

	proto.child = graph_of(childGraph);
	if (!proto.child || proto.child == graph_of(hGraph))
		return CUDA_ERROR_INVALID_VALUE;
	return add_node(phGraphNode, hGraph, dependencies, numDependencies, &proto);
}

EXPORT CUresult cuGraphAddEmptyNode(CUgraphNode *phGraphNode, CUgraph hGraph,
				    const CUgraphNode *dependencies, size_t numDependencies)
{
	struct fake_node proto = { .type = NODE_EMPTY };

	return add_node(phGraphNode, hGraph, dependencies, numDependencies, &proto);
}

EXPORT CUresult cuGraphKernelNodeSetParams_v2(CUgraphNode hNode,
					      const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
	struct fake_node *n = node_of(hNode);

	if (!n || n->type != NODE_KERNEL || !nodeParams || (!nodeParams->func && !nodeParams->kern))
		return CUDA_ERROR_INVALID_VALUE;
	n->kernel = *nodeParams;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphClone(CUgraph *phGraphClone, CUgraph originalGraph)
{
	struct fake_graph *g = graph_of(originalGraph);

	if (!g)
		return CUDA_ERROR_INVALID_VALUE;
	*phGraphClone = (CUgraph)graph_copy(g, true);
	return *phGraphClone ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

/* nodes NULL: how many; else up to *numNodes of them, and *numNodes how many were written. */
EXPORT CUresult cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes)
{
	struct fake_graph *g = graph_of(hGraph);

	if (!g || !numNodes)
		return CUDA_ERROR_INVALID_VALUE;
	if (nodes) {
		if (*numNodes > g->n)
			*numNodes = g->n;
		for (size_t i = 0; i < *numNodes; i++)
			nodes[i] = (CUgraphNode)g->nodes[i];
	} else {
		*numNodes = g->n;
	}
	return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph,
					    unsigned long long flags)
{
	struct fake_graph *g = graph_of(hGraph);
	struct fake_exec *e;

	(void)flags;
	if (!g || !phGraphExec)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&graph_mu);
	e = free_execs;
	if (e)
		free_execs = e->next_free;
	pthread_mutex_unlock(&graph_mu);
	if (!e)
		e = malloc(sizeof(*e));
	if (!e)
		return CUDA_ERROR_OUT_OF_MEMORY;
	memset(e, 0, sizeof(*e));
	e->graph = graph_copy(g, false);
	if (!e->graph) {
		free(e);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	strcpy(e->what, "exec");
	*phGraphExec = (CUgraphExec)e;
	return CUDA_SUCCESS;
}

/* hNode is a node of the graph the exec was made from: its copy is at the same place. */
EXPORT CUresult cuGraphExecKernelNodeSetParams_v2(CUgraphExec hGraphExec, CUgraphNode hNode,
						  const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
	struct fake_exec *e = exec_of(hGraphExec);
	struct fake_node *n = node_of(hNode);

	if (!e || !n || n->index >= e->graph->n || e->graph->nodes[n->index]->type != NODE_KERNEL ||
	    !nodeParams || (!nodeParams->func && !nodeParams->kern))
		return CUDA_ERROR_INVALID_VALUE;
	e->graph->nodes[n->index]->kernel = *nodeParams;
	return CUDA_SUCCESS;
}

/* The exec takes hGraph's contents if its nodes are the exec's, type for type. */
EXPORT CUresult cuGraphExecUpdate_v2(CUgraphExec hGraphExec, CUgraph hGraph,
				     CUgraphExecUpdateResultInfo *resultInfo)
{
	struct fake_exec *e = exec_of(hGraphExec);
	struct fake_graph *g = graph_of(hGraph), *copy;

	if (!e || !g || !resultInfo)
		return CUDA_ERROR_INVALID_VALUE;
	memset(resultInfo, 0, sizeof(*resultInfo));
	if (!same_shape(e->graph, g)) {
		resultInfo->result = CU_GRAPH_EXEC_UPDATE_ERROR_TOPOLOGY_CHANGED;
		return CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE;
	}
	copy = graph_copy(g, false);
	if (!copy)
		return CUDA_ERROR_OUT_OF_MEMORY;
	graph_free(e->graph);
	e->graph = copy;
	resultInfo->result = CU_GRAPH_EXEC_UPDATE_SUCCESS;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphLaunch(CUgraphExec hGraphExec, CUstream hStream)
{
	(void)hStream;
	return exec_of(hGraphExec) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream)
{
	(void)hStream;
	return exec_of(hGraphExec) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuGraphExecDestroy(CUgraphExec hGraphExec)
{
	struct fake_exec *e = exec_of(hGraphExec);

	if (!e)
		return CUDA_ERROR_INVALID_VALUE;
	graph_free(e->graph);
	memset(e, 0, sizeof(*e));
	strcpy(e->what, "free exec");
	pthread_mutex_lock(&graph_mu);
	e->next_free = free_execs;
	free_execs = e;
	pthread_mutex_unlock(&graph_mu);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphDestroy(CUgraph hGraph)
{
	struct fake_graph *g = graph_of(hGraph);

	if (!g)
		return CUDA_ERROR_INVALID_VALUE;
	graph_free(g);
	return CUDA_SUCCESS;
}

/* ---- what the stand-in runtime's stream capture calls (fakecuda.h) ---------- */

EXPORT CUresult fakecuda_graph_new(CUgraph *graph)
{
	return cuGraphCreate(graph, 0);
}

static CUresult capture_add(CUgraph h, const struct fake_node *proto)
{
	struct fake_graph *g = graph_of(h);

	return g ? graph_add(g, proto, NULL) : CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult fakecuda_capture_kernel(CUgraph graph, const CUDA_KERNEL_NODE_PARAMS *params)
{
	struct fake_node proto = { .type = NODE_KERNEL, .kernel = *params };

	return capture_add(graph, &proto);
}

EXPORT CUresult fakecuda_capture_copy(CUgraph graph, size_t bytes, int kind)
{
	struct fake_node proto = { .type = NODE_COPY, .bytes = bytes, .kind = kind };

	return capture_add(graph, &proto);
}

EXPORT CUresult fakecuda_capture_set(CUgraph graph, size_t bytes, unsigned int value)
{
	struct fake_node proto = { .type = NODE_SET, .bytes = bytes, .value = value };

	return capture_add(graph, &proto);
}
