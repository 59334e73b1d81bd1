#!/bin/sh
# make demo: profile the bundled demo workload with cuprobe, on a schedule like
# torch.profiler's, then summarise what it recorded.
set -eu
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then
	echo "demo: cuprobe loads BPF programs: run as root (sudo make demo)" >&2
	exit 1
fi
out=${DEMO_OUT:-cuprobe-runs}
before=$(ls -d "$out"/run_* 2>/dev/null || true)
set -x
./cuprobe record -o "$out" --step cuprobe_step --schedule wait=5,warmup=1,active=3,repeat=2 \
	-- .output/workloads/demo
set +x
new=""
for d in $(ls -d "$out"/run_* | sort -t_ -k2 -n); do
	case " $before " in *" $d "*) ;; *) new="$new $d" ;; esac
done
echo
set -x
./cuprobe report $new
