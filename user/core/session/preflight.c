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
#include "core/session/preflight.h"
#include "core/session/target.h"
#include "core/steps/step_find.h"
#include "schedule.h"
#include "util/log.h"
#include "util/safe_file.h"

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

void preflight__undo_output(struct out_dir *d)
{
	if (d->path && d->made)
		safe_file__remove_made_dirs(d->path, d->made);
	d->made = 0;
}

int preflight_output(const char *out, struct out_dir *d)
{
	struct dirent *e;
	long next = 0;
	DIR *dir;
	int fd, err;

	memset(d, 0, sizeof(*d));
	d->path = out;
	/* Made with its parents, as torch's trace handler makes them; what is made is undone on failure. */
	fd = safe_file__make_dirs(out, 0755, &d->made);
	err = fd < 0 ? fd : 0;
	if (fd >= 0)
		close(fd);
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
		preflight__undo_output(d);
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

int preflight_agent(char *buf, size_t len)
{
	static const char *const rel[] = { "", ".output/", "../lib/cuprobe/" };
	const char *env = getenv("CUPROBE_AGENT");
	char exe[PATH_MAX], *slash;

	if (env && *env) {
		snprintf(buf, len, "%s", env);
		return access(buf, R_OK) ? -errno : 0;
	}
	if (!realpath("/proc/self/exe", exe) || !(slash = strrchr(exe, '/')))
		return -ENOENT;
	slash[1] = '\0';
	for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
		if (snprintf(buf, len, "%.*s%slibcuprobe-agent.so", (int)(len / 2), exe, rel[i]) <
			    (int)len &&
		    !access(buf, R_OK))
			return 0;
	}
	return -ENOENT;
}

static int check_pids(const pid_t *pids, size_t n)
{
	char msg[256];
	int err;

	for (size_t i = 0; i < n; i++) {
		err = target_check_pid(pids[i], msg, sizeof(msg));
		if (err) {
			p_err("-p: %s", msg);
			return err;
		}
	}
	return 0;
}

int preflight__run(const struct preflight_req *r, struct out_dir *d)
{
	const char *out = r->out;
	int err;

	err = preflight_privileges();
	if (!err)
		err = preflight_btf();
	/* Bad PIDs are said before anything is made on disk. */
	if (!err)
		err = check_pids(r->pids, r->npids);
	if (!err && r->step && r->sched && r->sched->warmup == 0)
		p_warn("warmup=0: launch probes attach only as the first active step begins, so "
		       "its first launches can be missed (torch.profiler warns likewise)");
	if (!err && r->step)
		err = step_spec__check_file(r->step);
	if (!err && r->choose_out)
		err = r->choose_out(r->ctx, &out);
	if (!err)
		err = preflight_output(out, d);
	return err;
}
