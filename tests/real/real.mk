# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The `real` test tier's programs (tests/real/README.md): they run against
# NVIDIA's real libcuda and the PyPI wheels that scripts/install-real.sh puts
# in $(REAL_DIR). Included by the top Makefile, which provides OUTPUT,
# CUDA_HOME, NVCC, CC, CXX, Q and msg; the workloads' flags come from
# tests/workloads/workloads.mk.

REAL_DIR ?= $(or $(CUPROBE_REAL),/var/cache/cuprobe/real)
# REAL_CUDART12 and the rest, as install-real.sh found them (VAR=value lines).
-include $(REAL_DIR)/env.sh

RL_DIR     := $(OUTPUT)/real
# The direct and nested real-driver workloads are tests/workloads' real_driver and
# real_nested (librealrt.so), which the e2e tier and the bench use too.
REAL_TESTS := $(RL_DIR)/procaddr $(RL_DIR)/uprobe_at $(RL_DIR)/basic12
RL_CFLAGS  := -std=gnu11 -O1 -g -Wall -Wextra -Werror -fno-omit-frame-pointer

.PHONY: real-tests
real-tests: $(REAL_TESTS)

$(RL_DIR)/procaddr $(RL_DIR)/uprobe_at: $(RL_DIR)/%: tests/real/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(RL_CFLAGS) -MMD -MP -MF $@.d $< -o $@ -ldl

# basic.cu linked against the CUDA 12 runtime of PyPI's nvidia-cuda-runtime-cu12
# (its symbols are versioned libcudart.so.12, so the CUDA 13 build cannot use it).
$(RL_DIR)/basic12: $(WL_SRC)/basic.cu
	$(call msg,NVCC,$@)
	$(Q)test -n "$(REAL_CUDART12)" || { echo "no $(REAL_DIR)/env.sh naming the CUDA 12 runtime: run scripts/install-real.sh (or pass CUPROBE_REAL=)" >&2; exit 1; }
	$(Q)mkdir -p $(dir $@)
	$(Q)$(NVCC) $(WL_NVFLAGS) -MMD -MP -MF $@.d -cudart none $< -o $@ \
		-L$(dir $(REAL_CUDART12)) -l:libcudart.so.12 -Xlinker -rpath,$(dir $(REAL_CUDART12))

-include $(wildcard $(RL_DIR)/*.d)
