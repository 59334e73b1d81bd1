# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The CUPTI simulator, $(OUTPUT)/cupti_sim/libcupti.so.13
# (tests/workloads/cupti_sim/README.md). Included by the top Makefile, which
# provides OUTPUT, CC, CUDA_HOME, CFLAGS, Q and msg.

SIM_DIR  := $(OUTPUT)/cupti_sim
SIM_LIB  := $(SIM_DIR)/libcupti.so.13
SIM_SRCS := $(wildcard tests/workloads/cupti_sim/*.c)
SIM_OBJS := $(patsubst tests/workloads/cupti_sim/%.c,$(SIM_DIR)/%.o,$(SIM_SRCS))

# CUDA's headers are system headers here: -Wextra is for our code only.
SIM_CPPFLAGS := -D_GNU_SOURCE -isystem $(CUDA_HOME)/include
SIM_CFLAGS   := $(CFLAGS) -fPIC -fvisibility=hidden -pthread

.PHONY: cupti-sim

cupti-sim: $(SIM_LIB)

$(SIM_DIR)/%.o: tests/workloads/cupti_sim/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(SIM_CPPFLAGS) $(SIM_CFLAGS) -c $< -o $@

$(SIM_LIB): $(SIM_OBJS) tests/workloads/cupti_sim/libcupti.map
	$(call msg,LIB,$@)
	$(Q)$(CC) -shared -pthread -Wl,-soname,libcupti.so.13 -Wl,-z,defs \
		-Wl,--version-script=tests/workloads/cupti_sim/libcupti.map $(SIM_OBJS) -ldl -o $@

-include $(wildcard $(SIM_DIR)/*.d)
