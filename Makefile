# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
#   make              build ./cuprobe
#   make STATIC=1     a self-contained ./cuprobe (no libbpf needed where it runs)
#   make demo         build and profile the bundled demo workload, then report
#   make test         unit, ASan/UBSan, BPF, end-to-end and real-binary tests (root;
#                     scripts/install-real.sh fetches NVIDIA's real libcuda and CUDA wheels)
#   make test-torch   the torch tier: installs torch into that venv (~3.4 GB) and torch 2.4.1 into another (0.8 GB more; kept), then runs it
#   make bench        benchmarks (ratios against a baseline measured in the same run)
#   make image        the daemon's container image, an OCI archive (buildah; Containerfile)
#   make install      PREFIX=/usr/local (default) and DESTDIR= for packagers: the
#                     binary, the agent in lib/cuprobe/ and the man pages
#   V=1               show commands; VMLINUX_H=, CUDA_HOME=, BPFTOOL=, CLANG= override

OUTPUT    := .output
CLANG     ?= clang
BPFTOOL   ?= bpftool
CUDA_HOME ?= /usr/local/cuda
NVCC      ?= $(CUDA_HOME)/bin/nvcc
ARCH      := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')
VMLINUX_H ?= vmlinux/$(ARCH)/vmlinux.h

# The release; `cuprobe --version` adds the git revision built from (GIT_REV= overrides it).
VERSION  := 0.1.0

CFLAGS   ?= -g -O2
CFLAGS   += -std=gnu11 -Wall -Wextra -Werror -MMD -MP
# Headers are included by their path from user/ ("core/session/session.h"),
# include/'s (shared with BPF) and the skeleton by name.
CPPFLAGS += -Iinclude -Iuser -I$(OUTPUT) -D_GNU_SOURCE
# The host's system include folders, after ours: libbpf's usdt.bpf.h needs
# <asm/errno.h> (libbpf-bootstrap's CLANG_BPF_SYS_INCLUDES).
CLANG_BPF_SYS_INCLUDES ?= $(shell $(CLANG) -v -E - </dev/null 2>&1 | \
	sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror -MMD -MP \
	      -I$(dir $(VMLINUX_H)) -Iinclude -Ibpf $(CLANG_BPF_SYS_INCLUDES)

# cuprobe capture's TLS (OpenSSL) links statically; the linker's warnings that libcrypto.a
# can call dlopen and getaddrinfo are of paths capture never takes (it connects to a numeric
# address, with the built-in provider).
STATIC_LIBS := -l:libssl.a -l:libcrypto.a -l:libbpf.a -l:libcapstone.a -l:libdw.a -l:libelf.a -l:libjansson.a -l:libz.a -l:libzstd.a \
	       -l:liblzma.a -l:libbz2.a -l:libstdc++.a -lpthread -lm -ldl
ifeq ($(STATIC),1)
LDFLAGS += -static
LDLIBS  := $(STATIC_LIBS)
else
LDLIBS  := -lbpf -lcapstone -ldw -lelf -ljansson -lz -lstdc++ -lpthread -lm -lmicrohttpd -lgnutls -lyaml -lcrypt -lssl -lcrypto
endif

ifeq ($(V),1)
Q :=
msg :=
else
Q := @
msg = @printf '  %-8s %s\n' "$(1)" "$(2)";
endif

# Each program group is its own .bpf.c; they share maps.bpf.c's maps as externs
# and are linked into one object, so there is one skeleton (cuprobe_bpf).
# maps.bpf.o goes first: libbpf 1.1's linker mislocates a map defined in a
# file that also declares extern maps unless their definitions came earlier.
BPF_SRCS  := bpf/maps.bpf.c $(filter-out bpf/maps.bpf.c,$(wildcard bpf/*.bpf.c))
BPF_OBJS  := $(patsubst bpf/%.bpf.c,$(OUTPUT)/bpf/%.bpf.o,$(BPF_SRCS))
SKELS     := $(OUTPUT)/cuprobe.skel.h
# Every C file under user/ but the agent, which is a library of its own (agent.mk).
USER_SRCS := $(sort $(shell find user -name '*.c' -not -path 'user/agent/*'))
USER_OBJS := $(patsubst user/%.c,$(OUTPUT)/user/%.o,$(USER_SRCS))
LIB_OBJS  := $(filter-out $(OUTPUT)/user/cmd/main.o,$(USER_OBJS))
# The daemon's HTTP server needs libmicrohttpd, which does not link statically
# (gnutls): the static build leaves the daemon out and says so (user/cmd/main.c).
DAEMON_OBJS := $(filter $(OUTPUT)/user/daemon/% $(OUTPUT)/user/cmd/daemon.o,$(USER_OBJS))
STATIC_OBJS := $(filter-out $(DAEMON_OBJS),$(USER_OBJS))
# The agent's records' unit test is built with the agent's flags (user/agent/agent.mk).
UNIT_SRCS := $(filter-out tests/unit/test_agent_records.c,$(wildcard tests/unit/test_*.c))
UNIT_BINS := $(patsubst tests/unit/%.c,$(OUTPUT)/tests/%,$(UNIT_SRCS))

# The same sources again with ASan/UBSan, in their own folder.
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
SAN_OBJS  := $(patsubst user/%.c,$(OUTPUT)/san/user/%.o,$(USER_SRCS))
SAN_LIB   := $(filter-out $(OUTPUT)/san/user/cmd/main.o,$(SAN_OBJS))
SAN_UNITS := $(patsubst tests/unit/%.c,$(OUTPUT)/san/tests/%,$(UNIT_SRCS))

# The loader again with ThreadSanitizer: each piece of state has one owner.
TSAN_FLAGS := -fsanitize=thread -fno-omit-frame-pointer
TSAN_OBJS  := $(patsubst user/%.c,$(OUTPUT)/tsan/user/%.o,$(USER_SRCS))

.DELETE_ON_ERROR:
.SECONDARY: $(SKELS) $(BPF_OBJS) $(OUTPUT)/cuprobe.bpf.o
.PHONY: all deps real-deps demo test test-torch unit bench clean workloads san install image FORCE

all: cuprobe agent

cuprobe: $(USER_OBJS) $(OUTPUT)/link-mode
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(LDFLAGS) $(if $(filter 1,$(STATIC)),$(STATIC_OBJS),$(USER_OBJS)) $(LDLIBS) -o $@

# Relinks when STATIC= changes between builds.
$(OUTPUT)/link-mode: FORCE | $(OUTPUT)
	$(Q)echo 'STATIC=$(STATIC)' | cmp -s - $@ || echo 'STATIC=$(STATIC)' > $@

# Rewritten only when the version or the git revision changed (scripts/gen-version.sh).
$(OUTPUT)/version.h: FORCE | $(OUTPUT)
	$(Q)scripts/gen-version.sh $(VERSION) $@

$(OUTPUT)/user/cmd/main.o $(OUTPUT)/san/user/cmd/main.o $(OUTPUT)/tsan/user/cmd/main.o: \
	$(OUTPUT)/version.h

$(OUTPUT)/bpf/%.bpf.o: bpf/%.bpf.c $(VMLINUX_H) | $(OUTPUT)
	$(call msg,BPF,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

# The launch probe takes its CPU's stage with an atomic exchange (BPF v3).
$(OUTPUT)/bpf/launch.bpf.o: BPF_CFLAGS += -mcpu=v3
$(OUTPUT)/bpf/capture.bpf.o: BPF_CFLAGS += -mcpu=v3

$(OUTPUT)/cuprobe.bpf.o: $(BPF_OBJS)
	$(call msg,BPF-LINK,$@)
	$(Q)$(BPFTOOL) gen object $@ $^

$(OUTPUT)/cuprobe.skel.h: $(OUTPUT)/cuprobe.bpf.o
	$(call msg,GEN-SKEL,$@)
	$(Q)$(BPFTOOL) gen skeleton $< name cuprobe_bpf > $@

$(VMLINUX_H):
	$(call msg,GEN,$@)
	$(Q)scripts/gen-vmlinux.sh $(ARCH)

# Skeletons first: the -MMD files only know about them after one build.
$(OUTPUT)/user/%.o: user/%.c $(SKELS) | $(OUTPUT)
	$(call msg,CC,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(OUTPUT)/san/user/%.o: user/%.c $(SKELS) | $(OUTPUT)
	$(call msg,CC-SAN,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(SAN_FLAGS) -c $< -o $@

$(OUTPUT)/tsan/user/%.o: user/%.c $(SKELS) | $(OUTPUT)
	$(call msg,CC-TSAN,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(TSAN_FLAGS) -c $< -o $@

$(OUTPUT)/tests/%: tests/unit/%.c $(LIB_OBJS)
	$(call msg,TEST,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $< $(LIB_OBJS) -lcmocka $(LDLIBS) -o $@

$(OUTPUT)/san/tests/%: tests/unit/%.c $(SAN_LIB)
	$(call msg,TEST-SAN,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(SAN_FLAGS) $< $(SAN_LIB) -lcmocka $(LDLIBS) -o $@

$(OUTPUT)/san/cuprobe: $(SAN_OBJS)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(SAN_FLAGS) $^ $(LDLIBS) -o $@

# The self-contained build (STATIC=1) from the same objects, so that make test
# sees it link: libbpf.a's own symbols are not hidden as the shared library's are.
$(OUTPUT)/static/cuprobe: $(USER_OBJS)
	$(call msg,BINARY,$@)
	$(Q)mkdir -p $(dir $@)
	$(Q)$(CC) -static $(STATIC_OBJS) $(STATIC_LIBS) -o $@

$(OUTPUT)/tsan/cuprobe: $(TSAN_OBJS)
	$(call msg,BINARY,$@)
	$(Q)$(CC) $(TSAN_FLAGS) $^ $(LDLIBS) -o $@

# Workloads (nvcc against the real libcudart) and their build rules.
include tests/workloads/workloads.mk
# The in-process CUPTI agent, the CUPTI simulator that tests it, the agent's tests
# (its records' unit test, its harness, the decoder's fuzzer).
include tests/workloads/cupti_sim/sim.mk
include user/agent/agent.mk
# The BPF tier: the real programs attached to the test binary's own functions.
include tests/bpf/bpf.mk
# The real tier: programs run against NVIDIA's real libcuda and PyPI's CUDA wheels.
include tests/real/real.mk
# What make bench runs besides cuprobe.
include bench/bench.mk

workloads: $(WORKLOADS)

san: $(SAN_UNITS) $(AT_UNIT_SAN) $(OUTPUT)/san/cuprobe $(OUTPUT)/tsan/cuprobe

$(OUTPUT):
	$(Q)mkdir -p $@

deps:
	$(Q)scripts/install-deps.sh

demo: deps
	$(Q)$(MAKE) --no-print-directory cuprobe agent $(OUTPUT)/workloads/demo
	$(Q)scripts/demo.sh

# NVIDIA's real binaries for the real tier, in a cache folder (CUPROBE_REAL=).
real-deps:
	$(Q)scripts/install-real.sh

# The sub-make reads the env.sh that install-real.sh wrote.
test: deps real-deps
	$(Q)$(MAKE) --no-print-directory cuprobe workloads $(UNIT_BINS) $(BT_BINS) san agent-tests \
		$(AT_FUZZ) $(OUTPUT)/static/cuprobe real-tests bench-tools
	$(Q)tests/run.sh

test-torch: deps
	$(Q)scripts/install-real.sh --torch
	$(Q)$(MAKE) --no-print-directory cuprobe $(OUTPUT)/static/cuprobe
	$(Q)tests/run.sh torch

unit: $(UNIT_BINS) $(AT_UNIT)
	$(Q)tests/run.sh unit

bench: deps
	$(Q)$(MAKE) --no-print-directory cuprobe workloads
	$(Q)bench/run.sh

# cuprobe finds the agent in ../lib/cuprobe/ relative to its own binary
# (preflight_agent in user/core/session/preflight.c), so both go under one PREFIX.
PREFIX  ?= /usr/local
BINDIR  := $(DESTDIR)$(PREFIX)/bin
AGENTDIR := $(DESTDIR)$(PREFIX)/lib/cuprobe
MAN1DIR := $(DESTDIR)$(PREFIX)/share/man/man1
MAN1    := $(wildcard man/*.1)
# The daemon's files (deploy/): its systemd unit, its config (never over an
# existing one) and the examples, with the paths of this PREFIX and SYSCONFDIR.
SYSCONFDIR ?= /etc
UNITDIR  := $(DESTDIR)$(PREFIX)/lib/systemd/system
CONFDIR  := $(DESTDIR)$(SYSCONFDIR)/cuprobe
EXAMPLEDIR := $(DESTDIR)$(PREFIX)/share/cuprobe/examples
DEPLOY_SED := sed -e 's|/usr/local/bin/cuprobe|$(PREFIX)/bin/cuprobe|' \
		  -e 's|/etc/cuprobe/|$(SYSCONFDIR)/cuprobe/|'

install: cuprobe $(AGENT_LIB)
	$(call msg,INSTALL,$(DESTDIR)$(PREFIX))
	$(Q)install -d $(BINDIR) $(AGENTDIR) $(MAN1DIR)
	$(Q)install -m 0755 cuprobe $(BINDIR)/cuprobe
	$(Q)install -m 0644 $(AGENT_LIB) $(AGENTDIR)/libcuprobe-agent.so
	$(Q)install -m 0644 $(MAN1) $(MAN1DIR)/
	$(Q)install -d $(UNITDIR) $(CONFDIR) $(EXAMPLEDIR)
	$(Q)$(DEPLOY_SED) deploy/cuprobe-daemon.service > $(UNITDIR)/cuprobe-daemon.service
	$(Q)chmod 0644 $(UNITDIR)/cuprobe-daemon.service
	$(Q)[ -e $(CONFDIR)/daemon.conf ] || install -m 0644 deploy/daemon.conf $(CONFDIR)/daemon.conf
	$(Q)install -m 0644 deploy/daemon.conf deploy/daemonset.yaml deploy/prometheus.yml \
		deploy/web.yml $(EXAMPLEDIR)/

# make image: the daemon's container image (Containerfile), built from scratch
# with buildah (no registry) and written as an OCI archive for podman/docker load.
IMAGE_VERSION  ?= $(or $(VERSION),0.1.0)
IMAGE_TAG      ?= cuprobe:$(IMAGE_VERSION)
IMAGE_ARCHIVE  ?= $(OUTPUT)/image/cuprobe-image.tar
IMAGE_REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)
IMAGE_SOURCE   ?= $(shell git config --get remote.origin.url 2>/dev/null)

image: cuprobe $(AGENT_LIB)
	$(call msg,IMAGE,$(IMAGE_ARCHIVE))
	$(Q)IMAGE_TAG='$(IMAGE_TAG)' IMAGE_ARCHIVE='$(IMAGE_ARCHIVE)' IMAGE_VERSION='$(IMAGE_VERSION)' \
		IMAGE_REVISION='$(IMAGE_REVISION)' IMAGE_SOURCE='$(IMAGE_SOURCE)' scripts/build-image.sh

clean:
	$(call msg,CLEAN)
	$(Q)rm -rf $(OUTPUT) cuprobe

-include $(shell find $(OUTPUT) -name '*.d' -not -path '$(OUTPUT)/workloads/*' 2>/dev/null)
