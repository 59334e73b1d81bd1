# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# What bench/run.sh runs besides cuprobe: the launching program and the
# empty-uprobe baseline. Included by the top Makefile, which provides OUTPUT,
# CUDA_HOME, NVCC, CC, CLANG, BPFTOOL, BPF_CFLAGS, VMLINUX_H, Q and msg;
# bench/run.sh also builds them alone with `make -f Makefile -f bench/bench.mk
# bench-tools`, so the guard keeps a second inclusion harmless.

ifndef BENCH_MK
BENCH_MK := 1

BENCH_DIR   := $(OUTPUT)/bench
BENCH_TOOLS := $(BENCH_DIR)/launch_loop $(BENCH_DIR)/empty_uprobe $(BENCH_DIR)/trace_write \
	       $(BENCH_DIR)/real_loop $(BENCH_DIR)/libreal_rt.so $(BENCH_DIR)/graph_loop

# Frame pointers give cuprobe_step a leading push, as in the test workloads.
BENCH_NVBASE  := -O2 -std=c++17 -Werror all-warnings \
		 -Xcompiler -Wall,-Wextra,-Werror,-fno-omit-frame-pointer
BENCH_NVFLAGS := $(BENCH_NVBASE) -cudart shared -Xlinker -rpath,$(CUDA_HOME)/lib64

.PHONY: bench-tools
bench-tools: $(BENCH_TOOLS)

$(BENCH_DIR)/launch_loop: bench/launch_loop.cu
	$(call msg,NVCC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(NVCC) $(BENCH_NVFLAGS) -MMD -MP -MF $@.d $< -o $@ -ldl -lpthread

# Graph replays against launches, on the test workloads' stand-in runtime and
# driver (the real runtime fails every graph call without a device), found
# next door through RUNPATH; -cudart none, as the workloads on them are built.
$(BENCH_DIR)/graph_loop: bench/graph_loop.cu $(WL_FAKECUDA)/libcuda.so.1 \
			 $(WL_FAKECUDA)/libfakecudart.so
	$(call msg,NVCC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(NVCC) $(BENCH_NVBASE) -MMD -MP -MF $@.d -cudart none $< -o $@ \
		-Xlinker -rpath,'$$ORIGIN/../workloads/fakecuda' -L$(WL_FAKECUDA) \
		-l:libcuda.so.1 -lfakecudart -ldl

$(BENCH_DIR)/empty.bpf.o: bench/empty.bpf.c $(VMLINUX_H)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BENCH_DIR)/empty.skel.h: $(BENCH_DIR)/empty.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name empty_bpf > $@

# It links cuprobe's own attach, placement and symbol code: the baseline attaches as
# cuprobe does, and libbpf, libelf and Capstone from their archives, so that it runs on
# a machine without them (the GPU check carries it: tests/gpu/run.sh).
BENCH_USER_OBJS := $(addprefix $(OUTPUT)/user/,core/probes/uprobe_link.o core/probes/placement.o \
		     core/proc/symbols.o core/proc/elf_file.o core/proc/procmaps.o util/log.o \
		     util/safe_file.o util/hashmap.o util/vec.o)

$(BENCH_DIR)/empty_uprobe: bench/empty_uprobe.c $(BENCH_DIR)/empty.skel.h $(BENCH_USER_OBJS)
	$(call msg,CC,$@)
	$(Q)$(CC) -D_GNU_SOURCE -Iuser -Iinclude -I$(BENCH_DIR) $(CFLAGS) -MF $@.d $< \
		$(BENCH_USER_OBJS) -l:libbpf.a -l:libelf.a -l:libcapstone.a -l:libz.a \
		-lstdc++ -o $@

# Launches into NVIDIA's real libcuda (dlopened by path), direct or through a
# stand-in runtime next to the loop. Frame pointers: the runtime's entry is a push.
BENCH_REAL_CFLAGS := -std=gnu11 -O2 -Wall -Wextra -Werror -fno-omit-frame-pointer -I$(CUDA_HOME)/include

$(BENCH_DIR)/real_loop: bench/real_loop.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(BENCH_REAL_CFLAGS) -MMD -MP -MF $@.d $< -o $@ -ldl

$(BENCH_DIR)/libreal_rt.so: tests/workloads/realrt.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(BENCH_REAL_CFLAGS) -fPIC -shared -MMD -MP -MF $@.d $< -o $@ -ldl

# The trace writer alone, on cuprobe's own objects.
$(BENCH_DIR)/trace_write: bench/trace_write.c $(LIB_OBJS)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -MF $@.d $< $(LIB_OBJS) $(LDLIBS) -o $@

-include $(wildcard $(BENCH_DIR)/*.d)

endif
