// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
//
// A process that is often held by cuprobe's library-map probe: it dlopens
// libkernlib.so (and with it libcudart.so.13) once, then loops: dlopen and
// dlclose of a small library, each of which maps or unmaps an object and so
// passes the dynamic linker's _dl_debug_state twice, and a kernlib iteration
// every tenth turn. With --iters 0 it loops until killed. The ready file is
// created once the loop runs. Host-only: built with -cudart none.

#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "workload.h"

typedef int (*kernlib_run_fn)(int iters, int sleep_ms, void (*step)(void),
			      unsigned long long *failed);

static void *open_beside(const char *name)
{
	char exe[PATH_MAX], path[PATH_MAX + 32];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	void *lib;

	if (n < 0)
		return nullptr;
	exe[n] = '\0';
	snprintf(path, sizeof(path), "%s/%s", dirname(exe), name);
	lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!lib)
		fprintf(stderr, "dlloop: %s\n", dlerror());
	return lib;
}

int main(int argc, char **argv)
{
	struct options opt = parse_options(argc, argv, 0, 1, 0);
	unsigned long long failed = 0, turns = 0;
	void *kernlib = open_beside("libkernlib.so");
	kernlib_run_fn run;

	if (!kernlib || !(run = (kernlib_run_fn)dlsym(kernlib, "kernlib_run")))
		return 1;
	wait_then_ready(&opt);
	for (; opt.iters == 0 || turns < (unsigned long long)opt.iters; turns++) {
		void *tiny = open_beside("libtiny.so");

		if (!tiny)
			return 1;
		dlclose(tiny);
		if (turns % 10 == 0)
			run(1, 0, nullptr, &failed);
		if (opt.sleep_ms)
			sleep_ms(opt.sleep_ms);
	}
	fprintf(stderr, "dlloop: %llu turns\n", turns);
	return 0;
}
