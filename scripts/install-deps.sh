#!/bin/sh
# Installs what cuprobe needs to build and test, from Debian's packages, when
# it is missing. Safe to run again: it does nothing when all is present.
set -eu
pkgs="clang llvm libbpf-dev bpftool libelf-dev libdw-dev zlib1g-dev libzstd-dev
liblzma-dev libbz2-dev libjansson-dev libcmocka-dev systemtap-sdt-dev libclang-rt-14-dev make gcc g++
pkg-config python3 util-linux procps file groff-base
chromium libmicrohttpd-dev prometheus curl"
# The injection tests: a traced target (strace), a static one (libc6-dev's libc.a).
pkgs="$pkgs strace libc6-dev"
# Probe placement decodes function entries (Capstone); the benchmark compares with bpftrace.
pkgs="$pkgs libcapstone-dev bpftrace"
# The daemon's --web-config (YAML, TLS, bcrypt) and capture's TLS (OpenSSL, static too);
# the auth test makes certificates (openssl) and a bcrypt hash (whois's mkpasswd).
pkgs="$pkgs libyaml-dev libgnutls28-dev libcrypt-dev libssl-dev openssl whois"
# The fleet test's hosts: network namespaces and veths (ip), a mount namespace (unshare).
pkgs="$pkgs iproute2 util-linux"
# The container image (make image: buildah, vfs storage, no runtime needed) and its test:
# capsh runs the daemon with only the DaemonSet's capabilities; PyYAML reads the manifest.
pkgs="$pkgs buildah libcap2-bin python3-yaml"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "install-deps: missing packages:$missing; run as root or: sudo apt-get install$missing" >&2
		exit 1
	fi
	echo "install-deps: installing$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi
cuda=${CUDA_HOME:-/usr/local/cuda}
if [ ! -x "$cuda/bin/nvcc" ]; then
	echo "install-deps: no CUDA toolkit at $cuda (nvcc missing): install CUDA 12+ or pass CUDA_HOME=" >&2
	exit 1
fi
