#!/usr/bin/env bash
# Builds cuprobe's container image (Containerfile) with buildah, from scratch,
# and writes it as an OCI archive. `make image` runs it with its variables:
#   scripts/build-image.sh [--stage-only ROOTFS]
# Environment (the Makefile's defaults): IMAGE_TAG (cuprobe:VERSION),
# IMAGE_ARCHIVE (.output/image/cuprobe-image.tar), IMAGE_VERSION,
# IMAGE_REVISION, IMAGE_SOURCE.
#
# The image's root is staged from this build: ./cuprobe (the dynamic build: the
# static one has no daemon), the agent, the man pages, deploy/daemon.conf, and
# the shared libraries ldd says cuprobe loads, each copied from the host under
# its soname, with the dynamic linker. Nothing else: no shell, no package
# manager. With --stage-only it stages ROOTFS and stops (for docker build).
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "build-image: $*" >&2; exit 1; }

OUT=.output/image
ROOTFS=$OUT/rootfs
stage_only=0
if [ "${1:-}" = --stage-only ]; then
	stage_only=1
	ROOTFS=${2:?"--stage-only needs the folder to stage into"}
fi

BIN=./cuprobe
AGENT=.output/libcuprobe-agent.so
[ -x "$BIN" ] || die "no ./cuprobe: run make first"
[ -f "$AGENT" ] || die "no $AGENT: run make first"
# The static build (make STATIC=1) has no daemon: the image is the daemon's.
if ! ldd "$BIN" >/dev/null 2>&1; then
	die "./cuprobe is the static build, which has no daemon: run make (without STATIC=1) first"
fi

# stage_file SRC DEST MODE: DEST under the root, its folders made.
stage_file() {
	install -D -m "$3" "$1" "$ROOTFS$2"
}

# Staged again from nothing; a folder given that holds something else is refused.
if [ -n "$(ls -A "$ROOTFS" 2>/dev/null)" ] && [ ! -x "$ROOTFS/usr/bin/cuprobe" ]; then
	die "$ROOTFS holds files that are no image root staged before: give a new or empty folder"
fi
rm -rf "$ROOTFS"
mkdir -p "$ROOTFS"
# Debian's merged /usr: /lib and /lib64 are links into /usr, as the binary's
# interpreter (/lib64/ld-linux-x86-64.so.2) and ldd's paths expect.
mkdir -p "$ROOTFS/usr/bin" "$ROOTFS/usr/lib" "$ROOTFS/usr/lib64"
ln -s usr/lib "$ROOTFS/lib"
ln -s usr/lib64 "$ROOTFS/lib64"
ln -s usr/bin "$ROOTFS/bin"

# cuprobe finds the agent in ../lib/cuprobe/ beside its binary (preflight_agent).
# Debug sections off (the symbol table stays: cuprobe probes its own functions).
strip --strip-debug -o "$ROOTFS/usr/bin/cuprobe" "$BIN"
chmod 0755 "$ROOTFS/usr/bin/cuprobe"
mkdir -p "$ROOTFS/usr/lib/cuprobe"
strip --strip-debug -o "$ROOTFS/usr/lib/cuprobe/libcuprobe-agent.so" "$AGENT"
chmod 0644 "$ROOTFS/usr/lib/cuprobe/libcuprobe-agent.so"
for m in man/*.1; do stage_file "$m" "/usr/share/man/man1/${m##*/}" 0644; done
stage_file LICENSE /usr/share/doc/cuprobe/LICENSE 0644
# The default config: loopback only (no web-config); the DaemonSet's ConfigMap
# is mounted over /etc/cuprobe.
stage_file deploy/daemon.conf /etc/cuprobe/daemon.conf 0644

# The libraries: what the dynamic linker loads for cuprobe, each under the name
# it is loaded by (its soname), in the folder it was found in here (with /usr).
ldd "$BIN" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
while read -r lib; do
	dir=$(dirname "$lib")
	real_dir=$(cd "$dir" && pwd -P)
	case "$real_dir" in /usr/*) ;; *) real_dir=/usr$real_dir ;; esac
	install -D -m 0755 "$(readlink -f "$lib")" "$ROOTFS$real_dir/${lib##*/}"
done
interp=$(readelf -l "$BIN" | sed -n 's/.*Requesting program interpreter: \(.*\)\]/\1/p')
[ -n "$interp" ] && [ -e "$ROOTFS$interp" ] || die "the dynamic linker $interp was not staged"

# What the daemon opens besides its libraries: users and groups for --group
# (glibc's files NSS, built into libc), its state and cache folders, /tmp.
mkdir -p "$ROOTFS/etc"
printf 'root:x:0:0:root:/root:/usr/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n' \
	> "$ROOTFS/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' > "$ROOTFS/etc/group"
printf 'passwd: files\ngroup: files\nhosts: files dns\n' > "$ROOTFS/etc/nsswitch.conf"
# The DaemonSet's mounts: traces, the web-config Secret, the kubelet's pods/.
install -d -m 0755 "$ROOTFS/var/lib/cuprobe" "$ROOTFS/etc/cuprobe-tls" "$ROOTFS/var/lib/kubelet/pods" \
	"$ROOTFS/proc" "$ROOTFS/sys" "$ROOTFS/dev" "$ROOTFS/root"
install -d -m 0700 "$ROOTFS/var/cache/cuprobe"
install -d -m 1777 "$ROOTFS/tmp"
[ $stage_only -eq 1 ] && { echo "build-image: staged $ROOTFS"; exit 0; }

command -v buildah >/dev/null || die "buildah is missing: apt-get install buildah (or scripts/install-deps.sh)"
: "${IMAGE_TAG:=cuprobe:latest}"
: "${IMAGE_ARCHIVE:=$OUT/cuprobe-image.tar}"
: "${IMAGE_VERSION:=unknown}"
: "${IMAGE_REVISION:=$(git rev-parse HEAD 2>/dev/null || echo unknown)}"
: "${IMAGE_SOURCE:=$(git config --get remote.origin.url 2>/dev/null || echo unknown)}"
# A storage of its own for the build only (vfs: no overlay mount needed, in a
# VM or a container), so that the host's containers/storage and its driver are
# not touched; the archive is what is kept.
mkdir -p "$OUT"
IMAGE_STORAGE=$(mktemp -d "$PWD/$OUT/storage.XXXXXX")
trap 'rm -rf "$IMAGE_STORAGE"' EXIT
bh=(buildah --root "$IMAGE_STORAGE/root" --runroot "$IMAGE_STORAGE/run" --storage-driver vfs)
# The image's files are root's whoever builds it.
buildah_out=$("${bh[@]}" build --quiet --layers=false -f Containerfile -t "$IMAGE_TAG" \
	--build-arg "VERSION=$IMAGE_VERSION" --build-arg "REVISION=$IMAGE_REVISION" \
	--build-arg "SOURCE=$IMAGE_SOURCE" \
	--build-arg "CREATED=$(date -u -d "@${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}" +%Y-%m-%dT%H:%M:%SZ)" \
	"$ROOTFS" 2>&1) || die "buildah build failed: $buildah_out"
mkdir -p "$(dirname "$IMAGE_ARCHIVE")"
rm -f "$IMAGE_ARCHIVE"
out=$("${bh[@]}" push --quiet "$IMAGE_TAG" "oci-archive:$IMAGE_ARCHIVE:$IMAGE_TAG" 2>&1) ||
	die "buildah push to $IMAGE_ARCHIVE failed: $out"
size=$(du -sk "$ROOTFS" | cut -f1)
echo "build-image: $IMAGE_TAG in $IMAGE_ARCHIVE ($(du -k "$IMAGE_ARCHIVE" | cut -f1) KiB; its root $size KiB unpacked)"
echo "build-image: podman load -i $IMAGE_ARCHIVE, then tag and push it to your registry (docs/install.md)"
