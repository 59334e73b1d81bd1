/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Names for kernel handles: the driver and runtime calls that hand out a
 * CUfunction, CUkernel, cudaFunction_t or cudaKernel_t (and the loads that
 * make the modules they come from), as the BPF return probe reports them to
 * the loader (struct name_event in the events ring). Shared by bpf/names.bpf.c
 * and user/core/proc/handle_names.c.
 */
#ifndef CUPROBE_NAMES_H
#define CUPROBE_NAMES_H

#include "records.h"

/*
 * Every probed handle-creating entry point; the attach cookie carries the
 * value. Each writes its handle through its first argument. Append only.
 */
enum name_api {
	/* (handle *out, module or library, const char *name): a kernel by name */
	NAME_cuModuleGetFunction,
	NAME_cuLibraryGetKernel,
	NAME_cudaLibraryGetKernel,
	/* (CUfunction *out, CUkernel kernel): the kernel's name under another handle */
	NAME_cuKernelGetFunction,
	/*
	 * (handle *out, const void *host_stub): the name of the stub's symbol.
	 * __cudaGetKernel is what nvcc's launch stubs (CUDA 13) call once per
	 * kernel: their <<<>>> launches then give cudaLaunchKernel its handle.
	 */
	NAME_cudaGetFuncBySymbol,
	NAME_cudaGetKernel,
	NAME___cudaGetKernel,
	/* (module *out, const char *path, ...): a module from a file */
	NAME_cuModuleLoad,
	NAME_cuLibraryLoadFromFile,
	NAME_cudaLibraryLoadFromFile,
	/* (module *out, const void *image, ...): a module from memory */
	NAME_cuModuleLoadData,
	NAME_cuModuleLoadDataEx,
	NAME_cuModuleLoadFatBinary,
	NAME_cuLibraryLoadData,
	NAME_cudaLibraryLoadData,
	NAME__COUNT,
};

#define NAME_LAST_BY_NAME NAME_cudaLibraryGetKernel
#define NAME_FIRST_LOAD_FILE NAME_cuModuleLoad
#define NAME_FIRST_LOAD_DATA NAME_cuModuleLoadData

/* A name read from the target: longer ones are cut to NAME_STR_MAX - 1 bytes. */
#define NAME_STR_MAX 256

#define NAME_F_STR (1u << 0)	   /* str holds the kernel's name or the module's path */
#define NAME_F_TRUNCATED (1u << 1) /* and it was longer than NAME_STR_MAX - 1 bytes */

/*
 * A handle-creating call returned success. handle is what it wrote through
 * its first argument; ref is its second argument: the module or library a
 * kernel was taken from, the CUkernel of cuKernelGetFunction, the host stub
 * of cudaGetFuncBySymbol / cudaGetKernel, or the image of a load from memory.
 */
struct name_event {
	__u32 type;	/* REC_NAME */
	__u32 api;	/* enum name_api */
	__u32 tgid;
	__u32 flags;	/* NAME_F_* */
	__u64 handle;
	__u64 ref;
	char str[NAME_STR_MAX];
};

_Static_assert(sizeof(struct name_event) == 32 + NAME_STR_MAX, "name_event layout");

#endif /* CUPROBE_NAMES_H */
