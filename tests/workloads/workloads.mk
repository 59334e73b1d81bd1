# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# CUDA workloads for the end-to-end tests, built with nvcc against the real
# CUDA toolkit (no GPU needed to build or run them). Included by the top
# Makefile, which provides OUTPUT, CUDA_HOME, NVCC, CC, Q and msg.
# tests/workloads/README.md says what each one does; cupti_sim/sim.mk builds
# the CUPTI simulator.

WL_DIR   := $(OUTPUT)/workloads
WL_SRC   := tests/workloads
WL_STUBS := $(WL_DIR)/stubs

WORKLOADS := $(WL_DIR)/demo $(WL_DIR)/basic $(WL_DIR)/basic_ptsz $(WL_DIR)/static \
	     $(WL_DIR)/dlopen_main $(WL_DIR)/libkernlib.so $(WL_DIR)/driver \
	     $(WL_DIR)/nested $(WL_DIR)/libfakert.so $(WL_STUBS)/libcuda.so.1 \
	     $(WL_DIR)/dlloop $(WL_DIR)/libtiny.so $(WL_DIR)/names \
	     $(WL_DIR)/stacks $(WL_DIR)/stacks_stripped $(WL_DIR)/real_driver \
	     $(WL_DIR)/librealrt.so $(WL_DIR)/real_nested $(WL_DIR)/capture $(WL_DIR)/graphs \
	     $(WL_DIR)/vfork_exec

# Host code is built warning-free. Frame pointers make functions that need a
# frame start with a push, which a uprobe emulates instead of single-stepping.
WL_NVFLAGS := -O1 -std=c++17 -Werror all-warnings \
	      -Xcompiler -Wall,-Wextra,-Werror,-fno-omit-frame-pointer
WL_CFLAGS  := -std=gnu11 -O1 -g -Wall -Wextra -Werror -fno-omit-frame-pointer -fPIC \
	      -I$(CUDA_HOME)/include
# Runtime programs find the toolkit's libcudart even where ld.so.conf does not
# list it. Driver programs find libfakert.so next to them and the stub
# libcuda.so.1 below them, wherever the build folder is; only they get the
# stub, so that a real libcudart never loads it in place of the driver.
WL_RPATH   := -Xlinker -rpath,$(CUDA_HOME)/lib64
WL_DRIVER  := -Xlinker -rpath,'$$ORIGIN:$$ORIGIN/stubs' -L$(CUDA_HOME)/lib64/stubs -lcuda

$(WL_DIR)/demo $(WL_DIR)/basic: $(WL_DIR)/%: $(WL_SRC)/%.cu
	$(call msg,NVCC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(NVCC) $(WL_NVFLAGS) -MMD -MP -MF $@.d -cudart shared $(WL_RPATH) $< -o $@

$(WL_DIR)/basic_ptsz: $(WL_SRC)/basic.cu
	$(call msg,NVCC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(NVCC) $(WL_NVFLAGS) -MMD -MP -MF $@.d -cudart shared \
		--default-stream per-thread $(WL_RPATH) $< -o $@

$(WL_DIR)/static: $(WL_SRC)/static.cu
	$(call msg,NVCC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(NVCC) $(WL_NVFLAGS) -MMD -MP -MF $@.d -cudart static $< -o $@

$(WL_DIR)/libkernlib.so: $(WL_SRC)/kernlib.cu
	$(call msg,NVCC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(NVCC) $(WL_NVFLAGS) -MMD -MP -MF $@.d -Xcompiler -fPIC -shared -cudart shared \
		$(WL_RPATH) $< -o $@

# Host-only programs: nvcc registers a fat binary for every .cu compiled as
# CUDA, even one without kernels, and that needs libcudart; `-x c++` compiles
# them as plain C++ instead. dlopen_main maps no CUDA library at all until it
# dlopens libkernlib.so.
WL_HOSTONLY := -x c++ -cudart none

$(WL_DIR)/dlopen_main: $(WL_SRC)/dlopen_main.cu | $(WL_DIR)/libkernlib.so
	$(call msg,NVCC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(NVCC) $(WL_NVFLAGS) -MMD -MP -MF $@.d $(WL_HOSTONLY) $< -o $@ -ldl

$(WL_DIR)/dlloop: $(WL_SRC)/dlloop.cu | $(WL_DIR)/libkernlib.so $(WL_DIR)/libtiny.so
	$(call msg,NVCC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(NVCC) $(WL_NVFLAGS) -MMD -MP -MF $@.d $(WL_HOSTONLY) $< -o $@ -ldl

$(WL_DIR)/libtiny.so: $(WL_SRC)/tiny.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(WL_CFLAGS) -MMD -MP -MF $@.d -shared $< -o $@

$(WL_DIR)/vfork_exec: $(WL_SRC)/vfork_exec.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(WL_CFLAGS) -MMD -MP -MF $@.d $< -o $@

# The toolkit's stub libcuda (every call returns CUDA_ERROR_STUB_LIBRARY),
# under the soname programs ask for.
$(WL_STUBS)/libcuda.so.1:
	$(call msg,LN,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)ln -sfn $(CUDA_HOME)/lib64/stubs/libcuda.so $@

$(WL_DIR)/driver: $(WL_SRC)/driver.cu | $(WL_STUBS)/libcuda.so.1
	$(call msg,NVCC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(NVCC) $(WL_NVFLAGS) -MMD -MP -MF $@.d $(WL_HOSTONLY) $< -o $@ $(WL_DRIVER)

$(WL_DIR)/libfakert.so: $(WL_SRC)/fakert.c | $(WL_STUBS)/libcuda.so.1
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(WL_CFLAGS) -MMD -MP -MF $@.d -shared $< -o $@ \
		-Wl,-rpath,'$$ORIGIN/stubs' -L$(CUDA_HOME)/lib64/stubs -lcuda

$(WL_DIR)/nested: $(WL_SRC)/nested.cu $(WL_DIR)/libfakert.so
	$(call msg,NVCC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(NVCC) $(WL_NVFLAGS) -MMD -MP -MF $@.d $(WL_HOSTONLY) $< -o $@ \
		-L$(WL_DIR) -lfakert $(WL_DRIVER)

# The kernel-name workload, on a stand-in driver and runtime that hand out
# handles (the toolkit's stub fails every call): libcuda.so.1 and
# libfakecudart.so in fakecuda/, found through RUNPATH $ORIGIN/fakecuda. It is
# CUDA (<<<>>> launches) built with -cudart none: the stand-in runtime has what
# nvcc's host code calls.
WL_FAKECUDA := $(WL_DIR)/fakecuda

$(WL_FAKECUDA)/libcuda.so.1: $(WL_SRC)/fakecuda.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(WL_CFLAGS) -MMD -MP -MF $@.d -shared -Wl,-soname,libcuda.so.1 $< -o $@

$(WL_FAKECUDA)/libfakecudart.so: $(WL_SRC)/fakecudart.c $(WL_FAKECUDA)/libcuda.so.1
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(WL_CFLAGS) -MMD -MP -MF $@.d -shared $< -o $@ \
		-Wl,-rpath,'$$ORIGIN' -L$(WL_FAKECUDA) -l:libcuda.so.1

$(WL_DIR)/names: $(WL_SRC)/names.cu $(WL_FAKECUDA)/libcuda.so.1 $(WL_FAKECUDA)/libfakecudart.so
	$(call msg,NVCC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(NVCC) $(WL_NVFLAGS) -MMD -MP -MF $@.d -cudart none $< -o $@ \
		-Xlinker -rpath,'$$ORIGIN/fakecuda' -L$(WL_FAKECUDA) -l:libcuda.so.1 -lfakecudart

# Stream capture, on the same stand-in runtime (the real one cannot make a stream here).
$(WL_DIR)/capture: $(WL_SRC)/capture.cu $(WL_FAKECUDA)/libcuda.so.1 $(WL_FAKECUDA)/libfakecudart.so
	$(call msg,NVCC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(NVCC) $(WL_NVFLAGS) -MMD -MP -MF $@.d -cudart none $< -o $@ \
		-Xlinker -rpath,'$$ORIGIN/fakecuda' -L$(WL_FAKECUDA) -l:libcuda.so.1 -lfakecudart

# CUDA graphs, on the same stand-ins (the real runtime fails every graph call here).
$(WL_DIR)/graphs: $(WL_SRC)/graphs.cu $(WL_FAKECUDA)/libcuda.so.1 $(WL_FAKECUDA)/libfakecudart.so
	$(call msg,NVCC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(NVCC) $(WL_NVFLAGS) -MMD -MP -MF $@.d -cudart none $< -o $@ \
		-Xlinker -rpath,'$$ORIGIN/fakecuda' -L$(WL_FAKECUDA) -l:libcuda.so.1 -lfakecudart

# NVIDIA's real driver library, dlopened by path (REAL_LIBCUDA): no link to it.
$(WL_DIR)/real_driver: $(WL_SRC)/real_driver.cu
	$(call msg,NVCC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(NVCC) $(WL_NVFLAGS) -MMD -MP -MF $@.d $(WL_HOSTONLY) $< -o $@ -ldl

# A stand-in runtime on the real driver (through cuGetProcAddress_v2), and the
# program whose runtime launches go through it into the driver.
$(WL_DIR)/librealrt.so: $(WL_SRC)/realrt.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(WL_CFLAGS) -MMD -MP -MF $@.d -shared $< -o $@ -ldl

$(WL_DIR)/real_nested: $(WL_SRC)/real_nested.cu $(WL_DIR)/librealrt.so
	$(call msg,NVCC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(NVCC) $(WL_NVFLAGS) -MMD -MP -MF $@.d $(WL_HOSTONLY) $< -o $@ \
		-Xlinker -rpath,'$$ORIGIN' -L$(WL_DIR) -lrealrt -ldl

# --stack: named call chains, with debug info for their inlined frames; and
# the same program stripped of every symbol, whose frames are addresses.
$(WL_DIR)/stacks: $(WL_SRC)/stacks.cu
	$(call msg,NVCC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(NVCC) $(WL_NVFLAGS) -g -MMD -MP -MF $@.d -cudart shared $(WL_RPATH) $< -o $@

$(WL_DIR)/stacks_stripped: $(WL_DIR)/stacks
	$(call msg,STRIP,$@)
	$(Q)strip --strip-all $< -o $@

# The target of bringing the agent into a running process (tests/e2e/test_inject.sh):
# regcheck checks its registers across every sleep, built dynamically and
# statically (no libc mapped, no dlopen). The dynamic one maps libcudart (without
# calling it), as cuprobe brings the agent only into a process that maps a CUDA
# library.
INJECT_BINS := $(WL_DIR)/regcheck $(WL_DIR)/regcheck_static
WL_INJ_CFLAGS := -std=gnu11 -O1 -g -Wall -Wextra -Werror

$(WL_DIR)/regcheck: $(WL_SRC)/regcheck.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(WL_INJ_CFLAGS) $< -o $@ -L$(CUDA_HOME)/lib64 -Wl,--no-as-needed -lcudart \
		-Wl,--as-needed -Wl,-rpath,$(CUDA_HOME)/lib64

$(WL_DIR)/regcheck_static: $(WL_SRC)/regcheck.c
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(WL_INJ_CFLAGS) -static $< -o $@

# regcheck is x86_64 code; elsewhere test_inject.sh checks that cuprobe says so.
ifeq ($(shell uname -m),x86_64)
workloads: $(INJECT_BINS)
endif

-include $(wildcard $(WL_DIR)/*.d)
-include $(wildcard $(WL_FAKECUDA)/*.d)
