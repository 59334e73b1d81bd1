# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# Targets for the tests of bringing the agent into a running process
# (tests/e2e/test_inject.sh): regcheck checks its registers across every
# sleep, built dynamically and statically (no libc mapped, no dlopen).
# Included by the top Makefile, which provides OUTPUT, CC, CUDA_HOME, Q and msg; built
# with the workloads.

INJ_DIR     := $(OUTPUT)/inject_tests
INJECT_BINS := $(INJ_DIR)/regcheck $(INJ_DIR)/regcheck_static
INJ_CFLAGS  := -std=gnu11 -O1 -g -Wall -Wextra -Werror

# It maps libcudart (without calling it), as cuprobe brings the agent only into a
# process that maps a CUDA library.
$(INJ_DIR)/regcheck: tests/inject/regcheck.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(INJ_CFLAGS) $< -o $@ -L$(CUDA_HOME)/lib64 -Wl,--no-as-needed -lcudart \
		-Wl,--as-needed -Wl,-rpath,$(CUDA_HOME)/lib64

$(INJ_DIR)/regcheck_static: tests/inject/regcheck.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(INJ_CFLAGS) -static $< -o $@

# regcheck is x86_64 code; elsewhere test_inject.sh checks that cuprobe says so.
ifeq ($(shell uname -m),x86_64)
workloads: $(INJECT_BINS)
endif
