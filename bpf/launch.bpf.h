/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Launch-configuration layouts read from the target's memory. */
#ifndef LAUNCH_BPF_H
#define LAUNCH_BPF_H

/* cudaLaunchConfig_t (driver_types.h, CUDA >= 11.6). */
struct cuda_launch_config {
	__u32 grid[3];
	__u32 block[3];
	__u64 shmem;
	__u64 stream;
};

/* CUlaunchConfig (cuda.h, CUDA >= 11.8). */
struct cu_launch_config {
	__u32 grid[3];
	__u32 block[3];
	__u32 shmem;
	__u32 pad;
	__u64 stream;
};

#endif /* LAUNCH_BPF_H */
