#!/usr/bin/env bash
# cuprobe daemon's jobs: workloads started with the environments torchrun,
# srun and mpirun give their ranks, in cgroups laid out as a kubelet lays
# them out (systemd and cgroupfs drivers) under the test's own cgroup, with
# a fake kubelet folder laid out as the kubelet does: /metrics labels them
# (promtool checks it), GET /targets lists each job's ranks with their steps
# advancing, and POST /capture?job=&start_step=&steps=2 records exactly steps
# S and S+1 of every rank (the workloads' ground truth), with distributedInfo.
source "$(dirname "$0")/lib.sh"
source "$(dirname "$0")/daemon_lib.sh"
DC="python3 $ROOT/tests/e2e/check_daemon.py"

DPID=
cleanup() {
	[ -n "$DPID" ] && kill -KILL "$DPID" 2>/dev/null
	if [ -n "${CG:-}" ] && [ -d "$CG" ]; then
		for f in $(find "$CG" -name cgroup.procs); do
			for p in $(cat "$f"); do kill -KILL "$p" 2>/dev/null; done
		done
		sleep 0.2
		find "$CG" -depth -type d -exec rmdir {} \; 2>/dev/null
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT
if ! cgroup_setup cuprobe-jobs-test; then
	not_ok "jobs: a cgroup of the test's own" "no writable cgroup2 mount in /proc/mounts"
	done_testing
	exit 0
fi

# Pod 1 (systemd driver, BestEffort) and pod 2 (cgroupfs driver), as the kubelet names them.
UID1=6b3c5b4e-2f1a-4c3d-9e8f-0a1b2c3d4e5f
UID2=7e0c2f9a-1111-2222-3333-444455556666
CID=0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef
CG1=$CG/kubepods.slice/kubepods-besteffort.slice/kubepods-besteffort-pod${UID1//-/_}.slice/cri-containerd-$CID.scope
CG2=$CG/kubepods/besteffort/pod$UID2/$CID
mkdir -p "$CG1" "$CG2"
# "${in_cg1[@]}" CMD... &: runs CMD in pod 1's cgroup ($! is CMD's pid: sh execs it); in_cg2 in pod 2's.
in_cg1=(sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$CG1")
in_cg2=(sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$CG2")

# The kubelet's folder: etc-hosts, the service-account token's projected volume
# (its files links into ..data, as the atomic writer makes them), a downward API volume.
KL=$TMP/kubelet
pod_dir() {
	local d=$KL/pods/$1 ts=..2024_05_01_10_00_00.123
	mkdir -p "$d/volumes/kubernetes.io~projected/kube-api-access-x7k2p/$ts" \
		"$d/volumes/kubernetes.io~downward-api/podinfo/$ts"
	printf '# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\n10.244.1.7\t%s\n' "$2" >"$d/etc-hosts"
	(cd "$d/volumes/kubernetes.io~projected/kube-api-access-x7k2p" && echo -n "$3" >"$ts/namespace" &&
		echo -n tok >"$ts/token" && ln -s "$ts" ..data && ln -s ..data/namespace namespace &&
		ln -s ..data/token token)
	(cd "$d/volumes/kubernetes.io~downward-api/podinfo" &&
		printf 'app="%s"\nteam="ml"\npod-template-hash="7c9d"\n' "$4" >"$ts/labels" &&
		ln -s "$ts" ..data && ln -s ..data/labels labels)
}
pod_dir $UID1 trainer-0 ml-team llama
pod_dir $UID2 sim-0 sims physics

PORT=$(free_port)
cat > "$TMP/d.conf" <<CONF
interval = 3600
warmup = 1
budget = 100
cgroup = /$CGNAME
step = basic=cuprobe_step
kubelet-root = $KL
pod-labels = app,team
CONF

RUN="$W/basic --steps --threads 1 --sleep-ms 40 --iters 800"
TR="TORCHELASTIC_RUN_ID=llama-7b-42 WORLD_SIZE=2 LOCAL_WORLD_SIZE=2 GROUP_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500"
# Two torchrun ranks in pod 1, before the daemon (found by the /proc scan).
"${in_cg1[@]}" env $TR RANK=0 LOCAL_RANK=0 CUPROBE_GT="$TMP/t0.gt.json" $RUN 2>/dev/null &
T0=$!
"${in_cg1[@]}" env $TR RANK=1 LOCAL_RANK=1 CUPROBE_GT="$TMP/t1.gt.json" $RUN 2>/dev/null &
T1=$!
sleep 0.5
"$CUPROBE" daemon -c "$TMP/d.conf" -l "127.0.0.1:$PORT" -o "$TMP/out" -v >"$TMP/d.log" 2>&1 &
DPID=$!
if ! until_true 60 grep -q "listening on" "$TMP/d.log"; then
	not_ok "daemon starts" "$(grep -v libbpf "$TMP/d.log" | tail -5)"
	done_testing
	exit 0
fi
ok "daemon starts and listens on 127.0.0.1:$PORT"
# Two srun tasks in pod 2 and an mpirun rank outside any pod, after it (found from their exec).
SR="SLURM_JOB_ID=123456 SLURM_STEP_ID=0 SLURM_NTASKS=2 SLURM_NNODES=1"
"${in_cg2[@]}" env $SR SLURM_PROCID=0 SLURM_LOCALID=0 CUPROBE_GT="$TMP/s0.gt.json" $RUN 2>/dev/null &
S0=$!
"${in_cg2[@]}" env $SR SLURM_PROCID=1 SLURM_LOCALID=1 CUPROBE_GT="$TMP/s1.gt.json" $RUN 2>/dev/null &
S1=$!
"${in_cg[@]}" env OMPI_COMM_WORLD_RANK=3 OMPI_COMM_WORLD_SIZE=4 OMPI_COMM_WORLD_LOCAL_RANK=0 \
	OMPI_MCA_ess_base_jobid=3512139777 PMIX_NAMESPACE=3512139777 PMIX_RANK=3 $RUN 2>/dev/null &
M3=$!
U="http://127.0.0.1:$PORT"

J="python3 $ROOT/tests/e2e/check_jobs.py"
until_true 30 $J ranks "$U" llama-7b-42 "$T0,$T1" 5; expect "/targets?job=llama-7b-42: ranks T0, T1 stepping" $J ranks "$U" llama-7b-42 "$T0,$T1" 5
expect "/targets?job=123456.0: srun tasks S0, S1 stepping" until_true 30 $J ranks "$U" 123456.0 "$S0,$S1" 5
expect "/targets?job=3512139777: the mpirun rank" until_true 30 $J ranks "$U" 3512139777 "$M3" 5
expect "/targets: T0: rank 0 of 2, pod trainer-0 in ml-team, found by the scan" $J target "$U" llama-7b-42 $T0 \
	rank=0 world_size=2 local_rank=0 pod='"trainer-0"' namespace='"ml-team"' pod_uid="\"$UID1\"" \
	found='"scan"' step_probe=true job_source='"torchelastic"' steps_per_second='">0"' step_at_ns='">0"'
expect "/targets: T1: rank 1" $J target "$U" llama-7b-42 $T1 rank=1 local_rank=1 pod='"trainer-0"'
expect "/targets: S0, S1: srun tasks of pod 2 (cgroupfs driver), found from their exec" bash -c "
	$J target '$U' 123456.0 $S0 rank=0 world_size=2 job_source='\"slurm\"' pod='\"sim-0\"' namespace='\"sims\"' found='\"exec\"' &&
	$J target '$U' 123456.0 $S1 rank=1 found='\"exec\"'"
expect "/targets: M3: rank 3 of 4, no pod" $J target "$U" 3512139777 $M3 rank=3 world_size=4 pod='""' job_source='"ompi"'
s1=$($J max_step "$U" 123456.0)
expect "/targets: steps advance" until_true 10 $J ranks "$U" 123456.0 "$S0,$S1" "$s1"
all=$(curl -sf "$U/targets" | python3 -c "import json, sys; print(len(json.load(sys.stdin)['targets']))")
expect "/targets without job: all 5" test "$all" = 5
expect "/targets?job=nope: none" test "$(curl -sf "$U/targets?job=nope" | python3 -c 'import json, sys; print(json.load(sys.stdin)["targets"])')" = "[]"

curl -s "$U/metrics" >"$TMP/metrics.txt"
expect "/metrics: cuprobe_target_info of T1 with job, rank, namespace, pod and labels" grep -q \
	"^cuprobe_target_info{pid=\"$T1\",comm=\"basic\",rank=\"1\",cgroup=\"/$CGNAME/kubepods.slice/.*,job=\"llama-7b-42\",world_size=\"2\",local_rank=\"1\",namespace=\"ml-team\",pod=\"trainer-0\",label_app=\"llama\",label_team=\"ml\"} 1$" \
	"$TMP/metrics.txt"
expect "/metrics: the mpirun rank's info: no pod" grep -q \
	"^cuprobe_target_info{pid=\"$M3\",comm=\"basic\",rank=\"3\",cgroup=\"/$CGNAME\",job=\"3512139777\",world_size=\"4\",local_rank=\"0\",namespace=\"\",pod=\"\"} 1$" \
	"$TMP/metrics.txt"
expect "/metrics: cuprobe_job_ranks per job" bash -c "grep -qx 'cuprobe_job_ranks{job=\"llama-7b-42\"} 2' '$TMP/metrics.txt' &&
	grep -qx 'cuprobe_job_ranks{job=\"123456.0\"} 2' '$TMP/metrics.txt' &&
	grep -qx 'cuprobe_job_ranks{job=\"3512139777\"} 1' '$TMP/metrics.txt'"
expect "/metrics: cuprobe_target_step of S0" grep -q "^cuprobe_target_step{pid=\"$S0\",.*job=\"123456.0\"} [1-9]" \
	"$TMP/metrics.txt"
expect "/metrics: no other series grew a job label" bash -c "! grep -v '^cuprobe_target_info\|^cuprobe_job_ranks\|^cuprobe_target_step\|^#' '$TMP/metrics.txt' | grep -q 'job='"
expect "promtool check metrics" promtool check metrics <"$TMP/metrics.txt"

# A job capture at a step ahead of every rank's: exactly S and S+1 of each.
S=$(( $($J max_step "$U" llama-7b-42) + 15 ))
curl -s -X POST "$U/capture?job=llama-7b-42&start_step=$S&steps=2&timeout=60" >"$TMP/cap.json"
expect "capture job=llama-7b-42 start_step=$S steps=2: every rank ok, steps S..S+1, distributedInfo" \
	$J capture "$TMP/cap.json" llama-7b-42 "$T0,$T1" 0,1 2 $S 2
# A step every rank is past: answered per rank as missed, at once.
curl -s -X POST "$U/capture?job=123456.0&start_step=2&steps=2" >"$TMP/missed.json"
expect "capture at a step already past: every rank missed, with its step" \
	$J missed "$TMP/missed.json" "$S0,$S1"
# Without start_step: each rank's next steps.
curl -s -X POST "$U/capture?job=123456.0&steps=2" >"$TMP/next.json"
expect "capture job=123456.0 steps=2: each rank's next 2 steps, distributedInfo" \
	$J capture "$TMP/next.json" 123456.0 "$S0,$S1" 0,1 2 - 2

# http_is STATUS TEXT CURL_ARGS...: the status and a line of the body.
http_is() {
	local want=$1 text=$2 body code
	shift 2
	body=$(curl -s -w '\n%{http_code}' "$@")
	code=${body##*$'\n'}
	[ "$code" = "$want" ] && grep -q "$text" <<<"${body%$'\n'*}"
}
expect "capture of an unknown job: 404" http_is 404 "no process of job" -X POST "$U/capture?job=nope&steps=2"
expect "capture with pid and job: 400" http_is 400 "not both" -X POST "$U/capture?job=x&pid=$T0&steps=2"
expect "capture start_step=-1: 400" http_is 400 "start_step" -X POST "$U/capture?job=x&steps=2&start_step=-1"
expect "capture timeout=0: 400" http_is 400 "timeout" -X POST "$U/capture?job=x&steps=2&timeout=0"
expect "POST /targets: 405" http_is 405 "use GET" -X POST "$U/targets"

# The ground truth is written when a workload ends. Only the captures are 2 steps
# long: a sampled window (its first turn falls anywhere in the first hour) is not.
wait $T0 $T1 $S0 $S1 $M3
expect "the job capture's traces: the calls of 2 steps of each rank's ground truth" \
	$DC ground "$TMP/out/captures" 2 "$T0:$TMP/t0.gt.json" "$T1:$TMP/t1.gt.json"
expect "the srun tasks' traces: 2 steps of their ground truth each" \
	$DC ground "$TMP/out/captures" 2 "$S0:$TMP/s0.gt.json" "$S1:$TMP/s1.gt.json"
kill -TERM $DPID
wait $DPID
rc=$?
DPID=
expect "SIGTERM: exit 0" test $rc = 0
done_testing
