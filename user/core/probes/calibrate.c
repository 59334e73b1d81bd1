// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "core/probes/calibrate.h"
#include "core/probes/uprobe_link.h"
#include "core/proc/symbols.h"
#include "launch.h"
#include "util/clock.h"

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

/*
 * Times CALLS calls, in batches small enough that their events fit in half
 * the ring, emptying it between batches: every hit then takes the path of a
 * recorded launch, as in a target, not that of a drop.
 */
static uint64_t time_calls(const struct calibrate_env *env)
{
	uint64_t batch = env->ring_bytes / 2 / (sizeof(struct launch_event) + 8), total = 0;

	if (batch == 0)
		batch = 1;
	for (uint64_t done = 0; done < CALLS; done += batch) {
		uint64_t n = CALLS - done < batch ? CALLS - done : batch, t0 = clock_mono_ns();

		for (uint64_t i = 0; i < n; i++)
			cuprobe_calibration_target();
		total += clock_mono_ns() - t0;
		if (env->drain)
			ring_buffer__consume(env->drain);
	}
	return total;
}

static int attach(struct bpf_program *prog, bool multi, bool ret, const char *exe, uint64_t off,
		  uint64_t cookie, struct uprobe_link **l)
{
	struct uprobe_spec s = {
		.path = exe, .pid = getpid(), .offsets = &off, .cookies = &cookie, .n = 1,
		.retprobe = ret,
	};

	return attach_uprobes(prog, multi, &s, l);
}

int calibrate_probe(const struct calibrate_env *env, double *ns_per_hit)
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
	err = 0;
	/* The fastest of a few rounds: the least disturbed by a busy machine. */
	for (int r = 0; r < ROUNDS; r++) {
		uint64_t t = time_calls(env);

		bare = t < bare ? t : bare;
	}
	/*
	 * The return program first, as a --latency window attaches it: an entry
	 * that waits for its return must find it there.
	 */
	if (env->ret)
		err = attach(env->ret, env->multi, true, exe, off, 0, &lr);
	if (!err)
		err = attach(env->entry, env->multi, false, exe, off,
			     API_cudaLaunchKernel | (env->ret ? COOKIE_LATENCY : 0) | env->slot, &le);
	for (int r = 0; !err && r < ROUNDS; r++) {
		uint64_t t = time_calls(env);

		probed = t < probed ? t : probed;
	}
	uprobe_link__destroy(le);
	uprobe_link__destroy(lr);
	if (env->drain)
		ring_buffer__consume(env->drain);
	if (err)
		return err;
	*ns_per_hit = probed > bare ? (double)(probed - bare) / CALLS : 0;
	return 0;
}
