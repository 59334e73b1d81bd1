// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Unit tests of the safe file writer (util/safe_file.h), with links, FIFOs,
 * devices and sockets planted where it writes, a writer killed midway and
 * a folder removed under it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "util/safe_file.h"

struct dir_fixture {
	char path[64];
	int fd;
};

static int make_scratch(void **state)
{
	struct dir_fixture *d = calloc(1, sizeof(*d));

	if (!d)
		return -1;
	strcpy(d->path, "/tmp/cuprobe-test-util-XXXXXX");
	if (!mkdtemp(d->path))
		return -1;
	d->fd = open(d->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	*state = d;
	return d->fd < 0 ? -1 : 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

static int remove_scratch(void **state)
{
	struct dir_fixture *d = *state;
	int err;

	close(d->fd);
	err = nftw(d->path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(d);
	return err;
}

/* The entries of the folder, sorted, joined with spaces: "" when empty. */
static char *listing(int dirfd)
{
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dir = fdopendir(fd);
	struct dirent **names = NULL, *de;
	size_t n = 0, len = 0;
	FILE *f;
	char *out = NULL;

	assert_non_null(dir);
	while ((de = readdir(dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		names = realloc(names, (n + 1) * sizeof(*names));
		names[n] = malloc(sizeof(*de));
		memcpy(names[n++], de, sizeof(*de));
	}
	closedir(dir);
	f = open_memstream(&out, &len);
	for (size_t i = 0; i < n; i++) {
		for (size_t j = i + 1; j < n; j++) {
			if (strcmp(names[j]->d_name, names[i]->d_name) < 0) {
				de = names[i];
				names[i] = names[j];
				names[j] = de;
			}
		}
		fprintf(f, "%s%s", i ? " " : "", names[i]->d_name);
		free(names[i]);
	}
	fclose(f);
	free(names);
	return out;
}

static void assert_listing(int dirfd, const char *want)
{
	char *got = listing(dirfd);

	assert_string_equal(got, want);
	free(got);
}

static void put_file(int dirfd, const char *name, const char *text)
{
	int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static void assert_file(int dirfd, const char *name, const char *want)
{
	char buf[256] = "";
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		fail_msg("cannot open %s: %s", name, strerror(errno));
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	assert_true(n >= 0);
	buf[n] = '\0';
	assert_string_equal(buf, want);
}

/* Opens name in the fixture's folder, writes text, publishes; returns publish's result. */
static int write_safely(int dirfd, const char *name, int mode, const char *text)
{
	struct safe_file *sf = safe_file__open(dirfd, name, mode, 0644);
	int err;

	if (!sf)
		return -errno;
	assert_int_equal(write(safe_file__fd(sf), text, strlen(text)), (ssize_t)strlen(text));
	err = safe_file__publish(sf);
	safe_file__free(sf);
	return err;
}

static void test_safe_file_new_appears_only_when_published(void **state)
{
	struct dir_fixture *d = *state;
	struct safe_file *sf = safe_file__open(d->fd, "t.pt.trace.json", SAFE_FILE_NEW, 0640);
	struct stat st;

	assert_non_null(sf);
	assert_int_equal(write(safe_file__fd(sf), "{}\n", 3), 3);
	/* Unnamed while written. */
	assert_listing(d->fd, "");
	assert_int_equal(safe_file__publish(sf), 0);
	assert_listing(d->fd, "t.pt.trace.json");
	assert_int_equal(safe_file__publish(sf), -EINVAL); /* once */
	safe_file__free(sf);
	assert_file(d->fd, "t.pt.trace.json", "{}\n");
	assert_int_equal(fstatat(d->fd, "t.pt.trace.json", &st, 0), 0);
	assert_int_equal(st.st_mode & 0777, 0640); /* less the umask, 022 */
}

static void test_safe_file_new_never_replaces(void **state)
{
	struct dir_fixture *d = *state;

	for (int named = 0; named < 2; named++) {
		int mode = SAFE_FILE_NEW | (named ? SAFE_FILE_NAMED_TMP : 0);

		put_file(d->fd, "taken", "old");
		assert_int_equal(write_safely(d->fd, "taken", mode, "new"), -EEXIST);
		assert_file(d->fd, "taken", "old");
		/* A link planted at the final name is a name taken: never followed. */
		put_file(d->fd, "victim", "secret");
		assert_int_equal(symlinkat("victim", d->fd, "link"), 0);
		assert_int_equal(write_safely(d->fd, "link", mode, "new"), -EEXIST);
		assert_file(d->fd, "victim", "secret");
		/* Nothing else was left. */
		assert_listing(d->fd, "link taken victim");
		assert_int_equal(unlinkat(d->fd, "link", 0), 0);
	}
}

static void test_safe_file_named_temporary(void **state)
{
	struct dir_fixture *d = *state;
	struct safe_file *sf;
	char *names;

	sf = safe_file__open(d->fd, "a.json", SAFE_FILE_NEW | SAFE_FILE_NAMED_TMP, 0644);
	assert_non_null(sf);
	assert_listing(d->fd, ".a.json.tmp");
	safe_file__free(sf);
	/* Freed unpublished: gone. */
	assert_listing(d->fd, "");

	/* A link planted at the first temporary name is not opened: another name is used. */
	put_file(d->fd, "victim", "secret");
	assert_int_equal(symlinkat("victim", d->fd, ".a.json.tmp"), 0);
	sf = safe_file__open(d->fd, "a.json", SAFE_FILE_NEW | SAFE_FILE_NAMED_TMP, 0644);
	assert_non_null(sf);
	names = listing(d->fd);
	assert_int_equal(strncmp(names, ".a.json.", 8), 0);
	assert_non_null(strstr(names, ".tmp .a.json.tmp victim"));
	free(names);
	assert_int_equal(write(safe_file__fd(sf), "new", 3), 3);
	assert_int_equal(safe_file__publish(sf), 0);
	safe_file__free(sf);
	assert_file(d->fd, "victim", "secret");
	assert_file(d->fd, "a.json", "new");
	assert_listing(d->fd, ".a.json.tmp a.json victim");
}

static void test_safe_file_replace_regular(void **state)
{
	struct dir_fixture *d = *state;
	struct stat before, after;

	for (int named = 0; named < 2; named++) {
		int mode = SAFE_FILE_REPLACE | (named ? SAFE_FILE_NAMED_TMP : 0);

		assert_int_equal(write_safely(d->fd, "out.json", mode, "one"), 0);
		assert_file(d->fd, "out.json", "one");
		assert_int_equal(fstatat(d->fd, "out.json", &before, 0), 0);
		assert_int_equal(write_safely(d->fd, "out.json", mode, "two"), 0);
		assert_file(d->fd, "out.json", "two");
		/* Replaced whole (a new file), never rewritten in place. */
		assert_int_equal(fstatat(d->fd, "out.json", &after, 0), 0);
		assert_int_not_equal(before.st_ino, after.st_ino);
		assert_listing(d->fd, "out.json");
		assert_int_equal(unlinkat(d->fd, "out.json", 0), 0);
	}
}

static void test_safe_file_replace_refuses_what_is_not_regular(void **state)
{
	struct dir_fixture *d = *state;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int sock;

	put_file(d->fd, "victim", "secret");
	assert_int_equal(symlinkat("victim", d->fd, "link"), 0);
	assert_int_equal(mkfifoat(d->fd, "fifo", 0600), 0);
	assert_int_equal(mkdirat(d->fd, "folder", 0700), 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/sock", d->path);
	sock = socket(AF_UNIX, SOCK_STREAM, 0);
	assert_int_equal(bind(sock, (struct sockaddr *)&sa, sizeof(sa)), 0);
	for (int named = 0; named < 2; named++) {
		int mode = SAFE_FILE_REPLACE | (named ? SAFE_FILE_NAMED_TMP : 0);

		assert_int_equal(write_safely(d->fd, "link", mode, "x"), -ELOOP);
		assert_int_equal(write_safely(d->fd, "fifo", mode, "x"), -EEXIST);
		assert_int_equal(write_safely(d->fd, "folder", mode, "x"), -EISDIR);
		assert_int_equal(write_safely(d->fd, "sock", mode, "x"), -EEXIST);
	}
	close(sock);
	assert_file(d->fd, "victim", "secret");
	assert_listing(d->fd, "fifo folder link sock victim");
	assert_string_equal(safe_file__kind(S_IFIFO), "a FIFO");
	assert_string_equal(safe_file__kind(S_IFSOCK), "a socket");
	assert_string_equal(safe_file__kind(S_IFLNK), "a symbolic link");
}

static void test_safe_file_replace_refuses_device(void **state)
{
	struct dir_fixture *d = *state;
	struct stat st;

	if (geteuid())
		skip(); /* mknod needs root */
	assert_int_equal(mknodat(d->fd, "null", S_IFCHR | 0666, makedev(1, 3)), 0);
	assert_int_equal(mknodat(d->fd, "blk", S_IFBLK | 0600, makedev(7, 200)), 0);
	assert_int_equal(write_safely(d->fd, "null", SAFE_FILE_REPLACE, "x"), -EEXIST);
	assert_int_equal(write_safely(d->fd, "blk", SAFE_FILE_REPLACE, "x"), -EEXIST);
	assert_int_equal(fstatat(d->fd, "null", &st, AT_SYMLINK_NOFOLLOW), 0);
	assert_true(S_ISCHR(st.st_mode));
	assert_string_equal(safe_file__kind(st.st_mode), "a character device");
	assert_listing(d->fd, "blk null");
}

/* What is at the name is checked again when publishing: a FIFO put there meanwhile stays. */
static void test_safe_file_replace_checks_again_at_publish(void **state)
{
	struct dir_fixture *d = *state;

	for (int named = 0; named < 2; named++) {
		int mode = SAFE_FILE_REPLACE | (named ? SAFE_FILE_NAMED_TMP : 0);
		struct safe_file *sf = safe_file__open(d->fd, "out", mode, 0644);

		assert_non_null(sf);
		assert_int_equal(mkfifoat(d->fd, "out", 0600), 0);
		assert_int_equal(safe_file__publish(sf), -EEXIST);
		safe_file__free(sf);
		assert_listing(d->fd, "out");
		assert_int_equal(unlinkat(d->fd, "out", 0), 0);
	}
}

/* Replace mode names the file by a temporary first: a link planted there is not followed. */
static void test_safe_file_replace_ignores_planted_temporary(void **state)
{
	struct dir_fixture *d = *state;

	put_file(d->fd, "victim", "secret");
	assert_int_equal(symlinkat("victim", d->fd, ".out.json.tmp"), 0);
	assert_int_equal(symlinkat("victim", d->fd, "out.json.tmp"), 0);
	for (int named = 0; named < 2; named++) {
		int mode = SAFE_FILE_REPLACE | (named ? SAFE_FILE_NAMED_TMP : 0);

		assert_int_equal(write_safely(d->fd, "out.json", mode, named ? "b" : "a"), 0);
		assert_file(d->fd, "out.json", named ? "b" : "a");
		assert_file(d->fd, "victim", "secret");
		assert_listing(d->fd, ".out.json.tmp out.json out.json.tmp victim");
	}
}

static void test_safe_file_killed_writer_leaves_nothing(void **state)
{
	struct dir_fixture *d = *state;
	int status;
	pid_t pid;

	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		struct safe_file *sf = safe_file__open(d->fd, "t.pt.trace.json", SAFE_FILE_NEW, 0644);

		if (!sf || write(safe_file__fd(sf), "{\"traceEvents\": [", 17) != 17)
			_exit(1);
		raise(SIGKILL);
		_exit(2);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGKILL);
	assert_listing(d->fd, "");
}

static void test_safe_file_publish_into_removed_folder(void **state)
{
	struct dir_fixture *d = *state;
	struct safe_file *sf;
	int sub;

	assert_int_equal(mkdirat(d->fd, "gone", 0755), 0);
	sub = openat(d->fd, "gone", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	sf = safe_file__open(sub, "t.json", SAFE_FILE_NEW, 0644);
	assert_non_null(sf);
	assert_int_equal(unlinkat(d->fd, "gone", AT_REMOVEDIR), 0);
	assert_int_equal(safe_file__publish(sf), -ENOENT);
	safe_file__free(sf);
	close(sub);
	/* Bad names are refused. */
	assert_null(safe_file__open(d->fd, "a/b", SAFE_FILE_NEW, 0644));
	assert_int_equal(errno, EINVAL);
	assert_null(safe_file__open(d->fd, "..", SAFE_FILE_REPLACE, 0644));
	assert_int_equal(errno, EINVAL);
}

static void test_safe_file_open_path(void **state)
{
	struct dir_fixture *d = *state;
	char path[PATH_MAX];
	struct safe_file *sf;

	snprintf(path, sizeof(path), "%s/r.txt", d->path);
	sf = safe_file__open_path(path, SAFE_FILE_REPLACE, 0644);
	assert_non_null(sf);
	assert_int_equal(safe_file__publish(sf), 0);
	safe_file__free(sf);
	assert_listing(d->fd, "r.txt");
	snprintf(path, sizeof(path), "%s/missing/r.txt", d->path);
	assert_null(safe_file__open_path(path, SAFE_FILE_REPLACE, 0644));
	assert_int_equal(errno, ENOENT);
}

/* A bare name is one in the current folder, as `report -o report.json` gives it. */
static void test_safe_file_open_path_bare_name(void **state)
{
	struct dir_fixture *d = *state;
	char cwd[PATH_MAX];
	struct safe_file *sf;

	assert_non_null(getcwd(cwd, sizeof(cwd)));
	assert_int_equal(chdir(d->path), 0);
	sf = safe_file__open_path("bare.json", SAFE_FILE_REPLACE, 0644);
	assert_non_null(sf);
	assert_int_equal(safe_file__publish(sf), 0);
	safe_file__free(sf);
	assert_int_equal(chdir(cwd), 0);
	assert_listing(d->fd, "bare.json");
}

static void test_safe_file_make_dirs(void **state)
{
	struct dir_fixture *d = *state;
	char path[PATH_MAX], long_name[300];
	unsigned int made;
	struct stat st;
	int fd;

	assert_int_equal(mkdirat(d->fd, "a", 0755), 0);
	snprintf(path, sizeof(path), "%s/a/./b//c/", d->path);
	fd = safe_file__make_dirs(path, 0755, &made);
	assert_true(fd >= 0);
	assert_int_equal(made, 2);
	assert_int_equal(fstat(fd, &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	close(fd);
	/* Already there: nothing made. */
	fd = safe_file__make_dirs(path, 0755, &made);
	assert_true(fd >= 0);
	assert_int_equal(made, 0);
	close(fd);
	/* A folder with something in it stays. */
	put_file(d->fd, "a/b/c/keep", "x");
	assert_int_equal(safe_file__remove_made_dirs(path, 2), -ENOTEMPTY);
	assert_int_equal(unlinkat(d->fd, "a/b/c/keep", 0), 0);
	assert_int_equal(safe_file__remove_made_dirs(path, 2), 0);
	assert_listing(d->fd, "a");
	assert_int_equal(fstatat(d->fd, "a/b", &st, 0), -1);

	/* A failure after making some: what was made goes again. */
	memset(long_name, 'n', sizeof(long_name) - 1);
	long_name[sizeof(long_name) - 1] = '\0';
	snprintf(path, sizeof(path), "%s/a/new/%s/x", d->path, long_name);
	assert_int_equal(safe_file__make_dirs(path, 0755, &made), -ENAMETOOLONG);
	assert_int_equal(made, 0);
	assert_int_equal(fstatat(d->fd, "a/new", &st, 0), -1);
	/* A file in the way. */
	put_file(d->fd, "a/file", "x");
	snprintf(path, sizeof(path), "%s/a/file/x", d->path);
	assert_int_equal(safe_file__make_dirs(path, 0755, &made), -ENOTDIR);
}

static void test_safe_file_child_dir(void **state)
{
	struct dir_fixture *d = *state;
	bool created;
	int fd;

	fd = safe_file__child_dir(d->fd, "run_0", 0755, &created);
	assert_true(fd >= 0);
	assert_true(created);
	close(fd);
	fd = safe_file__child_dir(d->fd, "run_0", 0755, &created);
	assert_true(fd >= 0);
	assert_false(created);
	close(fd);
	/* A link to a folder, planted where a run folder goes. */
	assert_int_equal(mkdirat(d->fd, "elsewhere", 0755), 0);
	assert_int_equal(symlinkat("elsewhere", d->fd, "run_1"), 0);
	assert_int_equal(safe_file__child_dir(d->fd, "run_1", 0755, &created), -ELOOP);
	assert_false(created);
	put_file(d->fd, "run_2", "x");
	assert_int_equal(safe_file__child_dir(d->fd, "run_2", 0755, &created), -ENOTDIR);
	assert_int_equal(safe_file__child_dir(d->fd, "../x", 0755, &created), -EINVAL);
	if (geteuid())
		return; /* chown needs root */
	/* A folder another user made first. */
	assert_int_equal(mkdirat(d->fd, "run_3", 0777), 0);
	assert_int_equal(fchownat(d->fd, "run_3", 12345, 12345, 0), 0);
	assert_int_equal(safe_file__child_dir(d->fd, "run_3", 0755, &created), -EPERM);
	assert_false(created);
}

/* opens d/name as trusted; the descriptor is closed; why is kept in the caller's buffer. */
static int trusted(struct dir_fixture *d, const char *name, bool secret, char *why, size_t len)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", d->path, name);
	fd = safe_file__open_trusted(path, secret, why, len);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

/* What is read and obeyed is a regular file only its owner, root or us, may write. */
static void test_safe_file_open_trusted(void **state)
{
	struct dir_fixture *d = *state;
	char why[512];

	put_file(d->fd, "conf", "x");
	assert_int_equal(fchmodat(d->fd, "conf", 0644, 0), 0);
	assert_int_equal(trusted(d, "conf", false, why, sizeof(why)), 0);
	/* A secret, as ssh's keys: no bit for group or others. */
	assert_int_equal(trusted(d, "conf", true, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "other users may read it (mode 0644)"));
	assert_non_null(strstr(why, "chmod 600"));
	assert_int_equal(fchmodat(d->fd, "conf", 0640, 0), 0);
	assert_int_equal(trusted(d, "conf", true, why, sizeof(why)), -EPERM);
	assert_int_equal(fchmodat(d->fd, "conf", 0600, 0), 0);
	assert_int_equal(trusted(d, "conf", true, why, sizeof(why)), 0);
	assert_int_equal(fchmodat(d->fd, "conf", 0666, 0), 0);
	assert_int_equal(trusted(d, "conf", false, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "other users may write it (mode 0666): chmod go-w"));
	assert_int_equal(fchmodat(d->fd, "conf", 0620, 0), 0);
	assert_int_equal(trusted(d, "conf", false, why, sizeof(why)), -EPERM);
	/* A link is followed, and its target is what is checked. */
	assert_int_equal(fchmodat(d->fd, "conf", 0644, 0), 0);
	assert_int_equal(symlinkat("conf", d->fd, "link"), 0);
	assert_int_equal(trusted(d, "link", false, why, sizeof(why)), 0);
	assert_int_equal(trusted(d, "missing", false, why, sizeof(why)), -ENOENT);
	assert_int_equal(mkdirat(d->fd, "sub", 0755), 0);
	assert_int_equal(trusted(d, "sub", false, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "it is a folder: give a regular file"));
	assert_int_equal(safe_file__open_trusted("/", false, why, sizeof(why)), -EINVAL);
}

/* A FIFO is refused at once: the open does not wait for a writer. */
static void test_safe_file_open_trusted_fifo(void **state)
{
	struct dir_fixture *d = *state;
	char why[512];

	assert_int_equal(mkfifoat(d->fd, "fifo", 0600), 0);
	alarm(5); /* a blocked open fails the test rather than hanging it */
	assert_int_equal(trusted(d, "fifo", true, why, sizeof(why)), -EINVAL);
	alarm(0);
	assert_non_null(strstr(why, "it is a FIFO: give a regular file"));
	if (geteuid())
		return; /* mknod needs root */
	assert_int_equal(mknodat(d->fd, "null", S_IFCHR | 0600, makedev(1, 3)), 0);
	assert_int_equal(trusted(d, "null", false, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "it is a character device"));
}

/* Every folder on the real path: others may write none of them, unless it is sticky. */
static void test_safe_file_open_trusted_folders(void **state)
{
	struct dir_fixture *d = *state;
	char why[512];

	assert_int_equal(mkdirat(d->fd, "open", 0755), 0);
	put_file(d->fd, "open/conf", "x");
	assert_int_equal(fchmodat(d->fd, "open", 0777, 0), 0);
	assert_int_equal(trusted(d, "open/conf", false, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "/open may be written by another user"));
	assert_non_null(strstr(why, "mode 0777"));
	/* Through a link from a safe folder, the real one is still checked. */
	assert_int_equal(symlinkat("open/conf", d->fd, "via"), 0);
	assert_int_equal(trusted(d, "via", false, why, sizeof(why)), -EPERM);
	assert_int_equal(fchmodat(d->fd, "open", 01777, 0), 0);
	assert_int_equal(trusted(d, "open/conf", false, why, sizeof(why)), 0);
	assert_int_equal(fchmodat(d->fd, "open", 0775, 0), 0);
	assert_int_equal(trusted(d, "open/conf", false, why, sizeof(why)), -EPERM);
	assert_int_equal(fchmodat(d->fd, "open", 0755, 0), 0);
	assert_int_equal(trusted(d, "open/conf", false, why, sizeof(why)), 0);
}

/* Another user's file, or one in another user's folder, is refused (chown needs root). */
static void test_safe_file_open_trusted_owner(void **state)
{
	struct dir_fixture *d = *state;
	char why[512];

	if (geteuid())
		skip();
	put_file(d->fd, "conf", "x");
	assert_int_equal(fchmodat(d->fd, "conf", 0600, 0), 0);
	assert_int_equal(fchownat(d->fd, "conf", 65534, 65534, 0), 0);
	assert_int_equal(trusted(d, "conf", false, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "owned by uid 65534"));
	assert_non_null(strstr(why, "chown"));
	assert_int_equal(mkdirat(d->fd, "theirs", 0755), 0);
	put_file(d->fd, "theirs/conf", "x");
	assert_int_equal(trusted(d, "theirs/conf", false, why, sizeof(why)), 0);
	assert_int_equal(fchownat(d->fd, "theirs", 65534, 65534, 0), 0);
	assert_int_equal(trusted(d, "theirs/conf", false, why, sizeof(why)), -EPERM);
	assert_non_null(strstr(why, "/theirs may be written by another user (owner uid 65534"));
}

#define SCRATCH(test) cmocka_unit_test_setup_teardown(test, make_scratch, remove_scratch)

int main(void)
{
	const struct CMUnitTest tests[] = {
		SCRATCH(test_safe_file_new_appears_only_when_published),
		SCRATCH(test_safe_file_new_never_replaces),
		SCRATCH(test_safe_file_named_temporary),
		SCRATCH(test_safe_file_replace_regular),
		SCRATCH(test_safe_file_replace_refuses_what_is_not_regular),
		SCRATCH(test_safe_file_replace_refuses_device),
		SCRATCH(test_safe_file_replace_checks_again_at_publish),
		SCRATCH(test_safe_file_replace_ignores_planted_temporary),
		SCRATCH(test_safe_file_killed_writer_leaves_nothing),
		SCRATCH(test_safe_file_publish_into_removed_folder),
		SCRATCH(test_safe_file_open_path),
		SCRATCH(test_safe_file_open_path_bare_name),
		SCRATCH(test_safe_file_make_dirs),
		SCRATCH(test_safe_file_child_dir),
		SCRATCH(test_safe_file_open_trusted),
		SCRATCH(test_safe_file_open_trusted_fifo),
		SCRATCH(test_safe_file_open_trusted_folders),
		SCRATCH(test_safe_file_open_trusted_owner),
	};

	/* Permissions below are checked against this umask. */
	umask(022);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
