// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The one definition of the shared maps and globals (maps.bpf.h). */
#define CUPROBE_DEFINE_MAPS
#include "maps.bpf.h"
/*
 * libbpf's USDT maps are weak definitions in every file that includes this
 * header; libbpf 1.1's linker places them right only when the first object
 * defines them too.
 */
#include <bpf/usdt.bpf.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";
