/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Where a uprobe on a function goes: on the first instruction the kernel
 * emulates, when everything before it provably leaves the arguments, the
 * stack pointer and memory alone; else on the entry, single-stepped.
 */
#ifndef CORE_PROBES_PLACEMENT_H
#define CORE_PROBES_PLACEMENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How many bytes of a function's start are decoded. */
#define PLACEMENT_SCAN 64

struct placement {
	uint64_t shift;		/* bytes from the entry to the probe's instruction */
	bool stepped;		/* the probe's instruction is single-stepped by the kernel */
	bool decoded;		/* the bytes could be decoded at all */
	char insn[32];		/* the probe's instruction (AT&T mnemonic) */
	char entry[64];		/* the entry's instruction, when the probe moved or is stepped */
};

/*
 * Decides from a function's first len bytes. blind: the probe's program
 * reads nothing of the call (no argument, no stack), so any instruction
 * that goes on to the next may run ahead of it, not only those that leave
 * the arguments alone. Pure: no state, any thread. Returns 0 (p filled;
 * undecodable bytes keep the entry), or -errno when the disassembler
 * cannot be opened.
 */
int placement_decide(const uint8_t *code, size_t len, bool blind, struct placement *p);

/*
 * Moves each nonzero offsets[i] (file offsets of functions in the ELF read
 * through fd) to where its probe goes, saying at debug level, as
 * "NAME: probe at +N (je), ...", the ones that moved or stay single-stepped.
 * what names the object in those lines. Returns 0 or -errno (offsets are
 * left as they were on error).
 */
int placement_adjust(int fd, const char *what, const char *const *names, size_t n,
		     uint64_t *offsets);

/* placement_adjust, with blind[i] (NULL: none) as placement_decide takes it. */
int placement_adjust_for(int fd, const char *what, const char *const *names,
			 const bool *blind, size_t n, uint64_t *offsets);

/* The -v line for one function, as placement_adjust writes it. */
void placement_describe(const char *name, const struct placement *p, char *buf, size_t len);

#endif /* CORE_PROBES_PLACEMENT_H */
