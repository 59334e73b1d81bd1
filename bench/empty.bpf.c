// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The floor for bench/run.sh: a uprobe program that does nothing. Its cost
 * per hit is the trap and the kernel's uprobe dispatch, which any probe pays;
 * cuprobe's launch probe is measured against it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("uprobe")
int empty(struct pt_regs *ctx)
{
	return 0;
}
