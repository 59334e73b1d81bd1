/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Names of kernel handles, per process: what the handle probes
 * (bpf/names.bpf.c) saw each CUfunction, CUkernel, cudaFunction_t and
 * cudaKernel_t made from, and the module it came from. A launch by handle is
 * named from here; a handle made before cuprobe attached is in no table and
 * stays unnamed (never guessed). Owned by the session's thread.
 */
#ifndef CORE_PROC_HANDLE_NAMES_H
#define CORE_PROC_HANDLE_NAMES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "names.h"

struct symbols;
struct handle_names;

/* The probed functions' symbols: name_apis[i] for enum name_api i. */
extern const char *const name_apis[NAME__COUNT];

static inline bool name_api_is_driver(unsigned int api)
{
	return api != NAME___cudaGetKernel && name_apis[api][2] != 'd'; /* "cu…", not "cuda…" */
}

/* NULL and errno on failure. */
struct handle_names *handle_names__new(void);
void handle_names__free(struct handle_names *h);

/*
 * Applies one record: a kernel handle gets its name (demangled) and module,
 * a module its label. syms names the host stubs of cudaGetFuncBySymbol and
 * cudaGetKernel, as runtime launches are named. 0 or -ENOMEM.
 */
int handle_names__add(struct handle_names *h, struct symbols *syms, const struct name_event *e);

/*
 * The name of handle in pid, or NULL when no record named it. *module (when
 * module is not NULL) is the module's path, "object+0xoffset" or "memory
 * 0xaddress" for one loaded from memory, or NULL when its load was not seen.
 * *unnamed is set when the name is only a fallback (a stub no symbol covers).
 * Strings stay valid until handle_names__free.
 */
const char *handle_names__find(struct handle_names *h, pid_t pid, uint64_t handle,
			       const char **module, bool *unnamed);

#endif /* CORE_PROC_HANDLE_NAMES_H */
