#!/bin/sh
# Builds stand-ins for the CUDA libraries a PyPI torch wheel links against,
# so that the wheel imports and trains on CPU tensors without its ~2 GB of
# nvidia-* wheels: for each library that torch/lib's files name but nothing
# in DIR's search path provides, a small .so with that soname that defines
# every versioned symbol torch takes from it, each a function that returns 1
# (an error code in every CUDA library), never called on CPU tensors.
#   tests/real/cuda-stubs.sh TORCH_LIB_DIR OUT_DIR
# Unversioned symbols nothing defines (NCCL's, cuRAND's) go into the stub of
# the library whose name prefix they carry.
set -eu
lib=$1 out=$2
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
needed() { readelf -d "$lib"/*.so 2>/dev/null | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort -u; }
for so in $(needed); do
	case "$so" in
	libcuda.so.*) continue ;; # the driver: only libcaffe2_nvrtc, loaded for GPU code
	libcu*.so.* | libnv*.so.* | libnccl.so.*) ;;
	*) continue ;;
	esac
	[ -e "$lib/$so" ] && continue
	# The real one where torch's RPATH finds it (nvidia-cuda-runtime-cu12's libcudart).
	find "$lib/../../nvidia" -name "$so" 2>/dev/null | grep -q . && continue
	for f in "$lib"/*.so; do nm -D --undefined-only "$f"; done |
		sed -n "s/^ *U \(.*\)@$so\$/\1/p" | sort -u >"$tmp/$so.syms"
	case "$so" in
	libnccl.*) p=nccl ;;
	libcurand.*) p=curand ;;
	*) p= ;;
	esac
	if [ -n "$p" ]; then
		for f in "$lib"/*.so; do nm -D --undefined-only "$f"; done |
			sed -n "s/^ *U \($p[A-Za-z0-9_]*\)\$/\1/p" | sort -u >>"$tmp/$so.syms"
	fi
	sed 's/.*/int &(void) { return 1; }/' "$tmp/$so.syms" >"$tmp/$so.c"
	{ echo "$so {"; [ -s "$tmp/$so.syms" ] && { echo "global:"; sed 's/.*/&;/' "$tmp/$so.syms"; }
	  echo "local: *; };"; } >"$tmp/$so.map"
	gcc -shared -fPIC -fno-builtin -w -o "$out/$so" -Wl,-soname,"$so" \
		-Wl,--version-script,"$tmp/$so.map" "$tmp/$so.c"
	echo "$so: $(wc -l <"$tmp/$so.syms") stub functions"
done
