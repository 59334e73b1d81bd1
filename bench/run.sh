#!/usr/bin/env bash
# SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#
# make bench: builds the benchmark's own programs (bench/bench.mk), then runs
# bench/bench.py, which prints each figure's raw numbers and ends with one
# line per figure: "bench: <name> <value> (goal <op> <target>)".
# Needs root (BPF) and ./cuprobe and the workloads built (make bench does).
set -eu
cd "$(dirname "$0")/.."
if [ "$(id -u)" -ne 0 ]; then
	echo "bench: cuprobe loads BPF programs: run make bench as root" >&2
	exit 1
fi
make -s --no-print-directory bench-tools
exec python3 bench/bench.py "$@"
