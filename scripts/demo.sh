#!/bin/sh
# make demo: profile the bundled demo workload with cuprobe, then summarise it.
set -eu
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then
	echo "demo: cuprobe loads BPF programs: run as root (sudo make demo)" >&2
	exit 1
fi
out=${DEMO_OUT:-cuprobe-runs}
echo "demo: ./cuprobe record -o $out -- .output/workloads/demo"
./cuprobe record -o "$out" -- .output/workloads/demo
run=$(ls -d "$out"/run_* | sort -t_ -k2 -n | tail -1)
echo
echo "demo: ./cuprobe report $run"
./cuprobe report "$run"
