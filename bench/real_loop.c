// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * real_loop: launches into NVIDIA's real libcuda (REAL_LIBCUDA), which
 * returns CUDA_ERROR_NOT_INITIALIZED in ~40 ns without cuInit, after the
 * probes on its entry have fired.
 *
 *   real_loop [--nested] [--launches N] [--blocks N] [--warmup-ms N]
 *
 * Direct: cuLaunchKernel from dlsym. --nested: cudaLaunchKernel of
 * libreal_rt.so (next to this program, built from tests/workloads/realrt.c), which enters the driver as libcudart
 * does. --warmup-ms launches that long untimed first (cuprobe learns the
 * runtime's host stubs, then drops to one trap a launch). Times N equal blocks and prints the median block, on stdout:
 * "launch_loop: ns_per_launch=X launches=N".
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cuda.h>
#include <cuda_runtime_api.h>

typedef CUresult (*drv_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
			   unsigned, CUstream, void **, void **);
typedef cudaError_t (*rt_fn)(const void *, dim3, dim3, void **, size_t, cudaStream_t);

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void *load(const char *path, const char *sym)
{
	void *h = path ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : NULL;
	void *f = h ? dlsym(h, sym) : NULL;

	if (!f) {
		fprintf(stderr, "real_loop: no %s in %s: %s\n", sym, path ? path : "(REAL_LIBCUDA unset)",
			dlerror());
		exit(1);
	}
	return f;
}

int main(int argc, char **argv)
{
	long launches = 100000, blocks = 5, warmup_ms = 0;
	int nested = 0;
	drv_fn drv = NULL;
	rt_fn rt = NULL;
	char rtpath[4096];
	double t[64];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--nested"))
			nested = 1;
		else if (!strcmp(argv[i], "--launches") && i + 1 < argc)
			launches = atol(argv[++i]);
		else if (!strcmp(argv[i], "--blocks") && i + 1 < argc)
			blocks = atol(argv[++i]);
		else if (!strcmp(argv[i], "--warmup-ms") && i + 1 < argc)
			warmup_ms = atol(argv[++i]);
		else {
			fprintf(stderr, "usage: real_loop [--nested] [--launches N] [--blocks N] "
					"[--warmup-ms N]\n");
			return 2;
		}
	}
	if (blocks < 1 || blocks > 64 || launches < blocks)
		return 2;
	if (nested) {
		snprintf(rtpath, sizeof(rtpath), "%.4000s", argv[0]);
		snprintf(strrchr(rtpath, '/') ? strrchr(rtpath, '/') + 1 : rtpath, 64, "libreal_rt.so");
		rt = (rt_fn)load(rtpath, "cudaLaunchKernel");
	} else {
		drv = (drv_fn)load(getenv("REAL_LIBCUDA"), "cuLaunchKernel");
	}
	for (double end = now_ns() + warmup_ms * 1e6; now_ns() < end;) {
		if (rt)
			rt((const void *)main, (dim3){ 2, 1, 1 }, (dim3){ 32, 1, 1 }, NULL, 0, NULL);
		else
			drv((CUfunction)0x1234, 2, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
	}
	for (long b = 0; b < blocks; b++) {
		double t0 = now_ns();

		for (long i = 0; i < launches / blocks; i++) {
			if (rt)
				rt((const void *)main, (dim3){ 2, 1, 1 }, (dim3){ 32, 1, 1 }, NULL, 0, NULL);
			else
				drv((CUfunction)0x1234, 2, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
		}
		t[b] = (now_ns() - t0) / (launches / blocks);
	}
	qsort(t, blocks, sizeof(t[0]), cmp_double);
	printf("launch_loop: ns_per_launch=%.1f launches=%ld\n", t[blocks / 2], launches);
	return 0;
}
