// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <capstone/capstone.h>
#include "core/probes/placement.h"
#include "util/log.h"

/*
 * What the kernel runs in place when a uprobe fires on an instruction, and
 * what it single-steps out of line instead (a second trap and a return to
 * user space: ~15 us a call on this 6.18 machine against ~0.5 us).
 * arch/x86/kernel/uprobes.c, branch_setup_xol_ops() and push_setup_xol_ops():
 * nops, jmp rel8/rel32, call rel32 and jcc rel8/rel32 (none with a 0x66
 * prefix), and push of a register (at most a REX.B prefix) are emulated;
 * everything else is single-stepped. is_prefix_bad() refuses segment and
 * lock prefixes outright. Measured here (bpftrace, one loop per first
 * instruction): nop, 66 90, 0f 1f 00, jmp, je, call, push %rbp, push %r12
 * ~0.45 us; endbr64, cmpl $i,d(%rip), test, sub $8,%rsp, mov %rdi,%rax ~15
 * us; and the 5-byte nopl (0f 1f 44 00 00) ~15 us too, since 6.18 keeps
 * that one for its call-trampoline optimization (arch_uprobe_optimize()),
 * which a probe outside a USDT site does not get: it is treated as stepped.
 */
static bool prefixed(const cs_x86 *x)
{
	return x->prefix[0] || x->prefix[1] || x->prefix[2] || x->prefix[3];
}

static bool kernel_emulates(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;
	uint8_t op = x->opcode[0];

	/* Segment overrides and lock (prefix[0..1]) are refused, not emulated. */
	if (x->prefix[0] == 0xf0 || x->prefix[1])
		return false;
	if (in->id == X86_INS_NOP)
		return in->size != 5;
	if (op == 0xeb || op == 0xe9 || op == 0xe8 || (op >= 0x70 && op <= 0x7f) ||
	    (op == 0x0f && x->opcode[1] >= 0x80 && x->opcode[1] <= 0x8f))
		return x->prefix[2] != 0x66;
	if (in->id == X86_INS_PUSH && op >= 0x50 && op <= 0x57)
		return !prefixed(x) && (x->rex == 0 || x->rex == 0x41);
	return false;
}

/*
 * What may run natively ahead of the probe: it writes no register but the
 * flags, and no memory, so the probe still sees the call's arguments
 * (rdi, rsi, rdx, rcx, r8, r9), its stack pointer, and the return address
 * at (%rsp) that a return probe takes. cmp and test only read; nops and
 * endbr64 do nothing. Anything else keeps the probe on the entry.
 */
static bool harmless(const cs_insn *in)
{
	if (in->detail->x86.prefix[0] == 0xf0)
		return false;
	switch (in->id) {
	case X86_INS_NOP:
	case X86_INS_ENDBR64:
	case X86_INS_CMP:
	case X86_INS_TEST:
		return true;
	default:
		return false;
	}
}

/*
 * What may run natively ahead of a probe whose program reads nothing of the
 * call (no argument, no stack): anything that goes on to the next
 * instruction, so that the probe is still hit once on every call.
 */
static bool straight(csh h, const cs_insn *in)
{
	static const int away[] = { CS_GRP_JUMP, CS_GRP_CALL, CS_GRP_RET, CS_GRP_INT, CS_GRP_IRET };

	for (size_t i = 0; i < sizeof(away) / sizeof(away[0]); i++)
		if (cs_insn_group(h, in, away[i]))
			return false;
	return in->id != X86_INS_SYSCALL && in->id != X86_INS_SYSENTER &&
	       in->id != X86_INS_UD2 && in->id != X86_INS_HLT;
}

static void describe_insn(const cs_insn *in, char *buf, size_t len)
{
	const cs_x86 *x = &in->detail->x86;
	bool rip = false;

	for (int i = 0; i < x->op_count; i++)
		rip |= x->operands[i].type == X86_OP_MEM && x->operands[i].mem.base == X86_REG_RIP;
	snprintf(buf, len, "%s%s", in->mnemonic, rip ? " (rip-relative)" : "");
}

static void decide(csh h, const uint8_t *code, size_t len, bool blind, struct placement *p)
{
	cs_insn *in = cs_malloc(h);
	const uint8_t *c = code;
	uint64_t addr = 0;
	size_t left = len;

	if (!in)
		return;
	while (left && cs_disasm_iter(h, &c, &left, &addr, in)) {
		uint64_t at = in->address;

		p->decoded = true;
		if (!at && !kernel_emulates(in))
			describe_insn(in, p->entry, sizeof(p->entry));
		if (kernel_emulates(in)) {
			p->shift = at;
			p->stepped = false;
			snprintf(p->insn, sizeof(p->insn), "%s", in->mnemonic);
			break;
		}
		if (!at)
			snprintf(p->insn, sizeof(p->insn), "%s", in->mnemonic);
		if (blind ? !straight(h, in) : !harmless(in))
			break;
	}
	cs_free(in, 1);
}

static int open_disasm(csh *h)
{
	if (cs_open(CS_ARCH_X86, CS_MODE_64, h) != CS_ERR_OK)
		return -ENOMEM;
	cs_option(*h, CS_OPT_DETAIL, CS_OPT_ON);
	cs_option(*h, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT);
	return 0;
}

/* Undecided: the entry, stepped unless shown otherwise. */
static void placement_init(struct placement *p)
{
	memset(p, 0, sizeof(*p));
	p->stepped = true;
}

int placement_decide(const uint8_t *code, size_t len, bool blind, struct placement *p)
{
	csh h;
	int err;

	placement_init(p);
	err = open_disasm(&h);
	if (err)
		return err;
	decide(h, code, len, blind, p);
	cs_close(&h);
	return 0;
}

void placement_describe(const char *name, const struct placement *p, char *buf, size_t len)
{
	if (!p->decoded)
		snprintf(buf, len, "%s: probe at the entry, whose bytes do not decode", name);
	else if (p->shift)
		snprintf(buf, len, "%s: probe at +%llu (%s), the entry's %s would be single-stepped",
			 name, (unsigned long long)p->shift, p->insn, p->entry);
	else if (p->stepped)
		snprintf(buf, len, "%s: probe at the entry (%s), single-stepped: no instruction the "
			 "kernel emulates follows through only cmp, test and nops", name, p->entry);
	else
		snprintf(buf, len, "%s: probe at the entry (%s), emulated", name, p->insn);
}

/* Moves *offset, a function's in the file behind fd, to where its probe goes. */
static void adjust_one(csh h, int fd, const char *what, const char *name, bool blind,
		       uint64_t *offset)
{
	uint8_t code[PLACEMENT_SCAN];
	struct placement p;
	char line[256];
	ssize_t got;

	if (!*offset || !name)
		return;
	got = pread(fd, code, sizeof(code), (off_t)*offset);
	if (got <= 0)
		return;
	placement_init(&p);
	decide(h, code, (size_t)got, blind, &p);
	if (!p.shift && !p.stepped)
		return;
	*offset += p.shift;
	placement_describe(name, &p, line, sizeof(line));
	p_dbg("%s, in %s", line, what);
}

int placement_adjust_for(int fd, const char *what, const char *const *names,
			 const bool *blind, size_t n, uint64_t *offsets)
{
	csh h;
	int err = open_disasm(&h);

	if (err)
		return err;
	for (size_t i = 0; i < n; i++)
		adjust_one(h, fd, what, names[i], blind && blind[i], &offsets[i]);
	cs_close(&h);
	return 0;
}

int placement_adjust(int fd, const char *what, const char *const *names, size_t n,
		     uint64_t *offsets)
{
	return placement_adjust_for(fd, what, names, NULL, n, offsets);
}
