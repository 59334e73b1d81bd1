// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include "log.h"
#include "preflight.h"

static bool has_cap(const struct __user_cap_data_struct *d, int cap)
{
	return d[cap / 32].effective & (1u << (cap % 32));
}

int preflight_privileges(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {};

	/* CAP_BPF (39) and CAP_PERFMON (38) exist since Linux 5.8. */
	if (!syscall(SYS_capget, &h, d) &&
	    (has_cap(d, CAP_SYS_ADMIN) || (has_cap(d, 39) && has_cap(d, 38))))
		return 0;
	p_err("not enough privilege to load BPF programs: run as root (sudo cuprobe ...) "
	      "or grant CAP_BPF and CAP_PERFMON");
	return -EPERM;
}

int preflight_btf(void)
{
	const char *btf = "/sys/kernel/btf/vmlinux";

	if (!access(btf, R_OK))
		return 0;
	p_err("%s is missing: this kernel has no BTF; use a kernel built with "
	      "CONFIG_DEBUG_INFO_BTF=y (5.8 or later)", btf);
	return -ENOENT;
}

/* mkdir -p, remembering what it made: the output folder's parents are made as torch's trace handler makes them. */
static int mkdir_p(const char *dir, struct out_dir *d)
{
	char buf[PATH_MAX];
	size_t len = strlen(dir);
	char *p = buf + 1;

	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, dir, len + 1);
	for (;; p++) {
		bool last = !*p;

		if (*p && *p != '/')
			continue;
		*p = '\0';
		if (!mkdir(buf, 0755)) {
			if (d->nmade < (int)(sizeof(d->made) / sizeof(d->made[0])))
				snprintf(d->made[d->nmade++], sizeof(d->made[0]), "%s", buf);
		} else if (errno != EEXIST) {
			return -errno;
		}
		if (last)
			return 0;
		*p = '/';
	}
}

void out_dir__undo(struct out_dir *d)
{
	while (d->nmade > 0)
		rmdir(d->made[--d->nmade]); /* fails, as it should, on a folder with anything in it */
}

int preflight_output(const char *out, struct out_dir *d)
{
	struct dirent *e;
	long next = 0;
	DIR *dir;
	int fd, err;

	memset(d, 0, sizeof(*d));
	err = mkdir_p(out, d);
	if (err) {
		p_err("cannot create output folder %s: %s; choose another with -o", out, strerror(-err));
		return err;
	}
	/* An unnamed file: the check leaves nothing behind, even if cuprobe is killed. */
	fd = open(out, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR)) {
		char probe[PATH_MAX];

		snprintf(probe, sizeof(probe), "%s/.cuprobe-write-test.XXXXXX", out);
		fd = mkstemp(probe);
		if (fd >= 0)
			unlink(probe);
	}
	if (fd < 0) {
		err = -errno;
		p_err("cannot write in output folder %s: %s; choose another with -o", out,
		      strerror(-err));
		out_dir__undo(d);
		return err;
	}
	close(fd);
	dir = opendir(out);
	if (!dir)
		return -errno;
	while ((e = readdir(dir))) {
		char *end;
		long k;

		if (strncmp(e->d_name, "run_", 4))
			continue;
		k = strtol(e->d_name + 4, &end, 10);
		if (!*end && k >= next)
			next = k + 1;
	}
	closedir(dir);
	d->run_base = next;
	return 0;
}
