// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests for user/procmaps.c: maps text written here in the kernel's own
 * layout (fs/proc/task_mmu.c pads the path to column 74 and ends a line with
 * no path with a space), this process's real maps, and a zombie's empty ones.
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "core/proc/procmaps.h"

static const char maps_text[] =
	"55d0c0a00000-55d0c0a02000 r--p 00000000 08:01 1311234                    /usr/bin/my prog\n"
	"55d0c0a02000-55d0c0a05000 r-xp 00002000 08:01 1311234                    /usr/bin/my prog\n"
	"55d0c0a05000-55d0c0a06000 rw-p 00000000 00:00 0 \n"
	"7f1e30000000-7f1e30200000 r-xp 00010000 103:02 987654                    "
	"/tmp/lib gone.so (deleted)\n"
	"7f1e30200000-7f1e30201000 rw-s 00000000 00:05 42                         "
	"/SYSV00000000 (deleted)\n"
	"7ffd1a3e0000-7ffd1a401000 rw-p 00000000 00:00 0                          [stack]\n"
	"7ffd1a5f2000-7ffd1a5f4000 r-xp 00000000 00:00 0                          [vdso]\n"
	"ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0                  [vsyscall]";

struct want {
	uint64_t start, end, offset, inode;
	unsigned int major, minor;
	bool exec;
	const char *path;
};

static const struct want wants[] = {
	{ 0x55d0c0a00000, 0x55d0c0a02000, 0, 1311234, 8, 1, false, "/usr/bin/my prog" },
	{ 0x55d0c0a02000, 0x55d0c0a05000, 0x2000, 1311234, 8, 1, true, "/usr/bin/my prog" },
	{ 0x55d0c0a05000, 0x55d0c0a06000, 0, 0, 0, 0, false, NULL },
	{ 0x7f1e30000000, 0x7f1e30200000, 0x10000, 987654, 259, 2, true,
	  "/tmp/lib gone.so (deleted)" },
	{ 0x7f1e30200000, 0x7f1e30201000, 0, 42, 0, 5, false, "/SYSV00000000 (deleted)" },
	{ 0x7ffd1a3e0000, 0x7ffd1a401000, 0, 0, 0, 0, false, "[stack]" },
	{ 0x7ffd1a5f2000, 0x7ffd1a5f4000, 0, 0, 0, 0, true, "[vdso]" },
	{ 0xffffffffff600000, 0xffffffffff601000, 0, 0, 0, 0, true, "[vsyscall]" },
};

#define NWANTS (sizeof(wants) / sizeof(wants[0]))

static struct procmaps parsed;

static int parse_maps_text(void **state)
{
	(void)state;
	assert_int_equal(procmaps__parse(maps_text, &parsed), 0);
	return 0;
}

static int free_maps_text(void **state)
{
	(void)state;
	procmaps__free(&parsed);
	return 0;
}

static const struct map_entry *entry(size_t i)
{
	assert_true(i < parsed.n);
	return &parsed.v[i];
}

static void test_parse_counts_every_line(void **state)
{
	(void)state;
	assert_int_equal(parsed.n, NWANTS);
}

static void test_parse_addresses_and_offsets(void **state)
{
	(void)state;
	for (size_t i = 0; i < NWANTS; i++) {
		assert_int_equal(entry(i)->start, wants[i].start);
		assert_int_equal(entry(i)->end, wants[i].end);
		assert_int_equal(entry(i)->offset, wants[i].offset);
	}
}

static void test_parse_dev_and_inode(void **state)
{
	(void)state;
	for (size_t i = 0; i < NWANTS; i++) {
		assert_int_equal(entry(i)->dev, makedev(wants[i].major, wants[i].minor));
		assert_int_equal(entry(i)->inode, wants[i].inode);
	}
	/* "103:02" is hex: major 259, the one NVMe disks get. */
	assert_int_equal(major(entry(3)->dev), 259);
	assert_int_equal(minor(entry(3)->dev), 2);
}

static void test_parse_exec_flag(void **state)
{
	(void)state;
	for (size_t i = 0; i < NWANTS; i++)
		assert_int_equal(entry(i)->exec, wants[i].exec);
}

static void test_parse_paths_with_spaces_and_deleted(void **state)
{
	(void)state;
	assert_string_equal(entry(0)->path, "/usr/bin/my prog");
	assert_string_equal(entry(1)->path, "/usr/bin/my prog");
	assert_string_equal(entry(3)->path, "/tmp/lib gone.so (deleted)");
	assert_string_equal(entry(4)->path, "/SYSV00000000 (deleted)");
}

static void test_parse_pseudo_paths_kept(void **state)
{
	(void)state;
	assert_string_equal(entry(5)->path, "[stack]");
	assert_string_equal(entry(6)->path, "[vdso]");
	assert_string_equal(entry(7)->path, "[vsyscall]");
}

/* An anonymous mapping in the middle of the text must not take the next line as its path. */
static void test_parse_anonymous_mapping_has_no_path(void **state)
{
	(void)state;
	if (entry(2)->path)
		fail_msg("anonymous mapping got the path \"%s\"", entry(2)->path);
}

static void test_parse_anonymous_mapping_at_the_end(void **state)
{
	struct procmaps m;

	(void)state;
	assert_int_equal(procmaps__parse("1000-2000 r-xp 00000000 08:01 7 /bin/x\n"
					 "3000-4000 rw-p 00000000 00:00 0 \n",
					 &m),
			 0);
	assert_int_equal(m.n, 2);
	assert_string_equal(m.v[0].path, "/bin/x");
	assert_null(m.v[1].path);
	procmaps__free(&m);

	assert_int_equal(procmaps__parse("3000-4000 rw-p 00000000 00:00 0", &m), 0);
	assert_int_equal(m.n, 1);
	assert_null(m.v[0].path);
	procmaps__free(&m);
}

static void test_parse_empty_text(void **state)
{
	struct procmaps m = { .n = 99 };

	(void)state;
	assert_int_equal(procmaps__parse("", &m), 0);
	assert_int_equal(m.n, 0);
	assert_null(procmaps__find(&m, 0x1000));
	procmaps__free(&m);
}

static void test_parse_malformed_text_rejected(void **state)
{
	static const char *const bad[] = {
		"garbage\n",
		"1000-2000 r-xp zz 08:01 1 /x\n",
		"1000-2000 r-xp 0 08:01\n",
		"1000 r-xp 0 08:01 1 /x\n",
		/* A good line, then a bad one: nothing is kept. */
		"1000-2000 r-xp 00000000 08:01 1 /x\nnot a mapping\n",
	};
	struct procmaps m;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		if (procmaps__parse(bad[i], &m) != -EINVAL)
			fail_msg("accepted: %s", bad[i]);
		assert_int_equal(m.n, 0);
		assert_null(m.v);
	}
}

static void test_find_first_and_last_byte(void **state)
{
	(void)state;
	for (size_t i = 0; i < NWANTS; i++) {
		uint64_t mid = wants[i].start + (wants[i].end - wants[i].start) / 2;

		assert_ptr_equal(procmaps__find(&parsed, wants[i].start), entry(i));
		assert_ptr_equal(procmaps__find(&parsed, mid), entry(i));
		assert_ptr_equal(procmaps__find(&parsed, wants[i].end - 1), entry(i));
	}
}

/* end is exclusive: the next byte is the next mapping when they touch. */
static void test_find_end_is_exclusive(void **state)
{
	(void)state;
	assert_ptr_equal(procmaps__find(&parsed, wants[0].end), entry(1));
	assert_ptr_equal(procmaps__find(&parsed, wants[1].end), entry(2));
	assert_null(procmaps__find(&parsed, wants[2].end));
}

static void test_find_gaps_before_and_after(void **state)
{
	(void)state;
	assert_null(procmaps__find(&parsed, 0));
	assert_null(procmaps__find(&parsed, wants[0].start - 1));
	assert_null(procmaps__find(&parsed, 0x6000000000));
	assert_null(procmaps__find(&parsed, wants[4].end));
	assert_null(procmaps__find(&parsed, wants[5].start - 1));
	assert_null(procmaps__find(&parsed, wants[7].end));
	assert_null(procmaps__find(&parsed, UINT64_MAX));
}

/* Many mappings, each followed by a gap: every byte class, every position. */
static void test_find_in_many_mappings(void **state)
{
	const size_t n = 1000;
	struct procmaps m = { .v = calloc(n, sizeof(struct map_entry)), .n = n };

	(void)state;
	assert_non_null(m.v);
	for (size_t i = 0; i < n; i++) {
		m.v[i].start = 0x10000 + i * 0x3000;
		m.v[i].end = m.v[i].start + 0x2000;
	}
	for (size_t i = 0; i < n; i++) {
		assert_ptr_equal(procmaps__find(&m, m.v[i].start), &m.v[i]);
		assert_ptr_equal(procmaps__find(&m, m.v[i].end - 1), &m.v[i]);
		assert_null(procmaps__find(&m, m.v[i].end));
		assert_null(procmaps__find(&m, m.v[i].start - 1));
	}
	free(m.v);
}

static void test_find_in_empty_list(void **state)
{
	struct procmaps m = { 0 };

	(void)state;
	assert_null(procmaps__find(&m, 0));
	assert_null(procmaps__find(&m, 0x1000));
}

static __attribute__((noinline)) int procmaps_test_function(int x)
{
	return x * 3 + 1;
}

static void test_read_self_finds_own_code(void **state)
{
	uint64_t fn = (uint64_t)(uintptr_t)&procmaps_test_function;
	char exe[PATH_MAX];
	struct procmaps m;
	const struct map_entry *e;

	(void)state;
	assert_non_null(realpath("/proc/self/exe", exe));
	assert_int_equal(procmaps__read(getpid(), &m), 0);
	assert_true(m.n > 3);
	for (size_t i = 1; i < m.n; i++)
		assert_true(m.v[i - 1].end <= m.v[i].start);

	e = procmaps__find(&m, fn);
	assert_non_null(e);
	assert_true(e->exec);
	assert_non_null(e->path);
	assert_string_equal(e->path, exe);
	assert_true(e->inode != 0);
	assert_true(fn >= e->start && fn < e->end);
	procmaps__free(&m);
	assert_int_equal(procmaps_test_function(1), 4);
}

static void test_read_self_stack_and_heap(void **state)
{
	/* The frame, not a local: ASan may move locals to a heap "fake stack". */
	uint64_t frame = (uint64_t)(uintptr_t)__builtin_frame_address(0);
	void *heap = malloc(64);
	struct procmaps m;
	const struct map_entry *e;

	(void)state;
	assert_int_equal(procmaps__read(getpid(), &m), 0);
	e = procmaps__find(&m, frame);
	assert_non_null(e);
	assert_false(e->exec);
	assert_non_null(e->path);
	assert_string_equal(e->path, "[stack]");
	e = procmaps__find(&m, (uint64_t)(uintptr_t)heap);
	assert_non_null(e);
	assert_false(e->exec);
	procmaps__free(&m);
	free(heap);
}

static void test_read_missing_pid_is_esrch(void **state)
{
	struct procmaps m;

	(void)state;
	/* Above any pid_max (at most 2^22), so never a process. */
	assert_int_equal(procmaps__read(INT_MAX, &m), -ESRCH);
	assert_int_equal(m.n, 0);
	assert_null(m.v);
}

static void test_read_zombie_is_esrch(void **state)
{
	siginfo_t si = { 0 };
	struct procmaps m;
	pid_t pid = fork();

	(void)state;
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	/* Wait for the exit but leave the child a zombie, with no mappings. */
	assert_int_equal(waitid(P_PID, pid, &si, WEXITED | WNOWAIT), 0);
	assert_int_equal(procmaps__read(pid, &m), -ESRCH);
	assert_int_equal(m.n, 0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
}

/* The executable entries of text, equal one for one to those of exec. */
static void assert_exec_equal(const struct procmaps *text, const struct procmaps *exec)
{
	size_t k = 0;

	for (size_t i = 0; i < text->n; i++) {
		const struct map_entry *a = &text->v[i], *b;

		/* The gate page is no mapping of the process's (it has no VMA to query). */
		if (!a->exec || a->start >= 0xffffffffff600000ull)
			continue;
		assert_true(k < exec->n);
		b = &exec->v[k++];
		assert_true(b->exec);
		assert_true(a->start == b->start && a->end == b->end);
		assert_true(a->offset == b->offset && a->inode == b->inode && a->dev == b->dev);
		if (a->path)
			assert_string_equal(a->path, b->path);
		else
			assert_null(b->path);
	}
	assert_int_equal(k, exec->n);
}

/* A file mapped executable at path, then unlinked when deleted: its mapping stays. */
static void *map_exec_file(const char *path, bool deleted)
{
	FILE *f = fopen(path, "w");
	void *p;

	assert_non_null(f);
	assert_int_equal(fputs("not code, but mapped as code\n", f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
	f = fopen(path, "r");
	assert_non_null(f);
	p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fileno(f), 0);
	assert_true(p != MAP_FAILED);
	fclose(f);
	if (deleted)
		assert_int_equal(unlink(path), 0);
	return p;
}

/* The executable mappings alone, named as the text names them, a deleted file's too. */
static void test_read_exec_matches_the_text(void **state)
{
	char path[] = "/tmp/procmaps test XXXXXX";
	struct procmaps text, exec;
	void *p;
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	close(fd);
	p = map_exec_file(path, true);
	assert_int_equal(procmaps__read(getpid(), &text), 0);
	assert_int_equal(procmaps__read_exec(getpid(), &exec), 0);
	assert_exec_equal(&text, &exec);
	assert_non_null(procmaps__find(&exec, (uint64_t)(uintptr_t)p));
	assert_non_null(strstr(procmaps__find(&exec, (uint64_t)(uintptr_t)p)->path, " (deleted)"));
	assert_null(procmaps__find(&exec, (uint64_t)(uintptr_t)__builtin_frame_address(0)));
	procmaps__free(&text);
	procmaps__free(&exec);
	munmap(p, 4096);
	assert_int_equal(procmaps__read_exec(INT_MAX, &exec), -ESRCH);
}

/*
 * A name longer than the query's buffer (PATH_MAX) cannot come through
 * PROCMAP_QUERY: the text gives every mapping then, the long one whole.
 */
static void test_read_exec_long_name_from_the_text(void **state)
{
	char base[] = "/tmp/procmaps-long-XXXXXX", dir[PATH_MAX * 2], comp[256], file[PATH_MAX * 2];
	struct procmaps text, exec;
	const struct map_entry *e;
	size_t depth = 0;
	void *p;

	(void)state;
	assert_non_null(mkdtemp(base));
	snprintf(dir, sizeof(dir), "%s", base);
	memset(comp, 'd', 200);
	comp[200] = '\0';
	/* Long paths are made a component at a time, each relative to the last. */
	assert_int_equal(chdir(dir), 0);
	while (strlen(dir) < PATH_MAX + 100) {
		assert_int_equal(mkdir(comp, 0700), 0);
		assert_int_equal(chdir(comp), 0);
		strcat(dir, "/");
		strcat(dir, comp);
		depth++;
	}
	p = map_exec_file("lib.so", false);
	snprintf(file, sizeof(file), "%s/lib.so", dir);
	assert_int_equal(procmaps__read(getpid(), &text), 0);
	assert_int_equal(procmaps__read_exec(getpid(), &exec), 0);
	assert_exec_equal(&text, &exec);
	e = procmaps__find(&exec, (uint64_t)(uintptr_t)p);
	assert_non_null(e);
	assert_string_equal(e->path, file);
	procmaps__free(&text);
	procmaps__free(&exec);
	munmap(p, 4096);
	assert_int_equal(unlink("lib.so"), 0);
	for (; depth; depth--) {
		assert_int_equal(chdir(".."), 0);
		assert_int_equal(rmdir(comp), 0);
	}
	assert_int_equal(chdir("/"), 0);
	assert_int_equal(rmdir(base), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse_counts_every_line),
		cmocka_unit_test(test_parse_addresses_and_offsets),
		cmocka_unit_test(test_parse_dev_and_inode),
		cmocka_unit_test(test_parse_exec_flag),
		cmocka_unit_test(test_parse_paths_with_spaces_and_deleted),
		cmocka_unit_test(test_parse_pseudo_paths_kept),
		cmocka_unit_test(test_parse_anonymous_mapping_has_no_path),
		cmocka_unit_test(test_parse_anonymous_mapping_at_the_end),
		cmocka_unit_test(test_parse_empty_text),
		cmocka_unit_test(test_parse_malformed_text_rejected),
		cmocka_unit_test(test_find_first_and_last_byte),
		cmocka_unit_test(test_find_end_is_exclusive),
		cmocka_unit_test(test_find_gaps_before_and_after),
		cmocka_unit_test(test_find_in_many_mappings),
		cmocka_unit_test(test_find_in_empty_list),
		cmocka_unit_test(test_read_self_finds_own_code),
		cmocka_unit_test(test_read_self_stack_and_heap),
		cmocka_unit_test(test_read_missing_pid_is_esrch),
		cmocka_unit_test(test_read_zombie_is_esrch),
		cmocka_unit_test(test_read_exec_matches_the_text),
		cmocka_unit_test(test_read_exec_long_name_from_the_text),
	};

	return cmocka_run_group_tests(tests, parse_maps_text, free_maps_text);
}
