// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * procaddr: on a machine with a real CUDA driver, whether the pointers that
 * cuGetProcAddress hands out for the functions cuprobe probes are the
 * exported functions themselves. A uprobe sits on an address in libcuda's
 * code: it fires for calls through such a pointer only if the pointer is
 * that address. The CUDA runtime (cudaGetDriverEntryPoint) and libraries get
 * their driver entry points this way.
 *
 *   procaddr            one line per function: dlsym's address, each
 *                       cuGetProcAddress flavour's, the symbol dladdr finds
 *                       there, and SAME or DIFFERENT; exit 0 when all are SAME,
 *                       1 when some differ, 2 when there is no driver.
 *
 * It dlopens libcuda.so.1, so it builds and runs (exit 2) without one.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>

/* cuda.h's values (CUDA 13.0), so that no toolkit is needed to build it. */
#define CU_GET_PROC_ADDRESS_LEGACY_STREAM (1ULL << 0)
#define CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM (1ULL << 1)

typedef int (*init_fn)(unsigned int);
typedef int (*proc_fn)(const char *, void **, int, unsigned long long, int *);

static const char *const probed[] = {
	/* launches */
	"cuLaunchKernel", "cuLaunchKernelEx", "cuGraphLaunch",
	/* handles and modules */
	"cuModuleGetFunction", "cuLibraryGetKernel", "cuKernelGetFunction", "cuModuleLoad",
	"cuModuleLoadData", "cuModuleLoadDataEx", "cuModuleLoadFatBinary", "cuLibraryLoadData",
	"cuLibraryLoadFromFile",
};

static const char *sym_at(void *p)
{
	Dl_info di;

	return p && dladdr(p, &di) && di.dli_sname && di.dli_saddr == p ? di.dli_sname : "?";
}

int main(void)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	init_fn init;
	proc_fn proc;
	int differ = 0;

	if (!h) {
		fprintf(stderr, "procaddr: no CUDA driver here: %s\n", dlerror());
		return 2;
	}
	init = (init_fn)dlsym(h, "cuInit");
	proc = (proc_fn)dlsym(h, "cuGetProcAddress_v2");
	if (!init || !proc || init(0)) {
		fprintf(stderr, "procaddr: cuInit or cuGetProcAddress_v2 unusable\n");
		return 2;
	}
	printf("%-24s %-18s %-18s %-30s %-18s %-30s\n", "function", "dlsym", "legacy", "symbol",
	       "per-thread", "symbol");
	for (size_t i = 0; i < sizeof(probed) / sizeof(probed[0]); i++) {
		void *exported = dlsym(h, probed[i]), *legacy = NULL, *ptds = NULL;
		int st = 0;

		proc(probed[i], &legacy, 13000, CU_GET_PROC_ADDRESS_LEGACY_STREAM, &st);
		proc(probed[i], &ptds, 13000, CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM, &st);
		printf("%-24s %-18p %-18p %-30s %-18p %-30s %s\n", probed[i], exported, legacy,
		       sym_at(legacy), ptds, sym_at(ptds),
		       legacy == exported ? "SAME" : "DIFFERENT");
		differ += legacy != exported;
	}
	return differ ? 1 : 0;
}
