// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Loads the agent the way the CUDA driver does for CUDA_INJECTION64_PATH
 * (dlopen, then InitializeInjection) and checks that the agent starts once,
 * however often it is initialized and whether LD_PRELOAD loaded it already:
 * exactly one "cuprobe-agent" thread, and InitializeInjection returns 1.
 *
 *   check_inject AGENT_LIB
 */
#include <dirent.h>
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

static int count_pollers(void)
{
	struct dirent *d;
	char path[512], comm[64];
	int n = 0;
	DIR *dir = opendir("/proc/self/task");

	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		FILE *f;

		if (d->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f) && !strcmp(comm, "cuprobe-agent\n"))
			n++;
		fclose(f);
	}
	closedir(dir);
	return n;
}

int main(int argc, char **argv)
{
	int (*init)(void);
	int first, second, pollers;
	void *h;

	if (argc != 2) {
		fprintf(stderr, "usage: check_inject AGENT_LIB\n");
		return 2;
	}
	h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "check_inject: %s\n", dlerror());
		return 1;
	}
	init = (int (*)(void))dlsym(h, "InitializeInjection");
	if (!init) {
		fprintf(stderr, "check_inject: no InitializeInjection: %s\n", dlerror());
		return 1;
	}
	first = init();
	second = init();
	pollers = count_pollers();
	printf("InitializeInjection %d %d, %d agent thread(s)\n", first, second, pollers);
	return first == 1 && second == 1 && pollers == 1 ? 0 : 1;
}
