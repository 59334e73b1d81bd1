// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * graphs: CUDA graphs made every way a program makes them, then replayed
 * (README.md): captured from streams (global mode across two streams joined
 * through events; thread-local on another thread), built node by node
 * through the runtime (kernel, copy, set, empty and child graph nodes) and
 * through the driver, instantiated, replayed, changed in place (a kernel
 * node's parameters in the exec; an update from a rebuilt graph), cloned,
 * and destroyed so that the next executable graphs get the freed handles.
 * One graph is made before the wait file and replayed after it: a profiler
 * attached at the wait cannot know what it holds. With
 * GRAPHS_REFUSED=1 in the environment, each iteration also replays no graph
 * at all, which the stand-in runtime refuses before the driver (as a
 * runtime refuses a replay it cannot make): a profiler that leaves the
 * runtime's replay probe out would lose it.
 *
 * Built with -cudart none on the stand-in runtime and driver (fakecudart.c,
 * fakecuda.c): the real libcudart fails every graph call without a device.
 *
 * Ground truth: $CUPROBE_GT holds the calls that ran, each graph launch as a
 * launch of its exec; $CUPROBE_GT.captured the calls made into captures, as
 * capture.cu writes it; $CUPROBE_GT.graphs what each replay ran.
 */
#include <atomic>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <tuple>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "ground_truth.h"
#include "captured_gt.h"
#include "workload.h"

/* An export of every driver that cuda.h declares only for per-thread default streams. */
extern "C" CUresult CUDAAPI cuGraphLaunch_ptsz(CUgraphExec hGraphExec, CUstream hStream);

namespace gr {
__global__ void k_a(float *x) { (void)x; }
__global__ void k_b(float *x, int n) { (void)x, (void)n; }
__global__ void k_c(int *x) { (void)x; }
__global__ void k_d(double *x) { (void)x; }
__global__ void k_e(float *x, float a) { (void)x, (void)a; }
__global__ void early(int *x) { (void)x; }
template <typename T> __global__ void child_k(T *x, int n) { (void)x, (void)n; }
} // namespace gr

struct kernel {
	const void *stub;	/* the host stub: what a kernel node is given */
	cudaKernel_t h;		/* its kernel: what a launch is given (as capture.cu does) */
	const char *name;	/* as the ground truth names kernels */
};

static kernel ka = { (const void *)gr::k_a, nullptr, "gr::k_a(float*)" };
static kernel kb = { (const void *)gr::k_b, nullptr, "gr::k_b(float*, int)" };
static kernel kc = { (const void *)gr::k_c, nullptr, "gr::k_c(int*)" };
static kernel kd = { (const void *)gr::k_d, nullptr, "gr::k_d(double*)" };
static kernel ke = { (const void *)gr::k_e, nullptr, "gr::k_e(float*, float)" };
static kernel kearly = { (const void *)gr::early, nullptr, "gr::early(int*)" };
static kernel kchf = { (const void *)gr::child_k<float>, nullptr,
		       "void gr::child_k<float>(float*, int)" };
static kernel kchi = { (const void *)gr::child_k<int>, nullptr,
		       "void gr::child_k<int>(int*, int)" };

/* Driver kernels, by the names a module is asked for and the names cuprobe gives them. */
static CUfunction fd1, fd2;
static const char *const fd1_sym = "_ZN3drv6kernelEPfi";
static const char *const fd1_name = "drv::kernel(float*, int)";
static const char *const fd2_name = "drv_plain";

static std::atomic<int> failed{ 0 };
static std::atomic<unsigned> steps{ 0 };

static void check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "graphs: %s failed\n", what);
		failed++;
	}
}

/* ---- what a graph holds, as the workload made it ---------------------------- */

/* Child graphs count as the nodes they hold: a replay runs those, not the child node. */
struct content {
	unsigned top = 0; /* the graph's own nodes (cudaGraphGetNodes) */
	unsigned nodes = 0, copies = 0, sets = 0, other = 0;
	std::map<std::string, unsigned> kernels;

	void kernel(const std::string &name) { kernels[name]++, nodes++, top++; }
	void copy() { copies++, nodes++, top++; }
	void set() { sets++, nodes++, top++; }
	void empty() { other++, nodes++, top++; }
	void child(const content &c)
	{
		for (const auto &kv : c.kernels)
			kernels[kv.first] += kv.second;
		nodes += c.nodes, copies += c.copies, sets += c.sets, other += c.other, top++;
	}
	void replace(const std::string &from, const std::string &to)
	{
		if (!--kernels[from])
			kernels.erase(from);
		kernels[to]++;
	}
};

struct graph {
	cudaGraph_t h = nullptr;
	content c;
};

/* An executable graph: each instantiate, update or parameter change is a new instance. */
struct exec {
	cudaGraphExec_t h = nullptr;
	unsigned instance = 0;
	bool known = true;
	content c;
};

/* ---- ground truth ------------------------------------------------------------------- */

static std::mutex gt_mu;
static std::map<unsigned, exec> instances;
static std::map<std::pair<unsigned, unsigned>, uint64_t> replays; /* (step, instance) */
static unsigned instance_ids;
/* Exec handles destroyed and not yet handed out again; how many were handed out again. */
static std::set<cudaGraphExec_t> freed;
static unsigned reused;

/* Captured calls: (capture, api, kernel, grid.x, stream, bytes) -> count, as capture.cu. */
static captured_map captured_calls;
static std::atomic<unsigned> captures{ 0 };

static void new_instance(exec &e)
{
	std::lock_guard<std::mutex> lock(gt_mu);
	e.instance = ++instance_ids;
	instances[e.instance] = e;
}

static void instantiated(exec &e, const content &c, bool known)
{
	std::lock_guard<std::mutex> lock(gt_mu);
	if (freed.erase(e.h))
		reused++;
	e.c = c;
	e.known = known;
	e.instance = ++instance_ids;
	instances[e.instance] = e;
}

static void note(unsigned capture, const gt::Call &c)
{
	if (!capture) {
		gt::record(c);
		return;
	}
	std::lock_guard<std::mutex> lock(gt_mu);
	captured_add(captured_calls, capture, c);
}

/* ---- launches, copies and sets, run or captured --------------------------------------- */

static void launch(const kernel &k, unsigned g, cudaStream_t s, unsigned capture, content *c)
{
	const unsigned grid[3] = { g, 1, 1 }, block[3] = { 32, 1, 1 };
	void *params[] = { nullptr, nullptr };

	note(capture, gt::launch("cudaLaunchKernel", k.name, k.h, grid, block, 0, s));
	check(cudaLaunchKernel((const void *)k.h, dim3(g), dim3(32), params, 0, s) == cudaSuccess,
	      "cudaLaunchKernel");
	if (c)
		c->kernel(k.name);
}

/* k_c by <<<>>>: the stub takes its kernel from __cudaGetKernel, which is kc.h. */
static void launch_kc(unsigned g, cudaStream_t s, unsigned capture, content *c)
{
	const unsigned grid[3] = { g, 1, 1 }, block[3] = { 32, 1, 1 };

	note(capture, gt::launch("cudaLaunchKernel", kc.name, kc.h, grid, block, 0, s));
	gr::k_c<<<g, 32, 0, s>>>(nullptr);
	if (c)
		c->kernel(kc.name);
}

static void copy(size_t bytes, cudaStream_t s, unsigned capture, content *c)
{
	note(capture, gt::copy("cudaMemcpyAsync", bytes, cudaMemcpyHostToDevice, s));
	check(cudaMemcpyAsync(nullptr, nullptr, bytes, cudaMemcpyHostToDevice, s) == cudaSuccess,
	      "cudaMemcpyAsync");
	if (c)
		c->copy();
}

static void set(size_t bytes, cudaStream_t s, unsigned capture, content *c)
{
	note(capture, gt::set("cudaMemsetAsync", bytes, 7, s));
	check(cudaMemsetAsync(nullptr, 7, bytes, s) == cudaSuccess, "cudaMemsetAsync");
	if (c)
		c->set();
}

static unsigned begin(cudaStream_t s, cudaStreamCaptureMode mode)
{
	if (cudaStreamBeginCapture(s, mode) != cudaSuccess) {
		check(false, "cudaStreamBeginCapture");
		return 0;
	}
	return ++captures;
}

/* The graph's own node count, as the stand-in has it, against what the workload made. */
static void check_nodes(const graph &g)
{
	size_t n = 0;

	check(cudaGraphGetNodes(g.h, nullptr, &n) == cudaSuccess && n == g.c.top,
	      "a graph's node count");
}

/* ---- replays ------------------------------------------------------------------------- */

enum via { RT, DRV, DRV_PTSZ };

static void replay(const exec &e, cudaStream_t s, unsigned times, enum via via = RT)
{
	static const char *const api[] = { "cudaGraphLaunch", "cuGraphLaunch",
					   "cuGraphLaunch_ptsz" };

	for (unsigned i = 0; i < times; i++) {
		gt::record(gt::graph(api[via], e.h, s));
		if (via == RT)
			check(cudaGraphLaunch(e.h, s) == cudaSuccess, "cudaGraphLaunch");
		else if (via == DRV)
			check(cuGraphLaunch((CUgraphExec)e.h, (CUstream)s) == CUDA_SUCCESS,
			      "cuGraphLaunch");
		else
			check(cuGraphLaunch_ptsz((CUgraphExec)e.h, (CUstream)s) == CUDA_SUCCESS,
			      "cuGraphLaunch_ptsz");
		std::lock_guard<std::mutex> lock(gt_mu);
		replays[std::make_pair(steps.load(), e.instance)]++;
	}
}

/* A replay of no executable graph: the runtime refuses it, the driver never sees it. */
static void refused_replay(const exec &none, cudaStream_t s)
{
	gt::record(gt::graph("cudaGraphLaunch", nullptr, s));
	check(cudaGraphLaunch(nullptr, s) == cudaErrorInvalidResourceHandle,
	      "a replay of no graph refused");
	std::lock_guard<std::mutex> lock(gt_mu);
	replays[std::make_pair(steps.load(), none.instance)]++;
}

static exec instantiate(const graph &g, bool with_flags = false)
{
	exec e;

	if (with_flags)
		check(cudaGraphInstantiateWithFlags(&e.h, g.h, 0) == cudaSuccess,
		      "cudaGraphInstantiateWithFlags");
	else
		check(cudaGraphInstantiate(&e.h, g.h, 0) == cudaSuccess, "cudaGraphInstantiate");
	instantiated(e, g.c, true);
	return e;
}

static void destroy(exec &e)
{
	check(cudaGraphExecDestroy(e.h) == cudaSuccess, "cudaGraphExecDestroy");
	std::lock_guard<std::mutex> lock(gt_mu);
	freed.insert(e.h);
}

static void destroy(graph &g)
{
	check(cudaGraphDestroy(g.h) == cudaSuccess, "cudaGraphDestroy");
}

/* ---- captured graphs ------------------------------------------------------------------ */

/* Global mode on s1, forked to s2 and joined back through events; then s2 runs again. */
static graph capture_fork_join(cudaStream_t s1, cudaStream_t s2, cudaEvent_t e1, cudaEvent_t e2)
{
	graph g;
	unsigned c = begin(s1, cudaStreamCaptureModeGlobal);

	launch(ka, 2, s1, c, &g.c);
	check(cudaEventRecord(e1, s1) == cudaSuccess, "cudaEventRecord");
	check(cudaStreamWaitEvent(s2, e1, 0) == cudaSuccess, "cudaStreamWaitEvent");
	launch(kb, 3, s2, c, &g.c);
	launch_kc(4, s2, c, &g.c);
	copy(4096, s2, c, &g.c);
	check(cudaEventRecord(e2, s2) == cudaSuccess, "cudaEventRecord");
	check(cudaStreamWaitEvent(s1, e2, 0) == cudaSuccess, "cudaStreamWaitEvent");
	launch(ka, 5, s1, c, &g.c);
	set(1024, s1, c, &g.c);
	check(cudaStreamEndCapture(s1, &g.h) == cudaSuccess, "cudaStreamEndCapture");
	check_nodes(g);
	launch(kb, 6, s2, 0, nullptr);
	return g;
}

/*
 * Thread-local mode on another thread's default stream, which that thread
 * then replays, while this thread launches into its own default stream.
 */
static void capture_thread_local()
{
	std::atomic<int> stage{ 0 };
	std::thread t([&] {
		cudaStreamCaptureMode mode = cudaStreamCaptureModeThreadLocal;
		graph g;

		check(cudaThreadExchangeStreamCaptureMode(&mode) == cudaSuccess, "mode exchange");
		unsigned c = begin(cudaStreamPerThread, cudaStreamCaptureModeThreadLocal);
		stage = 1;
		while (stage != 2)
			std::this_thread::yield();
		launch(kb, 7, cudaStreamPerThread, c, &g.c);
		set(2048, cudaStreamPerThread, c, &g.c);
		check(cudaStreamEndCapture(cudaStreamPerThread, &g.h) == cudaSuccess,
		      "cudaStreamEndCapture");
		check(cudaThreadExchangeStreamCaptureMode(&mode) == cudaSuccess, "mode exchange");
		check_nodes(g);
		exec e = instantiate(g);
		replay(e, cudaStreamPerThread, 2);
		destroy(e);
		destroy(g);
	});
	while (stage != 1)
		std::this_thread::yield();
	launch(ka, 8, cudaStreamPerThread, 0, nullptr);
	stage = 2;
	t.join();
}

/* ---- graphs built node by node ------------------------------------------------------------ */

static cudaKernelNodeParams kparams(const kernel &k, unsigned g)
{
	cudaKernelNodeParams p = {};

	p.func = (void *)k.stub;
	p.gridDim = dim3(g);
	p.blockDim = dim3(64);
	return p;
}

static cudaGraphNode_t add_kernel(graph &g, const kernel &k, unsigned grid,
				  const cudaGraphNode_t *deps, size_t ndeps)
{
	cudaKernelNodeParams p = kparams(k, grid);
	cudaGraphNode_t n = nullptr;

	check(cudaGraphAddKernelNode(&n, g.h, deps, ndeps, &p) == cudaSuccess,
	      "cudaGraphAddKernelNode");
	g.c.kernel(k.name);
	return n;
}

static cudaGraphNode_t add_set(graph &g, size_t bytes, unsigned elem, const cudaGraphNode_t *dep)
{
	cudaMemsetParams m = {};
	cudaGraphNode_t n = nullptr;

	m.value = 0;
	m.elementSize = elem;
	m.width = bytes / elem;
	m.height = 1;
	check(cudaGraphAddMemsetNode(&n, g.h, dep, 1, &m) == cudaSuccess, "cudaGraphAddMemsetNode");
	g.c.set();
	return n;
}

/* A child graph of two kernels, embedded (copied) into g after dep, then destroyed. */
static void add_child(graph &g, const kernel &k1, const kernel &k2, const cudaGraphNode_t *dep)
{
	graph child;
	cudaGraphNode_t n = nullptr;

	check(cudaGraphCreate(&child.h, 0) == cudaSuccess, "cudaGraphCreate");
	cudaGraphNode_t first = add_kernel(child, k1, 9, nullptr, 0);
	add_kernel(child, k2, 10, &first, 1);
	check(cudaGraphAddChildGraphNode(&n, g.h, dep, 1, child.h) == cudaSuccess,
	      "cudaGraphAddChildGraphNode");
	g.c.child(child.c);
	destroy(child);
}

/*
 * Seven nodes: three kernels (the third returned through *changing), a copy,
 * a set, an empty node and a child graph of two kernels. Variant 1 has the
 * same shape, so that an exec of variant 0 can be updated to it, with other
 * kernels, sizes and directions, and its first kernel node changed after it
 * was added.
 */
static graph build(int variant, cudaGraphNode_t *changing)
{
	const bool v = variant != 0;
	graph g;
	cudaGraphNode_t n[6];

	check(cudaGraphCreate(&g.h, 0) == cudaSuccess, "cudaGraphCreate");
	n[0] = add_kernel(g, v ? ke : kd, v ? 11 : 1, nullptr, 0);
	n[1] = add_kernel(g, kd, v ? 12 : 2, &n[0], 1);
	n[2] = add_kernel(g, v ? ka : kb, v ? 13 : 3, &n[0], 1);
	check(cudaGraphAddMemcpyNode1D(&n[3], g.h, &n[1], 2, nullptr, nullptr, v ? 16384 : 8192,
				       v ? cudaMemcpyDeviceToDevice : cudaMemcpyHostToDevice) ==
		      cudaSuccess,
	      "cudaGraphAddMemcpyNode1D");
	g.c.copy();
	n[4] = add_set(g, v ? 512 : 256, v ? 1 : 4, &n[3]);
	check(cudaGraphAddEmptyNode(&n[5], g.h, &n[4], 1) == cudaSuccess, "cudaGraphAddEmptyNode");
	g.c.empty();
	add_child(g, kchf, v ? kchf : kchi, &n[5]);
	if (v) {
		cudaKernelNodeParams p = kparams(kb, 15);

		check(cudaGraphKernelNodeSetParams(n[0], &p) == cudaSuccess,
		      "cudaGraphKernelNodeSetParams");
		g.c.replace(ke.name, kb.name);
	}
	check_nodes(g);
	if (changing)
		*changing = n[2];
	return g;
}

/* Three kernel nodes through the driver, of functions a module handed out. */
static graph build_driver()
{
	graph g;
	CUgraphNode n[3];
	CUDA_KERNEL_NODE_PARAMS p = {};

	check(cuGraphCreate((CUgraph *)&g.h, 0) == CUDA_SUCCESS, "cuGraphCreate");
	p.blockDimX = p.blockDimY = p.blockDimZ = 1;
	p.gridDimY = p.gridDimZ = 1;
	for (int i = 0; i < 3; i++) {
		p.func = i < 2 ? fd1 : fd2;
		p.gridDimX = 2 + i;
		check(cuGraphAddKernelNode(&n[i], (CUgraph)g.h, i ? &n[i - 1] : nullptr, i ? 1 : 0,
					   &p) == CUDA_SUCCESS,
		      "cuGraphAddKernelNode_v2");
		g.c.kernel(i < 2 ? fd1_name : fd2_name);
	}
	check_nodes(g);
	return g;
}

static exec instantiate_driver(const graph &g)
{
	exec e;

	check(cuGraphInstantiate((CUgraphExec *)&e.h, (CUgraph)g.h, 0) == CUDA_SUCCESS,
	      "cuGraphInstantiateWithFlags");
	instantiated(e, g.c, true);
	return e;
}

/* ---- one iteration ------------------------------------------------------------------------ */

struct streams {
	cudaStream_t s1, s2;
	cudaEvent_t e1, e2;
};

/* A built graph's exec replayed, one kernel node changed in it, then updated to variant 1. */
static void built_and_changed(const streams &st, exec *out, graph *g0, graph *g1)
{
	cudaGraphNode_t changing;

	*g0 = build(0, &changing);
	exec e = instantiate(*g0, true);
	replay(e, st.s2, 4);

	cudaKernelNodeParams p = kparams(ke, 16);
	check(cudaGraphExecKernelNodeSetParams(e.h, changing, &p) == cudaSuccess,
	      "cudaGraphExecKernelNodeSetParams");
	e.c.replace(kb.name, ke.name);
	new_instance(e);
	replay(e, st.s1, 2);

	cudaGraphExecUpdateResultInfo info;
	*g1 = build(1, nullptr);
	check(cudaGraphExecUpdate(e.h, g1->h, &info) == cudaSuccess &&
		      info.result == cudaGraphExecUpdateSuccess,
	      "cudaGraphExecUpdate");
	e.c = g1->c;
	new_instance(e);
	replay(e, st.s1, 3);
	*out = e;
}

static void iteration(const streams &st, exec *early, graph *early_graph)
{
	launch(ka, 1, st.s1, 0, nullptr);
	graph gc = capture_fork_join(st.s1, st.s2, st.e1, st.e2);
	capture_thread_local();
	exec ec = instantiate(gc);
	replay(ec, st.s1, 3);

	exec eb;
	graph gb0, gb1;
	built_and_changed(st, &eb, &gb0, &gb1);

	graph gcl;
	check(cudaGraphClone(&gcl.h, gc.h) == cudaSuccess, "cudaGraphClone");
	gcl.c = gc.c;
	check_nodes(gcl);
	exec ecl = instantiate(gcl);
	replay(ecl, st.s2, 2);

	graph gd = build_driver();
	exec ed = instantiate_driver(gd);
	replay(ed, st.s1, 2, DRV);
	replay(ed, st.s2, 1, DRV_PTSZ);

	if (early->h)
		replay(*early, st.s1, 5);
	for (exec *e : { &ec, &eb, &ecl, &ed })
		destroy(*e);
	for (graph *g : { &gc, &gb0, &gb1, &gcl, &gd })
		destroy(*g);
	/* Last, so that its handle is the first the next iteration is given. */
	if (early->h) {
		destroy(*early);
		destroy(*early_graph);
		early->h = nullptr;
	}
}

/* Before the wait: three kernels of a kernel used nowhere else, and a set. */
static void build_early(exec *e, graph *g, bool known)
{
	cudaGraphNode_t n[3];

	check(cudaGraphCreate(&g->h, 0) == cudaSuccess, "cudaGraphCreate");
	for (int i = 0; i < 3; i++)
		n[i] = add_kernel(*g, kearly, 1 + i, i ? &n[i - 1] : nullptr, i ? 1 : 0);
	add_set(*g, 64, 4, &n[2]);
	check_nodes(*g);
	check(cudaGraphInstantiate(&e->h, g->h, 0) == cudaSuccess, "cudaGraphInstantiate");
	instantiated(*e, g->c, known);
}

/* After the wait: handles cuprobe sees made, so that it names their kernels. */
static void make_handles()
{
	CUmodule mod;

	check(cuInit(0) == CUDA_SUCCESS, "cuInit");
	check(cuModuleLoadData(&mod, "graphs-module") == CUDA_SUCCESS, "cuModuleLoadData");
	check(cuModuleGetFunction(&fd1, mod, fd1_sym) == CUDA_SUCCESS, "cuModuleGetFunction");
	check(cuModuleGetFunction(&fd2, mod, fd2_name) == CUDA_SUCCESS, "cuModuleGetFunction");
	for (kernel *k : { &ka, &kb, &kc })
		check(cudaGetKernel(&k->h, k->stub) == cudaSuccess, "cudaGetKernel");
}

/* ---- the ground truth's two other files ------------------------------------------------- */

static void write_captured(const char *gt_path)
{
	write_captured_gt(gt_path, captures.load(), captured_calls);
}

static void put_group(FILE *f, unsigned step, const exec &e, uint64_t n)
{
	const char *sep = "";

	fprintf(f, "\n {\"exec\": %llu, \"instance\": %u, \"known\": %s, \"step\": %u, "
		   "\"replays\": %llu, \"nodes\": %u, \"kernels\": {",
		(unsigned long long)(uintptr_t)e.h, e.instance, e.known ? "true" : "false", step,
		(unsigned long long)n, e.c.nodes);
	for (const auto &kv : e.c.kernels) {
		fprintf(f, "%s\"%s\": %u", sep, kv.first.c_str(), kv.second);
		sep = ", ";
	}
	fprintf(f, "}, \"copies\": %u, \"sets\": %u, \"other\": %u}", e.c.copies, e.c.sets,
		e.c.other);
}

/* PATH.graphs, through PATH.graphs.tmp and a rename: the replays, grouped. */
static void write_graphs(const char *gt_path)
{
	std::string path = std::string(gt_path) + ".graphs", tmp = path + ".tmp";
	uint64_t total = 0, unknown = 0, kernels = 0;
	FILE *f = fopen(tmp.c_str(), "w");
	const char *sep = "";

	if (!f) {
		check(false, "writing the .graphs ground truth");
		return;
	}
	for (const auto &kv : replays) {
		const exec &e = instances[kv.first.second];
		unsigned k = 0;

		for (const auto &kk : e.c.kernels)
			k += kk.second;
		total += kv.second;
		unknown += e.known ? 0 : kv.second;
		kernels += e.known ? k * kv.second : 0;
	}
	fprintf(f, "{\"replays\": %llu, \"unknown_replays\": %llu, \"kernels\": %llu, "
		   "\"groups\": [",
		(unsigned long long)total, (unsigned long long)unknown,
		(unsigned long long)kernels);
	for (const auto &kv : replays) {
		fputs(sep, f);
		put_group(f, kv.first.first, instances[kv.first.second], kv.second);
		sep = ",";
	}
	fputs("\n]}\n", f);
	if (fclose(f) != 0 || rename(tmp.c_str(), path.c_str()) != 0)
		check(false, "writing the .graphs ground truth");
}

int main(int argc, char **argv)
{
	struct options opt = parse_options(argc, argv, 3, 1, 0);
	const char *gt_path = getenv("CUPROBE_GT");
	streams st;
	exec early;
	graph early_graph;

	gt::start();
	if (cudaStreamCreate(&st.s1) != cudaSuccess || cudaStreamCreate(&st.s2) != cudaSuccess ||
	    cudaEventCreate(&st.e1) != cudaSuccess || cudaEventCreate(&st.e2) != cudaSuccess) {
		fprintf(stderr, "graphs: the stand-in runtime failed its setup\n");
		return 1;
	}
	/* Its content is known only to a profiler that was there before the wait. */
	build_early(&early, &early_graph, opt.wait_file == nullptr);
	wait_then_ready(&opt);
	make_handles();
	exec none;
	const char *refuse = getenv("GRAPHS_REFUSED");
	if (refuse && !strcmp(refuse, "1"))
		instantiated(none, content(), false);
	for (int i = 0; i < opt.iters; i++) {
		iteration(st, &early, &early_graph);
		if (none.instance)
			refused_replay(none, st.s1);
		if (opt.steps) {
			cuprobe_step();
			gt::step();
			steps++;
		}
		if (opt.sleep_ms && i + 1 < opt.iters)
			sleep_ms(opt.sleep_ms);
	}
	/* The stand-in hands freed blocks out again: were the freed handles reused? */
	check(opt.iters < 2 || reused > 0, "reusing a destroyed exec's handle");
	if (gt_path && *gt_path) {
		write_captured(gt_path);
		write_graphs(gt_path);
	}
	uint64_t n = 0;
	for (const auto &kv : replays)
		n += kv.second;
	fprintf(stderr, "graphs: %d iterations, %llu replays of %u instances, %u captures, "
			"%u exec handles reused, %d failed calls\n",
		opt.iters, (unsigned long long)n, instance_ids, captures.load(), reused,
		failed.load());
	return failed != 0;
}
