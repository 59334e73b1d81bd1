#!/bin/sh
# Regenerate vmlinux/<arch>/vmlinux.h from the running kernel's BTF.
# Usage: scripts/gen-vmlinux.sh [ARCH]   (default: x86)
set -eu
arch=${1:-x86}
btf=${BTF:-/sys/kernel/btf/vmlinux}
bpftool=${BPFTOOL:-bpftool}
if [ ! -r "$btf" ]; then
	echo "gen-vmlinux: $btf is missing: this kernel lacks BTF (CONFIG_DEBUG_INFO_BTF=y); pass BTF=path" >&2
	exit 1
fi
out=$(dirname "$0")/../vmlinux/$arch/vmlinux.h
mkdir -p "$(dirname "$out")"
"$bpftool" btf dump file "$btf" format c > "$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out"
