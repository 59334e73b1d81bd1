// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * uprobe_at: the cost of a bare uprobe, as a baseline for cuprobe's. It puts
 * a counting perf uprobe (no BPF, nothing recorded) at SYMBOL+DELTA in LIB,
 * for this process and what it execs, then execs COMMAND. At +0 on a driver
 * export the kernel single-steps the probed instruction (a RIP-relative cmp);
 * at +10 (the je after it) it emulates it.
 *
 *   uprobe_at LIB SYMBOL DELTA -- COMMAND [ARGS...]
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* SYMBOL's offset in LIB's file: its address less its mapping's start, plus the mapping's offset. */
static int file_offset(const char *lib, const char *sym, uint64_t *off)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	uintptr_t addr;
	char line[4096];
	FILE *f;

	if (!h)
		return fprintf(stderr, "uprobe_at: cannot load %s: %s\n", lib, dlerror()), -ENOENT;
	addr = (uintptr_t)dlsym(h, sym);
	if (!addr)
		return fprintf(stderr, "uprobe_at: %s has no %s\n", lib, sym), -ENOENT;
	f = fopen("/proc/self/maps", "r");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		uintptr_t lo, hi;
		uint64_t moff;

		if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %*s %" SCNx64, &lo, &hi, &moff) == 3 &&
		    addr >= lo && addr < hi) {
			*off = addr - lo + moff;
			fclose(f);
			return 0;
		}
	}
	fclose(f);
	return fprintf(stderr, "uprobe_at: %s is in no mapping\n", sym), -ENOENT;
}

int main(int argc, char **argv)
{
	struct perf_event_attr attr = { 0 };
	char path[4096];
	uint64_t off = 0;
	int type, fd;
	FILE *f;

	if (argc < 6 || strcmp(argv[4], "--")) {
		fprintf(stderr, "usage: uprobe_at LIB SYMBOL DELTA -- COMMAND [ARGS...]\n");
		return 2;
	}
	if (!realpath(argv[1], path)) {
		fprintf(stderr, "uprobe_at: %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	if (file_offset(path, argv[2], &off))
		return 2;
	f = fopen("/sys/bus/event_source/devices/uprobe/type", "r");
	if (!f || fscanf(f, "%d", &type) != 1) {
		fprintf(stderr, "uprobe_at: no uprobe PMU in /sys/bus/event_source/devices: a kernel with CONFIG_UPROBE_EVENTS is needed\n");
		return 2;
	}
	fclose(f);
	attr.size = sizeof(attr);
	attr.type = type;
	attr.config1 = (uintptr_t)path;
	attr.config2 = off + strtoull(argv[3], NULL, 0);
	attr.disabled = 1;
	attr.enable_on_exec = 1;
	attr.inherit = 1;
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
	if (fd < 0) {
		fprintf(stderr, "uprobe_at: perf_event_open of a uprobe at %s:0x%" PRIx64 ": %s (root?)\n",
			path, (uint64_t)attr.config2, strerror(errno));
		return 2;
	}
	/* The event lives on in the exec'd program (enable_on_exec) while its fd stays open. */
	execvp(argv[5], argv + 5);
	fprintf(stderr, "uprobe_at: cannot run %s: %s\n", argv[5], strerror(errno));
	return 127;
}
