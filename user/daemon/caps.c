// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The daemon's capabilities, checked at start: a container given too few is said at once. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include "daemon/caps.h"

/* Not in every linux/capability.h this builds against (Linux 5.8 and 5.9). */
enum { C_DAC_OVERRIDE = 1, C_DAC_READ_SEARCH = 2, C_SYS_PTRACE = 19, C_SYS_ADMIN = 21,
       C_PERFMON = 38, C_BPF = 39, C_CHECKPOINT_RESTORE = 40 };

static bool has(uint64_t eff, int cap)
{
	return eff & (1ull << cap);
}

static void add(char *buf, size_t len, const char *what)
{
	size_t n = strlen(buf);

	snprintf(buf + n, len - n, "%s%s", n ? ", " : "", what);
}

int daemon_caps__missing(uint64_t eff, char *buf, size_t len)
{
	bool admin = has(eff, C_SYS_ADMIN);

	buf[0] = '\0';
	if (!admin && !has(eff, C_BPF))
		add(buf, len, "CAP_BPF (to load its BPF programs)");
	if (!admin && !has(eff, C_PERFMON))
		add(buf, len, "CAP_PERFMON (to attach uprobes)");
	if (!has(eff, C_SYS_PTRACE))
		add(buf, len, "CAP_SYS_PTRACE (to read other processes' memory and their files "
			      "under /proc/PID/root)");
	return buf[0] ? -EPERM : 0;
}

void daemon_caps__degraded(uint64_t eff, char *buf, size_t len)
{
	buf[0] = '\0';
	if (!has(eff, C_SYS_ADMIN) && !has(eff, C_CHECKPOINT_RESTORE))
		add(buf, len, "CAP_CHECKPOINT_RESTORE (/proc/PID/map_files: libraries deleted "
			      "since they were mapped)");
	if (!has(eff, C_DAC_OVERRIDE) && !has(eff, C_DAC_READ_SEARCH))
		add(buf, len, "CAP_DAC_READ_SEARCH (/proc/PID/map_files of other users' processes)");
}

int daemon_caps__effective(uint64_t *eff)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {};

	if (syscall(SYS_capget, &h, d))
		return -errno;
	*eff = (uint64_t)d[1].effective << 32 | d[0].effective;
	return 0;
}
