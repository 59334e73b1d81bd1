// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for the fast object check (user/core/proc/objcache.c and the hash
 * lookups of elf_file.c): which names an object defines, decided from its
 * dynamic hash table and, where a static runtime may be, its .symtab. The
 * objects are small shared libraries built here with cc; the expected
 * offsets come from elf_func_offsets, which walks every symbol of both
 * tables, and from the symbols' binding as the sources declare them.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>
#include <cmocka.h>
#include "core/proc/elf_file.h"
#include "core/proc/objcache.h"

#define CUDART "/usr/local/cuda/lib64/libcudart.so.13"

static char dir[] = "/tmp/cuprobe-objcache.XXXXXX";

static const char *const names[] = {
	"cudaLaunchKernel", "cudaMalloc", "cuInit", "not_there", "memcpy", "_dl_debug_state",
	"local_only",
};
#define NNAMES (sizeof(names) / sizeof(names[0]))

/* Exports two runtime names; local_only is a local function, in .symtab only. */
static const char exported_src[] =
	"int cudaLaunchKernel(void) { return 1; }\n"
	"int cudaMalloc(void) { return 2; }\n"
	"__attribute__((visibility(\"hidden\"))) int local_only(void) { return 3; }\n"
	"int use(void) { return local_only(); }\n";
/* A static runtime's shape: its launch functions hidden, with a .nv_fatbin. */
static const char static_src[] =
	"__attribute__((visibility(\"hidden\"))) int cudaLaunchKernel(void) { return 1; }\n"
	"__attribute__((visibility(\"hidden\"))) int cudaMalloc(void) { return 2; }\n"
	"int run(void) { return cudaLaunchKernel() + cudaMalloc(); }\n"
	"%s\n";
static const char fatbin[] =
	"__attribute__((section(\".nv_fatbin\"), used)) static const char fb[16] = \"fatbin\";";

/* Builds dir/name from src with cc and extra flags. */
static void build(const char *name, const char *src, const char *flags)
{
	char c[PATH_MAX], cmd[3 * PATH_MAX];
	FILE *f;

	snprintf(c, sizeof(c), "%s/%s.c", dir, name);
	f = fopen(c, "w");
	assert_non_null(f);
	fputs(src, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "cc -shared -fPIC -O1 -o %s/%s %s %s", dir, name, c, flags);
	assert_int_equal(system(cmd), 0);
}

static void build_static(const char *name, bool with_fatbin, const char *flags)
{
	char src[1024];

	snprintf(src, sizeof(src), static_src, with_fatbin ? fatbin : "");
	build(name, src, flags);
}

static char *path_of(const char *name)
{
	static char p[PATH_MAX];

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return p;
}

/* The fast rule's answer for the file at path. */
static int fast(const char *path, uint64_t *offs, bool *walked)
{
	struct elf_file *ef = elf_file__open(path);
	int n;

	assert_non_null(ef);
	n = obj_func_offsets(ef, names, NNAMES, offs, walked);
	elf_file__close(ef);
	return n;
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	build("libexported.so", exported_src, "");
	build("libsysv.so", exported_src, "-Wl,--hash-style=sysv");
	build_static("libstatic.so", true, "");
	build_static("libnofatbin.so", false, "");
	build_static("libshared_rt.so", true, "-L/usr/local/cuda/lib64 -Wl,--no-as-needed -lcudart");
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

/* Exported names: the hash lookup finds what the full walk finds, and reads no .symtab. */
static void test_exported_names_through_the_hash(void **state)
{
	const char *libs[] = { "libexported.so", "libsysv.so" };
	uint64_t want[NNAMES], got[NNAMES];
	bool walked;

	(void)state;
	for (size_t k = 0; k < 2; k++) {
		const char *p = path_of(libs[k]);

		assert_int_equal(elf_func_offsets(p, names, NNAMES, want), 3);
		assert_int_equal(fast(p, got, &walked), 2);
		assert_false(walked);
		assert_int_not_equal(got[0], 0);
		assert_int_equal(got[0], want[0]);
		assert_int_equal(got[1], want[1]);
		/* Local: in .symtab only, and this object has no static runtime's marks. */
		assert_int_not_equal(want[6], 0);
		assert_int_equal(got[6], 0);
		assert_int_equal(got[3], 0);
	}
}

/* Real libraries: libc's versioned memcpy, the linker's hook, libcudart's exports. */
static void test_real_libraries_agree_with_the_walk(void **state)
{
	const char *libs[] = { "/lib/x86_64-linux-gnu/libc.so.6",
			       "/lib64/ld-linux-x86-64.so.2", CUDART };
	uint64_t want[NNAMES], got[NNAMES];
	bool walked;

	(void)state;
	for (size_t k = 0; k < 3; k++) {
		int n = elf_func_offsets(libs[k], names, NNAMES, want);

		assert_true(n > 0);
		assert_int_equal(fast(libs[k], got, &walked), n);
		for (size_t i = 0; i < NNAMES; i++)
			assert_int_equal(got[i], want[i]);
	}
}

/* A static runtime's marks: .symtab, .nv_fatbin, no libcudart needed: .symtab is walked. */
static void test_static_runtime_is_walked(void **state)
{
	uint64_t want[NNAMES], got[NNAMES];
	bool walked;

	(void)state;
	assert_int_equal(elf_func_offsets(path_of("libstatic.so"), names, NNAMES, want), 2);
	assert_int_equal(fast(path_of("libstatic.so"), got, &walked), 2);
	assert_true(walked);
	assert_int_not_equal(got[0], 0);
	assert_int_equal(got[0], want[0]);
	assert_int_equal(got[1], want[1]);
}

/* Without a .nv_fatbin, or with the shared runtime needed, .dynsym alone decides. */
static void test_no_marks_no_walk(void **state)
{
	const char *libs[] = { "libnofatbin.so", "libshared_rt.so" };
	uint64_t got[NNAMES];
	bool walked;

	(void)state;
	for (size_t k = 0; k < 2; k++) {
		struct elf_file *ef = elf_file__open(path_of(libs[k]));

		assert_non_null(ef);
		assert_false(obj_may_hold_static_runtime(ef));
		elf_file__close(ef);
		assert_int_equal(fast(path_of(libs[k]), got, &walked), 0);
		assert_false(walked);
	}
}

/*
 * The names are looked up through a hash of them (elf_file.c): a name asked
 * for twice is found for both, and a list too long for the index (compared
 * one by one) answers as a short one, through the walk and through the tables.
 */
static void test_long_and_repeated_names(void **state)
{
	const char *libs[] = { "libstatic.so", "libexported.so" };
	enum { LONG = 300 };
	static char filler[LONG][24];
	const char *many[LONG];
	uint64_t want[NNAMES], got[LONG], offs[LONG];
	bool walked;

	(void)state;
	for (size_t i = 0; i < LONG; i++) {
		snprintf(filler[i], sizeof(filler[i]), "filler_%zu", i);
		many[i] = filler[i];
	}
	for (size_t i = 0; i < NNAMES; i++)
		many[LONG - NNAMES + i] = names[i];
	many[0] = "cudaLaunchKernel";
	for (size_t k = 0; k < 2; k++) {
		const char *p = path_of(libs[k]);
		const char *twice[] = { "cudaMalloc", "cudaLaunchKernel", "cudaMalloc" };
		struct elf_file *ef;
		int n = elf_func_offsets(p, names, NNAMES, want);

		assert_true(n >= 2);
		/* The long list: past the index, every name compared. */
		assert_int_equal(elf_func_offsets(p, many, LONG, got), n + 1);
		assert_int_equal(got[0], want[0]);
		for (size_t i = 0; i < NNAMES; i++)
			assert_int_equal(got[LONG - NNAMES + i], want[i]);
		ef = elf_file__open(p);
		assert_non_null(ef);
		assert_int_equal(obj_func_offsets(ef, many, LONG, offs, &walked), 3);
		assert_int_equal(offs[0], want[0]);
		assert_int_equal(offs[LONG - NNAMES], want[0]);
		assert_int_equal(offs[LONG - NNAMES + 1], want[1]);
		/* Asked twice, through the index: both found. */
		assert_int_equal(obj_func_offsets(ef, twice, 3, offs, &walked), 3);
		assert_int_not_equal(offs[0], 0);
		assert_int_equal(offs[0], want[1]);
		assert_int_equal(offs[2], want[1]);
		assert_int_equal(offs[1], want[0]);
		elf_file__close(ef);
	}
}

/* Not an ELF file: -ENOEXEC, as elf_func_offsets says. */
static void test_not_elf(void **state)
{
	struct objcache *c = objcache__new();
	uint64_t got[NNAMES];
	int fd;

	(void)state;
	fd = open(path_of("libexported.so.c"), O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(objcache__func_offsets(c, fd, names, NNAMES, got, NULL), -ENOEXEC);
	close(fd);
	objcache__free(c);
}

/* A file is read once: a second descriptor of it is answered from the cache; a new mtime is read. */
static void test_cache_reads_a_file_once(void **state)
{
	struct objcache *c = objcache__new();
	uint64_t a[NNAMES], b[NNAMES];
	struct obj_read how;
	unsigned long read, reused;
	struct timeval tv[2] = { { 1000, 0 }, { 1000, 0 } };
	int fd1 = open(path_of("libstatic.so"), O_RDONLY), fd2 = open(path_of("libstatic.so"), O_RDONLY);

	(void)state;
	assert_non_null(c);
	assert_int_equal(objcache__func_offsets(c, fd1, names, NNAMES, a, &how), 2);
	assert_false(how.cached);
	assert_true(how.walked);
	assert_int_equal(objcache__func_offsets(c, fd2, names, NNAMES, b, &how), 2);
	assert_true(how.cached);
	assert_true(how.walked);
	assert_memory_equal(a, b, sizeof(a));
	objcache__counts(c, &read, &reused);
	assert_int_equal(read, 1);
	assert_int_equal(reused, 1);
	/* The same inode changed (mtime): read again. */
	assert_int_equal(futimes(fd1, tv), 0);
	assert_int_equal(objcache__func_offsets(c, fd2, names, NNAMES, b, &how), 2);
	assert_false(how.cached);
	objcache__counts(c, &read, &reused);
	assert_int_equal(read, 2);
	close(fd1);
	close(fd2);
	objcache__free(c);
}

/*
 * The second list (--step torch's): an exported name through the hash, a local one
 * by the walk of .symtab, whatever marks the object has; cached apart from the
 * first list, so that neither answer replaces the other.
 */
static void test_symtab_list_finds_locals(void **state)
{
	static const char *const two[] = { "cudaMalloc", "local_only" };
	struct objcache *c = objcache__new();
	uint64_t want[NNAMES], got[2], first[NNAMES];
	struct obj_read how;
	int fd = open(path_of("libexported.so"), O_RDONLY);

	(void)state;
	assert_non_null(c);
	assert_true(fd >= 0);
	assert_int_equal(elf_func_offsets(path_of("libexported.so"), names, NNAMES, want), 3);
	assert_int_equal(objcache__func_offsets(c, fd, names, NNAMES, first, NULL), 2);
	assert_int_equal(first[6], 0);
	assert_int_equal(objcache__symtab_offsets(c, fd, two, 2, got, &how), 2);
	assert_false(how.cached);
	assert_true(how.walked);
	assert_int_equal(got[0], want[1]);
	assert_int_equal(got[1], want[6]);
	/* Both answers stay: each list from its own cache. */
	assert_int_equal(objcache__symtab_offsets(c, fd, two, 2, got, &how), 2);
	assert_true(how.cached);
	assert_int_equal(got[1], want[6]);
	assert_int_equal(objcache__func_offsets(c, fd, names, NNAMES, first, &how), 2);
	assert_true(how.cached);
	assert_int_equal(first[6], 0);
	close(fd);
	objcache__free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_exported_names_through_the_hash),
		cmocka_unit_test(test_real_libraries_agree_with_the_walk),
		cmocka_unit_test(test_static_runtime_is_walked),
		cmocka_unit_test(test_no_marks_no_walk),
		cmocka_unit_test(test_long_and_repeated_names),
		cmocka_unit_test(test_not_elf),
		cmocka_unit_test(test_cache_reads_a_file_once),
		cmocka_unit_test(test_symtab_list_finds_locals),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
