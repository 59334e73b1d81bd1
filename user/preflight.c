// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
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

/* mkdir -p: the output folder's parents are made as torch's trace handler makes them. */
static int mkdir_p(const char *dir)
{
	char buf[PATH_MAX];
	size_t len = strlen(dir);

	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, dir, len + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0755) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

int preflight_output(const char *out, long *run_base)
{
	char probe[PATH_MAX];
	struct dirent *d;
	long next = 0;
	DIR *dir;
	int fd, err;

	err = mkdir_p(out);
	if (err) {
		p_err("cannot create output folder %s: %s; choose another with -o", out, strerror(-err));
		return err;
	}
	snprintf(probe, sizeof(probe), "%s/.cuprobe-write-test.XXXXXX", out);
	fd = mkstemp(probe);
	if (fd < 0) {
		p_err("cannot write in output folder %s: %s; choose another with -o", out,
		      strerror(errno));
		return -errno;
	}
	close(fd);
	unlink(probe);
	dir = opendir(out);
	if (!dir)
		return -errno;
	while ((d = readdir(dir))) {
		char *end;
		long k;

		if (strncmp(d->d_name, "run_", 4))
			continue;
		k = strtol(d->d_name + 4, &end, 10);
		if (!*end && k >= next)
			next = k + 1;
	}
	closedir(dir);
	*run_base = next;
	return 0;
}
