/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --stack: the user stack of a launch, by frame pointers, and, in a thread
 * that runs CPython, its Python frames, walked from the thread's state. Only
 * launch.bpf.c includes this: the maps are its own. Off (and pruned by the
 * verifier) unless the loader set stack_on before load.
 */
#ifndef STACK_BPF_H
#define STACK_BPF_H

#include "maps.bpf.h"
#include <bpf/bpf_tracing.h>
#include "stack.h"

const volatile bool stack_on = false;

/* One entry per unique user stack, keyed by a hash of its frames (1 entry when --stack is off). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, STACK_MAP_ENTRIES);
	__type(key, __u64);
	__type(value, struct ustack);
} ustacks SEC(".maps");

/* A user stack is built here: it does not fit on the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ustack);
} ustack_scratch SEC(".maps");

/* Per process that runs CPython: where its interpreter keeps its frames (the loader's). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CUPROBE_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct py_offsets);
} py_procs SEC(".maps");

/* One entry per unique Python stack, keyed by a hash of its frames. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PY_STACK_ENTRIES);
	__type(key, __u64);
	__type(value, struct py_stack);
} py_stacks SEC(".maps");

/* A Python stack is built here: it does not fit on the BPF stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_stack);
} py_scratch SEC(".maps");

/* A frame's head, read at once: one read per frame rather than one per field. */
#define PY_FRAME_READ 104
struct py_frame_buf {
	__u8 b[PY_FRAME_READ];
};

/* 0: a frame's head; 1: its code object's naming fields. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2);
	__type(key, __u32);
	__type(value, struct py_frame_buf);
} py_frame_buf SEC(".maps");

/*
 * Each code object a new stack shows, read then, while the process is
 * there: its frames are named from this however soon the process exits
 * (1 entry when --stack is off).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, PY_CODE_ENTRIES);
	__type(key, struct py_code_key);
	__type(value, struct py_code_info);
} py_codes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_code_info);
} py_code_scratch SEC(".maps");

/* What the walk saw of each frame's code, for reading the new ones after it. */
struct py_code_head {
	__u64 name, file, table;
	__u64 name_len;
	__u32 name_state;
	__s32 first;
};

struct py_code_heads {
	struct py_code_head h[PY_MAX_FRAMES];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_code_heads);
} py_code_heads SEC(".maps");

/* The thread's PyThreadState found last time: checked before use, found again if stale. */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, __u64);
} py_tstate SEC(".maps");

#define FRAME_OWNED_BY_CSTACK 3
#ifndef EEXIST
#define EEXIST 17
#endif

static __always_inline __u64 read_u64(__u64 addr)
{
	__u64 v = 0;

	bpf_probe_read_user(&v, sizeof(v), (void *)addr);
	return v;
}

/* Whether tstate is this thread's: its native id (3.11+), or pthread_self (the TLS base). */
static __always_inline bool py_tstate_mine(const struct py_offsets *o, __u64 tstate, __u32 tid)
{
	struct task_struct *task;

	if (o->tstate_native_tid != PY_NONE)
		return (__u32)read_u64(tstate + o->tstate_native_tid) == tid;
	task = bpf_get_current_task_btf();
	return read_u64(tstate + o->tstate_thread_id) == task->thread.fsbase;
}

/*
 * The walks are bpf_loop callbacks: the verifier checks one iteration, not
 * every path through all of them.
 */
struct py_walk {
	struct py_offsets o;
	__u64 at;	/* the thread state or frame looked at */
	__u64 found;	/* the thread's state */
	__u64 hash;
	__u32 tid;
	__u32 n;
	__u32 tgid;
};

static long py_thread_step(__u32 i, void *arg)
{
	struct py_walk *w = arg;

	if (!w->at)
		return 1;
	if (py_tstate_mine(&w->o, w->at, w->tid)) {
		w->found = w->at;
		return 1;
	}
	w->at = read_u64(w->at + w->o.tstate_next);
	return 0;
}

/* The thread's PyThreadState: from the cache, else from the main interpreter's list. */
static __always_inline __u64 py_find_tstate(struct py_walk *w)
{
	__u64 *cached, interp;

	cached = bpf_task_storage_get(&py_tstate, bpf_get_current_task_btf(), 0,
				      BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (cached && *cached && py_tstate_mine(&w->o, *cached, w->tid)) {
		w->found = *cached;
		return w->found;
	}
	interp = read_u64(w->o.runtime + w->o.runtime_interp_head);
	if (!interp)
		return 0;
	w->at = read_u64(interp + w->o.interp_threads_head);
	w->found = 0;
	bpf_loop(PY_MAX_THREADS, py_thread_step, w, 0);
	if (cached && w->found)
		*cached = w->found;
	return w->found;
}

/* A field of the frame's head in buf, or, past what was read, from the target. */
static __always_inline __u64 field(const struct py_frame_buf *buf, bool have, __u64 frame,
				   __u16 off, __u32 size)
{
	__u64 v = 0, o = off;

	/*
	 * Hidden from the compiler: with -mcpu=v3 it would otherwise test a
	 * 32-bit copy of the offset and index with another register, whose
	 * bounds the verifier then does not know.
	 */
	asm volatile("" : "+r"(o));
	if (have && o <= PY_FRAME_READ - 8) {
		if (size == 8)
			v = *(const __u64 *)(buf->b + o);
		else if (size == 4)
			v = *(const __u32 *)(buf->b + o);
		else
			v = buf->b[o];
		return v;
	}
	if (size == 8)
		bpf_probe_read_user(&v, 8, (void *)(frame + off));
	else if (size == 4)
		bpf_probe_read_user(&v, 4, (void *)(frame + off));
	else
		bpf_probe_read_user(&v, 1, (void *)(frame + off));
	return v;
}

/* A compact str's length, hash and state (PyASCIIObject: at 16, 24, 32). */
struct py_str_head {
	__u64 len;
	__u64 hash;
	__u32 state;
	__u32 pad;
};

/*
 * The id of the code object at code (py_code_id), its naming fields kept
 * in heads slot n: two reads, its head's window and its name's length and
 * hash. 0 when they cannot be read.
 */
static __always_inline __u32 py_code_look(const struct py_offsets *o, __u64 code, __u32 n)
{
	struct py_frame_buf *buf;
	struct py_code_heads *heads;
	struct py_code_head *h;
	struct py_str_head sh = {};
	__u64 base = code + o->code_head;
	__u32 zero = 0, one = 1;
	bool have;

	buf = bpf_map_lookup_elem(&py_frame_buf, &one);
	heads = bpf_map_lookup_elem(&py_code_heads, &zero);
	if (!buf || !heads || !code)
		return 0;
	h = &heads->h[n & (PY_MAX_FRAMES - 1)];
	have = !bpf_probe_read_user(buf->b, sizeof(buf->b), (void *)base);
	h->name = field(buf, have, base, o->code_name - o->code_head, 8);
	h->file = field(buf, have, base, o->code_filename - o->code_head, 8);
	h->table = field(buf, have, base, o->code_linetable - o->code_head, 8);
	h->first = (__s32)field(buf, have, base, o->code_firstlineno - o->code_head, 4);
	if (!h->name || bpf_probe_read_user(&sh, sizeof(sh), (void *)(h->name + 16))) {
		h->name = 0;
		return 0;
	}
	h->name_len = sh.len;
	h->name_state = sh.state;
	return py_code_id(h->name, h->file, h->table, (__u32)h->first, sh.len, sh.hash);
}

static long py_frame_step(__u32 i, void *arg)
{
	struct py_walk *w = arg;
	const struct py_offsets *o = &w->o;
	struct py_frame_buf *buf;
	struct py_stack *st;
	struct py_frame *f;
	__u32 zero = 0, n = w->n;
	__u8 owner = 0, is_entry = 0;
	bool have;

	st = bpf_map_lookup_elem(&py_scratch, &zero);
	buf = bpf_map_lookup_elem(&py_frame_buf, &zero);
	if (!st || !buf || !w->at)
		return 1;
	if (n >= PY_MAX_FRAMES) {
		st->truncated = 1;
		return 1;
	}
	/* At the end of a mapping the whole head may not be readable: then field by field. */
	have = !bpf_probe_read_user(buf->b, sizeof(buf->b), (void *)w->at);
	if (o->frame_owner != PY_NONE)
		owner = field(buf, have, w->at, o->frame_owner, 1);
	if (owner == FRAME_OWNED_BY_CSTACK) {
		/* A C call's shim (3.12+): the frame above it began that evaluation. */
		if (n > 0)
			st->entry |= 1ull << ((n - 1) & 63);
		w->at = field(buf, have, w->at, o->frame_back, 8);
		return 0;
	}
	f = &st->f[n & (PY_MAX_FRAMES - 1)];
	f->code = field(buf, have, w->at, o->frame_code, 8);
	f->instr = field(buf, have, w->at, o->frame_instr, o->frame_instr_size == 4 ? 4 : 8);
	if (o->frame_is_entry != PY_NONE)
		is_entry = field(buf, have, w->at, o->frame_is_entry, 1);
	/* 3.10 has a C evaluation per frame. */
	if (is_entry || o->version < 0x030b)
		st->entry |= 1ull << (n & 63);
	st->id[n & (PY_MAX_FRAMES - 1)] = py_code_look(o, f->code, n);
	w->hash = (w->hash ^ f->code) * 1099511628211ull;
	w->hash = (w->hash ^ f->instr) * 1099511628211ull;
	w->hash = (w->hash ^ st->id[n & (PY_MAX_FRAMES - 1)]) * 1099511628211ull;
	w->n = n + 1;
	w->at = field(buf, have, w->at, o->frame_back, 8);
	return 0;
}


/*
 * A str's characters into dst, as many bytes as cap (with tail, its last
 * ones): *kind the bytes a character, *full all its bytes. The held bytes, or
 * -1 when it is no compact str.
 */
static __always_inline long py_str_read(const struct py_offsets *o, __u64 s, __u64 len,
					__u32 state, __u8 *dst, __u32 cap, bool tail, __u8 *kind,
					__u32 *full)
{
	__u32 k = state >> 2 & 7, n;
	__u64 bytes, from = 0, data;

	if (!s || !(state & 1u << 5) || (k != 1 && k != 2 && k != 4) || len > (1u << 20))
		return -1;
	bytes = len * k;
	data = s + (state & 1u << 6 ? o->str_ascii_size : o->str_compact_size);
	*full = bytes;
	*kind = k;
	if (bytes > cap) {
		if (tail)
			from = bytes - cap;
		bytes = cap;
	}
	n = bytes;
	if (n > cap)
		return -1;
	if (bpf_probe_read_user(dst, n, (void *)(data + from)))
		return -1;
	return n;
}

/* Whether code is a code object: its type's tp_name is "code". */
static __always_inline bool py_is_code(__u64 code)
{
	__u64 type = read_u64(code + 8), tp_name;
	char name[5] = {};

	if (!type || !(tp_name = read_u64(type + 24)) ||
	    bpf_probe_read_user(name, sizeof(name), (void *)tp_name))
		return false;
	return name[0] == 'c' && name[1] == 'o' && name[2] == 'd' && name[3] == 'e' && !name[4];
}

/* Frame i's code into py_codes, when it is not there: read now, while the process is. */
static long py_code_step(__u32 i, void *arg)
{
	struct py_walk *w = arg;
	const struct py_offsets *o = &w->o;
	struct py_code_key key = { .tgid = w->tgid };
	struct py_code_heads *heads;
	struct py_code_info *c;
	struct py_code_head *h;
	struct py_str_head sh = {};
	struct py_stack *st;
	__u32 zero = 0, n;
	__u64 size = 0;
	long got;

	st = bpf_map_lookup_elem(&py_scratch, &zero);
	heads = bpf_map_lookup_elem(&py_code_heads, &zero);
	c = bpf_map_lookup_elem(&py_code_scratch, &zero);
	if (!st || !heads || !c || i >= w->n)
		return 1;
	key.code = st->f[i & (PY_MAX_FRAMES - 1)].code;
	key.id = st->id[i & (PY_MAX_FRAMES - 1)];
	h = &heads->h[i & (PY_MAX_FRAMES - 1)];
	if (!key.id || bpf_map_lookup_elem(&py_codes, &key) || !py_is_code(key.code))
		return 0;
	got = py_str_read(o, h->name, h->name_len, h->name_state, c->name, PY_NAME_BYTES, false,
			  &c->name_kind, &n);
	if (got < 0)
		return 0;
	c->name_len = got;
	if (!h->file || bpf_probe_read_user(&sh, sizeof(sh), (void *)(h->file + 16)))
		return 0;
	got = py_str_read(o, h->file, sh.len, sh.state, c->file, PY_FILE_BYTES, true, &c->file_kind,
			  &c->file_full);
	if (got < 0)
		return 0;
	c->file_len = got;
	c->firstlineno = h->first;
	c->lines_len = c->lines_full = 0;
	/* A bytes object: ob_size at 16, its bytes at 32. */
	if (h->table && !bpf_probe_read_user(&size, sizeof(size), (void *)(h->table + 16)) &&
	    size < (1u << 24)) {
		n = size < PY_LINES_BYTES ? size : PY_LINES_BYTES;
		if (n <= PY_LINES_BYTES && !bpf_probe_read_user(c->lines, n, (void *)(h->table + 32))) {
			c->lines_len = n;
			c->lines_full = size;
		}
	}
	bpf_map_update_elem(&py_codes, &key, c, BPF_NOEXIST);
	return 0;
}

/*
 * Walks the thread's Python frames, leaf first, into py_stacks. Returns
 * LAUNCH_F_PYSTACK with *key set, LAUNCH_F_PYLOST when the map was full, 0
 * when the thread runs no Python.
 */
static __noinline __u32 py_stack_take(__u32 tgid, __u32 tid, __u64 *key)
{
	struct py_offsets *o;
	struct py_stack *st;
	struct py_walk w = {};
	__u32 zero = 0;
	__u64 frame;
	long err;

	o = bpf_map_lookup_elem(&py_procs, &tgid);
	st = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!o || !st)
		return 0;
	w.o = *o;
	w.tid = tid;
	if (!py_find_tstate(&w))
		return 0;
	frame = read_u64(w.found + w.o.tstate_frame);
	if (w.o.cframe_frame != PY_NONE && frame)
		frame = read_u64(frame + w.o.cframe_frame);
	st->entry = 0;
	st->truncated = 0;
	w.at = frame;
	w.n = 0;
	w.hash = 14695981039346656037ull;
	bpf_loop(PY_MAX_FRAMES * 2, py_frame_step, &w, 0);
	if (!w.n)
		return 0;
	st->n = w.n;
	w.hash ^= st->entry;
	/* Known already (the usual case): its code objects were read when it was new. */
	if (bpf_map_lookup_elem(&py_stacks, &w.hash)) {
		*key = w.hash;
		return LAUNCH_F_PYSTACK;
	}
	err = bpf_map_update_elem(&py_stacks, &w.hash, st, BPF_NOEXIST);
	if (err && err != -EEXIST)
		return LAUNCH_F_PYLOST;
	*key = w.hash;
	w.tgid = tgid;
	bpf_loop(PY_MAX_FRAMES, py_code_step, &w, 0);
	return LAUNCH_F_PYSTACK;
}

/*
 * The user stack by frame pointers, walked here rather than by
 * bpf_get_stackid: the kernel's user callchain measured about 0.8 us a
 * launch on a 6-frame stack, this walk a fraction of that. The probe sits
 * on the function's first instruction: the caller's return address is at
 * [sp], and rbp is still the caller's frame pointer.
 */
struct fp_walk {
	struct ustack *st;
	__u64 fp;
	__u64 hash;
};

static long fp_step(__u32 i, void *arg)
{
	struct fp_walk *w = arg;
	struct ustack *st = w->st;
	__u64 frame[2];	/* the saved frame pointer, the return address */
	__u32 n = st->n;

	if (n >= STACK_MAX_DEPTH) {
		st->truncated = 1;
		return 1;
	}
	if (!w->fp || bpf_probe_read_user(frame, sizeof(frame), (void *)w->fp) || !frame[1])
		return 1;
	st->ip[n & 127] = frame[1];
	st->n = n + 1;
	w->hash = (w->hash ^ frame[1]) * 1099511628211ull;
	/* The stack grows down: a caller's frame is above its callee's, or the chain is broken. */
	if (frame[0] <= w->fp)
		return 1;
	w->fp = frame[0];
	return 0;
}

static __noinline __u32 user_stack_take(struct pt_regs *ctx, __u64 *key)
{
	struct fp_walk w = { .hash = 14695981039346656037ull };
	__u64 ret = 0, ip = PT_REGS_IP(ctx);
	__u32 zero = 0;
	long err;

	w.st = bpf_map_lookup_elem(&ustack_scratch, &zero);
	if (!w.st)
		return LAUNCH_F_ULOST;
	w.st->truncated = 0;
	w.st->ip[0] = ip;
	w.st->n = 1;
	w.hash = (w.hash ^ ip) * 1099511628211ull;
	if (!bpf_probe_read_user(&ret, sizeof(ret), (void *)PT_REGS_SP(ctx)) && ret) {
		w.st->ip[1] = ret;
		w.st->n = 2;
		w.hash = (w.hash ^ ret) * 1099511628211ull;
		w.fp = PT_REGS_FP(ctx);
		bpf_loop(STACK_MAX_DEPTH, fp_step, &w, 0);
	}
	w.hash ^= w.st->n;
	/* Known already (the usual case): no update, no copy. */
	if (!bpf_map_lookup_elem(&ustacks, &w.hash)) {
		err = bpf_map_update_elem(&ustacks, &w.hash, w.st, BPF_NOEXIST);
		if (err && err != -EEXIST)
			return LAUNCH_F_ULOST;
	}
	*key = w.hash;
	return LAUNCH_F_USTACK;
}

/* The launch's stacks into e: one call, taken only with --stack. */
static __always_inline void stack_take(struct pt_regs *ctx, struct launch_event *e)
{
	__u64 ukey = 0, pykey = 0;

	e->flags |= user_stack_take(ctx, &ukey);
	e->ustack = ukey;
	e->flags |= py_stack_take(e->tgid, e->tid, &pykey);
	e->pystack = pykey;
}

#endif /* STACK_BPF_H */
