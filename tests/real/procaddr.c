// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * procaddr: whether the real driver's cuGetProcAddress_v2 and cuGetProcAddress
 * hand out, for every driver entry cuprobe probes (user/cuda/launch_api.c's
 * launches and graphs, user/core/proc/handle_names.c's handles and modules),
 * exactly the address dlsym finds for the export: a uprobe sits on that
 * address, so a runtime that launches through such a pointer is seen only if
 * the two are the same. Asked before cuInit and again after it, for the
 * legacy and the per-thread default stream.
 *
 *   procaddr LIBCUDA            no device: cuInit must fail (the real tier)
 *   procaddr LIBCUDA --device   a GPU machine: cuInit must succeed (tests/gpu/run.sh)
 *
 * TAP lines, one per function, flavour and phase; exit 0 when all hold, 1
 * when one differs, 2 when unusable. It needs no toolkit to build or run.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

/* cuda.h's values, so that no toolkit is needed to build it. */
#define LEGACY (1ULL << 0)
#define PTDS (1ULL << 1)

typedef int (*init_fn)(unsigned int);
typedef int (*proc2_fn)(const char *, void **, int, unsigned long long, int *);
typedef int (*proc1_fn)(const char *, void **, int, unsigned long long);

/* Name asked for; export for the legacy stream; export for per-thread. */
static const char *const probed[][3] = {
	{ "cuLaunchKernel", "cuLaunchKernel", "cuLaunchKernel_ptsz" },
	{ "cuLaunchKernelEx", "cuLaunchKernelEx", "cuLaunchKernelEx_ptsz" },
	{ "cuGraphLaunch", "cuGraphLaunch", "cuGraphLaunch_ptsz" },
	{ "cuModuleGetFunction", "cuModuleGetFunction", "cuModuleGetFunction" },
	{ "cuLibraryGetKernel", "cuLibraryGetKernel", "cuLibraryGetKernel" },
	{ "cuKernelGetFunction", "cuKernelGetFunction", "cuKernelGetFunction" },
	{ "cuModuleLoad", "cuModuleLoad", "cuModuleLoad" },
	{ "cuLibraryLoadFromFile", "cuLibraryLoadFromFile", "cuLibraryLoadFromFile" },
	{ "cuModuleLoadData", "cuModuleLoadData", "cuModuleLoadData" },
	{ "cuModuleLoadDataEx", "cuModuleLoadDataEx", "cuModuleLoadDataEx" },
	{ "cuModuleLoadFatBinary", "cuModuleLoadFatBinary", "cuModuleLoadFatBinary" },
	{ "cuLibraryLoadData", "cuLibraryLoadData", "cuLibraryLoadData" },
};
#define N_PROBED (sizeof(probed) / sizeof(probed[0]))

static void *lib;
static proc2_fn proc2;
static proc1_fn proc1;
static int failed, checks;

static const char *sym_at(void *p)
{
	Dl_info di;

	return p && dladdr(p, &di) && di.dli_sname && di.dli_saddr == p ? di.dli_sname : "?";
}

static void check(const char *phase, const char *how, const char *name, const char *want_sym,
		  int res, void *got)
{
	void *want = dlsym(lib, want_sym);

	checks++;
	if (want && res == 0 && got == want) {
		printf("ok - %s: %s(%s) is %s's export %p\n", phase, how, name, want_sym, got);
		return;
	}
	failed++;
	printf("not ok - %s: %s(%s) gave %p (%s, result %d), dlsym(%s) is %p\n", phase, how, name,
	       got, sym_at(got), res, want_sym, want);
}

static void ask_all(const char *phase)
{
	/* 12000: what a CUDA 12 runtime asks for; the driver is CUDA 12.2. */
	for (size_t i = 0; i < N_PROBED; i++) {
		void *p = NULL;
		int st = -1, res;

		res = proc2(probed[i][0], &p, 12000, LEGACY, &st);
		check(phase, "cuGetProcAddress_v2 legacy", probed[i][0], probed[i][1],
		      res || st != 0 ? (res ? res : 1000 + st) : 0, p);
		p = NULL, st = -1;
		res = proc2(probed[i][0], &p, 12000, PTDS, &st);
		check(phase, "cuGetProcAddress_v2 per-thread", probed[i][0], probed[i][2],
		      res || st != 0 ? (res ? res : 1000 + st) : 0, p);
		p = NULL;
		res = proc1(probed[i][0], &p, 12000, LEGACY);
		check(phase, "cuGetProcAddress legacy", probed[i][0], probed[i][1], res, p);
		p = NULL;
		res = proc1(probed[i][0], &p, 12000, PTDS);
		check(phase, "cuGetProcAddress per-thread", probed[i][0], probed[i][2], res, p);
	}
}

int main(int argc, char **argv)
{
	bool device = argc == 3 && !strcmp(argv[2], "--device");
	init_fn init;
	int res;

	if (argc != 2 && !device) {
		fprintf(stderr, "usage: procaddr LIBCUDA [--device]\n");
		return 2;
	}
	lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "procaddr: cannot load %s: %s\n", argv[1], dlerror());
		return 2;
	}
	init = (init_fn)dlsym(lib, "cuInit");
	proc2 = (proc2_fn)dlsym(lib, "cuGetProcAddress_v2");
	proc1 = (proc1_fn)dlsym(lib, "cuGetProcAddress");
	if (!init || !proc2 || !proc1) {
		fprintf(stderr, "procaddr: %s lacks cuInit or cuGetProcAddress(_v2)\n", argv[1]);
		return 2;
	}
	ask_all("before cuInit");
	res = init(0);
	checks++;
	if ((res == 0) == device) {
		printf("ok - cuInit %s (%d), as it must %s a device\n", res ? "fails" : "succeeds", res,
		       device ? "with" : "without");
	} else {
		failed++;
		printf("not ok - cuInit returned %d: %s\n", res, device ? "--device was given, and "
		       "there is no usable device" : "this check is for a machine without a device "
		       "(give --device on a GPU machine)");
	}
	ask_all(res ? "after a failed cuInit" : "after cuInit");
	printf("# %d checks, %d failed\n", checks, failed);
	return failed ? 1 : 0;
}
