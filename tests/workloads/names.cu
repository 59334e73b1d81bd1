// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
//
// Kernels launched by handle, each handle made through one of the calls that
// cuprobe's handle probes see, on the stand-in driver and runtime
// (fakecuda.c, fakecudart.c; RUNPATH $ORIGIN/fakecuda). Before the wait file
// (cuprobe attaching with -p) it makes some handles, which a profiler that
// attaches later never saw made; after it, the rest. Then each iteration
// launches every handle once. The ground truth names each launch's kernel
// as cuprobe must (demangled), or "" where it must stay unnamed.
//
// It is built as CUDA with -cudart none, so that its <<<>>> launches go to
// the stand-in runtime the way CUDA 13's nvcc makes them: each stub asks
// __cudaGetKernel for its kernel's handle once, at its first launch, and
// cudaLaunchKernel is given that handle, not the stub.

#include <cxxabi.h>
#include <stdint.h>
#include <stdio.h>

#include <string>
#include <vector>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include "ground_truth.h"
#include "workload.h"

namespace wl {
// Host stubs, as nvcc makes them for __global__ functions: cudaGetFuncBySymbol
// and cudaGetKernel take their address.
__attribute__((noinline, used)) void by_symbol_stub(float *x, int n)
{
	asm volatile("" ::"r"(x), "r"(n) : "memory");
}
__attribute__((noinline, used)) void kernel_stub(double *x)
{
	asm volatile("" ::"r"(x) : "memory");
}

// <<<>>> launches: the first before the wait file, the other after it.
__global__ void early_rt_kernel(int *p)
{
	if (p)
		*p = 1;
}

template <typename T> __global__ void rt_scale(T *x, T a, int n)
{
	if (x && (int)threadIdx.x < n)
		x[threadIdx.x] *= a;
}
} // namespace wl

enum how { DRIVER, DRIVER_EX, RUNTIME, STUB };

struct launchable {
	CUfunction f;
	std::string kernel;	// what cuprobe must call it; "" for unnamed
	enum how how;
};

static std::vector<launchable> handles;
static unsigned long long failed;

static std::string demangled(const char *name)
{
	int status = -1;
	char *d = strncmp(name, "_Z", 2) ? nullptr : abi::__cxa_demangle(name, nullptr, nullptr, &status);
	std::string s = d && !status ? d : name;

	free(d);
	return s;
}

static void check(CUresult res, const char *what)
{
	if (res != CUDA_SUCCESS) {
		fprintf(stderr, "names: %s failed: %d\n", what, (int)res);
		exit(1);
	}
}

static void add(void *f, const std::string &kernel, enum how how)
{
	handles.push_back({ (CUfunction)f, kernel, how });
}

// A stub's first <<<grid, block>>> launch, once its handle is known.
static void record_first(const launchable &h, unsigned grid, unsigned block)
{
	const unsigned g[3] = { grid, 1, 1 }, b[3] = { block, 1, 1 };

	gt::record(gt::launch("cudaLaunchKernel", h.kernel.c_str(), h.f, g, b, 0, nullptr));
}

// Image bytes in the heap, as Triton and NVRTC hand them to the driver.
static const void *image(const char *tag)
{
	return strdup(tag);
}

int main(int argc, char **argv)
{
	struct options opt = parse_options(argc, argv, 10, 1, 0);
	// Handles made before the wait are unseen when cuprobe attaches with -p.
	bool early_unseen = opt.wait_file != nullptr;
	// Driver launches only (the CUPTI simulator, which interposes cuLaunchKernel, would
	// see the stand-in runtime's forwarded calls as launches of their own).
	bool driver_only = getenv("NAMES_DRIVER_ONLY") != nullptr;
	CUmodule early_mod, mod;
	CUlibrary early_lib, lib;
	CUkernel early_kernel, kernel;
	CUfunction f;
	cudaFunction_t rf;
	cudaKernel_t rk;
	cudaLibrary_t rlib;

	gt::start();
	check(cuInit(0), "cuInit");
	check(cuModuleLoad(&early_mod, "/opt/kernels/early.cubin"), "cuModuleLoad");
	check(cuModuleGetFunction(&f, early_mod, "_Z12early_kernelv"), "cuModuleGetFunction");
	add(f, early_unseen ? "" : "early_kernel()", DRIVER);
	check(cuLibraryLoadData(&early_lib, image("early library"), nullptr, nullptr, 0, nullptr,
				nullptr, 0), "cuLibraryLoadData");
	check(cuLibraryGetKernel(&early_kernel, early_lib, "early_library_kernel"),
	      "cuLibraryGetKernel");
	add(early_kernel, early_unseen ? "" : "early_library_kernel", DRIVER_EX);

	// Its stub asks for its handle now, unseen by a profiler that attaches later. A
	// launch is recorded once its handle is known (cudaGetKernel gives the stub's), and
	// not at all before the wait file: cuprobe is not there yet.
	if (!driver_only)
		wl::early_rt_kernel<<<1, 64>>>(nullptr);
	check(cudaGetKernel(&rk, (const void *)wl::early_rt_kernel) == cudaSuccess ? CUDA_SUCCESS :
	      CUDA_ERROR_UNKNOWN, "cudaGetKernel");
	add(rk, early_unseen ? "" : "wl::early_rt_kernel(int*)", STUB);
	if (!early_unseen && !driver_only)
		record_first(handles.back(), 1, 64);

	wait_then_ready(&opt);

	// The same kernel handle the stub gets at its first launch (the runtime keeps one).
	if (!driver_only)
		wl::rt_scale<float><<<3, 128>>>(nullptr, 2.0f, 10);
	check(cudaGetKernel(&rk, (const void *)wl::rt_scale<float>) == cudaSuccess ? CUDA_SUCCESS :
	      CUDA_ERROR_UNKNOWN, "cudaGetKernel");
	add(rk, "void wl::rt_scale<float>(float*, float, int)", STUB);
	if (!driver_only)
		record_first(handles.back(), 3, 128);

	// A kernel taken after attach from a module loaded before: named, module unknown.
	check(cuModuleGetFunction(&f, early_mod, "_Z11late_kernelPfi"), "cuModuleGetFunction");
	add(f, demangled("_Z11late_kernelPfi"), DRIVER);
	// The function of a kernel made before attach: no name to give it.
	check(cuKernelGetFunction(&f, early_kernel), "cuKernelGetFunction");
	add(f, early_unseen ? "" : "early_library_kernel", DRIVER);

	check(cuModuleLoad(&mod, "/opt/kernels/gemm.cubin"), "cuModuleLoad");
	check(cuModuleGetFunction(&f, mod, "_Z11gemm_kernelPfS_i"), "cuModuleGetFunction");
	add(f, demangled("_Z11gemm_kernelPfS_i"), DRIVER);
	check(cuModuleLoadData(&mod, image("triton cubin")), "cuModuleLoadData");
	check(cuModuleGetFunction(&f, mod, "triton_poi_fused_add_0"), "cuModuleGetFunction");
	add(f, "triton_poi_fused_add_0", DRIVER_EX);
	check(cuModuleLoadDataEx(&mod, image("ptx"), 0, nullptr, nullptr), "cuModuleLoadDataEx");
	check(cuModuleGetFunction(&f, mod, "_ZN2ns6reduceEPKfPfi"), "cuModuleGetFunction");
	add(f, demangled("_ZN2ns6reduceEPKfPfi"), DRIVER);
	check(cuModuleLoadFatBinary(&mod, image("fatbin")), "cuModuleLoadFatBinary");
	check(cuModuleGetFunction(&f, mod, "fatbin_kernel"), "cuModuleGetFunction");
	add(f, "fatbin_kernel", DRIVER);
	// Longer than the 255 bytes a name is read to: cut there.
	std::string long_name(300, 'k');
	check(cuModuleGetFunction(&f, mod, long_name.c_str()), "cuModuleGetFunction");
	add(f, long_name.substr(0, 255), DRIVER);
	// A failed call writes no handle a profiler may trust: what it left stays unnamed.
	if (cuModuleGetFunction(&f, mod, "missing_kernel") == CUDA_SUCCESS)
		failed++;
	add(f, "", DRIVER);

	check(cuLibraryLoadFromFile(&lib, "/opt/kernels/lib.cubin", nullptr, nullptr, 0, nullptr,
				    nullptr, 0), "cuLibraryLoadFromFile");
	check(cuLibraryGetKernel(&kernel, lib, "_Z10lib_kernelv"), "cuLibraryGetKernel");
	add(kernel, "lib_kernel()", DRIVER_EX);
	check(cuKernelGetFunction(&f, kernel), "cuKernelGetFunction");
	add(f, "lib_kernel()", DRIVER);

	// Through a pointer from cuGetProcAddress, as the runtime and libraries call the driver.
	CUresult (*get_function)(CUfunction *, CUmodule, const char *) = nullptr;
	check(cuGetProcAddress("cuModuleGetFunction", (void **)&get_function, 12000, 0, nullptr),
	      "cuGetProcAddress");
	check(get_function(&f, mod, "proc_address_kernel"), "cuModuleGetFunction by pointer");
	add(f, "proc_address_kernel", DRIVER);

	// The runtime's handles: by host stub, and from a runtime library.
	if (cudaGetFuncBySymbol(&rf, (const void *)wl::by_symbol_stub) != cudaSuccess)
		failed++;
	add(rf, "wl::by_symbol_stub(float*, int)", DRIVER);
	if (cudaGetKernel(&rk, (const void *)wl::kernel_stub) != cudaSuccess)
		failed++;
	add(rk, "wl::kernel_stub(double*)", RUNTIME);
	if (cudaLibraryLoadData(&rlib, image("runtime library"), nullptr, nullptr, 0, nullptr,
				nullptr, 0) != cudaSuccess ||
	    cudaLibraryGetKernel(&rk, rlib, "rt_library_kernel") != cudaSuccess)
		failed++;
	add(rk, "rt_library_kernel", RUNTIME);

	const unsigned g[3] = { 2, 1, 1 }, b[3] = { 32, 1, 1 };
	void *params[] = { nullptr };
	for (int i = 0; i < opt.iters; i++) {
		for (const launchable &h : handles) {
			if (driver_only && h.how >= RUNTIME)
				continue;
			const char *api = h.how >= RUNTIME ? "cudaLaunchKernel" :
					  h.how == DRIVER_EX ? "cuLaunchKernelEx" : "cuLaunchKernel";
			gt::record(gt::launch(api, h.kernel.c_str(), h.f, g, b, 0, nullptr));
			if (h.how == STUB) {
				// The stubs launch the handle that __cudaGetKernel gave them.
				if (h.kernel.find("rt_scale") != std::string::npos)
					wl::rt_scale<float><<<g[0], b[0]>>>(nullptr, 2.0f, 10);
				else
					wl::early_rt_kernel<<<g[0], b[0]>>>(nullptr);
			} else if (h.how == RUNTIME) {
				failed += cudaLaunchKernel((const void *)h.f, dim3(g[0], g[1], g[2]),
							   dim3(b[0], b[1], b[2]), params, 0,
							   nullptr) != cudaSuccess;
			} else if (h.how == DRIVER_EX) {
				CUlaunchConfig cfg = {};
				cfg.gridDimX = g[0], cfg.gridDimY = g[1], cfg.gridDimZ = g[2];
				cfg.blockDimX = b[0], cfg.blockDimY = b[1], cfg.blockDimZ = b[2];
				failed += cuLaunchKernelEx(&cfg, h.f, params, nullptr) != CUDA_SUCCESS;
			} else {
				failed += cuLaunchKernel(h.f, g[0], g[1], g[2], b[0], b[1], b[2], 0,
							 nullptr, params, nullptr) != CUDA_SUCCESS;
			}
		}
		if (opt.steps) {
			cuprobe_step();
			gt::step();
		}
		if (opt.sleep_ms && i + 1 < opt.iters)
			sleep_ms(opt.sleep_ms);
	}
	fprintf(stderr, "names: %d iterations, %zu handles, %llu failed\n", opt.iters,
		handles.size(), failed);
	return 0;
}
