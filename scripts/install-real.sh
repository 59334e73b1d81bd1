#!/bin/sh
# Installs NVIDIA's real user-space binaries for the `real` and `torch` test
# tiers into a cache folder, without installing a driver. Safe to run again: a
# step whose result is already there is skipped, and the downloaded wheels are kept.
#   scripts/install-real.sh            the driver library, the CUDA wheels, HTA and the plugin
#   scripts/install-real.sh --torch    also torch with its CUDA wheels (~3.4 GB), and an
#                                      older torch without them (~800 MB more)
# Root. The folder is /var/cache/cuprobe/real, or CUPROBE_REAL=DIR. It holds:
#   libcuda1/   Debian bookworm non-free libcuda1, unpacked (dpkg-deb -x)
#   lib/        libcuda.so.1 and libcuda.so, links to the unpacked driver
#   venv/       a Python venv with nvidia-cuda-runtime (13), -cu12, nvidia-cuda-cupti,
#               nvidia-nccl-cu13 and, with --torch, torch
#   venv-torch-old/  with --torch, torch 2.4.1 (pre-C++11 std::string, as PyPI's
#               wheels were up to 2.6) without its nvidia-* wheels (~2 GB): the CUDA
#               libraries it links against are stand-ins (tests/real/cuda-stubs.sh) beside
#               nvidia-cuda-runtime-cu12's libcudart, enough for CPU tensors (~1.8 GB
#               installed, 70 s to 2 minutes; the torch wheel is the one download, 800 MB)
#   hta-venv/   a second venv, without torch: Holistic Trace Analysis and TensorBoard's
#               profiler plugin (torch-tb-profiler), to load cuprobe's traces with
#               (~45 MB of wheels, ~300 MB installed, about a minute)
#   wheels/     the wheels pip downloaded, installed from here when a venv is made again
#   env.sh      shell variables naming all of these, for the tests
set -eu
torch=0
for a in "$@"; do
	case "$a" in
	--torch) torch=1 ;;
	-h | --help) sed -n '2,22p' "$0"; exit 0 ;;
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

# (c') An older torch, only with --torch, for --step torch's other form of
# record_function's entry (tests/real/torch_versions.sh). Its nvidia-* wheels
# are not installed (no GPU code runs): cuda-stubs.sh gives torch/lib the
# libraries it names, and .spec says what the venv holds.
TORCH_OLD=2.4.1
oldvenv=$real/venv-torch-old
oldpy=$oldvenv/bin/python
old_deps="filelock typing_extensions sympy networkx jinja2 fsspec numpy nvidia-cuda-runtime-cu12"
opip() { "$oldpy" -m pip --disable-pip-version-check "$@"; }
# pip's complaint that torch's nvidia-* and triton requirements are missing is
# expected: its output is shown only when a step fails.
opip_quiet() {
	opip "$@" >"$oldvenv/.pip.log" 2>&1 || { cat "$oldvenv/.pip.log" >&2; return 1; }
}
old_install() {
	{ opip install -q --no-index --find-links "$real/wheels" --no-deps "torch==$TORCH_OLD" &&
		opip install -q --no-index --find-links "$real/wheels" $old_deps; } >/dev/null 2>&1 &&
		echo "install-real: torch==$TORCH_OLD from $real/wheels, nothing downloaded" && return 0
	echo "install-real: downloading torch==$TORCH_OLD (~800 MB, without its nvidia-* wheels) into $real/wheels"
	opip_quiet download -d "$real/wheels" --no-deps "torch==$TORCH_OLD" &&
		opip_quiet download -d "$real/wheels" $old_deps &&
		opip_quiet install --no-index --find-links "$real/wheels" --no-deps "torch==$TORCH_OLD" &&
		opip_quiet install --no-index --find-links "$real/wheels" $old_deps
}
if [ "$torch" -eq 1 ] && [ "$(cat "$oldvenv/.spec" 2>/dev/null)" != "torch==$TORCH_OLD $old_deps" ]; then
	t=$(now)
	rm -rf "$oldvenv"
	python3 -m venv "$oldvenv" || die "python3 -m venv $oldvenv failed"
	old_install || die "pip install torch==$TORCH_OLD failed: is PyPI reachable, is there ~3 GB free under $real?"
	oldlib=$("$oldpy" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/torch/lib
	sh "$(dirname "$0")/../tests/real/cuda-stubs.sh" "$oldlib" "$oldlib" >/dev/null ||
		die "tests/real/cuda-stubs.sh $oldlib failed (above): it needs gcc, readelf and nm"
	"$oldpy" -c 'import torch; torch.ones(2, requires_grad=True).sum().backward()' ||
		die "torch==$TORCH_OLD installed in $oldvenv, but does not train on CPU (above)"
	echo "torch==$TORCH_OLD $old_deps" >"$oldvenv/.spec"
	took "venv-torch-old: torch $TORCH_OLD" "$t" "$oldvenv"
fi

# (d) The trace analysis tools, in a venv of their own so that their numpy and
# pandas pins never meet torch's. HTA's own requirements name jupyterlab and
# pytest, for its notebooks and its tests, and the plugin's name tensorboard,
# for its web server: none is imported by what loads a trace, so both are
# installed without their requirements, beside the modules they import
# (HTA imports psutil and yaml without naming them). HTA 0.5.0 fails on
# pandas 3 (it stores int64 correlations into an int8 column, which pandas 3
# refuses), hence pandas<3.
t=$(now)
tvenv=$real/hta-venv
tpy=$tvenv/bin/python
tools="holistictraceanalysis==0.5.0 torch-tb-profiler==0.4.3"
tool_deps="numpy pandas<3 plotly pydot networkx psutil pyyaml absl-py"
tpip() { "$tpy" -m pip --disable-pip-version-check "$@"; }
# pip's complaint that HTA's and the plugin's unused requirements are missing
# is expected: its output is shown only when a step fails.
tpip_quiet() {
	tpip "$@" >"$tvenv/.pip.log" 2>&1 || { cat "$tvenv/.pip.log" >&2; return 1; }
}
tools_install() {
	{ tpip install -q --no-index --find-links "$real/wheels" --no-deps $tools &&
		tpip install -q --no-index --find-links "$real/wheels" $tool_deps; } >/dev/null 2>&1 &&
		echo "install-real: $tools from $real/wheels, nothing downloaded" && return 0
	echo "install-real: downloading $tools and $tool_deps into $real/wheels (~45 MB)"
	tpip_quiet download -d "$real/wheels" --no-deps $tools &&
		tpip_quiet download -d "$real/wheels" $tool_deps &&
		tpip_quiet install --no-index --find-links "$real/wheels" --no-deps $tools &&
		tpip_quiet install --no-index --find-links "$real/wheels" $tool_deps
}
# The venv is made again when what it should hold changed (.spec says what it holds).
if [ "$(cat "$tvenv/.spec" 2>/dev/null)" != "$tools $tool_deps" ]; then
	rm -rf "$tvenv"
	python3 -m venv "$tvenv" || die "python3 -m venv $tvenv failed"
	tools_install || die "pip install $tools failed: is PyPI reachable (pip config, proxy)?"
	"$tpy" -c 'import hta.trace_analysis, torch_tb_profiler.profiler' ||
		die "$tools installed, but do not import (above)"
	echo "$tools $tool_deps" >"$tvenv/.spec"
fi
took "hta-venv: HTA, torch-tb-profiler" "$t" "$tvenv"

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
REAL_HTA_PY=$tpy
REAL_TORCH=$(pip show -q torch >/dev/null 2>&1 && echo 1 || echo 0)
REAL_PY_OLD=$oldpy
REAL_TORCH_OLD=$([ -f "$oldvenv/.spec" ] && echo "$TORCH_OLD" || echo 0)
EOF
mv "$real/env.sh.new" "$real/env.sh"
echo "install-real: all in $real ($(du -sh "$real" | cut -f1)); variables in $real/env.sh"
