// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The daemon's capability check: which sets are enough, and what it says of the rest. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "daemon/caps.h"

#define C(n) (1ull << (n))
enum { DAC_OVERRIDE = 1, DAC_READ_SEARCH = 2, SYS_PTRACE = 19, SYS_ADMIN = 21, PERFMON = 38,
       BPF = 39, CHECKPOINT_RESTORE = 40 };
/* deploy/daemonset.yaml's set. */
#define MANIFEST (C(BPF) | C(PERFMON) | C(SYS_PTRACE) | C(CHECKPOINT_RESTORE) | C(DAC_READ_SEARCH))

static void test_enough(void **state)
{
	char buf[512];

	(void)state;
	assert_int_equal(daemon_caps__missing(MANIFEST, buf, sizeof(buf)), 0);
	assert_string_equal(buf, "");
	daemon_caps__degraded(MANIFEST, buf, sizeof(buf));
	assert_string_equal(buf, "");
	/* CAP_SYS_ADMIN stands for CAP_BPF, CAP_PERFMON and CAP_CHECKPOINT_RESTORE (older kernels). */
	assert_int_equal(daemon_caps__missing(C(SYS_ADMIN) | C(SYS_PTRACE), buf, sizeof(buf)), 0);
	daemon_caps__degraded(C(SYS_ADMIN) | C(SYS_PTRACE) | C(DAC_OVERRIDE), buf, sizeof(buf));
	assert_string_equal(buf, "");
	assert_int_equal(daemon_caps__missing(~0ull, buf, sizeof(buf)), 0);
}

static void test_missing_each(void **state)
{
	static const struct { int cap; const char *name; } need[] = {
		{ BPF, "CAP_BPF" }, { PERFMON, "CAP_PERFMON" }, { SYS_PTRACE, "CAP_SYS_PTRACE" },
	};
	char buf[512];

	(void)state;
	for (size_t i = 0; i < sizeof(need) / sizeof(need[0]); i++) {
		assert_int_equal(daemon_caps__missing(MANIFEST & ~C(need[i].cap), buf, sizeof(buf)),
				 -EPERM);
		assert_non_null(strstr(buf, need[i].name));
		/* Only the one missing is named. */
		assert_null(strchr(buf, ','));
	}
	assert_int_equal(daemon_caps__missing(0, buf, sizeof(buf)), -EPERM);
	assert_non_null(strstr(buf, "CAP_BPF"));
	assert_non_null(strstr(buf, "CAP_SYS_PTRACE"));
}

static void test_degraded(void **state)
{
	char buf[512];

	(void)state;
	daemon_caps__degraded(MANIFEST & ~C(CHECKPOINT_RESTORE), buf, sizeof(buf));
	assert_non_null(strstr(buf, "CAP_CHECKPOINT_RESTORE"));
	assert_null(strstr(buf, "CAP_DAC_READ_SEARCH"));
	daemon_caps__degraded(MANIFEST & ~C(DAC_READ_SEARCH), buf, sizeof(buf));
	assert_non_null(strstr(buf, "CAP_DAC_READ_SEARCH"));
	assert_null(strstr(buf, "CAP_CHECKPOINT_RESTORE"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_enough),
		cmocka_unit_test(test_missing_each),
		cmocka_unit_test(test_degraded),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
