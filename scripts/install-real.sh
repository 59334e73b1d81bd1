#!/bin/sh
# Installs NVIDIA's real user-space binaries for the `real` and `torch` test
# tiers into a cache folder, without installing a driver. Safe to run again: a
# step whose result is already there is skipped, and the downloaded wheels are kept.
#   scripts/install-real.sh            the driver library and the CUDA wheels
#   scripts/install-real.sh --torch    also torch with its CUDA wheels (~3.4 GB)
# Root. The folder is /var/cache/cuprobe/real, or CUPROBE_REAL=DIR. It holds:
#   libcuda1/   Debian bookworm non-free libcuda1, unpacked (dpkg-deb -x)
#   lib/        libcuda.so.1 and libcuda.so, links to the unpacked driver
#   venv/       a Python venv with nvidia-cuda-runtime (13), -cu12, nvidia-cuda-cupti,
#               nvidia-nccl-cu13 and, with --torch, torch
#   wheels/     the wheels pip downloaded, installed from here when the venv is made again
#   env.sh      shell variables naming all of these, for the tests
set -eu
torch=0
for a in "$@"; do
	case "$a" in
	--torch) torch=1 ;;
	-h | --help) sed -n '2,14p' "$0"; exit 0 ;;
	*) echo "install-real: unknown option $a (only --torch)" >&2; exit 2 ;;
	esac
done
if [ "$(id -u)" -ne 0 ]; then
	echo "install-real: needs root (apt-get, the cache folder): run it with sudo" >&2
	exit 1
fi
real=${CUPROBE_REAL:-/var/cache/cuprobe/real}
mkdir -p "$real"
real=$(cd "$real" && pwd)
# One run at a time: two worktrees may run the tests at once.
exec 9>"$real/.lock"
flock 9

die() { echo "install-real: $*" >&2; exit 1; }
now() { date +%s.%N; }
took() { # step name, start time, path whose size is shown
	printf 'install-real: %-34s %6.1f s  %s\n' "$1" "$(echo "$(now) - $2" | bc)" \
		"$(du -sh "$3" 2>/dev/null | cut -f1)"
}
command -v bc >/dev/null || took() { echo "install-real: $1 done ($(du -sh "$3" 2>/dev/null | cut -f1))"; }

# (a) The driver library, from Debian non-free, unpacked and never installed.
t=$(now)
drv=$(find "$real/libcuda1/usr/lib" -name 'libcuda.so.[0-9]*.*' -type f 2>/dev/null | sort | head -1)
if [ -z "$drv" ]; then
	src=/etc/apt/sources.list.d/cuprobe-nonfree.sources
	key=/usr/share/keyrings/debian-archive-keyring.gpg
	[ -r "$key" ] || die "no Debian archive keyring at $key: apt-get install debian-archive-keyring"
	if [ ! -f "$src" ]; then
		cat > "$src" <<-EOF
		# cuprobe's tests (scripts/install-real.sh): libcuda1 is downloaded from here, never installed.
		Types: deb
		URIs: http://deb.debian.org/debian
		Suites: bookworm
		Components: non-free
		Signed-By: $key
		EOF
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq -o Dir::Etc::sourcelist="$src" -o Dir::Etc::sourceparts=- \
		-o APT::Get::List-Cleanup=0 >/dev/null ||
		die "apt-get update of $src failed: is deb.debian.org reachable?"
	tmp=$(mktemp -d "$real/.deb.XXXXXX")
	(cd "$tmp" && apt-get download -qq libcuda1 >/dev/null 2>&1) ||
		{ rm -rf "$tmp"; die "apt-get download libcuda1 failed: Debian bookworm non-free (in $src) has no libcuda1 for $(dpkg --print-architecture)"; }
	rm -rf "$real/libcuda1.new"
	dpkg-deb -x "$tmp"/libcuda1_*.deb "$real/libcuda1.new" ||
		{ rm -rf "$tmp"; die "dpkg-deb -x of $(ls "$tmp") failed"; }
	mv "$tmp"/libcuda1_*.deb "$real/libcuda1.new/"
	rm -rf "$tmp" "$real/libcuda1"
	mv "$real/libcuda1.new" "$real/libcuda1"
	drv=$(find "$real/libcuda1/usr/lib" -name 'libcuda.so.[0-9]*.*' -type f 2>/dev/null | sort | head -1)
	[ -n "$drv" ] || die "libcuda1's package holds no libcuda.so.<version> under usr/lib"
fi
mkdir -p "$real/lib"
ln -sfn "$drv" "$real/lib/libcuda.so.1"
ln -sfn "$drv" "$real/lib/libcuda.so"
took "libcuda1 ($(basename "$drv"))" "$t" "$real/libcuda1"

# (b) A venv with the CUDA runtime wheels, the CUPTI wheel and NCCL's.
t=$(now)
venv=$real/venv
py=$venv/bin/python
# A by-hand install into the same venv (flock .venv.lock pip install ...) is waited for.
exec 8>"$real/.venv.lock"
flock 8
if [ ! -x "$py" ]; then
	if ! python3 -m venv "$venv" >/dev/null 2>&1; then
		rm -rf "$venv"
		export DEBIAN_FRONTEND=noninteractive
		apt-get install -y -qq --no-install-recommends python3-venv >/dev/null 2>&1 ||
			die "python3 -m venv failed and python3-venv could not be installed"
		python3 -m venv "$venv" || die "python3 -m venv $venv failed"
	fi
fi
pip() { "$py" -m pip --disable-pip-version-check "$@"; }
# The wheels themselves are kept in wheels/ (pip's HTTP cache keeps nothing
# where the index says no-store): what is there is installed without the network.
wheel_install() { # names...
	pip install -q --no-index --find-links "$real/wheels" "$@" >/dev/null 2>&1 &&
		echo "install-real: $* from $real/wheels, nothing downloaded" && return 0
	echo "install-real: downloading $* into $real/wheels"
	pip download -q -d "$real/wheels" "$@" &&
		pip install -q --no-index --find-links "$real/wheels" "$@"
}
wheels="nvidia-cuda-runtime nvidia-cuda-runtime-cu12 nvidia-cuda-cupti nvidia-nccl-cu13"
# pip show fails only when none of the names is installed: ask one by one.
missing=""
for w in $wheels; do pip show -q "$w" >/dev/null 2>&1 || missing="$missing $w"; done
if [ -n "$missing" ]; then
	wheel_install $wheels || die "pip install $wheels failed: is PyPI reachable (pip config, proxy)?"
fi
took "venv: $wheels" "$t" "$venv"

# (c) torch with its CUDA wheels, only when asked.
if [ "$torch" -eq 1 ]; then
	t=$(now)
	if ! pip show -q torch >/dev/null 2>&1; then
		wheel_install torch || die "pip install torch failed: is PyPI reachable, is there ~8 GB free under $real?"
	fi
	took "venv: torch" "$t" "$venv"
fi

# Where each piece is, for the tests (tests/real/lib.sh reads it).
site=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
find_lib() { # name pattern under the venv's nvidia/ folder
	find "$site/nvidia" -name "$1" 2>/dev/null | sort | head -1
}
cudart13=$(find_lib 'libcudart.so.13*')
cudart12=$(find_lib 'libcudart.so.12*')
cupti=$(find_lib 'libcupti.so.1[0-9]*' )
[ -n "$cudart13" ] || die "nvidia-cuda-runtime holds no libcudart.so.13 under $site/nvidia"
[ -n "$cudart12" ] || die "nvidia-cuda-runtime-cu12 holds no libcudart.so.12 under $site/nvidia"
[ -n "$cupti" ] || die "nvidia-cuda-cupti holds no libcupti.so under $site/nvidia"
cat > "$real/env.sh.new" <<EOF
# Written by scripts/install-real.sh: where NVIDIA's real binaries are.
REAL_DIR=$real
REAL_LIBCUDA=$drv
REAL_LIBDIR=$real/lib
REAL_PY=$py
REAL_CUDART13=$cudart13
REAL_CUDART12=$cudart12
REAL_CUPTI=$cupti
REAL_TORCH=$(pip show -q torch >/dev/null 2>&1 && echo 1 || echo 0)
EOF
mv "$real/env.sh.new" "$real/env.sh"
echo "install-real: all in $real ($(du -sh "$real" | cut -f1)); variables in $real/env.sh"
