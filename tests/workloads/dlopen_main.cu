// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
//
// Starts with no CUDA library mapped (built with -cudart none), waits, then
// dlopens libkernlib.so from its own folder, which brings libcudart.so.13 in
// and launches. The profiler has to notice the new library and probe it
// before its first launch. cuprobe_step() lives here, in the executable, so
// the step probe exists from the start. The ready file is created after setup,
// before the pause and the dlopen.

#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "workload.h"

// Long enough that a profiler attached at start is idle before the dlopen.
static const int DLOPEN_DELAY_MS = 200;

typedef int (*kernlib_run_fn)(int iters, int sleep_ms, void (*step)(void),
			      unsigned long long *failed);

static int library_path(char *buf, size_t size)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n < 0)
		return -1;
	exe[n] = '\0';
	if ((size_t)snprintf(buf, size, "%s/libkernlib.so", dirname(exe)) >= size)
		return -1;
	return 0;
}

int main(int argc, char **argv)
{
	struct options opt = parse_options(argc, argv, 10, 1, 0);
	unsigned long long failed = 0;
	char path[PATH_MAX];
	kernlib_run_fn run;
	void *lib;
	int calls;

	if (library_path(path, sizeof(path))) {
		fprintf(stderr, "dlopen_main: cannot find my own folder\n");
		return 1;
	}
	wait_then_ready(&opt);
	sleep_ms(DLOPEN_DELAY_MS);
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "dlopen_main: %s\n", dlerror());
		return 1;
	}
	run = (kernlib_run_fn)dlsym(lib, "kernlib_run");
	if (!run) {
		fprintf(stderr, "dlopen_main: %s\n", dlerror());
		return 1;
	}
	calls = run(opt.iters, opt.sleep_ms, opt.steps ? cuprobe_step : nullptr, &failed);
	fprintf(stderr, "dlopen_main: %d iterations in %s, %d calls, %llu failed\n", opt.iters,
		path, calls, failed);
	return 0;
}
