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
REAL_TESTS := $(RL_DIR)/procaddr $(RL_DIR)/uprobe_at $(RL_DIR)/drvloop \
	      $(RL_DIR)/libfakert_real.so $(RL_DIR)/nested $(RL_DIR)/basic12
RL_CFLAGS  := -std=gnu11 -O1 -g -Wall -Wextra -Werror -fno-omit-frame-pointer

.PHONY: real-tests
real-tests: $(REAL_TESTS)

$(RL_DIR)/procaddr $(RL_DIR)/uprobe_at: $(RL_DIR)/%: tests/real/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(RL_CFLAGS) -MMD -MP -MF $@.d $< -o $@ -ldl

$(RL_DIR)/drvloop: tests/real/drvloop.cpp
	$(call msg,CXX,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CXX) -std=c++17 $(filter-out -std=gnu11,$(RL_CFLAGS)) -I$(WL_SRC) -MMD -MP -MF $@.d \
		$< -o $@ -ldl

$(RL_DIR)/libfakert_real.so: tests/real/fakert.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(WL_CFLAGS) -MMD -MP -MF $@.d -shared $< -o $@ -ldl

# nested.cu on the stand-in runtime above. It is linked against the toolkit's
# stub libcuda with no RUNPATH to it: it runs only where LD_LIBRARY_PATH names
# the real libcuda.so.1 ($(REAL_DIR)/lib).
$(RL_DIR)/nested: $(WL_SRC)/nested.cu $(RL_DIR)/libfakert_real.so
	$(call msg,NVCC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(NVCC) $(WL_NVFLAGS) -MMD -MP -MF $@.d $(WL_HOSTONLY) $< -o $@ \
		-L$(RL_DIR) -lfakert_real -Xlinker -rpath,'$$ORIGIN' \
		-L$(CUDA_HOME)/lib64/stubs -lcuda

# basic.cu linked against the CUDA 12 runtime of PyPI's nvidia-cuda-runtime-cu12
# (its symbols are versioned libcudart.so.12, so the CUDA 13 build cannot use it).
$(RL_DIR)/basic12: $(WL_SRC)/basic.cu
	$(call msg,NVCC,$@)
	$(Q)test -n "$(REAL_CUDART12)" || { echo "no $(REAL_DIR)/env.sh naming the CUDA 12 runtime: run scripts/install-real.sh (or pass CUPROBE_REAL=)" >&2; exit 1; }
	$(Q)mkdir -p $(dir $@)
	$(Q)$(NVCC) $(WL_NVFLAGS) -MMD -MP -MF $@.d -cudart none $< -o $@ \
		-L$(dir $(REAL_CUDART12)) -l:libcudart.so.12 -Xlinker -rpath,$(dir $(REAL_CUDART12))

-include $(wildcard $(RL_DIR)/*.d)
