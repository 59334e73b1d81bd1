# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# The in-process agent $(OUTPUT)/libcuprobe-agent.so, its tests and the
# record decoder's fuzzer. Included by the top Makefile, which provides
# OUTPUT, CC, CLANG, BPFTOOL, CUDA_HOME, CFLAGS, BPF_CFLAGS, VMLINUX_H, Q and
# msg; tests/workloads/cupti_sim/sim.mk builds the simulator the tests use.
# The records' unit test (tests/unit/) runs in the unit and san tiers, the
# fuzzer (tests/fuzz/) in the fuzz tier, the harness and check_inject in
# tests/e2e/test_agent.sh.
#
#   make agent          the agent
#   make agent-tests    the agent, the simulator and the test programs
#   make test-agent     agent-tests, then tests/e2e/test_agent.sh (root)
#   make fuzz           fuzz the record decoder for FUZZ_SECONDS (default 60)
#   make fuzz-short     a short fuzz run for make test (FUZZ_SHORT_RUNS, 20000)

AGENT_LIB  := $(OUTPUT)/libcuprobe-agent.so
AGENT_DIR  := $(OUTPUT)/agent
AGENT_SRCS := $(wildcard user/agent/*.c)
# The loader's own util modules it shares, built again into the library (-fPIC, hidden).
AGENT_UTIL := user/util/hashmap.c
AGENT_OBJS := $(patsubst user/agent/%.c,$(AGENT_DIR)/%.o,$(AGENT_SRCS)) \
	      $(patsubst user/util/%.c,$(AGENT_DIR)/util/%.o,$(AGENT_UTIL))

# Where the toolkit keeps the real libcupti.so.13.
CUPTI_LIBDIR ?= $(patsubst %/,%,$(dir $(firstword $(wildcard \
	$(CUDA_HOME)/extras/CUPTI/lib64/libcupti.so.13 $(CUDA_HOME)/lib64/libcupti.so.13))))

# CUDA's headers are system headers here: -Wextra is for our code only.
AGENT_CPPFLAGS := -D_GNU_SOURCE -Iinclude -Iuser -isystem $(CUDA_HOME)/include
AGENT_CFLAGS   := $(CFLAGS) -fPIC -fvisibility=hidden -pthread
# libcupti.so.13 is a DT_NEEDED found through RUNPATH, not RPATH: an
# LD_LIBRARY_PATH (the CUPTI simulator in tests) is searched before RUNPATH.
AGENT_LDFLAGS  := -shared -pthread -Wl,-z,defs -Wl,--enable-new-dtags \
		  -Wl,-rpath,$(CUPTI_LIBDIR) -L$(CUPTI_LIBDIR)

AT_DIR := $(OUTPUT)/agent_tests

.PHONY: agent agent-tests test-agent fuzz fuzz-short

agent: $(AGENT_LIB)

$(AGENT_DIR)/%.o: user/agent/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(AGENT_CPPFLAGS) $(AGENT_CFLAGS) -c $< -o $@

$(AGENT_DIR)/util/%.o: user/util/%.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(AGENT_CPPFLAGS) $(AGENT_CFLAGS) -c $< -o $@

$(AGENT_LIB): $(AGENT_OBJS)
	$(call msg,LIB,$@)
	$(Q)test -n "$(CUPTI_LIBDIR)" || { echo "no libcupti.so.13 under $(CUDA_HOME)" >&2; exit 1; }
	$(Q)$(CC) $(AGENT_LDFLAGS) $(AGENT_OBJS) -l:libcupti.so.13 -o $@

-include $(wildcard $(AGENT_DIR)/*.d $(AGENT_DIR)/util/*.d $(AT_DIR)/*.d)

# ---- tests ------------------------------------------------------------------

AT_HARNESS  := $(AT_DIR)/agent_harness
# The records' unit test, built into the folders the unit and san tiers run
# (tests/run.sh) by the explicit rules below, with the agent's flags, which the
# top Makefile's pattern rules for those folders lack (its UNIT_SRCS leaves it out).
AT_UNIT     := $(OUTPUT)/tests/test_agent_records
AT_UNIT_SAN := $(OUTPUT)/san/tests/test_agent_records
AT_FUZZ     := $(AT_DIR)/fuzz_records
AT_INJECT   := $(AT_DIR)/check_inject
AT_CPPFLAGS := -D_GNU_SOURCE -Iinclude -Iuser -I$(AT_DIR) -I$(OUTPUT) \
	       -isystem $(CUDA_HOME)/include
# Spelled out, not from sim.mk and workloads.mk: this file may be included first.
AT_SIM_LIB   := $(OUTPUT)/cupti_sim/libcupti.so.13
AT_WORKLOADS := $(addprefix $(OUTPUT)/workloads/,basic basic_ptsz driver dlopen_main)

FUZZ_SECONDS    ?= 60
FUZZ_SHORT_RUNS ?= 20000
FUZZ_FLAGS      := -g -O1 -Wall -Wextra -Werror -fsanitize=fuzzer,address,undefined \
		   -fno-sanitize-recover=all

agent-tests: $(AGENT_LIB) $(AT_SIM_LIB) $(AT_HARNESS) $(AT_UNIT) $(AT_UNIT_SAN) $(AT_INJECT) $(AT_WORKLOADS)

test-agent: agent-tests
	$(Q)tests/e2e/test_agent.sh

# The harness loads cuprobe's own skeleton (the top Makefile builds it).
$(AT_HARNESS): tests/e2e/agent_harness.c user/core/gpu/agent_records.c user/core/gpu/agent_wake.c \
		user/core/proc/remote.c user/core/proc/elf_file.c user/core/proc/procmaps.c user/util/safe_file.c \
		user/util/log.c $(OUTPUT)/cuprobe.skel.h
	$(call msg,BINARY,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(AT_CPPFLAGS) $(CFLAGS) $(filter %.c,$^) -lbpf -lelf -lz -lstdc++ -o $@

AT_UNIT_SRCS := tests/unit/test_agent_records.c user/core/gpu/agent_records.c user/agent/emit.c \
		user/agent/convert.c $(AGENT_UTIL)

$(AT_UNIT): $(AT_UNIT_SRCS)
	$(call msg,TEST,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(AT_CPPFLAGS) $(CFLAGS) -pthread $^ -lcmocka -o $@

# The same under ASan and UBSan (SAN_FLAGS from the top Makefile).
$(AT_UNIT_SAN): $(AT_UNIT_SRCS)
	$(call msg,TEST-SAN,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(AT_CPPFLAGS) $(CFLAGS) $(SAN_FLAGS) -pthread $^ -lcmocka -o $@

$(AT_INJECT): tests/e2e/check_inject.c
	$(call msg,BINARY,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CFLAGS) $< -ldl -o $@

# Seeded with well-formed chunks of every record type (tests/fuzz/fuzz_seeds.py).
$(AT_FUZZ): tests/fuzz/fuzz_records.c user/core/gpu/agent_records.c tests/fuzz/fuzz_seeds.py
	$(call msg,FUZZ,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)python3 tests/fuzz/fuzz_seeds.py $(AT_DIR)/fuzz-corpus
	$(Q)$(CLANG) $(AT_CPPFLAGS) $(FUZZ_FLAGS) $(filter %.c,$^) -o $@

fuzz: $(AT_FUZZ)
	$(Q)$(AT_FUZZ) -max_total_time=$(FUZZ_SECONDS) -max_len=$$(( 2 * 4096 )) \
		-print_final_stats=1 $(AT_DIR)/fuzz-corpus

fuzz-short: $(AT_FUZZ)
	$(Q)$(AT_FUZZ) -runs=$(FUZZ_SHORT_RUNS) -max_len=$$(( 2 * 4096 )) $(AT_DIR)/fuzz-corpus \
		2>$(AT_DIR)/fuzz-short.log || { tail -40 $(AT_DIR)/fuzz-short.log; exit 1; }
	$(Q)echo "fuzz-short: $(FUZZ_SHORT_RUNS) runs, no crash"
