// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The checked opens of files a target names (procmaps.h): a FIFO never
 * blocks, a link is not followed, another file than the one mapped is
 * refused, a deleted mapping is read through map_files or not at all.
 * Each blocking case runs under alarm(): a hang fails the test.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <cmocka.h>
#include "core/proc/procmaps.h"

static char dir[] = "/tmp/cuprobe-target-file.XXXXXX";

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	alarm(10);
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

static void in_dir(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", dir, name);
}

static void write_file(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, "\x7f" "ELF........", 12), 12);
	close(fd);
}

static void test_regular_file_opens(void **state)
{
	char path[PATH_MAX];
	int fd;

	(void)state;
	in_dir(path, sizeof(path), "plain");
	write_file(path);
	fd = target_file_open(path, false);
	assert_true(fd >= 0);
	assert_true(fcntl(fd, F_GETFL) & O_NONBLOCK);
	close(fd);
}

static void test_fifo_refused_without_blocking(void **state)
{
	char path[PATH_MAX];

	(void)state;
	in_dir(path, sizeof(path), "fifo");
	assert_int_equal(mkfifo(path, 0644), 0);
	assert_int_equal(target_file_open(path, true), -EINVAL);
	assert_int_equal(target_file_open(path, false), -EINVAL);
}

static void test_symlink_followed_only_when_asked(void **state)
{
	char path[PATH_MAX], link[PATH_MAX], to_fifo[PATH_MAX], fifo[PATH_MAX];
	int fd;

	(void)state;
	in_dir(path, sizeof(path), "target");
	in_dir(link, sizeof(link), "link");
	in_dir(fifo, sizeof(fifo), "fifo2");
	in_dir(to_fifo, sizeof(to_fifo), "link-to-fifo");
	write_file(path);
	assert_int_equal(symlink(path, link), 0);
	assert_int_equal(target_file_open(link, false), -ELOOP);
	fd = target_file_open(link, true);
	assert_true(fd >= 0);
	close(fd);
	assert_int_equal(mkfifo(fifo, 0644), 0);
	assert_int_equal(symlink(fifo, to_fifo), 0);
	assert_int_equal(target_file_open(to_fifo, true), -EINVAL);
}

/* A mapping of a file of dir, as /proc/self/maps shows it. */
static void map_entry_of(void *addr, struct procmaps *pm, const struct map_entry **me)
{
	assert_int_equal(procmaps__read(getpid(), pm), 0);
	*me = procmaps__find(pm, (uint64_t)(uintptr_t)addr);
	assert_non_null(*me);
	assert_non_null((*me)->path);
}

static void *map_file(const char *path)
{
	int fd = open(path, O_RDONLY);
	void *p;

	assert_true(fd >= 0);
	p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	assert_true(p != MAP_FAILED);
	return p;
}

static void test_mapping_opens_the_mapped_inode(void **state)
{
	char path[PATH_MAX], planted[PATH_MAX + 16];
	const struct map_entry *me;
	struct procmaps pm;
	struct map_entry by_name;
	struct stat st;
	void *p;
	int fd;

	(void)state;
	in_dir(path, sizeof(path), "mapped");
	write_file(path);
	p = map_file(path);
	/* Deleted, a FIFO at its "(deleted)" name: map_files still gives the file. */
	assert_int_equal(unlink(path), 0);
	snprintf(planted, sizeof(planted), "%s (deleted)", path);
	assert_int_equal(mkfifo(planted, 0644), 0);
	map_entry_of(p, &pm, &me);
	fd = procmaps__open(getpid(), me);
	if (geteuid() == 0) {
		assert_true(fd >= 0);
		assert_int_equal(fstat(fd, &st), 0);
		assert_true(S_ISREG(st.st_mode));
		assert_int_equal((uint64_t)st.st_ino, me->inode);
		close(fd);
	} else {
		/* map_files is root's: without it, nothing is found, nothing blocks. */
		assert_int_equal(fd, -ENOENT);
	}
	/* Where map_files cannot be read, a deleted file is not looked up by name. */
	by_name = *me;
	by_name.start = by_name.end = 1;
	assert_int_equal(procmaps__open(getpid(), &by_name), -ENOENT);
	procmaps__free(&pm);
	munmap(p, 4096);
}

static void test_name_must_be_the_mapped_file(void **state)
{
	char path[PATH_MAX], other[PATH_MAX];
	struct map_entry me = {};
	struct stat st;
	int fd;

	(void)state;
	/* A mapping that map_files does not know: its name is all there is. */
	in_dir(path, sizeof(path), "named");
	write_file(path);
	assert_int_equal(stat(path, &st), 0);
	me.start = me.end = 1;
	me.inode = st.st_ino;
	me.dev = st.st_dev;
	me.path = path;
	fd = procmaps__open(getpid(), &me);
	assert_true(fd >= 0);
	close(fd);
	/* Swapped for another file: refused. */
	in_dir(other, sizeof(other), "other");
	write_file(other);
	assert_int_equal(rename(other, path), 0);
	assert_int_equal(procmaps__open(getpid(), &me), -ESTALE);
	/* A FIFO there: refused at once. */
	assert_int_equal(unlink(path), 0);
	assert_int_equal(mkfifo(path, 0644), 0);
	assert_int_equal(procmaps__open(getpid(), &me), -EINVAL);
	/* A symlink to the mapped file itself: not followed. */
	assert_int_equal(unlink(path), 0);
	in_dir(other, sizeof(other), "real");
	write_file(other);
	assert_int_equal(stat(other, &st), 0);
	me.inode = st.st_ino;
	assert_int_equal(symlink(other, path), 0);
	assert_int_equal(procmaps__open(getpid(), &me), -ELOOP);
}

/* Not mapped yet (probeset__preregister): the same checks, through /proc/PID/root. */
static void test_in_root_checks_an_unmapped_file(void **state)
{
	char path[PATH_MAX], other[PATH_MAX];
	struct map_entry me = {};
	struct stat st;
	int fd;

	(void)state;
	in_dir(path, sizeof(path), "ahead");
	write_file(path);
	assert_int_equal(stat(path, &st), 0);
	me.inode = st.st_ino;
	me.dev = st.st_dev;
	me.path = path;
	fd = procmaps__open_in_root(getppid(), &me);
	assert_true(fd >= 0);
	close(fd);
	/* Replaced under its name: refused. */
	in_dir(other, sizeof(other), "ahead.new");
	write_file(other);
	assert_int_equal(rename(other, path), 0);
	assert_int_equal(procmaps__open_in_root(getppid(), &me), -ESTALE);
	/* A symlink to the right file: not followed. */
	in_dir(other, sizeof(other), "ahead.real");
	write_file(other);
	assert_int_equal(stat(other, &st), 0);
	me.inode = st.st_ino;
	assert_int_equal(unlink(path), 0);
	assert_int_equal(symlink(other, path), 0);
	assert_int_equal(procmaps__open_in_root(getppid(), &me), -ELOOP);
	/* No absolute path: nothing is opened. */
	me.path = "ahead.real";
	assert_int_equal(procmaps__open_in_root(getppid(), &me), -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_regular_file_opens),
		cmocka_unit_test(test_fifo_refused_without_blocking),
		cmocka_unit_test(test_symlink_followed_only_when_asked),
		cmocka_unit_test(test_mapping_opens_the_mapped_inode),
		cmocka_unit_test(test_name_must_be_the_mapped_file),
		cmocka_unit_test(test_in_root_checks_an_unmapped_file),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
