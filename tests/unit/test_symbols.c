// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/symbols.c. They name addresses in this very binary, in
 * files and anonymous memory it maps, and in a forked copy of itself, so they
 * need no build products, no root and no GPU. Expected values come from a
 * source other than the code under test: the runtime address of a function,
 * /proc/self/maps, or a raw read of the ELF file without libelf.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "core/proc/procmaps.h"
#include "core/proc/symbols.h"

#define CUDART "/usr/local/cuda/lib64/libcudart.so.13"

static volatile int sink;

/* Big enough that target+4 is still inside it. */
static __attribute__((noinline)) int symbols_test_target(int x)
{
	for (int i = 0; i < x; i++)
		sink += i * x;
	return sink;
}

/* A C function under the name nvcc gives the host stub of a kernel. */
static void symbols_test_vecadd(float *a, float *b, float *c, int n) __asm__("_Z6vecAddPfS_S_i");
static __attribute__((noinline)) void symbols_test_vecadd(float *a, float *b, float *c, int n)
{
	for (int i = 0; i < n; i++)
		c[i] = a[i] + b[i];
}

/* Initialized data: file-backed, but no function covers it. */
static int symbols_test_data[64] = { 1 };

static uint64_t addr_of(const void *p)
{
	return (uint64_t)(uintptr_t)p;
}

static uint64_t addr_of_fn(void (*fn)(void))
{
	return (uint64_t)(uintptr_t)fn;
}

/* The file offset of addr in this process, from /proc/self/maps. */
static uint64_t self_file_offset(uint64_t addr, char *base, size_t len)
{
	const struct map_entry *m;
	struct procmaps maps;
	uint64_t off;

	assert_int_equal(procmaps__read(getpid(), &maps), 0);
	m = procmaps__find(&maps, addr);
	assert_non_null(m);
	assert_non_null(m->path);
	off = addr - m->start + m->offset;
	if (base)
		snprintf(base, len, "%s", strrchr(m->path, '/') + 1);
	procmaps__free(&maps);
	return off;
}

/* A file of npages pages of zeros: no ELF header, so no symbols. */
static int make_plain_file(char *path, size_t len, size_t npages)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	int fd;

	snprintf(path, len, "/tmp/cuprobe-symtest-XXXXXX");
	fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(ftruncate(fd, (off_t)(npages * page)), 0);
	return fd;
}

static void test_demangle(void **state)
{
	static const char *const cases[][2] = {
		{ "_ZN2ns6kernelIiEEvPT_i", "void ns::kernel<int>(int*, int)" },
		{ "_Z6vecAddPfS_S_i", "vecAdd(float*, float*, float*, int)" },
		{ "cudaLaunchKernel", "cudaLaunchKernel" },
		/* A plain C name that is also a mangled type must stay as is. */
		{ "i", "i" },
		{ "_Znot-mangled", "_Znot-mangled" },
	};
	char *out;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		out = symbols__demangle(cases[i][0]);
		assert_non_null(out);
		assert_string_equal(out, cases[i][1]);
		free(out);
	}
}

static void test_name_own_function(void **state)
{
	struct symbols *s = symbols__new();
	uint64_t addr = addr_of_fn((void (*)(void))symbols_test_target);
	const char *name = NULL;

	(void)state;
	assert_non_null(s);
	/* No refresh first: an unknown pid has its maps read on first use. */
	assert_int_equal(symbols__name(s, getpid(), addr, &name), 0);
	assert_string_equal(name, "symbols_test_target");
	assert_int_equal(symbols__name(s, getpid(), addr + 4, &name), 0);
	assert_string_equal(name, "symbols_test_target+0x4");
	symbols__free(s);
}

static void test_name_mangled_stub(void **state)
{
	struct symbols *s = symbols__new();
	uint64_t addr = addr_of_fn((void (*)(void))symbols_test_vecadd);
	const char *name = NULL;

	(void)state;
	assert_int_equal(symbols__refresh(s, getpid()), 0);
	assert_int_equal(symbols__name(s, getpid(), addr, &name), 0);
	assert_string_equal(name, "vecAdd(float*, float*, float*, int)");
	symbols__free(s);
}

static void test_cache_same_pointer(void **state)
{
	struct symbols *s = symbols__new();
	uint64_t a = addr_of_fn((void (*)(void))symbols_test_target);
	uint64_t b = addr_of_fn((void (*)(void))symbols_test_vecadd);
	const char *first = NULL, *again = NULL, *other = NULL;

	(void)state;
	assert_int_equal(symbols__name(s, getpid(), a, &first), 0);
	assert_int_equal(symbols__name(s, getpid(), b, &other), 0);
	assert_int_equal(symbols__name(s, getpid(), a, &again), 0);
	assert_ptr_equal(first, again);
	assert_ptr_not_equal(first, other);
	/* out may be NULL when only the return value matters. */
	assert_int_equal(symbols__name(s, getpid(), a, NULL), 0);
	symbols__free(s);
}

static void test_anon_fallback(void **state)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct symbols *s = symbols__new();
	const char *name = NULL;
	char want[32];
	void *p;

	(void)state;
	p = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	assert_int_equal(symbols__refresh(s, getpid()), 0);
	snprintf(want, sizeof(want), "0x%" PRIx64, addr_of(p) + 8);
	assert_int_equal(symbols__name(s, getpid(), addr_of(p) + 8, &name), 1);
	assert_string_equal(name, want);
	munmap(p, page);
	symbols__free(s);
}

static void test_object_fallback(void **state)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct symbols *s = symbols__new();
	char path[64], want[96];
	const char *name = NULL;
	void *p;
	int fd;

	(void)state;
	fd = make_plain_file(path, sizeof(path), 3);
	/* Mapped from file offset one page in, to check the offset arithmetic. */
	p = mmap(NULL, 2 * page, PROT_READ, MAP_PRIVATE, fd, (off_t)page);
	assert_true(p != MAP_FAILED);
	assert_int_equal(symbols__refresh(s, getpid()), 0);
	snprintf(want, sizeof(want), "%s+0x%zx", strrchr(path, '/') + 1, page + page + 0x10);
	assert_int_equal(symbols__name(s, getpid(), addr_of(p) + page + 0x10, &name), 1);
	assert_string_equal(name, want);
	munmap(p, 2 * page);
	close(fd);
	unlink(path);
	symbols__free(s);
}

static void test_data_is_not_code(void **state)
{
	struct symbols *s = symbols__new();
	uint64_t addr = addr_of(&symbols_test_data[8]);
	char base[PATH_MAX], want[PATH_MAX + 32];
	const char *name = NULL;
	uint64_t off;

	(void)state;
	off = self_file_offset(addr, base, sizeof(base));
	snprintf(want, sizeof(want), "%s+0x%" PRIx64, base, off);
	assert_int_equal(symbols__name(s, getpid(), addr, &name), 1);
	assert_string_equal(name, want);
	symbols__free(s);
}

static void test_refresh_replaced_mapping(void **state)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct symbols *s = symbols__new();
	char path_a[64], path_b[64], want[96], *saved;
	const char *old = NULL, *name = NULL;
	int fd_a, fd_b;
	void *p;

	(void)state;
	fd_a = make_plain_file(path_a, sizeof(path_a), 1);
	fd_b = make_plain_file(path_b, sizeof(path_b), 1);
	p = mmap(NULL, page, PROT_READ, MAP_PRIVATE, fd_a, 0);
	assert_true(p != MAP_FAILED);
	assert_int_equal(symbols__refresh(s, getpid()), 0);
	assert_int_equal(symbols__name(s, getpid(), addr_of(p) + 0x20, &old), 1);
	saved = strdup(old);

	/* dlclose then dlopen of another library at the same address. */
	assert_true(mmap(p, page, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd_b, 0) == p);
	assert_int_equal(symbols__refresh(s, getpid()), 0);
	assert_int_equal(symbols__name(s, getpid(), addr_of(p) + 0x20, &name), 1);
	snprintf(want, sizeof(want), "%s+0x20", strrchr(path_b, '/') + 1);
	assert_string_equal(name, want);
	/* The name handed out before the refresh is still readable. */
	assert_string_equal(old, saved);
	assert_string_not_equal(old, name);

	free(saved);
	munmap(p, page);
	close(fd_a);
	close(fd_b);
	unlink(path_a);
	unlink(path_b);
	symbols__free(s);
}

/* An idle copy of this process; it dies on its own if a test forgets it. */
static pid_t fork_idle_child(void)
{
	pid_t child = fork();

	assert_true(child >= 0);
	if (!child) {
		alarm(30);
		for (;;)
			pause();
	}
	return child;
}

static void test_refresh_after_exit(void **state)
{
	struct symbols *named = symbols__new(), *unnamed = symbols__new();
	uint64_t addr = addr_of_fn((void (*)(void))symbols_test_target);
	const char *before = NULL, *after = NULL;
	int rc[3];
	pid_t child;

	(void)state;
	child = fork_idle_child();
	/* Asserts come after the kill, so a failure cannot leave the child. */
	rc[0] = symbols__refresh(named, child);
	rc[1] = symbols__name(named, child, addr + 4, &before);
	rc[2] = symbols__refresh(unnamed, child);
	kill(child, SIGKILL);
	assert_int_equal(waitpid(child, NULL, 0), child);
	assert_int_equal(rc[0], 0);
	assert_int_equal(rc[1], 0);
	assert_int_equal(rc[2], 0);

	assert_int_equal(symbols__refresh(named, child), -ESRCH);
	assert_int_equal(symbols__name(named, child, addr + 4, &after), 0);
	assert_ptr_equal(after, before);
	/*
	 * Nothing was read from the ELF file for this one while the child
	 * lived; a fork shares our addresses, so the names must match ours.
	 */
	assert_int_equal(symbols__refresh(unnamed, child), -ESRCH);
	assert_int_equal(symbols__name(unnamed, child, addr, &after), 0);
	assert_string_equal(after, "symbols_test_target");
	symbols__free(named);
	symbols__free(unnamed);
}

static void test_refresh_gone_unknown_pid(void **state)
{
	struct symbols *s = symbols__new();
	const char *name = NULL;
	pid_t child;

	(void)state;
	child = fork();
	assert_true(child >= 0);
	if (!child)
		_exit(0);
	assert_int_equal(waitpid(child, NULL, 0), child);
	assert_int_equal(symbols__refresh(s, child), -ESRCH);
	assert_int_equal(symbols__name(s, child, 0x1234, &name), 1);
	assert_string_equal(name, "0x1234");
	symbols__free(s);
}

/* Enough distinct addresses to grow the name table several times. */
static void test_many_addresses(void **state)
{
	enum { N = 5000 };
	size_t len = N * 16;
	struct symbols *s = symbols__new();
	const char **names = calloc(N, sizeof(*names));
	const char *name;
	char want[32];
	uint8_t *p;

	(void)state;
	assert_non_null(names);
	p = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	for (size_t i = 0; i < N; i++)
		assert_int_equal(symbols__name(s, getpid(), addr_of(p) + i * 16, &names[i]), 1);
	for (size_t i = 0; i < N; i++) {
		assert_int_equal(symbols__name(s, getpid(), addr_of(p) + i * 16, &name), 1);
		assert_ptr_equal(name, names[i]);
		snprintf(want, sizeof(want), "0x%" PRIx64, addr_of(p) + i * 16);
		assert_string_equal(name, want);
	}
	munmap(p, len);
	free(names);
	symbols__free(s);
}

/* name's file offset read straight from the ELF64 file, without libelf. */
static uint64_t raw_func_offset(const char *path, const char *name)
{
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh;
	const Elf64_Phdr *ph;
	const uint8_t *base;
	uint64_t value = 0, off = 0;
	struct stat st;
	int fd;

	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	base = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	assert_true(base != MAP_FAILED);
	eh = (const void *)base;
	assert_memory_equal(eh->e_ident, ELFMAG, SELFMAG);
	assert_int_equal(eh->e_ident[EI_CLASS], ELFCLASS64);
	sh = (const void *)(base + eh->e_shoff);
	for (size_t i = 0; i < eh->e_shnum; i++) {
		const Elf64_Sym *sym = (const void *)(base + sh[i].sh_offset);
		const char *str = (const char *)base + sh[sh[i].sh_link].sh_offset;

		if (sh[i].sh_type != SHT_SYMTAB && sh[i].sh_type != SHT_DYNSYM)
			continue;
		for (size_t j = 0; j < sh[i].sh_size / sizeof(*sym); j++)
			if (ELF64_ST_TYPE(sym[j].st_info) == STT_FUNC &&
			    sym[j].st_shndx != SHN_UNDEF && !strcmp(str + sym[j].st_name, name))
				value = sym[j].st_value;
	}
	ph = (const void *)(base + eh->e_phoff);
	for (size_t i = 0; value && i < eh->e_phnum; i++)
		if (ph[i].p_type == PT_LOAD && value >= ph[i].p_vaddr &&
		    value < ph[i].p_vaddr + ph[i].p_memsz)
			off = value - ph[i].p_vaddr + ph[i].p_offset;
	munmap((void *)base, (size_t)st.st_size);
	close(fd);
	return off;
}

/*
 * A hand-built ELF laid out like a non-PIE executable: its code is at file
 * offset 0x1000 but virtual address 0x401000, so any mix-up of offsets and
 * addresses shows. Duplicate names and aliased addresses check which
 * symbol wins; a mangled kernel stub at 0x401400 has no size, as in
 * hand-written assembly.
 */
#define SYNTH_TEXT_OFF	0x1000
#define SYNTH_TEXT_ADDR 0x401000
#define SYNTH_FILE_SIZE 0x3000

struct synth_sym {
	const char *name;
	uint64_t addr;
	uint64_t size;
	int bind;
};

/* LOCAL symbols first, as in any symbol table (sh_info counts them). */
static const struct synth_sym synth_syms[] = {
	{ "synth_sized", 0x401800, 0x10, STB_LOCAL },
	{ "synth_alias", 0x401100, 0x20, STB_LOCAL },
	{ "synth_label", 0x401100, 0, STB_GLOBAL },
	{ "synth_sized", 0x401100, 0x20, STB_GLOBAL },
	{ "synth_pick", 0x401200, 0x10, STB_GLOBAL },
	{ "synth_pick", 0x401300, 0x10, STB_WEAK },
	{ "_ZN2ns6kernelIiEEvPT_i", 0x401400, 0, STB_GLOBAL },
};

#define SYNTH_NSYMS (sizeof(synth_syms) / sizeof(synth_syms[0]) + 1)

static size_t synth_strtab(char *buf)
{
	size_t len = 1;

	buf[0] = 0;
	for (size_t i = 0; i < SYNTH_NSYMS - 1; i++) {
		strcpy(buf + len, synth_syms[i].name);
		len += strlen(synth_syms[i].name) + 1;
	}
	return len;
}

static void synth_symtab(Elf64_Sym *sym)
{
	uint32_t name = 1;

	memset(sym, 0, SYNTH_NSYMS * sizeof(*sym));
	for (size_t i = 0; i < SYNTH_NSYMS - 1; i++) {
		sym[i + 1].st_name = name;
		sym[i + 1].st_info = ELF64_ST_INFO(synth_syms[i].bind, STT_FUNC);
		sym[i + 1].st_shndx = 1;
		sym[i + 1].st_value = synth_syms[i].addr;
		sym[i + 1].st_size = synth_syms[i].size;
		name += (uint32_t)strlen(synth_syms[i].name) + 1;
	}
}

static void synth_section(Elf64_Shdr *sh, uint32_t name, uint32_t type, uint64_t off,
			  uint64_t size)
{
	sh->sh_name = name;
	sh->sh_type = type;
	sh->sh_offset = off;
	sh->sh_size = size;
	sh->sh_addralign = 1;
}

/* Writes the synthetic ELF into an open, empty file. */
static void synth_write(int fd)
{
	static const char shstr[] = "\0.text\0.symtab\0.strtab\0.shstrtab";
	uint8_t *img = calloc(1, SYNTH_FILE_SIZE);
	Elf64_Ehdr *eh = (void *)img;
	Elf64_Phdr *ph = (void *)(img + sizeof(*eh));
	Elf64_Sym *sym = (void *)(img + 0x2000);
	char *str = (char *)img + 0x2100;
	Elf64_Shdr *sh = (void *)(img + 0x2400);
	size_t strsz = synth_strtab(str);

	assert_non_null(img);
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_EXEC;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof(*eh);
	eh->e_shoff = 0x2400;
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 1;
	eh->e_shentsize = sizeof(*sh);
	eh->e_shnum = 5;
	eh->e_shstrndx = 4;
	ph->p_type = PT_LOAD;
	ph->p_flags = PF_R | PF_X;
	ph->p_offset = SYNTH_TEXT_OFF;
	ph->p_vaddr = ph->p_paddr = SYNTH_TEXT_ADDR;
	ph->p_filesz = ph->p_memsz = 0x1000;
	ph->p_align = 0x1000;
	synth_symtab(sym);
	memcpy(img + 0x2300, shstr, sizeof(shstr));
	synth_section(&sh[1], 1, SHT_PROGBITS, SYNTH_TEXT_OFF, 0x1000);
	sh[1].sh_addr = SYNTH_TEXT_ADDR;
	sh[1].sh_flags = SHF_ALLOC | SHF_EXECINSTR;
	synth_section(&sh[2], 7, SHT_SYMTAB, 0x2000, SYNTH_NSYMS * sizeof(*sym));
	sh[2].sh_link = 3;
	sh[2].sh_info = 3; /* index of the first non-LOCAL symbol */
	sh[2].sh_entsize = sizeof(*sym);
	synth_section(&sh[3], 15, SHT_STRTAB, 0x2100, strsz);
	synth_section(&sh[4], 23, SHT_STRTAB, 0x2300, sizeof(shstr));
	assert_int_equal(pwrite(fd, img, SYNTH_FILE_SIZE, 0), SYNTH_FILE_SIZE);
	free(img);
}

static void test_func_offsets_synthetic(void **state)
{
	static const char *const names[] = { "synth_sized", "_ZN2ns6kernelIiEEvPT_i",
					     "synth_pick" };
	uint64_t offs[3];
	char path[64];
	int fd;

	(void)state;
	fd = make_plain_file(path, sizeof(path), 0);
	synth_write(fd);
	assert_int_equal(elf_func_offsets(path, names, 3, offs), 3);
	/* GLOBAL wins over a LOCAL before it and over a WEAK after it. */
	assert_int_equal(offs[0], 0x1100);
	assert_int_equal(offs[1], 0x1400);
	assert_int_equal(offs[2], 0x1200);
	close(fd);
	unlink(path);
}

/* The synthetic object's text page mapped with prot, and s's view of this process refreshed. */
static uint8_t *map_synth(struct symbols *s, char *path, size_t len, int prot, int *fd)
{
	uint8_t *p;

	*fd = make_plain_file(path, len, 0);
	synth_write(*fd);
	p = mmap(NULL, 0x1000, prot, MAP_PRIVATE, *fd, SYNTH_TEXT_OFF);
	assert_true(p != MAP_FAILED);
	assert_int_equal(symbols__refresh(s, getpid()), 0);
	return p;
}

static void test_name_synthetic(void **state)
{
	static const struct {
		uint64_t off; /* into the mapped text page */
		int rc;
		const char *name; /* %s: the file's basename */
	} cases[] = {
		/* Of three aliases: sized before unsized, then GLOBAL before LOCAL. */
		{ 0x108, 0, "synth_sized+0x8" },
		{ 0x130, 1, "%s+0x1130" }, /* past the end of a sized symbol */
		{ 0x300, 0, "synth_pick" },
		{ 0x450, 0, "void ns::kernel<int>(int*, int)+0x50" },
		{ 0x010, 1, "%s+0x1010" }, /* before any symbol */
		{ 0x800, 0, "synth_sized" },
	};
	struct symbols *s = symbols__new();
	char path[64], want[128];
	const char *name = NULL;
	uint8_t *p;
	int fd;

	(void)state;
	/* Code is named from executable mappings only, as a loader maps text. */
	p = map_synth(s, path, sizeof(path), PROT_READ | PROT_EXEC, &fd);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(want, sizeof(want), cases[i].name, strrchr(path, '/') + 1);
		assert_int_equal(symbols__name(s, getpid(), addr_of(p + cases[i].off), &name),
				 cases[i].rc);
		assert_string_equal(name, want);
	}
	munmap(p, 0x1000);
	close(fd);
	unlink(path);
	symbols__free(s);
}

/* The same symbols in a mapping without exec are no code: named by object and offset. */
static void test_symbols_only_in_exec_mappings(void **state)
{
	struct symbols *s = symbols__new();
	char path[64], want[128];
	const char *name = NULL;
	uint8_t *p;
	int fd;

	(void)state;
	p = map_synth(s, path, sizeof(path), PROT_READ, &fd);
	snprintf(want, sizeof(want), "%s+0x1108", strrchr(path, '/') + 1);
	assert_int_equal(symbols__name(s, getpid(), addr_of(p + 0x108), &name), 1);
	assert_string_equal(name, want);
	munmap(p, 0x1000);
	close(fd);
	unlink(path);
	symbols__free(s);
}

static void test_func_offsets_cudart(void **state)
{
	static const char *const names[] = { "cudaLaunchKernel", "cuprobe_no_such_function",
					     "cudaMalloc" };
	uint64_t offs[3];

	(void)state;
	if (access(CUDART, R_OK))
		skip();
	assert_int_equal(elf_func_offsets(CUDART, names, 3, offs), 2);
	assert_int_not_equal(offs[0], 0);
	assert_int_equal(offs[0], raw_func_offset(CUDART, "cudaLaunchKernel"));
	assert_int_equal(offs[1], 0);
	assert_int_equal(offs[2], raw_func_offset(CUDART, "cudaMalloc"));
}

static void test_func_offsets_self(void **state)
{
	static const char *const names[] = { "symbols_test_target", "_Z6vecAddPfS_S_i" };
	uint64_t offs[2];

	(void)state;
	assert_int_equal(elf_func_offsets("/proc/self/exe", names, 2, offs), 2);
	/* Where the loader put the code must agree with the file offset. */
	assert_int_equal(offs[0],
			 self_file_offset(addr_of_fn((void (*)(void))symbols_test_target), NULL, 0));
	assert_int_equal(offs[1],
			 self_file_offset(addr_of_fn((void (*)(void))symbols_test_vecadd), NULL, 0));
}

static void test_func_offsets_errors(void **state)
{
	static const char *const names[] = { "main" };
	uint64_t offs[1] = { 42 };
	char path[64];
	int fd;

	(void)state;
	fd = make_plain_file(path, sizeof(path), 1);
	assert_int_equal(elf_func_offsets(path, names, 1, offs), -ENOEXEC);
	assert_int_equal(offs[0], 0);
	close(fd);
	unlink(path);
	assert_int_equal(elf_func_offsets(path, names, 1, offs), -ENOENT);
	assert_int_equal(elf_func_offsets("/proc/self/exe", names, 0, NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_demangle),
		cmocka_unit_test(test_name_own_function),
		cmocka_unit_test(test_name_mangled_stub),
		cmocka_unit_test(test_cache_same_pointer),
		cmocka_unit_test(test_anon_fallback),
		cmocka_unit_test(test_object_fallback),
		cmocka_unit_test(test_data_is_not_code),
		cmocka_unit_test(test_refresh_replaced_mapping),
		cmocka_unit_test(test_refresh_after_exit),
		cmocka_unit_test(test_refresh_gone_unknown_pid),
		cmocka_unit_test(test_many_addresses),
		cmocka_unit_test(test_func_offsets_synthetic),
		cmocka_unit_test(test_name_synthetic),
		cmocka_unit_test(test_symbols_only_in_exec_mappings),
		cmocka_unit_test(test_func_offsets_cudart),
		cmocka_unit_test(test_func_offsets_self),
		cmocka_unit_test(test_func_offsets_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
