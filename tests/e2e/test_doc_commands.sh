#!/usr/bin/env bash
# Every cuprobe command line that README.md, docs/*.md, the man pages and each
# command's --help show as an example (tests/e2e/doc_commands.py finds them) runs
# as shown and exits 0, with the test's workload in place of the program:
#   python train.py, ./train    -> demo (it calls cuprobe_step every iteration)
#   train_step                  -> cuprobe_step;  python3=... (daemon) -> demo=cuprobe_step
#   ./basic                     -> the basic workload
#   4242, 4243                  -> the pids of running demos
#   /tmp/traces, /etc/cuprobe/daemon.conf -> the test's folder, deploy/daemon.conf
#   the daemon's port 9464      -> a free one; a daemon also gets -o and --cgroup, so that
#                                  it samples only the test's workloads, and -l unless shown
#   /etc/cuprobe/web.yml        -> the man page's web-config, with a certificate made here
# A command that cannot run here is listed in SKIP with the reason; a command in
# neither list fails the test, so that no new example goes untried.
# A command that steps by PyTorch's own ranges (--step torch) runs in the torch tier:
# tests/real/torch_doc_commands.sh runs this script with DOC_TORCH set to a PyTorch
# training script's command line, which stands for python train.py, and runs those only.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"

declare -A SKIP=(
	["cuprobe capture --daemon https://10.0.0.7:9464 --cacert ca.crt --cert me.crt --key me.key --pid 4242 --steps 5"]="needs a remote daemon with TLS and its certificates"
	["cuprobe capture --daemon https://10.0.0.7:9464 --cacert ca.crt --user ops --password-file ~/.cuprobe-pass --pid 4242 --steps 5"]="needs a remote daemon with TLS and basic auth"
	["cuprobe capture --job train-7 --steps 3 -o traces --prometheus http://prom:9090 --cacert ca.crt --user ops --password-file ~/.cuprobe-pass"]="needs a Prometheus and the daemons of a job's ranks"
	["cuprobe capture --job train-7 -n 3 -o traces --daemon https://ranks:9464 --cacert ca.crt --user ops --password-file ~/.cuprobe-pass"]="needs the daemons of a job's ranks behind one name (Kubernetes)"
	["cuprobe capture --job train-7 -n 3 -o traces --prometheus http://prom:9090 --cacert ca.crt --user ops --password-file ~/.cuprobe-pass"]="needs a Prometheus and the daemons of a job's ranks"
	["cuprobe report --weight gpu --flamegraph gpu.svg cuprobe-runs"]="needs GPU times: traces of record --cupti on a GPU"
)

WORK=$TMP/cwd
mkdir -p "$WORK"
PROG="$W/demo --iters 20 --sleep-ms 5"
[ -n "${DOC_TORCH:-}" ] && PROG=$DOC_TORCH
PORT=$(free_port)
P1= P2=
cgroup_setup doccmd || { CGNAME=; in_cg=(); }
trap 'cgroup_kill; [ -n "${DPID:-}" ] && kill $DPID 2>/dev/null; wait 2>/dev/null; rm -rf "$TMP"' EXIT

# The command as this test runs it (the substitutions above).
substitute() {
	sed -e "s#python3=[^ ]*#demo=cuprobe_step#" \
	    -e "s#python train\.py#$PROG#g; s#\./train\b#$PROG#g; s#\./basic#$W/basic#g" \
	    -e "s#train_step#cuprobe_step#g" \
	    -e "s#4242,4243#$P1,$P2#g; s#4242#$P1#g; s#4243#$P2#g" \
	    -e "s#/tmp/traces#$TMP/traces#g; s#/etc/cuprobe/daemon.conf#$ROOT/deploy/daemon.conf#g" \
	    -e "s#127\.0\.0\.1:9464#127.0.0.1:$PORT#g; s#0\.0\.0\.0:9464#0.0.0.0:$(free_port)#g" \
	    -e "s#/etc/cuprobe/web.yml#$TMP/tls/web.yml#g" \
	    -e "s#^cuprobe #$CUPROBE #; s#(cuprobe #($CUPROBE #g" <<<"$1"
}

# cuprobe-daemon(1)'s web-config: TLS with a certificate made here, a bcrypt password.
make_webconf() {
	mkdir -m 0700 -p "$TMP/tls"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
		-subj /CN=localhost -keyout "$TMP/tls/server.key" -out "$TMP/tls/server.crt" \
		>/dev/null 2>&1
	chmod 0600 "$TMP/tls/server.key"
	cat >"$TMP/tls/web.yml" <<YML
tls_server_config:
  cert_file: server.crt
  key_file: server.key
basic_auth_users:
  prometheus: $(mkpasswd -m bcrypt -R 5 secret)
cuprobe:
  open_paths: [ /healthz ]
YML
	chmod 0600 "$TMP/tls/web.yml"
}
make_webconf

# Running demos for -p: long enough for an attach, a schedule of a few steps, a compare.
start_targets() {
	"${in_cg[@]}" "$W/demo" --iters 300 --sleep-ms 10 2>/dev/null &
	P1=$!
	"${in_cg[@]}" "$W/demo" --iters 300 --sleep-ms 10 2>/dev/null &
	P2=$!
	sleep 0.3
}

stop_targets() {
	kill $P1 $P2 2>/dev/null
	wait $P1 $P2 2>/dev/null
}

# A daemon as the example starts it, its port and folder the test's: it must start, and
# run until stopped.
run_daemon() {
	local where=$1 doc=$2 cmd=$3 log=$TMP/daemon.$RANDOM.log
	[[ $cmd == *" -l "* ]] || cmd+=" -l 127.0.0.1:$(free_port)"
	timeout 4 $cmd -o "$TMP/daemon" ${CGNAME:+--cgroup /$CGNAME} >"$log" 2>&1
	rc=$?
	if [ $rc -eq 124 ] && grep -q "listening on" "$log"; then
		ok "$where: $doc"
	else
		not_ok "$where: $doc" "rc $rc: $(grep -v libbpf "$log" | tail -3 | tr '\n' ' ')"
	fi
}

# A daemon in the background for capture's examples, sampling the test's demos.
start_daemon() {
	"$CUPROBE" daemon -i 1 --step demo=cuprobe_step -l "127.0.0.1:$PORT" -o "$TMP/capd" \
		${CGNAME:+--cgroup /$CGNAME} >"$TMP/capd.log" 2>&1 &
	DPID=$!
	until_true 30 grep -q "listening on" "$TMP/capd.log"
}

# torch_line DOC: the command steps by PyTorch's ranges (the torch tier runs it).
torch_line() { [[ $1 == *"--step torch"* ]]; }

run_one() {
	local where=$1 doc=$2 cmd out rc
	if [ -n "${DOC_TORCH:-}" ]; then
		torch_line "$doc" || return 0
	elif torch_line "$doc"; then
		echo "# runs in the torch tier (tests/real/torch_doc_commands.sh): $where: $doc"
		return
	fi
	if [ -n "${SKIP[$doc]:-}" ]; then
		echo "# not run here: $where: $doc (${SKIP[$doc]})"
		return
	fi
	case $doc in
	*" -p "* | *"--pid "*) start_targets ;;
	esac
	cmd=$(substitute "$doc")
	case $doc in
	"cuprobe daemon "*) run_daemon "$where" "$doc" "$cmd"; stop_targets; return ;;
	*"capture "*"--pid"*)
		[ -n "${DPID:-}" ] || start_daemon
		# The example without --daemon asks the default port: the test's daemon is on another.
		[[ $cmd == *--daemon* ]] || cmd=${cmd/capture --pid/capture --daemon 127.0.0.1:$PORT --pid}
		sleep 1 ;;
	esac
	out=$(cd "$WORK" && timeout 120 bash -c "$cmd" 2>&1)
	rc=$?
	case $doc in *" -p "* | *"--pid "*) stop_targets ;; esac
	if [ $rc -eq 0 ]; then
		ok "$where: $doc"
	else
		not_ok "$where: $doc" "rc $rc: $(grep -v libbpf <<<"$out" | tail -3 | tr '\n' ' ')"
	fi
}

# Records first: the reports read what they wrote; compare before its report.
mapfile -t cmds < <(python3 "$ROOT/tests/e2e/doc_commands.py" "$CUPROBE" |
	awk -F'\t' '{ o = $2 ~ /^cuprobe (record|--version)/ ? 0 : $2 ~ /^cuprobe (compare|daemon)/ ? 1 : 2
		      print o "\t" $0 }' | sort -s -t$'\t' -k1,1n | cut -f2-)
[ ${#cmds[@]} -ge 20 ] && ok "the pages show ${#cmds[@]} example commands" ||
	not_ok "the pages show example commands" "only ${#cmds[@]} found"
for line in "${cmds[@]}"; do
	run_one "${line%%$'\t'*}" "${line#*$'\t'}"
done
if [ -n "${DOC_TORCH:-}" ]; then
	n=$(printf '%s\n' "${cmds[@]}" | cut -f2- | grep -c -- "--step torch")
	[ "$n" -ge 3 ] && ok "the pages show $n --step torch examples, each run above" ||
		not_ok "the pages show --step torch examples" "only $n found"
	done_testing
	exit 0
fi

# SKIP names only commands some page still shows.
stale=
for doc in "${!SKIP[@]}"; do
	printf '%s\n' "${cmds[@]}" | cut -f2- | grep -qxF -- "$doc" || stale+="$doc; "
done
[ -z "$stale" ] && ok "every command SKIP lists is on a page" ||
	not_ok "every command SKIP lists is on a page" "no page shows: $stale"

# The files the examples name are there.
for f in report.json summary.json launches.csv stacks.folded launches.svg; do
	[ -s "$WORK/$f" ] && ok "the examples wrote $f" || not_ok "the examples wrote $f" "missing or empty"
done
done_testing
