// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * CPython's layouts. The table's offsets were read with offsetof() from each
 * version's own internal headers (Include/internal/pycore_*.h, built with
 * Py_BUILD_CORE) on x86-64: 3.10.13, 3.11.7 (and Debian's 3.11.2, the same),
 * 3.12.1, 3.13.0. They are stable within a minor version on the same
 * architecture. 3.13 and later carry them in _Py_DebugOffsets (PEP 768's
 * predecessor, Include/internal/pycore_runtime.h), which is read instead.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "core/proc/elf_file.h"
#include "core/proc/procmaps.h"
#include "core/proc/pyproc.h"

struct py_version {
	struct py_offsets o;
	struct py_layout l;
};

#define N PY_NONE
static const struct py_version versions[] = {
	{ .o = { .version = 0x030a, .runtime_interp_head = 32, .interp_threads_head = 8,
		 .tstate_next = 8, .tstate_native_tid = N, .tstate_thread_id = 176,
		 .tstate_frame = 24, .cframe_frame = N, .frame_code = 32, .frame_back = 24,
		 .frame_instr = 96, .frame_instr_size = 4, .frame_owner = N, .frame_is_entry = N },
	  .l = { .version = 0x030a, .code_filename = 104, .code_name = 112,
		 .code_qualname = N, .code_firstlineno = 40, .code_linetable = 120, .code_adaptive = N,
		 .ascii_size = 48, .compact_size = 72 } },
	{ .o = { .version = 0x030b, .runtime_interp_head = 40, .interp_threads_head = 16,
		 .tstate_next = 8, .tstate_native_tid = 160, .tstate_thread_id = 152,
		 .tstate_frame = 56, .cframe_frame = 8, .frame_code = 32, .frame_back = 48,
		 .frame_instr = 56, .frame_instr_size = 8, .frame_owner = 69,
		 .frame_is_entry = 68 },
	  .l = { .version = 0x030b, .code_filename = 112, .code_name = 120,
		 .code_qualname = 128, .code_firstlineno = 72, .code_linetable = 136, .code_adaptive = 184,
		 .ascii_size = 48, .compact_size = 72 } },
	{ .o = { .version = 0x030c, .runtime_interp_head = 40, .interp_threads_head = 72,
		 .tstate_next = 8, .tstate_native_tid = 144, .tstate_thread_id = 136,
		 .tstate_frame = 56, .cframe_frame = 0, .frame_code = 0, .frame_back = 8,
		 .frame_instr = 56, .frame_instr_size = 8, .frame_owner = 70, .frame_is_entry = N },
	  .l = { .version = 0x030c, .code_filename = 112, .code_name = 120,
		 .code_qualname = 128, .code_firstlineno = 68, .code_linetable = 136, .code_adaptive = 192,
		 .ascii_size = 40, .compact_size = 56 } },
	{ .o = { .version = 0x030d, .runtime_interp_head = 632, .interp_threads_head = 7344,
		 .tstate_next = 8, .tstate_native_tid = 160, .tstate_thread_id = 152,
		 .tstate_frame = 72, .cframe_frame = N, .frame_code = 0, .frame_back = 8,
		 .frame_instr = 56, .frame_instr_size = 8, .frame_owner = 70, .frame_is_entry = N },
	  .l = { .version = 0x030d, .code_filename = 112, .code_name = 120,
		 .code_qualname = 128, .code_firstlineno = 68, .code_linetable = 136, .code_adaptive = 200,
		 .ascii_size = 40, .compact_size = 56 } },
};
#undef N

/* The head of 3.13's _Py_DebugOffsets, as far as cuprobe reads it. */
struct py_debug_offsets_313 {
	char cookie[8];		/* "xdebugpy" */
	uint64_t version;	/* PY_VERSION_HEX */
	uint64_t free_threaded;
	uint64_t rt_size, rt_finalizing, rt_interpreters_head;
	uint64_t is_size, is_id, is_next, is_threads_head, is_gc, is_imports_modules, is_sysdict,
		is_builtins, is_ceval_gil, is_gil_runtime_state, is_gil_enabled, is_gil_locked,
		is_gil_holder;
	uint64_t ts_size, ts_prev, ts_next, ts_interp, ts_current_frame, ts_thread_id,
		ts_native_thread_id, ts_datastack_chunk, ts_status;
	uint64_t fr_size, fr_previous, fr_executable, fr_instr_ptr, fr_localsplus, fr_owner;
	uint64_t co_size, co_filename, co_name, co_qualname, co_linetable, co_firstlineno,
		co_argcount, co_localsplusnames, co_localspluskinds, co_code_adaptive;
};

uint32_t pyproc_version_of(const char *path)
{
	const char *base = strrchr(path, '/'), *p;
	unsigned int minor;
	char rest;

	base = base ? base + 1 : path;
	p = !strncmp(base, "libpython3.", 11) ? base + 11 :
	    !strncmp(base, "python3.", 8)     ? base + 8 :
						NULL;
	if (!p || sscanf(p, "%u%c", &minor, &rest) < 1 || minor > 99)
		return 0;
	return 0x0300 | minor;
}

static uint16_t off16(uint64_t v)
{
	return v < PY_NONE ? (uint16_t)v : PY_NONE;
}

/* 3.13+: the offsets from the interpreter itself. */
static int from_debug_offsets(struct elf_file *ef, uint64_t vaddr, uint32_t version,
			      struct py_offsets *o, struct py_layout *l)
{
	struct py_debug_offsets_313 d;
	const struct py_version *v = &versions[3];

	if (elf_file__read(ef, vaddr, &d, sizeof(d)) || memcmp(d.cookie, "xdebugpy", 8) ||
	    (d.version >> 16) != version || d.free_threaded)
		return -ENOTSUP;
	*o = v->o;
	*l = v->l;
	o->version = l->version = version;
	o->runtime_interp_head = off16(d.rt_interpreters_head);
	o->interp_threads_head = off16(d.is_threads_head);
	o->tstate_next = off16(d.ts_next);
	o->tstate_native_tid = off16(d.ts_native_thread_id);
	o->tstate_thread_id = off16(d.ts_thread_id);
	o->tstate_frame = off16(d.ts_current_frame);
	o->frame_code = off16(d.fr_executable);
	o->frame_back = off16(d.fr_previous);
	o->frame_instr = off16(d.fr_instr_ptr);
	o->frame_owner = off16(d.fr_owner);
	l->code_filename = off16(d.co_filename);
	l->code_name = off16(d.co_name);
	l->code_qualname = off16(d.co_qualname);
	l->code_firstlineno = off16(d.co_firstlineno);
	l->code_linetable = off16(d.co_linetable);
	l->code_adaptive = off16(d.co_code_adaptive);
	return 0;
}

/* Where vaddr of the file mapped by m's object lands in pid: via its file offset. */
static int runtime_address(const struct procmaps *pm, const struct map_entry *m,
			   struct elf_file *ef, uint64_t vaddr, uint64_t *addr)
{
	uint64_t off;

	if (elf_file__offset(ef, vaddr, &off))
		return -ENOENT;
	for (size_t i = 0; i < pm->n; i++) {
		const struct map_entry *e = &pm->v[i];

		if (!e->path || e->inode != m->inode || e->dev != m->dev)
			continue;
		if (off >= e->offset && off < e->offset + (e->end - e->start)) {
			*addr = e->start + (off - e->offset);
			return 0;
		}
	}
	return -ENOENT;
}

/* What BPF reads to name a code object when a stack first shows it. */
static void naming_offsets(struct py_offsets *o, const struct py_layout *l)
{
	uint16_t head = l->code_filename;

	o->code_filename = l->code_filename;
	o->code_name = l->code_qualname != PY_NONE ? l->code_qualname : l->code_name;
	o->code_firstlineno = l->code_firstlineno;
	o->code_linetable = l->code_linetable;
	o->str_ascii_size = l->ascii_size;
	o->str_compact_size = l->compact_size;
	if (o->code_name < head)
		head = o->code_name;
	if (o->code_firstlineno < head)
		head = o->code_firstlineno;
	if (o->code_linetable < head)
		head = o->code_linetable;
	o->code_head = head;
}

static int look_at(pid_t pid, const struct procmaps *pm, const struct map_entry *m,
		   uint32_t version, struct py_offsets *o, struct py_layout *l)
{
	struct elf_file *ef;
	GElf_Sym sym;
	int fd, err = -ENOTSUP;

	/* Through the process's own view of the file, checked (procmaps.h). */
	fd = procmaps__open(pid, m);
	if (fd < 0)
		return fd;
	ef = elf_file__fdopen(fd);
	if (!ef)
		return -errno;
	if (elf_file__object(ef, "_PyRuntime", &sym)) {
		elf_file__close(ef);
		return 0;
	}
	if (version >= 0x030d) {
		err = from_debug_offsets(ef, sym.st_value, version, o, l);
	} else {
		for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
			if (versions[i].o.version != version)
				continue;
			*o = versions[i].o;
			*l = versions[i].l;
			err = 0;
		}
	}
	if (!err) {
		uint64_t addr = 0;

		naming_offsets(o, l);
		err = runtime_address(pm, m, ef, sym.st_value, &addr);
		o->runtime = addr;
	}
	elf_file__close(ef);
	return err ? err : 1;
}

int pyproc__find(pid_t pid, struct py_offsets *o, struct py_layout *l, char *where, size_t len)
{
	struct procmaps pm;
	int ret = 0;

	if (procmaps__read(pid, &pm))
		return -ESRCH;
	for (size_t i = 0; i < pm.n && ret <= 0; i++) {
		const struct map_entry *m = &pm.v[i];
		uint32_t version;

		if (!m->path || !m->exec || !(version = pyproc_version_of(m->path)))
			continue;
		snprintf(where, len, "%s", m->path);
		if (version < 0x030a) {
			ret = -ENOTSUP;
			continue;
		}
		ret = look_at(pid, &pm, m, version, o, l);
	}
	procmaps__free(&pm);
	return ret;
}

/* ---- strings ---- */

static void put_utf8(char **p, uint32_t c)
{
	unsigned char *q = (unsigned char *)*p;

	if (c < 0x80) {
		*q++ = c;
	} else if (c < 0x800) {
		*q++ = 0xc0 | c >> 6;
		*q++ = 0x80 | (c & 0x3f);
	} else if (c < 0x10000) {
		*q++ = 0xe0 | c >> 12;
		*q++ = 0x80 | (c >> 6 & 0x3f);
		*q++ = 0x80 | (c & 0x3f);
	} else {
		*q++ = 0xf0 | (c >> 18 & 0x07);
		*q++ = 0x80 | (c >> 12 & 0x3f);
		*q++ = 0x80 | (c >> 6 & 0x3f);
		*q++ = 0x80 | (c & 0x3f);
	}
	*p = (char *)q;
}

char *py_utf8(const uint8_t *raw, size_t nbytes, unsigned int kind)
{
	size_t len;
	char *out, *p;

	if (kind != 1 && kind != 2 && kind != 4)
		return NULL;
	len = nbytes / kind;
	out = malloc(len * 4 + 1);
	if (!out)
		return NULL;
	p = out;
	for (size_t i = 0; i < len; i++) {
		uint32_t c;

		if (kind == 1) {
			c = raw[i];
		} else if (kind == 2) {
			uint16_t v;

			memcpy(&v, raw + 2 * i, 2);
			c = v;
		} else {
			memcpy(&c, raw + 4 * i, 4);
			/* Not a character (a str holds none past U+10FFFF): not made up either. */
			if (c > 0x10ffff)
				c = 0xfffd;
		}
		put_utf8(&p, c);
	}
	*p = '\0';
	return out;
}

/* ---- line tables ---- */

static uint64_t read_varint(const uint8_t *t, size_t len, size_t *i)
{
	uint64_t v = 0;
	unsigned int shift = 0;

	while (*i < len) {
		uint8_t b = t[(*i)++];

		v |= (uint64_t)(b & 63) << shift;
		shift += 6;
		if (!(b & 64) || shift > 60)
			break;
	}
	return v;
}

static int64_t read_svarint(const uint8_t *t, size_t len, size_t *i)
{
	uint64_t v = read_varint(t, len, i);

	return v & 1 ? -(int64_t)(v >> 1) : (int64_t)(v >> 1);
}

int py_line_of(uint32_t version, const uint8_t *t, size_t len, int firstlineno, uint64_t addr)
{
	int64_t line = firstlineno, result = -1;
	uint64_t start = 0;
	size_t i = 0;

	if (version < 0x030b) {
		/* 3.10 (PEP 626): (start delta, line delta) pairs; -128: no line. */
		for (; i + 1 < len; i += 2) {
			uint64_t end = start + t[i];
			int8_t ld = (int8_t)t[i + 1];

			if (ld != -128)
				line += ld;
			if (addr >= start && addr < end)
				return ld == -128 ? -1 : (int)line;
			start = end;
		}
		return -1;
	}
	/* 3.11+: the location table (Objects/locations.md), in code units of 2 bytes. */
	while (i < len) {
		uint8_t b = t[i++];
		unsigned int code = b >> 3 & 15;
		uint64_t end = start + 2 * ((b & 7) + 1);
		int64_t here;

		if (!(b & 128))
			return -1;
		if (code == 15) {
			here = -1;
		} else if (code == 14) {
			line += read_svarint(t, len, &i);
			read_varint(t, len, &i);
			read_varint(t, len, &i);
			read_varint(t, len, &i);
			here = line;
		} else if (code == 13) {
			line += read_svarint(t, len, &i);
			here = line;
		} else if (code >= 10) {
			line += code - 10;
			i += 2;
			here = line;
		} else {
			i += 1;
			here = line;
		}
		if (addr >= start && addr < end) {
			result = here;
			break;
		}
		start = end;
	}
	return (int)result;
}
