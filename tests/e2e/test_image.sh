#!/usr/bin/env bash
# The container image (Containerfile, make image) and the DaemonSet that runs it:
# make image writes an OCI archive; its config (entrypoint, user, port, OCI
# labels, size under MAX_MIB); its files are cuprobe's and exactly the libraries
# cuprobe loads; the manifests' paths, ports and arguments are the image's and
# the daemon's (check_image.py). Then the daemon runs from the archive's own root
# (buildah mount; chroot, as this host's container runtime cannot set rlimits)
# the way deploy/daemonset.yaml runs it: its args, its ConfigMap, its Secret's
# web.yml with a certificate and a bcrypt hash made here, its volumes
# bind-mounted, the host's PID namespace, a network namespace of its own (it
# listens on 0.0.0.0:9464 there), and exactly the capabilities the manifest adds:
# /healthz and /metrics answer over TLS, a host CUDA workload (not root) is
# sampled, its trace lands in the hostPath, promtool accepts the metrics. Each
# needed capability taken away: the daemon says which, and exits; each optional
# one: it warns. About 30 s.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"
CI="python3 $ROOT/tests/e2e/check_image.py"
# The image's files unpacked (26 MiB when written): cuprobe, its libraries, man pages.
MAX_MIB=40
VERSION=0.0.0-e2e

ST=$TMP/storage
bh=(buildah --root "$ST/root" --runroot "$ST/run" --storage-driver vfs)
DPID= WL=
cleanup() {
	[ -n "$DPID" ] && kill -KILL "$DPID" 2>/dev/null
	[ -n "$WL" ] && kill -KILL "$WL" 2>/dev/null
	cgroup_kill
	[ -d "$ST" ] && "${bh[@]}" rm --all >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT

missing=
for t in buildah capsh unshare nsenter setpriv openssl mkpasswd promtool curl; do
	command -v "$t" >/dev/null || missing="$missing $t"
done
if [ -n "$missing" ]; then
	not_ok "image: the tools the test needs" "missing:$missing (scripts/install-deps.sh installs them)"
	done_testing
	exit 0
fi

# ---- make image ----
ARCHIVE=$TMP/cuprobe-image.tar
t0=$(date +%s.%N)
# Not the make that runs the tests: its jobserver and flags are not ours.
if out=$(env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -C "$ROOT" --no-print-directory -s image \
	IMAGE_ARCHIVE="$ARCHIVE" IMAGE_TAG="cuprobe:$VERSION" IMAGE_VERSION="$VERSION" 2>&1) && [ -f "$ARCHIVE" ]; then
	ok "make image: an OCI archive in $(awk -v a="$(date +%s.%N)" -v b="$t0" 'BEGIN { printf "%.1f", a - b }') s"
else
	not_ok "make image" "$(echo "$out" | tail -3 | tr '\n' ' ')"
	done_testing
	exit 0
fi
expect "make image says where the archive is and how big" \
	grep -qE "cuprobe:$VERSION in $ARCHIVE \([0-9]+ KiB" <<<"$out"
expect "the archive's config: entrypoint /usr/bin/cuprobe, user 0, port 9464, OCI labels, under $MAX_MIB MiB" \
	$CI config "$ARCHIVE" "$VERSION" "$(git -C "$ROOT" rev-parse HEAD)" "$MAX_MIB"

# ---- its root, from the archive, as a user's podman load would have it ----
mkdir -p "$ST"
if ! ctr=$("${bh[@]}" from -q "oci-archive:$ARCHIVE" 2>&1) || ! M=$("${bh[@]}" mount "$ctr" 2>&1); then
	not_ok "buildah from oci-archive, mount" "$ctr ${M:-}"
	done_testing
	exit 0
fi
ok "buildah from oci-archive:, buildah mount: its root in $M"
# Every library the dynamic linker loads for cuprobe, from the image alone, and no other.
loaded=$(chroot "$M" /usr/lib64/ld-linux-x86-64.so.2 --list /usr/bin/cuprobe 2>&1)
grep -q "not found" <<<"$loaded" && not_ok "in its root, cuprobe's libraries all resolve" "$loaded" ||
	ok "in its root, cuprobe's libraries all resolve"
libs_loaded=$(awk '$2 == "=>" { print $3 } $1 ~ /^\// { print $1 }' <<<"$loaded" |
	while read -r l; do readlink -f "$M$l"; done | sed "s|^$M||" | sort -u)
libs_there=$(cd "$M" && find usr/lib usr/lib64 -name '*.so*' -not -path 'usr/lib/cuprobe/*' | sed 's|^|/|' | sort)
[ "$libs_loaded" = "$libs_there" ] && ok "its libraries are exactly those cuprobe loads ($(wc -l <<<"$libs_there"))" ||
	not_ok "its libraries are exactly those cuprobe loads" "$(diff <(echo "$libs_loaded") <(echo "$libs_there") | tr '\n' ' ')"
others=$(cd "$M" && find . -type f | sed 's|^\.||' | grep -vE '^/usr/lib(64)?/' |
	grep -vE '^/usr/bin/cuprobe$|^/usr/share/man/man1/cuprobe(-[a-z]+)?\.1$|^/usr/share/doc/cuprobe/LICENSE$' |
	grep -vE '^/etc/(passwd|group|nsswitch\.conf|cuprobe/daemon\.conf)$')
agent=$(cd "$M" && find usr/lib/cuprobe -type f)
[ -z "$others" ] && [ "$agent" = usr/lib/cuprobe/libcuprobe-agent.so ] &&
	ok "and besides them: cuprobe, the agent, the man pages, LICENSE, daemon.conf, passwd and group" ||
	not_ok "nothing else in the image" "$others $agent"
# What another tool (docker build) is given: the same root, staged alone.
scripts_out=$("$ROOT/scripts/build-image.sh" --stage-only "$TMP/staged" 2>&1)
[ "$(cd "$TMP/staged" && find . | sort)" = "$(cd "$M" && find . | sort)" ] &&
	ok "build-image.sh --stage-only: the image's root, file for file" ||
	not_ok "build-image.sh --stage-only: the image's root" "$scripts_out"
expect "the man pages are the project's" diff -r "$ROOT/man" "$M/usr/share/man/man1"
expect "the manifests agree with the image: paths, ports, args, volumes, hostPID, the unit's" \
	$CI manifest "$ROOT/deploy/daemonset.yaml" "$ROOT/deploy/cuprobe-daemon.service" "$M"

# ---- what the DaemonSet gives it ----
P=$TMP/plan
mkdir -p "$P" && $CI plan "$ROOT/deploy/daemonset.yaml" "$P"
mapfile -t ARGS <"$P/args"
CAPS=$(cat "$P/caps")
ENTRY=$(python3 -c "
import json, tarfile, sys
t = tarfile.open(sys.argv[1]); i = json.load(t.extractfile('index.json'))
b = lambda d: t.extractfile('blobs/' + d.replace(':', '/'))
m = json.load(b(i['manifests'][0]['digest'])); print(json.load(b(m['config']['digest']))['config']['Entrypoint'][0])" "$ARCHIVE")
# The Secret: web.yml as the manifest has it, with a certificate for 127.0.0.1 and a hash.
K=$TMP/secret
mkdir -p "$K"
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=ca \
	-keyout "$TMP/ca.key" -out "$TMP/ca.crt" 2>/dev/null &&
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=cuprobe \
		-keyout "$K/server.key" -out "$TMP/server.csr" 2>/dev/null &&
	printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >"$TMP/server.ext" &&
	openssl x509 -req -in "$TMP/server.csr" -CA "$TMP/ca.crt" -CAkey "$TMP/ca.key" -CAcreateserial \
		-days 2 -extfile "$TMP/server.ext" -out "$K/server.crt" 2>/dev/null
PASS='image test'
HASH=$(mkpasswd -m bcrypt -R 5 "$PASS")
python3 -c "
import sys
t = open(sys.argv[1]).read()
assert 'REPLACE-WITH-A-BCRYPT-HASH' in t
open(sys.argv[2], 'w').write(t.replace('REPLACE-WITH-A-BCRYPT-HASH', \"'\" + sys.argv[3] + \"'\"))" \
	"$P/web.yml" "$K/web.yml" "$HASH"
chmod 0400 "$K"/*
TRACES=$TMP/node/var/lib/cuprobe
mkdir -p "$TRACES"

# The host's workload, not root (as pods run), in the test's cgroup.
if ! cgroup_setup cuprobe-image-test; then
	not_ok "image: a cgroup of the test's own" "no writable cgroup2 mount in /proc/mounts"
	done_testing
	exit 0
fi
chmod 0711 "$TMP"
mkdir -m 0755 "$TMP/wl" && cp "$W/basic" "$TMP/wl/"

# in_pod M PLAN SECRET TRACES CAPS ENTRY ARGS...: in a mount and network namespace of
# its own (unshare), what the runtime and the volumes give a container (/proc of the
# host's PID namespace, /sys and the cgroup2 hierarchy read-only, /dev, then each
# volumeMount), then cuprobe in
# a chroot with exactly CAPS: every other capability leaves the bounding set, so root
# holds only those after exec, as in a container. It becomes the daemon (exec).
in_pod() {
	local m=$1 plan=$2 secret=$3 traces=$4 caps=$5 entry=$6 kind mp mode src drop="" c
	shift 6
	set -e
	ip link set lo up
	mount -t proc proc "$m/proc"
	mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$m/sys"
	mount -t cgroup2 -o ro,nosuid,nodev,noexec cgroup2 "$m/sys/fs/cgroup"
	mount -t tmpfs -o nosuid,mode=755 tmpfs "$m/dev"
	for c in null zero full random urandom tty; do touch "$m/dev/$c"; mount --bind "/dev/$c" "$m/dev/$c"; done
	while read -r kind mp mode src; do
		case "$kind:$src" in
		configMap:*) mount --bind "$plan/configmap" "$m$mp" ;;
		secret:*) mount --bind "$secret" "$m$mp" ;;
		hostPath:/var/lib/cuprobe) mount --bind "$traces" "$m$mp" ;;
		hostPath:/sys/kernel/tracing)
			# The node's tracefs; where this host has none mounted there, the same one.
			if mountpoint -q "$src"; then mount --bind "$src" "$m$mp"; else mount -t tracefs nodev "$m$mp"; fi ;;
		hostPath:*)
			# A path this host lacks (the kubelet's): an empty folder stands for it.
			[ -d "$src" ] || { src=$plan/empty; mkdir -p "$src"; }
			mount --rbind "$src" "$m$mp" ;;
		*) echo "in_pod: no way to mount a $kind volume" >&2; exit 1 ;;
		esac
		[ "$mode" = rw ] || mount -o remount,bind,ro "$m$mp"
	done <"$plan/mounts"
	for c in $(capsh --print | sed -n 's/^Bounding set =//p' | tr ',' ' '); do
		case ",$caps," in *",$c,"*) ;; *) [ "$c" = cap_setpcap ] || drop="$drop,$c" ;; esac
	done
	# CAP_SETPCAP last: without it no other can leave the bounding set.
	case ",$caps," in *,cap_setpcap,*) ;; *) drop="$drop,cap_setpcap" ;; esac
	exec capsh --chroot="$m" --drop="${drop#,}" --shell="$entry" -- "$@"
}
# start_pod CAPS LOG ARGS...: in_pod in the background; DPID is the daemon's pid.
start_pod() {
	local caps=$1 log=$2
	shift 2
	unshare --mount --net --propagation private bash -c "$(declare -f in_pod); in_pod \"\$@\"" \
		in_pod "$M" "$P" "$K" "$TRACES" "$caps" "$ENTRY" "$@" >"$log" 2>&1 &
	DPID=$!
}
# pod_curl ARGS...: curl in the daemon's network namespace, trusting the test's CA.
pod_curl() { nsenter --net="/proc/$DPID/ns/net" curl -s --cacert "$TMP/ca.crt" "$@"; }
healthy() { [ "$(pod_curl -o /dev/null -w '%{http_code}' https://127.0.0.1:9464/healthz)" = 200 ]; }
stop_pod() {
	kill -TERM "$DPID" 2>/dev/null && wait "$DPID"
	local rc=$?
	DPID=
	return $rc
}

# The manifest's arguments; then, so that the test's workload is sampled within its
# time, every second, all of it, and only the test's cgroup.
FAST=(--interval 1 --probability 1 --warmup 1 --window-steps 2 --budget 100 --cgroup "/$CGNAME")
"${in_cg[@]}" setpriv --reuid 65534 --regid 65534 --clear-groups "$TMP/wl/basic" --steps --threads 1 \
	--sleep-ms 50 --iters 600 >/dev/null 2>&1 &
WL=$!
start_pod "$CAPS" "$TMP/d.log" "${ARGS[@]}" "${FAST[@]}"
if ! until_true 60 healthy; then
	not_ok "the daemon from the image, as the DaemonSet runs it, answers /healthz" \
		"$(grep -v libbpf "$TMP/d.log" | tail -5 | tr '\n' ' ')"
	done_testing
	exit 0
fi
ok "the daemon from the image, with the DaemonSet's args and only $CAPS: /healthz over TLS (open path)"
expect "its log is quiet (--quiet; no warning of a missing capability)" sh -c "test ! -s \"$TMP/d.log\" || { cat \"$TMP/d.log\"; exit 1; }"
code=$(pod_curl -o /dev/null -w '%{http_code}' https://127.0.0.1:9464/metrics)
[ "$code" = 401 ] && ok "/metrics without the password: 401" || not_ok "/metrics without the password: 401" "got $code"
metrics() { pod_curl -u "prometheus:$PASS" https://127.0.0.1:9464/metrics; }
sampled() { metrics | grep -q "^cuprobe_windows_total{pid=\"$WL\",comm=\"basic\",cgroup=\"/$CGNAME\",mode=\"bpf\",result=\"ok\"} [1-9]"; }
expect "/metrics with the password: the host's workload (pid $WL, uid 65534) found and sampled" until_true 60 sampled
metrics >"$TMP/metrics.txt"
expect "promtool check metrics" promtool check metrics <"$TMP/metrics.txt"
expect "its windows' traces in the hostPath, with its launches" python3 -c "
import glob, json, sys
fs = glob.glob('$TRACES/daemon/run_*/*_$WL.*.pt.trace.json')
n = sum(json.load(open(f))['cuprobe']['launches'] for f in fs)
sys.exit(0 if n > 0 else 'traces %s: %d launches' % (fs, n))"
# Not in a subshell: the daemon is this shell's child.
stop_pod && ok "SIGTERM: it exits 0" || not_ok "SIGTERM: it exits 0" "$(tail -3 "$TMP/d.log" | tr '\n' ' ')"
{ kill -KILL "$WL" && wait "$WL"; } 2>/dev/null
WL=

# Each capability the daemon needs, taken away: it says which and exits 1.
for c in ${CAPS//,/ }; do
	start_pod "${CAPS/$c/}" "$TMP/d-$c.log" "${ARGS[@]}" "${FAST[@]}"
	case $c in
	cap_bpf | cap_perfmon | cap_sys_ptrace)
		wait "$DPID"
		rc=$? DPID=
		name=${c#cap_}
		[ $rc -eq 1 ] && grep -q "missing capabilities: CAP_${name^^} (" "$TMP/d-$c.log" &&
			ok "without $c: exits 1 naming CAP_${name^^} and how to grant it" ||
			not_ok "without $c: exits 1 naming it" "rc $rc: $(tr '\n' ' ' <"$TMP/d-$c.log")" ;;
	*)
		if until_true 60 healthy && grep -q "warning: without CAP_${c#cap_}" -i "$TMP/d-$c.log"; then
			ok "without $c: it runs, and warns what is lost ($(grep -o 'map_files[^)]*' "$TMP/d-$c.log" | head -1))"
		else
			not_ok "without $c: it runs and warns" "$(tr '\n' ' ' <"$TMP/d-$c.log")"
		fi
		stop_pod ;;
	esac
done
done_testing
