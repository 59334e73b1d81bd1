// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Python frames of launch stacks (stacks.h): read from the code objects BPF
 * read when a stack first showed them (py_codes: the process may be gone by
 * now), else from the target's memory, once per code object and id
 * (py_code_id: a code object made where a freed one was is another).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "core/proc/pyproc.h"
#include "core/proc/remote.h"
#include "core/proc/stacks_int.h"

#define PY_STR_MAX 1024
#define PY_LINETABLE_MAX (256 * 1024)

/* A word of the target; 0 when unreadable. */
static uint64_t peek_u64(pid_t pid, uint64_t addr)
{
	uint64_t v = 0;

	remote_read(pid, addr, &v, sizeof(v));
	return v;
}

/* A str object of the target as UTF-8 (compact strings only), malloc'd; NULL when unreadable. */
static char *py_str(pid_t pid, const struct py_layout *l, uint64_t addr)
{
	uint8_t head[80], *raw;
	uint64_t len;
	uint32_t state, kind;
	char *out;

	if (!addr || l->compact_size > sizeof(head) || remote_read(pid, addr, head, l->compact_size))
		return NULL;
	memcpy(&len, head + 16, 8);
	memcpy(&state, head + 32, 4);
	kind = state >> 2 & 7;
	/* compact (bit 5); ascii (bit 6) puts the data right after PyASCIIObject. */
	if (!(state & 1u << 5) || len > PY_STR_MAX || (kind != 1 && kind != 2 && kind != 4))
		return NULL;
	raw = malloc(len * kind + 1);
	if (!raw ||
	    remote_read(pid, addr + (state & 1u << 6 ? l->ascii_size : l->compact_size), raw, len * kind)) {
		free(raw);
		return NULL;
	}
	out = py_utf8(raw, len * kind, kind);
	free(raw);
	return out;
}

struct py_proc *py_proc_of(struct stacks *s, pid_t pid)
{
	for (size_t i = 0; i < s->py.len; i++)
		if (vec_at(&s->py, struct py_proc, i)->pid == pid)
			return vec_at(&s->py, struct py_proc, i);
	return NULL;
}

void stacks__set_python(struct stacks *s, pid_t pid, const struct py_layout *l)
{
	struct py_proc *p = py_proc_of(s, pid);

	if (!p) {
		p = vec__push(&s->py);
		if (!p)
			return;
		s->counts.python_procs++;
	}
	*p = (struct py_proc){ .pid = pid, .l = *l };
}

/* Whether addr is a code object: its type's tp_name is "code" (checked once per process). */
static bool py_is_code(struct py_proc *p, uint64_t addr)
{
	uint64_t type = peek_u64(p->pid, addr + 8);
	char name[8] = "";

	if (!type)
		return false;
	if (type == p->code_type)
		return true;
	if (p->code_type || remote_read(p->pid, peek_u64(p->pid, type + 24), name, 5) ||
	    memcmp(name, "code", 5))
		return false;
	p->code_type = type;
	return true;
}

/* The name co_qualname where the version has it, else co_name. */
static uint16_t name_offset(const struct py_layout *l)
{
	return l->code_qualname != PY_NONE ? l->code_qualname : l->code_name;
}

/*
 * Read from the target now (BPF did not keep it: its map was full), if the
 * code object there is still the one BPF saw: the same id.
 */
static void py_code_late(struct py_proc *p, struct py_code *c)
{
	const struct py_layout *l = &p->l;
	uint64_t name, file, table, n = 0, str[2] = {};
	int32_t first = 0;

	c->bad = true;
	if (!py_is_code(p, c->addr))
		return;
	name = peek_u64(p->pid, c->addr + name_offset(l));
	file = peek_u64(p->pid, c->addr + l->code_filename);
	table = peek_u64(p->pid, c->addr + l->code_linetable);
	remote_read(p->pid, c->addr + l->code_firstlineno, &first, sizeof(first));
	/* The name's length and hash, at 16 and 24. */
	if (!name || remote_read(p->pid, name + 16, str, sizeof(str)) ||
	    py_code_id(name, file, table, (uint32_t)first, str[0], str[1]) != c->id)
		return;
	c->name = py_str(p->pid, l, name);
	c->file = py_str(p->pid, l, file);
	c->firstlineno = first;
	free(c->lines);
	c->lines = NULL;
	c->nlines = 0;
	/* A bytes object: ob_size at 16, its bytes at 32. */
	if (table && !remote_read(p->pid, table + 16, &n, sizeof(n)) && n <= PY_LINETABLE_MAX &&
	    (c->lines = malloc(n ? n : 1)) && !remote_read(p->pid, table + 32, c->lines, n))
		c->nlines = n;
	c->bad = !c->name || !c->file;
}

/* What BPF read of the code object when a stack first showed it: 0, or -ENOENT. */
static int py_code_kept(struct stacks *s, struct py_code *c)
{
	struct py_code_key key = { .code = c->addr, .tgid = (uint32_t)c->pid, .id = c->id };
	struct py_code_info *info = malloc(sizeof(*info));
	char *file;

	if (!info || s->code_fd < 0 || bpf_map_lookup_elem(s->code_fd, &key, info) ||
	    info->name_len > PY_NAME_BYTES || info->file_len > PY_FILE_BYTES ||
	    info->lines_len > PY_LINES_BYTES) {
		free(info);
		return -ENOENT;
	}
	c->name = py_utf8(info->name, info->name_len, info->name_kind);
	file = py_utf8(info->file, info->file_len, info->file_kind);
	/* Longer than BPF takes: its end, which names the file. */
	if (file && info->file_full > info->file_len) {
		if (asprintf(&c->file, "...%s", file) < 0)
			c->file = NULL;
		free(file);
	} else {
		c->file = file;
	}
	c->firstlineno = info->firstlineno;
	c->lines = malloc(info->lines_len ? info->lines_len : 1);
	if (c->lines) {
		memcpy(c->lines, info->lines, info->lines_len);
		c->nlines = info->lines_len;
	}
	c->cut = info->lines_full > info->lines_len;
	c->bad = !c->name || !c->file;
	free(info);
	return 0;
}

static struct py_code *py_code_get(struct stacks *s, struct py_proc *p, uint64_t addr,
				   uint32_t id)
{
	struct py_code key = { .pid = p->pid, .id = id, .addr = addr }, *c;
	long v;

	if (hmap__find(s->codes, (long)&key, &v))
		return (struct py_code *)v;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	*c = key;
	if (py_code_kept(s, c))
		py_code_late(p, c);
	if (hmap__add(s->codes, (long)c, (long)c)) {
		free(c->name);
		free(c->file);
		free(c->lines);
		free(c);
		return NULL;
	}
	return c;
}

const char *py_frame_name(struct stacks *s, struct stack *st, struct py_proc *p,
			  const struct py_frame *f, uint32_t id)
{
	struct py_code *c = py_code_get(s, p, f->code, id);
	uint64_t addr;
	int line;

	if (!c || c->bad) {
		st->unsymbolized++;
		return stacks_keep(s, "<python frame 0x%llx>", (unsigned long long)f->code);
	}
	if (p->l.version < 0x030b)
		addr = (uint64_t)(int64_t)(int32_t)f->instr * 2;
	else
		addr = f->instr - (f->code + p->l.code_adaptive);
	line = py_line_of(p->l.version, c->lines, c->nlines, c->firstlineno, addr);
	if (line < 0 && c->cut) {
		/* Past the table's start BPF kept: the whole of it, while the process lives. */
		struct py_code late = *c;

		late.name = late.file = NULL;
		late.lines = NULL;
		py_code_late(p, &late);
		if (!late.bad)
			line = py_line_of(p->l.version, late.lines, late.nlines, late.firstlineno,
					  addr);
		free(late.name);
		free(late.file);
		free(late.lines);
	}
	if (line < 0)
		line = c->firstlineno;
	return stacks_keep(s, "%s(%d): %s", c->file, line, c->name);
}
