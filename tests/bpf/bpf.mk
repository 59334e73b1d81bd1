# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The BPF tier: cmocka programs that load cuprobe's own BPF object, attach it
# to functions of the test binary and check what the rings received (root).
# Included by the top Makefile after LIB_OBJS; tests/run.sh bpf runs them.
#
#   make bpf-tests      build them into $(OUTPUT)/bpf_tests/

BT_DIR  := $(OUTPUT)/bpf_tests
BT_SRCS := $(wildcard tests/bpf/test_*.c)
BT_BINS := $(patsubst tests/bpf/%.c,$(BT_DIR)/%,$(BT_SRCS))
# The stand-ins take CUDA's own types (dim3, cudaLaunchConfig_t, CUlaunchConfig).
BT_CPPFLAGS := $(CPPFLAGS) -Itests/bpf -isystem $(CUDA_HOME)/include

.PHONY: bpf-tests

bpf-tests: $(BT_BINS)

$(BT_DIR)/bpf_test.o: tests/bpf/bpf_test.c $(SKELS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(BT_CPPFLAGS) $(CFLAGS) -c $< -o $@

$(BT_DIR)/test_%: tests/bpf/test_%.c $(BT_DIR)/bpf_test.o $(LIB_OBJS)
	$(call msg,TEST,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(BT_CPPFLAGS) $(CFLAGS) $< $(BT_DIR)/bpf_test.o $(LIB_OBJS) -lcmocka $(LDLIBS) -o $@

# The stack test unwinds its own frames by their frame pointers.
$(BT_DIR)/test_stack_bpf: CFLAGS += -fno-omit-frame-pointer
