// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The cache of launch files by program (launch_files.h): what is saved loads
 * back; only pairs whose program and file are still there are saved; lines
 * that are not the format are left out and counted; a file or folder that
 * another user may write is not read; a symlink is not followed.
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
#include <sys/stat.h>
#include <cmocka.h>
#include "core/probes/launch_files.h"

static char dir[] = "/tmp/cuprobe-launch-files.XXXXXX";
static char cache[PATH_MAX], prog[PATH_MAX], lib[PATH_MAX];
static struct stat prog_st, lib_st;

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(cache, sizeof(cache), "%s/c/launch-files", dir);
	snprintf(prog, sizeof(prog), "%s/prog", dir);
	snprintf(lib, sizeof(lib), "%s/libx.so", dir);
	write_file(prog, "p");
	write_file(lib, "l");
	if (stat(prog, &prog_st) || stat(lib, &lib_st))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd);
}

static struct launch_file pair(const char *exe, const struct stat *es, const char *path,
			       const struct stat *fs)
{
	return (struct launch_file){ .exe = (char *)exe, .exe_dev = es->st_dev,
				     .exe_ino = es->st_ino, .path = (char *)path,
				     .dev = fs->st_dev, .ino = fs->st_ino, .learned = true };
}

static void test_saved_pairs_load_back(void **state)
{
	struct launch_files *a = launch_files__new(), *b = launch_files__new();
	struct launch_file p = pair(prog, &prog_st, lib, &lib_st);
	char why[512];
	struct stat st;
	size_t bad;

	(void)state;
	assert_int_equal(launch_files__add(a, &p), 0);
	assert_int_equal(launch_files__add(a, &p), 0);
	assert_int_equal(launch_files__count(a), 1);
	assert_int_equal(launch_files__learned(a), 1);
	assert_int_equal(launch_files__save(a, cache, why, sizeof(why)), 0);
	/* Root's only: the file 0600, the folder made 0700. */
	assert_int_equal(stat(cache, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(launch_files__load(b, cache, &bad, why, sizeof(why)), 1);
	assert_int_equal(bad, 0);
	assert_int_equal(launch_files__learned(b), 0);
	assert_string_equal(launch_files__at(b, 0)->path, lib);
	assert_string_equal(launch_files__at(b, 0)->exe, prog);
	assert_true(launch_files__at(b, 0)->ino == (uint64_t)lib_st.st_ino);
	assert_true(launch_files__at(b, 0)->exe_ino == (uint64_t)prog_st.st_ino);
	launch_files__free(a);
	launch_files__free(b);
}

static void test_gone_or_replaced_pairs_are_not_saved(void **state)
{
	struct launch_files *a = launch_files__new(), *b = launch_files__new();
	struct launch_file p = pair(prog, &prog_st, lib, &lib_st), q;
	char other[PATH_MAX], spaced[PATH_MAX], held1[PATH_MAX], held2[PATH_MAX], why[512];
	struct stat st, h1, h2;
	size_t bad;

	(void)state;
	snprintf(other, sizeof(other), "%s/libgone.so", dir);
	snprintf(spaced, sizeof(spaced), "%s/lib y.so", dir);
	/*
	 * The made-up inodes are those of two files kept for the test, so that
	 * no other file of it has them (a guess such as lib's + 1 was sometimes
	 * the inode the next file got, and its pair was taken for a duplicate).
	 */
	snprintf(held1, sizeof(held1), "%s/held1", dir);
	snprintf(held2, sizeof(held2), "%s/held2", dir);
	write_file(spaced, "y");
	write_file(held1, "1");
	write_file(held2, "2");
	assert_int_equal(stat(spaced, &st), 0);
	assert_int_equal(stat(held1, &h1), 0);
	assert_int_equal(stat(held2, &h2), 0);
	q = p;
	q.path = other; /* no such file */
	q.ino = h1.st_ino;
	assert_int_equal(launch_files__add(a, &q), 0);
	q = pair(prog, &prog_st, lib, &lib_st);
	q.ino = h2.st_ino; /* the path is another file now */
	assert_int_equal(launch_files__add(a, &q), 0);
	q = pair(prog, &prog_st, spaced, &st); /* a name the format cannot hold */
	assert_int_equal(launch_files__add(a, &q), 0);
	assert_int_equal(launch_files__add(a, &p), 0);
	assert_int_equal(launch_files__count(a), 4);
	assert_int_equal(launch_files__save(a, cache, why, sizeof(why)), 0);
	assert_int_equal(launch_files__load(b, cache, &bad, why, sizeof(why)), 1);
	assert_string_equal(launch_files__at(b, 0)->path, lib);
	launch_files__free(a);
	launch_files__free(b);
}

static void test_bad_lines_are_left_out_and_counted(void **state)
{
	struct launch_files *b = launch_files__new();
	char text[4 * PATH_MAX], why[512];
	size_t bad;

	(void)state;
	mkdir(dir, 0700);
	snprintf(text, sizeof(text),
		 "# a comment\n"
		 "1 %lu %lu %lu %lu %s %s\n"
		 "2 1 2 3 4 /a /b\n"		/* another format */
		 "1 1 2 3 4 relative /b\n"	/* not a path */
		 "1 1 2\n"			/* short */
		 "garbage\n",
		 (unsigned long)prog_st.st_dev, (unsigned long)prog_st.st_ino,
		 (unsigned long)lib_st.st_dev, (unsigned long)lib_st.st_ino, prog, lib);
	write_file(cache, text);
	chmod(cache, 0600);
	assert_int_equal(launch_files__load(b, cache, &bad, why, sizeof(why)), 1);
	assert_int_equal(bad, 4);
	launch_files__free(b);
}

static void test_a_file_others_may_write_is_not_read(void **state)
{
	struct launch_files *b = launch_files__new();
	char why[512];
	size_t bad;

	(void)state;
	write_file(cache, "# nothing\n");
	chmod(cache, 0620);
	assert_int_equal(launch_files__load(b, cache, &bad, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "may be written by another user: not used"));
	assert_non_null(strstr(why, "CUPROBE_CACHE=off"));
	chmod(cache, 0600);
	assert_int_equal(launch_files__load(b, cache, &bad, why, sizeof(why)), 0);
	launch_files__free(b);
}

static void test_a_folder_others_may_write_is_not_used(void **state)
{
	struct launch_files *a = launch_files__new(), *b = launch_files__new();
	struct launch_file p = pair(prog, &prog_st, lib, &lib_st);
	char folder[PATH_MAX], path[PATH_MAX + 16], why[512];
	size_t bad;

	(void)state;
	snprintf(folder, sizeof(folder), "%s/open", dir);
	snprintf(path, sizeof(path), "%s/launch-files", folder);
	assert_int_equal(mkdir(folder, 0700), 0);
	assert_int_equal(chmod(folder, 0777), 0);
	assert_int_equal(launch_files__add(a, &p), 0);
	assert_int_equal(launch_files__save(a, path, why, sizeof(why)), -EPERM);
	assert_int_equal(access(path, F_OK), -1);
	write_file(path, "# planted\n");
	chmod(path, 0600);
	assert_int_equal(launch_files__load(b, path, &bad, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, folder));
	launch_files__free(a);
	launch_files__free(b);
}

static void test_a_symlink_is_not_followed(void **state)
{
	struct launch_files *b = launch_files__new();
	char path[PATH_MAX], why[512];
	size_t bad;

	(void)state;
	snprintf(path, sizeof(path), "%s/c/link", dir);
	assert_int_equal(symlink(cache, path), 0);
	assert_true(launch_files__load(b, path, &bad, why, sizeof(why)) < 0);
	assert_non_null(strstr(why, "symlink"));
	launch_files__free(b);
}

static void test_missing_file_loads_nothing(void **state)
{
	struct launch_files *b = launch_files__new();
	char path[PATH_MAX], why[512];
	size_t bad;

	(void)state;
	snprintf(path, sizeof(path), "%s/none/launch-files", dir);
	assert_int_equal(launch_files__load(b, path, &bad, why, sizeof(why)), 0);
	assert_int_equal(launch_files__count(b), 0);
	launch_files__free(b);
}

static void test_at_most_max_pairs(void **state)
{
	struct launch_files *a = launch_files__new();
	struct launch_file p = pair(prog, &prog_st, lib, &lib_st);

	(void)state;
	for (int i = 0; i < LAUNCH_FILES_MAX + 10; i++) {
		p.ino = 1000 + i;
		assert_int_equal(launch_files__add(a, &p), 0);
	}
	assert_int_equal(launch_files__count(a), LAUNCH_FILES_MAX);
	launch_files__free(a);
}

static void test_full_of_loaded_a_learned_pair_takes_the_oldest_place(void **state)
{
	struct launch_files *a = launch_files__new();
	struct launch_file p = pair(prog, &prog_st, lib, &lib_st);
	size_t last = LAUNCH_FILES_MAX - 1;

	(void)state;
	p.learned = false;
	for (int i = 0; i < LAUNCH_FILES_MAX; i++) {
		p.ino = 1000 + i;
		assert_int_equal(launch_files__add(a, &p), 0);
	}
	p.ino = 5000;
	p.learned = true;
	assert_int_equal(launch_files__add(a, &p), 0);
	assert_int_equal(launch_files__count(a), LAUNCH_FILES_MAX);
	assert_int_equal(launch_files__learned(a), 1);
	assert_true(launch_files__at(a, last)->ino == 5000 && launch_files__at(a, last)->learned);
	assert_true(launch_files__at(a, last - 1)->ino == 1000 + last - 1);
	/* The next one learned takes the place of the last loaded one left. */
	p.ino = 5001;
	assert_int_equal(launch_files__add(a, &p), 0);
	assert_true(launch_files__at(a, last - 1)->ino == 5001);
	launch_files__free(a);
}

static void test_cache_path_from_the_environment(void **state)
{
	(void)state;
	unsetenv("CUPROBE_CACHE");
	assert_string_equal(launch_files__cache_path(), LAUNCH_FILES_CACHE);
	setenv("CUPROBE_CACHE", "off", 1);
	assert_null(launch_files__cache_path());
	setenv("CUPROBE_CACHE", "", 1);
	assert_null(launch_files__cache_path());
	setenv("CUPROBE_CACHE", "/x/y", 1);
	assert_string_equal(launch_files__cache_path(), "/x/y");
}

static void test_exe_of_this_process(void **state)
{
	char name[PATH_MAX];
	uint64_t dev, ino;
	struct stat st;

	(void)state;
	assert_int_equal(launch_files__exe_of(getpid(), &dev, &ino, name, sizeof(name)), 0);
	assert_int_equal(stat(name, &st), 0);
	assert_true(st.st_ino == ino && st.st_dev == dev);
	assert_int_equal(launch_files__exe_of(0x7ffffff0, &dev, &ino, name, sizeof(name)), -ESRCH);
	/* Without a name: the identity alone. */
	dev = ino = 0;
	assert_int_equal(launch_files__exe_of(getpid(), &dev, &ino, NULL, 0), 0);
	assert_true(st.st_ino == ino && st.st_dev == dev);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_saved_pairs_load_back),
		cmocka_unit_test(test_gone_or_replaced_pairs_are_not_saved),
		cmocka_unit_test(test_bad_lines_are_left_out_and_counted),
		cmocka_unit_test(test_a_file_others_may_write_is_not_read),
		cmocka_unit_test(test_a_folder_others_may_write_is_not_used),
		cmocka_unit_test(test_a_symlink_is_not_followed),
		cmocka_unit_test(test_missing_file_loads_nothing),
		cmocka_unit_test(test_at_most_max_pairs),
		cmocka_unit_test(test_full_of_loaded_a_learned_pair_takes_the_oldest_place),
		cmocka_unit_test(test_cache_path_from_the_environment),
		cmocka_unit_test(test_exe_of_this_process),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
