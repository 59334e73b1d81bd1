// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include "attach.h"
#include "calibrate.h"
#include "clock.h"
#include "cuprobe.h"
#include "symbols.h"

#define CALLS 20000
#define ROUNDS 3

/*
 * The stand-in for cudaLaunchKernel: a real function with a frame, so that
 * like libcudart's entry points it starts with a push the kernel emulates.
 */
__attribute__((noinline, used, optimize("no-omit-frame-pointer"))) void
cuprobe_calibration_target(void)
{
	asm volatile("" ::: "memory", "rbx");
}

static uint64_t time_calls(void)
{
	uint64_t t0 = clock_mono_ns();

	for (int i = 0; i < CALLS; i++)
		cuprobe_calibration_target();
	return clock_mono_ns() - t0;
}

static int attach(struct bpf_program *prog, bool multi, bool ret, const char *exe, uint64_t off,
		  struct uprobe_link **l)
{
	uint64_t cookie = API_cudaLaunchKernel;
	struct uprobe_spec s = {
		.path = exe, .pid = getpid(), .offsets = &off, .cookies = &cookie, .n = 1,
		.retprobe = ret,
	};

	return attach_uprobes(prog, multi, &s, l);
}

int calibrate_probe(struct bpf_program *entry, struct bpf_program *ret, bool multi,
		    double *ns_per_hit)
{
	const char *name = "cuprobe_calibration_target";
	struct uprobe_link *le = NULL, *lr = NULL;
	uint64_t off = 0, bare = UINT64_MAX, probed = UINT64_MAX;
	char exe[PATH_MAX];
	int err;

	if (!realpath("/proc/self/exe", exe))
		return -errno;
	err = elf_func_offsets(exe, &name, 1, &off);
	if (err <= 0)
		return err ?: -ENOENT;
	/* The fastest of a few rounds: the least disturbed by a busy machine. */
	for (int r = 0; r < ROUNDS; r++) {
		uint64_t t = time_calls();

		bare = t < bare ? t : bare;
	}
	err = attach(entry, multi, false, exe, off, &le);
	if (!err && ret)
		err = attach(ret, multi, true, exe, off, &lr);
	for (int r = 0; !err && r < ROUNDS; r++) {
		uint64_t t = time_calls();

		probed = t < probed ? t : probed;
	}
	uprobe_link__destroy(lr);
	uprobe_link__destroy(le);
	if (err)
		return err;
	*ns_per_hit = probed > bare ? (double)(probed - bare) / CALLS : 0;
	return 0;
}
